"""The safety gate's rules for tool actions (call, send_text, set_alarm, set_timer, set_setting, open_link,
query). SafetyGate.check sends every tool action here; the rules are the GUI rules carried over:

- a call or a text is always confirmed (CALL / SEND, the mandatory floor), and the read-back comes from
  the phone, never from the model's words: the number is said digit by digit with the name the phone's
  contacts give it (`GateContext.contacts`, read from the contacts provider at the start of the run); a
  number not in the contacts is said as "a number that is not in your contacts", and a name the model
  gave that the contacts file under another number is said as not matching. A text is read back in
  full. The model's `contact` words are never read out;
- a text that carries a card number or a code gets the hand-over the GUI typing path gives it (the
  same check, `safety.text_secret`): the user types it themselves;
- the allow-list is judged by the app that will handle the intent: the handler package is the first of
  the well-known handlers of that tool (HANDLERS) installed on this phone, and it must be allowed; a
  phone where none is installed gets DENY (the model then works on the screen, where the same rules
  hold). harness.tools refuses to start an intent whose resolved default app is not that handler, and
  after the action the loop's foreground check runs as for a tap;
- settings: only the quick-settings switches exist as tools (types.Setting), all reachable from the
  notification shade (a shell package), so no tool reaches a security setting; a caregiver who asked for
  settings changes to be confirmed gets that here too. A switch that can cut the phone's connection
  (airplane mode on; Wi-Fi off while this computer may reach the phone over Wi-Fi, i.e. unless the
  context says the link is not Wi-Fi) needs the Settings app to be allowed *and* a yes;
- queries are read-only by construction (types.READ_ONLY_KINDS; harness.tools runs only reading commands)
  and allowed, except reading a message thread, which needs the Messages app to be allowed; what they
  read is kept to the allowed apps before the model, the history or the voice get it (the loop calls
  `ToolResult.only_from(context.is_allowed_package)`: other apps' notifications are left out, another
  app's screen is not read);
- a locked phone hands over to the user, as for any action on the phone; a tool the user already said no
  to in this run is refused.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from assistant_core.gatewords import MSG as GATE
from assistant_core.gatewords import Category, Rule, action_signature, category_phrase
from assistant_core.i18n import Catalog, Text
from assistant_core.textcheck import text_secret, visible_text
from assistant_core.toolbox import TOOLS
from assistant_core.types import Action, ActionKind, Decision, Observation, Setting, Verdict

MSG = Catalog(
    "toolgate",
    {
        "read_only": "This only reads the phone.",
        "tool_allowed": "{app} will do this; it is an allowed app.",
        "no_handler": "No app I'm allowed to use can do this on this phone.",
        "tool_confirm": "This would {what} with {app}. I need your OK first.",
        "shade": "Quick settings",
        "quick_setting": "This switches a quick setting anyone can reach from the notification shade.",
        "cuts_link": "This could cut the phone's connection. I need your OK first.",
        "airplane_on": "turn on airplane mode, which cuts the phone's calls and internet",
        "wifi_off": "turn off Wi-Fi, which can cut the phone's internet and this computer's link to the phone",
        "number": "number {digits}",
        "plus": "plus ",
        "known": "{name}, {number}",
        "not_in_contacts": "{number}, a number that is not in your contacts",
        "name_mismatch": "{number}, which your contacts have as {owner}, not {name}",
        "name_mismatch_other": "{number}, which your contacts have as {owner}, not the name I was given",
        "name_elsewhere": "{number}, a number that is not in your contacts; your contacts have {name} at another number",
        "unchecked": "{number}; I could not check your contacts",
        "secret_text": "That message contains a card number or a code. I won't send it; please type that part yourself.",
    },
)

# The apps that answer each tool's intent, from each tool's GateRule (assistant_core.toolbox).
HANDLERS: dict[ActionKind, tuple[str, ...]] = {ActionKind(name): spec.gate.handlers for name, spec in TOOLS.items()
                                               if spec.gate.handlers and not callable(spec.gate.handlers)}


SETTINGS_PACKAGES = ("com.android.settings",)


def cuts_connection(action: Action, context: object) -> str | None:
    """The message key of a setting that can cut the phone's connection, or None: airplane mode on, and
    Wi-Fi off unless the context says this computer's link to the phone is not Wi-Fi (`link_over_wifi`
    False; unknown counts as Wi-Fi)."""
    if action.kind is not ActionKind.SET_SETTING:
        return None
    if action.setting is Setting.AIRPLANE_MODE and action.value == "on":
        return "airplane_on"
    if action.setting is Setting.WIFI and action.value == "off" and getattr(context, "link_over_wifi", None) is not False:
        return "wifi_off"
    return None


def digits_aloud(number: str) -> Text:
    """A phone number said digit by digit, in its own groups: "+1 900 555 0100" -> "plus 1, 9 0 0, 5 5 5,
    0 1 0 0" (a text-to-speech voice reads "9005550100" as a large number, or not at all)."""
    number = visible_text(number).strip()
    groups = [" ".join(g) for g in re.findall(r"\d+", number)]
    spoken = ", ".join(groups)
    plus = number.startswith("+")
    return Text((MSG["plus"].en if plus else "") + spoken, (MSG["plus"].zh if plus else "") + spoken)


def same_number(a: str, b: str) -> bool:
    """The same phone line: the same digits, or one ending in the other's last 7 or more digits (a
    country code or trunk prefix written on one side only)."""
    da, db = re.sub(r"\D", "", a), re.sub(r"\D", "", b)
    if not da or not db:
        return False
    if da == db:
        return True
    short, long_ = sorted((da, db), key=len)
    return len(short) >= 7 and long_.endswith(short)


def _names_match(asked: str, contact: str) -> bool:
    """The model's name for a contact names this one: the same words, or some of them in order (its first
    name, "Alice" for "Alice Chen")."""
    if not asked:
        return True
    have = " ".join(visible_text(contact).split()).casefold()
    return asked == have or (have.startswith(asked + " ") and len(asked) >= 2)


def recipient_readback(number: str, name: str, contacts: Mapping[str, tuple[str, ...]] | None) -> Text:
    """Who a call or text goes to, as the phone knows it: the contact that holds the number, with the
    number digit by digit; or that the number is not in the contacts; or that the model's name does not
    match. The model's own words for the recipient are only compared, never read out as fact."""
    said = digits_aloud(number)
    num = Text(MSG["number"].en.format(digits=said.en), MSG["number"].zh.format(digits=said.zh))
    if contacts is None:
        return Text(MSG["unchecked"].en.format(number=num.en), MSG["unchecked"].zh.format(number=num.zh))
    owners = [visible_text(n) for n, nums in contacts.items() if any(same_number(x, number) for x in nums)]
    asked = " ".join(visible_text(name).split()).casefold()
    named = next((visible_text(n) for n in contacts if " ".join(visible_text(n).split()).casefold() == asked), None) if asked else None
    if owners:
        owner = named if named in owners else next((o for o in owners if _names_match(asked, o)), owners[0])
        if asked and not _names_match(asked, owner):
            if named:
                return Text(MSG["name_mismatch"].en.format(number=num.en, owner=owner, name=named),
                            MSG["name_mismatch"].zh.format(number=num.zh, owner=owner, name=named))
            return Text(MSG["name_mismatch_other"].en.format(number=num.en, owner=owner),
                        MSG["name_mismatch_other"].zh.format(number=num.zh, owner=owner))
        return Text(MSG["known"].en.format(name=owner, number=num.en), MSG["known"].zh.format(name=owner, number=num.zh))
    if named:
        return Text(MSG["name_elsewhere"].en.format(number=num.en, name=named),
                    MSG["name_elsewhere"].zh.format(number=num.zh, name=named))
    return Text(MSG["not_in_contacts"].en.format(number=num.en), MSG["not_in_contacts"].zh.format(number=num.zh))


def handler_for(action: Action, context: object) -> str | None:
    """The package that will handle this tool on this phone (first known handler installed); None when
    none is installed. Settings and most queries need no app beyond the phone's own shell ("")."""
    candidates = TOOLS[action.kind.value].gate.candidates(action)
    if candidates is None:
        return ""
    installed = getattr(context, "app_labels", {}) or {}
    return next((p for p in candidates if p in installed), None)


def check_tool(action: Action, observation: Observation, context: object) -> Decision:
    """ALLOW / CONFIRM / DENY for one tool action (see the module docstring)."""
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
    rule = TOOLS[action.kind.value].gate
    if rule.secret_text and text_secret(action.text or "", observation):
        return decide(Verdict.DENY, Rule.HANDOVER_SECRET_FIELD, MSG["secret_text"])
    if rule.confirm is not None:
        category = Category(rule.confirm)
        what = category_phrase(category)
        reason = Text(MSG["tool_confirm"].en.format(what=what.en, app=app),
                      MSG["tool_confirm"].zh.format(what=what.zh, app=app))
        whom = recipient_readback(action.number or "", action.contact or "", getattr(context, "contacts", None))
        extra = {"say_text": visible_text(action.text or "")} if action.kind is ActionKind.SEND_TEXT else {}
        return decide(Verdict.CONFIRM, "confirm.tool", reason, category=category, app=app, package=handler,
                      target="", say_whom=whom, **extra)
    if rule.read_only:
        return decide(Verdict.ALLOW, "allow.read_only", MSG["read_only"], package=handler, app=app)
    cut = cuts_connection(action, context)
    if cut is not None:
        settings_app = next((p for p in SETTINGS_PACKAGES if p in (getattr(context, "app_labels", {}) or {})),
                            SETTINGS_PACKAGES[0])
        if not context.is_allowed_package(settings_app):  # type: ignore[attr-defined]
            shown = context.label_of(settings_app)  # type: ignore[attr-defined]
            return decide(Verdict.DENY, Rule.DENY_APP_NOT_ALLOWED, GATE["app_not_allowed"].format(app=shown),
                          package=settings_app)
        return decide(Verdict.CONFIRM, "confirm.cuts_connection", MSG["cuts_link"], category=Category.SETTINGS_CHANGE,
                      app=context.label_of(settings_app), package=settings_app, target="",  # type: ignore[attr-defined]
                      say_what=MSG[cut])
    caregiver = Category(rule.caregiver) if rule.caregiver else None
    if caregiver is not None and caregiver in always:
        what = category_phrase(caregiver)
        reason = Text(GATE["confirm_caregiver"].en.format(what=what.en), GATE["confirm_caregiver"].zh.format(what=what.zh))
        return decide(Verdict.CONFIRM, Rule.CONFIRM_CAREGIVER, reason, category=caregiver, app=app, package=handler,
                      target="")
    reason = MSG["tool_allowed"].format(app=app) if handler else MSG["quick_setting"]
    return decide(Verdict.ALLOW, "allow.tool", reason, package=handler, app=app)
