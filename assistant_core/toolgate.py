"""The safety gate's rules for tool actions (call, send_text, set_alarm, set_timer, set_setting, open_link,
query). SafetyGate.check sends every tool action here; the rules are the GUI rules carried over:

- a call or a text is always confirmed (CALL / SEND, the mandatory floor), and the read-back names the
  contact, the number and the words, from the action itself — the same things the GUI path reads back
  from the screen;
- the allow-list is judged by the app that will handle the intent: the handler package is the first of
  the well-known handlers of that tool (HANDLERS) installed on this phone, and it must be allowed; a
  phone where none is installed gets DENY (the model then works on the screen, where the same rules
  hold). harness.tools refuses to start an intent whose resolved default app is not that handler, and
  after the action the loop's foreground check runs as for a tap;
- settings: only the quick-settings switches exist as tools (types.Setting), all reachable from the
  notification shade (a shell package), so no tool reaches a security setting; a caregiver who asked for
  settings changes to be confirmed gets that here too;
- queries are read-only by construction (types.READ_ONLY_KINDS; harness.tools runs only reading commands)
  and allowed, except reading a message thread, which needs the Messages app to be allowed;
- a locked phone hands over to the user, as for any action on the phone; a tool the user already said no
  to in this run is refused.
"""

from __future__ import annotations

from assistant_core.i18n import Catalog, Text
from assistant_core.types import Action, ActionKind, Decision, Observation, Query, Verdict

MSG = Catalog(
    "toolgate",
    {
        "read_only": ("This only reads the phone.", "这一步只读取手机信息。"),
        "tool_allowed": ("{app} will do this; it is an allowed app.", "这一步由「{app}」完成，是允许的应用。"),
        "no_handler": ("No app I'm allowed to use can do this on this phone.", "这部手机上没有允许使用的应用能做这件事。"),
        "tool_confirm": ("This would {what} with {app}. I need your OK first.", "这一步会用「{app}」{what}，需要你先同意。"),
        "shade": ("Quick settings", "快捷设置"),
        "quick_setting": ("This switches a quick setting anyone can reach from the notification shade.",
                          "这一步切换的是下拉通知栏里就能切换的快捷设置。"),
    },
)

# The apps that answer each tool's intent on common phones (AOSP, Google, Samsung, Xiaomi, Huawei/Honor,
# OPPO/OnePlus/realme, vivo), in the order a phone's default usually is.
HANDLERS: dict[ActionKind, tuple[str, ...]] = {
    ActionKind.CALL: ("com.android.dialer", "com.google.android.dialer", "com.samsung.android.dialer",
                      "com.android.incallui", "com.android.contacts", "com.huawei.contacts"),
    ActionKind.SEND_TEXT: ("com.android.messaging", "com.google.android.apps.messaging",
                           "com.samsung.android.messaging", "com.android.mms"),
    ActionKind.SET_ALARM: ("com.android.deskclock", "com.google.android.deskclock", "com.sec.android.app.clockpackage",
                           "com.android.alarmclock", "com.huawei.deskclock", "com.coloros.alarmclock"),
    ActionKind.OPEN_LINK: ("com.android.browser", "com.android.chrome", "org.chromium.chrome",
                           "com.sec.android.app.sbrowser", "com.huawei.browser", "com.heytap.browser"),
}
HANDLERS[ActionKind.SET_TIMER] = HANDLERS[ActionKind.SET_ALARM]
QUERY_HANDLERS: dict[Query, tuple[str, ...]] = {Query.MESSAGES: HANDLERS[ActionKind.SEND_TEXT]}


def handler_for(action: Action, context: object) -> str | None:
    """The package that will handle this tool on this phone (first known handler installed); None when
    none is installed. Settings and most queries need no app beyond the phone's own shell ("")."""
    if action.kind is ActionKind.QUERY:
        candidates = QUERY_HANDLERS.get(action.query)  # type: ignore[arg-type]
    else:
        candidates = HANDLERS.get(action.kind)
    if candidates is None:
        return ""
    installed = getattr(context, "app_labels", {}) or {}
    return next((p for p in candidates if p in installed), None)


def check_tool(action: Action, observation: Observation, context: object) -> Decision:
    """ALLOW / CONFIRM / DENY for one tool action (see the module docstring)."""
    from assistant_core.safety import (
        MSG as GATE,
    )
    from assistant_core.safety import (
        Category,
        Rule,
        action_signature,
        category_phrase,
    )

    def decide(verdict: Verdict, rule: str, reason: Text, **details: object) -> Decision:
        return Decision(verdict, str(rule), reason, {"tool": str(action.kind), **details})

    if observation.is_locked:
        return decide(Verdict.DENY, Rule.HANDOVER_LOCKED, GATE["locked"])
    if action_signature(action) in getattr(context, "declined", frozenset()):
        return decide(Verdict.DENY, Rule.DENY_USER_DECLINED, GATE["user_declined"])
    handler = handler_for(action, context)
    if handler is None:
        return decide(Verdict.DENY, Rule.DENY_APP_NOT_ALLOWED, MSG["no_handler"], package="")
    if handler and not context.is_allowed_package(handler):  # type: ignore[attr-defined]
        app = context.label_of(handler)  # type: ignore[attr-defined]
        return decide(Verdict.DENY, Rule.DENY_APP_NOT_ALLOWED, GATE["app_not_allowed"].format(app=app), package=handler)
    app = context.label_of(handler) if handler else MSG["shade"].get(getattr(context, "lang", "en"))  # type: ignore[attr-defined]
    always = getattr(context, "always_confirm", frozenset())
    if action.kind in (ActionKind.CALL, ActionKind.SEND_TEXT):
        category = Category.CALL if action.kind is ActionKind.CALL else Category.SEND
        what = category_phrase(category)
        reason = Text(MSG["tool_confirm"].en.format(what=what.en, app=app),
                      MSG["tool_confirm"].zh.format(what=what.zh, app=app))
        return decide(Verdict.CONFIRM, "confirm.tool", reason, category=category, app=app, package=handler,
                      target="")
    if action.kind is ActionKind.QUERY:
        return decide(Verdict.ALLOW, "allow.read_only", MSG["read_only"], package=handler, app=app)
    caregiver = {ActionKind.SET_SETTING: Category.SETTINGS_CHANGE, ActionKind.OPEN_LINK: Category.APP_LAUNCH}.get(action.kind)
    if caregiver is not None and caregiver in always:
        what = category_phrase(caregiver)
        reason = Text(GATE["confirm_caregiver"].en.format(what=what.en), GATE["confirm_caregiver"].zh.format(what=what.zh))
        return decide(Verdict.CONFIRM, Rule.CONFIRM_CAREGIVER, reason, category=caregiver, app=app, package=handler,
                      target="")
    reason = MSG["tool_allowed"].format(app=app) if handler else MSG["quick_setting"]
    return decide(Verdict.ALLOW, "allow.tool", reason, package=handler, app=app)
