"""The gate's vocabulary: the categories of sensitive actions, the rules that fire, the gate's messages,
and how a screen's labels are classified (the target's own words, the short static labels that give an
action its context). Split out of `assistant_core.safety` (issue 26) so that `toolgate` and `confirm`
use the same words without importing the gate itself: the gate (`safety`) imports them, never the other
way round. `assistant_core.safety` re-exports every name here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from assistant_core.i18n import Catalog, Text
from assistant_core.types import Action, Observation, UIElement


class Category(StrEnum):
    """What kind of consequential thing an action does. The first block always needs confirmation."""

    PAYMENT = "payment"
    PURCHASE = "purchase"
    TRANSFER = "transfer"
    SEND = "send"
    POST = "post"
    CALL = "call"
    DELETE = "delete"
    SHARE = "share"
    PERMISSION = "permission"
    INSTALL = "install"
    UNINSTALL = "uninstall"
    SECURITY = "security"
    ACCOUNT = "account"
    # Opt-in: a caregiver may ask for these to be confirmed too.
    TEXT_ENTRY = "text_entry"
    APP_LAUNCH = "app_launch"
    SETTINGS_CHANGE = "settings_change"


# The floor: these categories are confirmed whatever the settings say.
MANDATORY_CONFIRM: frozenset[Category] = frozenset(
    {
        Category.PAYMENT, Category.PURCHASE, Category.TRANSFER, Category.SEND, Category.POST, Category.CALL,
        Category.DELETE, Category.SHARE, Category.PERMISSION, Category.INSTALL, Category.UNINSTALL,
        Category.SECURITY, Category.ACCOUNT,
    }
)
OPTIONAL_CONFIRM: frozenset[Category] = frozenset(set(Category) - MANDATORY_CONFIRM)


class Rule(StrEnum):
    """The rule that fired. The prefix says the verdict family."""

    ALLOW_DEFAULT = "allow.default"
    ALLOW_PASSIVE = "allow.passive"
    ALLOW_NAVIGATION = "allow.navigation"
    ALLOW_DECLINE_BUTTON = "allow.decline_button"
    CONFIRM_TARGET = "confirm.target"  # the target's own label names a sensitive thing
    CONFIRM_CONTEXT = "confirm.context"  # a generic button (OK, Confirm) on a sensitive screen
    CONFIRM_SEND_TEXT = "confirm.send_text"  # enter/newline that sends what was typed
    CONFIRM_CAREGIVER = "confirm.caregiver"  # a category the caregiver chose to always confirm
    CONFIRM_UNREADABLE = "confirm.unreadable"  # no UI tree: the gate cannot see what the target is
    CONFIRM_MODEL_INTENT = "confirm.model_intent"  # the model itself says the step pays, sends, deletes...
    CONFIRM_PRIVACY = "confirm.privacy"  # personal data the task does not need, or "ask me each time" (privacy.py)
    DENY_APP_NOT_ALLOWED = "deny.app_not_allowed"
    DENY_OUTSIDE_ALLOWED = "deny.outside_allowed"  # acting inside an app outside the allowed set
    DENY_BULK_EXPORT = "deny.bulk_export"
    DENY_FACTORY_RESET = "deny.factory_reset"
    DENY_DISABLE_LOCK = "deny.disable_lock"
    DENY_SECRET_SPEECH = "deny.secret_speech"
    DENY_USER_DECLINED = "deny.user_declined"
    DENY_PRIVACY = "deny.privacy"  # profile data the user marked "never" (assistant_core.privacy)
    DENY_OFF_SCREEN = "deny.off_screen"
    DENY_UNSEEN_SCREEN = "deny.unseen_screen"  # part of the action would land on a screen not yet seen
    HANDOVER_SECURE_SCREEN = "handover.secure_screen"
    HANDOVER_LOCKED = "handover.locked"
    HANDOVER_SECRET_FIELD = "handover.secret_field"


HANDOVER_RULES: frozenset[Rule] = frozenset(
    {Rule.HANDOVER_SECURE_SCREEN, Rule.HANDOVER_LOCKED, Rule.HANDOVER_SECRET_FIELD}
)

# Packages of the phone's own shell: being in them is never "outside the allowed apps".
DEFAULT_SHELL_PACKAGES: frozenset[str] = frozenset(
    {
        "com.android.launcher", "com.android.launcher3", "com.google.android.apps.nexuslauncher",
        "com.android.systemui", "com.android.permissioncontroller", "com.google.android.permissioncontroller",
        "com.android.adbkeyboard", "com.android.inputmethod.latin", "android",
        "com.phoneworld.launcher", "com.phoneworld.systemui", "com.phoneworld.permissions",
    }
)

MSG = Catalog(
    "safety",
    {
        "allow": "Nothing sensitive here.",
        "passive": "This only speaks or waits.",
        "navigation": "Moving around the phone is safe.",
        "decline": "Saying no or cancelling is safe.",
        "confirm_target": "This would {what} in {app}. I need your OK first.",
        "confirm_context": "On this screen, that could {what} in {app}. I need your OK first.",
        "confirm_send_text": "Pressing enter here would send what was typed in {app}. I need your OK first.",
        "confirm_submit": "Pressing enter here would {what} in {app}. I need your OK first.",
        "confirm_caregiver": "Your caregiver asked to always check before I {what}.",
        "app_not_allowed": "{app} is not one of the apps your caregiver allowed, so I won't open it.",
        "outside_allowed": "We are in {app}, which your caregiver did not allow. I'll only go back from here.",
        "bulk_export": "Exporting all your contacts or messages is never done by the assistant.",
        "factory_reset": "Erasing the phone is never done by the assistant.",
        "disable_lock": "Turning off the screen lock is never done by the assistant.",
        "secret_speech": "That message contains a code or password. I won't say it out loud.",
        "user_declined": "You already said no to this.",
        "off_screen": "That point is outside the screen.",
        "unseen_double_tap": "A second tap there could land on a screen I haven't seen yet, so I'll tap once instead.",
        "unseen_typing": "After enter, the rest would be typed on a screen I haven't seen yet, so I'll type one line at a time.",
        "secure_screen": "This screen is protected and I can't see it. Please take over here.",
        "secure_screen_under_way": "This screen is protected and I can't see it. {under_way} Please take over here.",
        "under_way_pay_to": "A payment of {amount} to {payee} is waiting for you there.",
        "under_way_pay": "A payment of {amount} in {app} is waiting for you there.",
        "under_way_transfer": "A transfer of {amount} in {app} is waiting for you there.",
        "under_way": "What is under way there: {what} in {app}.",
        "secret_field_under_way": "This asks for a password or code. {under_way} Please type it yourself; I never type or say secrets.",
        "locked": "The phone is locked. Please unlock it yourself.",
        "secret_field": "This asks for a password or code. Please type it yourself; I never type or say secrets.",
        # Category phrases, used inside the sentences above.
        "cat_payment": "make a payment",
        "cat_purchase": "buy or order something",
        "cat_transfer": "transfer money",
        "cat_send": "send a message",
        "cat_post": "post something publicly",
        "cat_call": "make a call",
        "cat_delete": "delete something",
        "cat_share": "share something",
        "cat_permission": "give an app a permission",
        "cat_install": "install an app",
        "cat_uninstall": "uninstall an app",
        "cat_security": "change a security setting",
        "cat_account": "change an account",
        "cat_text_entry": "type text",
        "cat_app_launch": "open an app",
        "cat_settings_change": "change a setting",
        "unknown_app": "this app",
        "unreadable": "I can't read what is on this screen in {app}, so I can't tell what this does. I need your OK first.",
    },
)


def category_phrase(category: Category) -> Text:
    return MSG[f"cat_{category.value}"]


# --- keyword tables -----------------------------------------------------------------------------------
# English entries are whole-word regex fragments; Chinese entries are plain substrings.


@dataclass(frozen=True)
class Keywords:
    en: tuple[str, ...]
    zh: tuple[str, ...]

    def pattern(self) -> re.Pattern[str]:
        parts = [rf"\b(?:{p})\b" for p in self.en] + [re.escape(z) for z in self.zh]
        return re.compile("|".join(parts), re.IGNORECASE)


CATEGORY_KEYWORDS: dict[Category, Keywords] = {
    Category.TRANSFER: Keywords(
        ("transfer", "send money", "wire", "remit", "red packet", "send red envelope"),
        ("转账", "汇款", "红包", "打款", "转给"),
    ),
    Category.PAYMENT: Keywords(
        ("pay", "pay now", "payment", "checkout", "check out", "top up", "recharge", "confirm payment", "pay \\S+"),
        ("支付", "付款", "付钱", "买单", "充值", "收银台", "确认付款"),
    ),
    Category.PURCHASE: Keywords(
        ("buy", "buy now", "purchase", "place order", "order now", "submit order", "subscribe", "book now",
         "reserve", "add to cart and pay", "confirm order", "confirm booking"),
        ("购买", "立即购买", "下单", "提交订单", "结算", "去结算", "订阅", "预订", "预定", "立即预订", "确认订单", "抢购"),
    ),
    Category.CALL: Keywords(
        ("call", "dial", "voice call", "video call", "call back", "ring"),
        ("拨打", "呼叫", "拨号", "打电话", "语音通话", "视频通话", "回拨"),
    ),
    Category.DELETE: Keywords(
        ("delete", "remove", "erase", "clear all", "clear history", "discard", "trash", "move to trash"),
        ("删除", "移除", "清空", "清除", "抹掉", "丢弃", "移到回收站"),
    ),
    Category.SHARE: Keywords(
        ("share", "share location", "send location", "share contact", "share photo", "share file", "forward",
         "nearby share"),
        ("分享", "共享", "发送位置", "共享位置", "分享联系人", "转发", "发送名片"),
    ),
    Category.POST: Keywords(
        ("post", "publish", "tweet", "upload", "comment"),
        ("发布", "发表", "发帖", "上传", "发朋友圈", "评论"),
    ),
    Category.SEND: Keywords(
        ("send", "send message", "reply", "submit", "send sms", "send email"),
        ("发送", "回复", "发出", "提交", "发消息", "发短信", "发邮件"),
    ),
    Category.PERMISSION: Keywords(
        ("allow", "grant", "while using the app", "only this time", "allow all the time", "allow access",
         "give access", "authorize", "authorise"),
        ("允许", "授权", "始终允许", "仅在使用中允许", "仅使用期间允许", "本次允许", "同意授权"),
    ),
    Category.UNINSTALL: Keywords(("uninstall", "remove app", "delete app"), ("卸载", "删除应用")),
    Category.INSTALL: Keywords(("install", "get app", "update app"), ("安装", "下载应用", "获取应用")),
    Category.ACCOUNT: Keywords(
        ("sign out", "log out", "logout", "sign in", "log in", "delete account", "remove account",
         "change password", "reset password", "switch account", "add account", "close account"),
        ("退出登录", "登录", "注销", "删除账号", "删除帐号", "修改密码", "重置密码", "切换账号", "添加账号", "退出账号"),
    ),
    Category.SECURITY: Keywords(
        ("two-factor", "2-step verification", "unknown sources", "install unknown apps", "developer options",
         "usb debugging", "device admin", "find my device", "turn off protection", "disable protection"),
        ("两步验证", "未知来源", "安装未知应用", "开发者选项", "USB调试", "设备管理", "查找设备", "关闭保护"),
    ),
}
# Order matters: the first category that matches names the action (transfer before send, uninstall
# before install and delete).
CATEGORY_ORDER: tuple[Category, ...] = (
    Category.TRANSFER, Category.PAYMENT, Category.PURCHASE, Category.UNINSTALL, Category.INSTALL,
    Category.CALL, Category.DELETE, Category.SHARE, Category.POST, Category.SEND, Category.ACCOUNT,
    Category.SECURITY, Category.PERMISSION,
)
_CATEGORY_RE = {c: CATEGORY_KEYWORDS[c].pattern() for c in CATEGORY_ORDER}

# Screen headings that make the whole screen sensitive (for toggles and generic OK buttons on it).
SCREEN_CONTEXT_KEYWORDS: dict[Category, Keywords] = {
    Category.TRANSFER: Keywords(("transfer", "send money"), ("转账", "汇款", "红包")),
    Category.PAYMENT: Keywords(("payment", "pay", "checkout", "total", "amount due", "order total"),
                               ("支付", "付款", "收银台", "合计", "实付", "应付", "金额")),
    Category.PURCHASE: Keywords(("place order", "your order", "booking", "purchase", "cart"),
                                ("订单", "预订", "购物车", "下单")),
    Category.DELETE: Keywords(("delete", "remove", "erase"), ("删除", "移除", "清空")),
    Category.SEND: Keywords(("send", "new message", "compose"), ("发送", "新消息", "写邮件")),
    Category.CALL: Keywords(("call", "dial"), ("拨打", "呼叫")),
    Category.SHARE: Keywords(("share", "share location"), ("分享", "共享位置")),
    Category.PERMISSION: Keywords(("permission", "permissions", "access your", "allow .{1,40} to"),
                                  ("权限", "访问你的", "允许.{0,20}访问")),
    Category.INSTALL: Keywords(("install",), ("安装",)),
    Category.UNINSTALL: Keywords(("uninstall",), ("卸载",)),
    Category.SECURITY: Keywords(("security", "privacy", "screen lock", "lock screen", "password", "fingerprint",
                                 "face unlock", "encryption", "device admin"),
                                ("安全", "隐私", "锁屏", "屏幕锁定", "密码", "指纹", "面部解锁", "人脸", "加密")),
    Category.ACCOUNT: Keywords(("account", "accounts", "sign in", "profile"), ("账号", "帐号", "账户", "帐户", "登录")),
}
_CONTEXT_RE = {c: k.pattern() for c, k in SCREEN_CONTEXT_KEYWORDS.items()}
_CONTEXT_ORDER: tuple[Category, ...] = (
    Category.TRANSFER, Category.PAYMENT, Category.PURCHASE, Category.UNINSTALL, Category.INSTALL,
    Category.DELETE, Category.CALL, Category.SHARE, Category.SEND, Category.PERMISSION, Category.SECURITY,
    Category.ACCOUNT,
)

# Generic buttons whose meaning comes from the screen they are on.
_GENERIC_CONFIRM_RE = re.compile(
    r"^\s*(?:ok|okay|yes|confirm|continue|next|done|submit|proceed|agree|accept|i agree|got it|sure|apply|save|"
    r"turn on|turn off|enable|disable|on|off|确定|确认|好|好的|是|继续|下一步|完成|同意|接受|提交|应用|保存|开启|关闭|打开)\s*[.!。！]?\s*$",
    re.IGNORECASE,
)
# Buttons that back out: never sensitive, even inside a sensitive dialog. Checked before anything else,
# because "不允许" contains "允许" and "Don't allow" contains "allow".
_DECLINE_RE = re.compile(
    r"^\s*(?:cancel|no|no thanks|not now|deny|don'?t allow|do not allow|decline|reject|close|back|later|skip|dismiss|"
    r"取消|不|否|不允许|拒绝|禁止|关闭窗口|返回|以后再说|暂不|跳过|稍后)\s*[.!。！]?\s*$",
    re.IGNORECASE,
)
_FACTORY_RESET_RE = re.compile(
    r"factory (?:data )?reset|erase all data|reset (?:the )?phone|reset to factory|wipe (?:the )?(?:phone|device|data)"
    r"|恢复出厂|出厂设置|清除所有数据|抹掉所有|重置手机|清除全部数据",
    re.IGNORECASE,
)
_LOCK_CONTEXT_RE = re.compile(r"screen lock|lock screen|锁屏|屏幕锁定|锁屏方式", re.IGNORECASE)
_LOCK_OFF_LABEL_RE = re.compile(
    r"^\s*(?:none|swipe|off|no lock|无|滑动|关闭|无密码|不锁屏)\s*$|remove (?:screen lock|password|pin|pattern)"
    r"|turn off (?:screen lock|password|pin)|disable (?:screen lock|lock screen)|关闭锁屏|取消锁屏|移除锁屏|关闭屏幕锁定",
    re.IGNORECASE,
)
_EXPORT_RE = re.compile(r"\b(?:export|back ?up|download all|export all|share all|select all)\b|导出|备份|全选|全部分享", re.IGNORECASE)
_BULK_SUBJECT_RE = re.compile(
    r"\b(?:contacts?|messages?|chats?|chat history|sms|conversations?|address book)\b|联系人|通讯录|短信|消息|聊天记录",
    re.IGNORECASE,
)
_SECRET_FIELD_RE = re.compile(
    r"password|passcode|\bpin\b|\bpin code\b|one[- ]time|\botp\b|verification code|security code|\bcvv\b|\bcvc\b"
    r"|2fa|auth(?:entication)? code|sms code|密码|验证码|校验码|动态码|口令|支付密码|安全码",
    re.IGNORECASE,
)
_SEARCH_FIELD_RE = re.compile(r"search|find|搜索|查找|url|address bar|网址", re.IGNORECASE)
_DIGITS_RUN_RE = re.compile(r"(?<!\d)\d{4,8}(?!\d)")
_CARD_RE = re.compile(r"(?<!\d)(?:\d[ -]?){13,19}(?!\d)")
_CODE_WORDS_RE = re.compile(r"code|password|passcode|\bpin\b|otp|验证码|密码|校验码|动态码", re.IGNORECASE)

# A label longer than this is a sentence (data, maybe an injection), not a heading or a button.
MAX_CONTEXT_LABEL = 40


def _words(el: UIElement) -> str:
    """The element's own words: text, description and the words of its resource-id."""
    rid = el.resource_id.rsplit("/", 1)[-1]
    rid_words = re.sub(r"[^0-9A-Za-z]+", " ", rid)
    return " ".join(p for p in (el.text, el.content_desc, rid_words) if p)


def _short(label: str) -> bool:
    cjk = sum(1 for ch in label if "\u3400" <= ch <= "\u9fff")
    limit = MAX_CONTEXT_LABEL // 2 if cjk > len(label) / 2 else MAX_CONTEXT_LABEL
    return 0 < len(label.strip()) <= limit


def _is_system(el: UIElement) -> bool:
    return el.package == "com.android.systemui" or el.resource_id.startswith("com.android.systemui:")


def context_labels(observation: Observation) -> tuple[str, ...]:
    """The short static labels on screen (titles, headings, dialog texts, totals): the only screen text
    used as context. Labels of buttons and list rows are left out (they describe *their* action, not the
    screen), as are the status and navigation bars and long sentences."""
    if not observation.elements:
        return ()
    screen_area = observation.width * observation.height
    clickables = [e for e in observation.elements if (e.clickable or e.long_clickable or e.checkable)
                  and e.area < 0.5 * screen_area]
    out = []
    for e in observation.elements:
        if not e.label or not _short(e.label) or _is_system(e):
            continue
        if e.clickable or e.checkable or e.long_clickable:
            continue
        cx, cy = e.center
        if any(c.contains(cx, cy) for c in clickables):
            continue
        out.append(e.label.strip())
    return tuple(out)


def target_words(observation: Observation, target: UIElement | None) -> str:
    """The target's own words: its text, description, id words, and the labels inside it (a list row
    whose text sits in child views)."""
    if target is None:
        return ""
    parts = [_words(target)]
    if observation.elements:
        for e in observation.elements:
            if e is target or not e.label or e.area >= target.area:
                continue
            cx, cy = e.center
            if target.contains(cx, cy) and _short(e.label):
                parts.append(e.label)
    return " ".join(p for p in parts if p)


# Names of places that contain a sensitive word but do nothing by being opened: the dial pad ("拨号键盘"
# holds "拨号", dial) and the call log. Taken out before a label is classified.
_HARMLESS_PLACES_RE = re.compile(
    r"拨号键盘|拨号盘|拨号界面|通话记录|最近通话|\bdial ?pad\b|\bcall (?:log|history)\b|\brecent calls\b", re.IGNORECASE)


def classify_label(text: str) -> Category | None:
    """The sensitive category a button or item label names, or None."""
    if not text or _DECLINE_RE.match(text):
        return None
    text = _HARMLESS_PLACES_RE.sub(" ", text)
    for category in CATEGORY_ORDER:
        if _CATEGORY_RE[category].search(text):
            return category
    return None


def classify_context(labels: Iterable[str]) -> Category | None:
    """The sensitive category a screen's short labels point to, or None."""
    joined = "\n".join(labels)
    for category in _CONTEXT_ORDER:
        if _CONTEXT_RE[category].search(joined):
            return category
    return None


def action_signature(action: Action, observation: Observation | None = None) -> str:
    """A stable identity for 'the same action on the same thing' (loop guard, declined actions)."""
    target = ""
    if observation is not None and action.point is not None:
        el = observation.element_at(*action.point)
        if el is not None:
            target = f"{el.resource_id}|{el.label}"
    fields = action.to_dict()
    if target:
        # Pointing at the same element a few pixels apart is still the same action.
        fields.pop("x", None)
        fields.pop("y", None)
    return f"{sorted(fields.items())}@{target}"
