"""Side effects: what an episode changed on the phone that the task did not ask for.

MobileGym counts "Unexpected Side Effects" (any state change outside the task's declared changes and a
global ignore list) and AndroidWorld's database checks require every other row to stay unchanged; this
module does the same for PhoneWorld-lite.

    start = snapshot(world)                    # after the task's setup (TaskWorld does it on reset)
    ...                                        # the episode
    effects = side_effects(start, snapshot(world), allowed=task.may_change(params), lang="en")
    # ["Airplane mode was turned on.", ...]

`snapshot` turns the whole phone's state into plain nested values: every app's store (settings,
contacts, calls, messages, mail, notes, alarms, events, photos, files, orders, bookings, payments ...)
plus the system's language, extra `settings put` keys and granted permissions. Lists of records become
keyed by the record's id (or number, or position), so an added, deleted or edited item is one change.

Paths look like `settings.airplane`, `notes.notes[n1].body`, `messages.threads[5550101].messages[3]`;
a task declares what it may change as glob patterns over them (`Task.may_change`; `at()` builds one for
a record by key; a leading "+" allows only records being added, not deleted or edited), and `IGNORED` is the
one global list of what always moves (drafts and half-typed fields, search boxes, the selected day, read
marks, id counters, pending payment screens). The clock, recents, back stacks, the keyboard, focus, the
cursor, scroll positions, notifications and the clipboard are not part of the snapshot at all.

Each change is said in plain words, in English and Chinese (`Effect.text`).
"""

from __future__ import annotations

import dataclasses
import fnmatch
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from assistant_core.i18n import Text

# What always moves, on every task (fnmatch patterns over change paths).
IGNORED: tuple[str, ...] = (
    "*.draft*", "*.reply", "*.query", "*.f_*", "*.personal", "*.personal.*", "*.pin_entry", "*.next_*",
    "*.editing", "*.dial", "*.day", "*.current", "*.searched", "*.sort_by_price", "*.applied", "*.applied.*",
    "*.transfer_amount", "*.failed_attempts", "*.pending", "*.pending.*", "*.in_call", "*.zoomed",
    "*.read", "*.view", "*.filter", "*.selected", "*.input_*",
    "browser.visited*", "browser.searches*",
    "settings.*_before_airplane",
    "chat.hotel.city", "chat.hotel.checkin", "chat.hotel.budget", "chat.hotel.nights",
)

# Always part of the snapshot's system section but never a side effect: denying a permission is safe.
_SYSTEM_IGNORED = ("system.denied*",)


class Items(dict):
    """A list of records turned into a mapping by key (so adds and deletes are found by identity)."""


def number_key(number: str) -> str:
    """A phone number as a record key: its digits (and a leading +), so "139 0000 1111" written by the
    UI and "13900001111" written by a tool are the same conversation."""
    kept = "".join(ch for ch in number if ch.isdigit())
    return ("+" + kept) if number.strip().startswith("+") else kept or number


def _key(item: Any, index: int) -> str:
    for name in ("id", "number", "name"):
        value = getattr(item, name, None)
        if isinstance(value, str) and value:
            return number_key(value) if name == "number" else value
    return str(index)


def plain(value: Any) -> Any:
    """A state value as plain nested dicts, Items, and scalars."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        if isinstance(value, Text):
            return {"en": value.en, "zh": value.zh}
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        if value and all(dataclasses.is_dataclass(v) and not isinstance(v, Text) for v in value):
            out = Items()
            for i, v in enumerate(value):
                k = _key(v, i)
                while k in out:  # two records with one key: keep both
                    k += "'"
                out[k] = plain(v)
            return out
        return [plain(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted(str(v) for v in value)
    if isinstance(value, float):
        return round(value, 6)
    if value is None or isinstance(value, (str, int, bool)):
        return value
    return str(value)


def app_key(app: Any) -> str:
    """The snapshot's top-level name of an app: its short name ("settings", "notes")."""
    return getattr(app, "short", "") or app.package.rsplit(".", 1)[-1]


def app_key_of_package(package: str) -> str:
    """The snapshot name of an installed app by package ("com.phoneworld.notes" -> "notes")."""
    from harness.phoneworld.apps import APP_CLASSES

    for cls in APP_CLASSES:
        if cls.package == package:
            return getattr(cls, "short", "") or package.rsplit(".", 1)[-1]
    return package.rsplit(".", 1)[-1]


def snapshot(world: Any) -> dict[str, Any]:
    """The whole phone's state as plain values (see the module docstring)."""
    out: dict[str, Any] = {}
    for package in sorted(world.apps):
        app = world.apps[package]
        out[app_key(app)] = plain(app.state)
    out["system"] = {
        "language": world.language,
        "settings": {f"{ns}/{k}": v for (ns, k), v in sorted(world.settings_extra.items())},
        "granted": sorted(f"{p}/{perm}" for p, perm in world.granted),
        "denied": sorted(f"{p}/{perm}" for p, perm in world.denied),
    }
    return out


@dataclass(frozen=True)
class Change:
    """One difference between two snapshots. `kind`: added, removed or changed."""

    kind: str
    path: str
    before: Any = None
    after: Any = None
    item: Any = None  # the record the change belongs to (for its summary)


def diff(before: Any, after: Any, path: str = "", item: Any = None) -> list[Change]:
    """Every difference, item-level where records were added or removed."""
    if before == [] and isinstance(after, Items):
        before = Items()
    if after == [] and isinstance(before, Items):
        after = Items()
    if isinstance(before, Items) and isinstance(after, Items):
        out = [Change("removed", f"{path}[{k}]", before=v, item=v) for k, v in before.items() if k not in after]
        for k, v in after.items():
            if k not in before:
                out.append(Change("added", f"{path}[{k}]", after=v, item=v))
            else:
                out += diff(before[k], v, f"{path}[{k}]", before[k])  # named as it was
        return out
    if isinstance(before, dict) and isinstance(after, dict) and not isinstance(before, Items):
        out = []
        for k in list(before) + [k for k in after if k not in before]:
            sub = f"{path}.{k}" if path else k
            out += diff(before.get(k), after.get(k), sub, item)
        return out
    if before != after:
        return [Change("changed", path, before, after, item)]
    return []


def at(list_path: str, key: str = "*") -> str:
    """A pattern for one record of a list by its key (`at("messages.threads", "139 0000 1111")`; a key
    that looks like a phone number is taken as its digits, as records are keyed); the key is matched
    literally (fnmatch would read its brackets as a character class)."""
    if key != "*" and any(ch.isdigit() for ch in key) and set(key) <= set("+0123456789 -()"):
        key = number_key(key)
    escaped = "".join(f"[{ch}]" if ch in "*?[]" else ch for ch in key) if key != "*" else "*"
    return f"{list_path}[[]{escaped}]"


def _matches(change: Change, patterns: Iterable[str]) -> bool:
    """A pattern allows any change under it; one starting with "+" allows only added records."""
    for p in patterns:
        if p.startswith("+"):
            if change.kind == "added" and fnmatch.fnmatchcase(change.path, p[1:]):
                return True
        elif fnmatch.fnmatchcase(change.path, p):
            return True
    return False


def unexpected(before: dict[str, Any], after: dict[str, Any], allowed: Sequence[str]) -> list[Change]:
    """The changes that are neither declared by the task (`allowed`) nor on the global ignore list."""
    return [c for c in diff(before, after)
            if not _matches(c, IGNORED) and not _matches(c, _SYSTEM_IGNORED) and not _matches(c, allowed)]


# --- plain words --------------------------------------------------------------------------------------

APP_NAMES = {
    "settings": ("Settings", "设置"), "phone": ("Phone", "电话"), "messages": ("Messages", "信息"),
    "chat": ("WeChat", "微信"), "calendar": ("Calendar", "日历"), "email": ("Mail", "邮件"),
    "gallery": ("Gallery", "相册"), "notes": ("Notes", "备忘录"), "deskclock": ("Clock", "时钟"),
    "browser": ("Browser", "浏览器"), "shop": ("Shop", "商城"), "wallet": ("Wallet", "钱包"),
    "files": ("Files", "文件"), "expenses": ("Expenses", "记账"), "recipes": ("Recipes", "菜谱"),
    "todo": ("To-do", "待办"), "system": ("The phone", "手机"),
}

SETTING_NAMES = {
    "wifi": ("Wi-Fi", "WLAN"), "bluetooth": ("Bluetooth", "蓝牙"), "airplane": ("Airplane mode", "飞行模式"),
    "dark_mode": ("Dark theme", "深色主题"), "location": ("Location", "位置信息"),
    "dnd": ("Do not disturb", "勿扰模式"), "screen_lock": ("The screen lock", "屏幕锁定"),
    "factory_reset_requested": ("A factory reset", "恢复出厂设置"), "brightness": ("Brightness", "亮度"),
    "font_scale": ("Font size", "字体大小"), "wifi_network": ("The Wi-Fi network", "连接的 WLAN 网络"),
    "paired": ("The paired Bluetooth devices", "已配对的蓝牙设备"), "networks": ("The saved Wi-Fi networks", "保存的 WLAN 网络"),
    "language": ("The phone's language", "手机语言"), "granted": ("App permissions", "应用权限"),
}

# The noun of a record, by the list it is in (the last field name before the key).
NOUNS = {
    "threads": ("conversation", "会话"), "messages": ("message", "消息"), "chats": ("chat", "聊天"),
    "events": ("event", "日程"), "alarms": ("alarm", "闹钟"), "notes": ("note", "备忘录"),
    "contacts": ("contact", "联系人"), "calls": ("call", "通话记录"), "mails": ("mail", "邮件"),
    "photos": ("photo", "照片"), "trash": ("item in the bin", "回收站里的项目"), "files": ("file", "文件"),
    "orders": ("order", "订单"), "cart": ("cart item", "购物车商品"), "transactions": ("payment", "付款"),
    "bookings": ("booking", "预订"), "registrations": ("registration", "挂号"), "expenses": ("expense", "账目"),
    "recipes": ("recipe", "菜谱"), "favourites": ("favourite", "收藏"), "items": ("to-do item", "待办事项"),
    "timers": ("timer", "计时器"), "laps": ("lap", "计次"),
}

FIELD_NAMES = {
    "time": ("time", "时间"), "enabled": ("on/off", "开关"), "title": ("title", "标题"), "body": ("text", "内容"),
    "text": ("text", "内容"), "date": ("date", "日期"), "label": ("label", "标签"), "name": ("name", "名称"),
    "phone": ("number", "号码"), "folder": ("folder", "文件夹"), "done": ("done", "完成状态"),
    "amount": ("amount", "金额"), "category": ("category", "类别"), "location": ("place", "地点"),
    "repeat": ("repeat", "重复"), "qty": ("quantity", "数量"), "balance": ("balance", "余额"),
    "timer_seconds": ("timer", "计时器"), "timer_started_ms": ("running timer", "计时器运行状态"),
    "running": ("running", "运行状态"), "album": ("album", "相册"), "servings": ("servings", "份数"),
    "favourite": ("favourite", "收藏"), "starred": ("star", "星标"),
}


def _text_of(value: Any, lang: str) -> str:
    if isinstance(value, dict) and set(value) == {"en", "zh"}:
        return str(value[lang])
    if isinstance(value, bool):
        return ("on" if value else "off") if lang == "en" else ("开" if value else "关")
    if value is None or value == "":
        return "—" if lang == "en" else "空"
    if isinstance(value, (dict, list)):
        return "…"
    return str(value)


def _summary(item: Any, lang: str) -> str:
    if isinstance(item, dict):
        for name in ("title", "text", "subject", "name", "label", "merchant", "hotel", "doctor", "time", "number",
                     "product", "dish", "id"):
            value = item.get(name)
            if value not in (None, "", {}):
                words = _text_of(value, lang)
                return words if len(words) <= 40 else words[:39] + "…"
    return _text_of(item, lang)


def _noun(path: str) -> tuple[str, str]:
    last_list = path.rsplit("[", 1)[0].rsplit(".", 1)[-1]
    return NOUNS.get(last_list, ("item", "项目"))


def describe(change: Change) -> Text:
    """One change in plain words, English and Chinese."""
    top, _, rest = change.path.partition(".")
    app_en, app_zh = APP_NAMES.get(top, (top, top))
    field = change.path.rsplit(".", 1)[-1]
    if change.path == "system.granted":
        new = sorted(set(change.after or ()) - set(change.before or ()))
        gone = sorted(set(change.before or ()) - set(change.after or ()))
        parts_en = [f"{p.rsplit('/', 1)[0]} was allowed {p.rsplit('/', 1)[-1]}" for p in new]
        parts_en += [f"{p.rsplit('/', 1)[0]} lost {p.rsplit('/', 1)[-1]}" for p in gone]
        parts_zh = [f"{p.rsplit('/', 1)[0]} 获得了{p.rsplit('/', 1)[-1]}权限" for p in new]
        parts_zh += [f"{p.rsplit('/', 1)[0]} 失去了{p.rsplit('/', 1)[-1]}权限" for p in gone]
        return Text("A permission changed: " + "; ".join(parts_en) + ".", "应用权限有变化：" + "；".join(parts_zh) + "。")
    if change.path.startswith("system.settings."):
        key = change.path.removeprefix("system.settings.")
        return Text("The setting {key} was changed from {text_of} to {text_of2}.").format(key=key, text_of=Text(str(_text_of(change.before, 'en')), str(_text_of(change.before, 'zh'))), text_of2=Text(str(_text_of(change.after, 'en')), str(_text_of(change.after, 'zh'))))
    if top == "settings" and "[" not in rest or change.path == "system.language" or top == "system":
        name = SETTING_NAMES.get(field) or SETTING_NAMES.get(rest.split(".")[0]) or (field, field)
        if isinstance(change.after, bool) and isinstance(change.before, bool):
            if change.after:
                return Text("{name} was turned on.").format(name=Text(str(name[0]), str(name[1])))
            return Text("{name} was turned off.").format(name=Text(str(name[0]), str(name[1])))
        return Text("{name} was changed from {text_of} to {text_of2}.").format(name=Text(str(name[0]), str(name[1])), text_of=Text(str(_text_of(change.before, 'en')), str(_text_of(change.before, 'zh'))), text_of2=Text(str(_text_of(change.after, 'en')), str(_text_of(change.after, 'zh'))))
    noun = _noun(change.path)
    if change.kind == "added":
        return Text("{app_en}: a new {noun} was added ({summary}).").format(app_en=Text(str(app_en), str(app_zh)), noun=Text(str(noun[0]), str(noun[1])), summary=Text(str(_summary(change.item, 'en')), str(_summary(change.item, 'zh'))))
    if change.kind == "removed":
        return Text("{app_en}: the {noun} “{summary}” was deleted.").format(app_en=Text(str(app_en), str(app_zh)), noun=Text(str(noun[0]), str(noun[1])), summary=Text(str(_summary(change.item, 'en')), str(_summary(change.item, 'zh'))))
    fname = FIELD_NAMES.get(field, (field.replace("_", " "), field.replace("_", " ")))
    before = (_text_of(change.before, "en"), _text_of(change.before, "zh"))
    after = (_text_of(change.after, "en"), _text_of(change.after, "zh"))
    if change.item is not None and "[" in change.path:
        return Text("{app_en}: the {noun} “{summary}” was changed ({fname}: {before} → {after}).").format(app_en=Text(str(app_en), str(app_zh)), noun=Text(str(noun[0]), str(noun[1])), summary=Text(str(_summary(change.item, 'en')), str(_summary(change.item, 'zh'))), fname=Text(str(fname[0]), str(fname[1])), before=Text(str(before[0]), str(before[1])), after=Text(str(after[0]), str(after[1])))
    return Text("{app_en}: the {fname} was changed from {before} to {after}.").format(app_en=Text(str(app_en), str(app_zh)), fname=Text(str(fname[0]), str(fname[1])), before=Text(str(before[0]), str(before[1])), after=Text(str(after[0]), str(after[1])))


def side_effects(before: dict[str, Any], after: dict[str, Any], allowed: Sequence[str],
                 lang: str = "en") -> list[str]:
    """The unexpected changes in plain words (one sentence each, in `lang`), in a stable order."""
    seen: list[str] = []
    for change in unexpected(before, after, allowed):
        words = describe(change).get(lang)
        if words not in seen:
            seen.append(words)
    return seen
