"""The fast path: a request the outcome checks' parser (harness.verify's task kinds) understands
completely becomes a short plan of tool actions, run through the same loop, gate, confirmation, history
and outcome check as the model's actions, with no model at all.

    planner = FastPlanner(KindRegistry.load())
    plan = planner.plan("Call Sophie", facts)           # facts: the phone's contacts and apps
    plan.status          # ACT (plan.actions), ASK (plan.question: "Which Sophie: Sophie Tang or Sophie Li?"),
                         # HAND_OVER (plan.reason: the model takes the original goal)
                         # or DECLINE ("不要给她打电话", "Turn off airplane mode? No, leave it": "OK, I won't")
    policy = FastPathPolicy(planner, fallback=model_policy, device=device, lang="en")
    run_episode(goal, device=device, policy=policy, ...)   # the loop does not know the difference

Rules: it never guesses a recipient, a number or a time. A contact named exactly (either language, any
case) or a unique partial name ("Alice" when one contact is called Alice) is used; two or more
candidates, or none, are asked back; a missing time, duration, text or recipient is asked for. A request
with anything the plan would leave out (a second request joined by "and", a text derived from another
message, an alarm on another day) goes to the model with the original goal. When the phone refuses a
tool (harness.tools.ToolRefused), the model (or the demo's oracle) takes over with the same goal.

Negation, in both languages (`negation`): a request that says not to do something (不要, 别, 千万不要, 不用,
我没让你, "don't", "never") or takes it back ("给陈爱丽打电话？算了", "Turn off airplane mode? No, leave it",
"never mind", "cancel that"), and an answer to its question that does, is never acted on and never asked
about: the run says "OK, I won't" and ends; a negation in the middle of a longer request goes to the
model with the whole sentence. "Do not disturb", 勿扰 and "don't forget"/别忘了 are not negations, and
the words of a message being sent do not count.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from assistant_core.endings import WONT  # the declining line, said alone as the ending
from assistant_core.i18n import Catalog, Text
from assistant_core.types import Action, ActionError, ActionKind, Observation, Proposal, Query, Setting, Step
from harness.verify import extract
from harness.verify.registry import KindMatch, KindRegistry

log = logging.getLogger(__name__)

ASK = Catalog(
    "fastpath",
    {
        "which": "Which {name}: {options}?",
        "not_found": "I can't find “{name}” in your contacts. Who do you mean? Say a full name or a number.",
        "recipient": "Who should it go to?",
        "callee": "Who should I call?",
        "text": "What should the message say?",
        "time": "For what time?",
        "minutes": "For how long?",
        "percent": "How bright, in percent?",
        "app": "Which app?",
        "or": " or ",
    },
)

# What each fast-path step is announced as ("Step 1: ..."): plain words, never the plan's internal labels.
STEP_WORDS = Catalog(
    "fastpath_steps",
    {
        "ask": "I need one more detail from you.",
        "act": "I do it directly with the phone's own functions.",
        "done": "That was the last step.",
        "declined": "You said no, so I stop here.",
        "no_model": "Without the model I can't do this part.",
        "wont": "You asked me not to, so I do nothing.",
    },
)


class PlanStatus(StrEnum):
    ACT = "act"  # run `actions`
    ASK = "ask"  # put `question` to the user, fill `slot` from the answer
    HAND_OVER = "hand_over"  # not understood completely: the model takes the original goal
    DECLINE = "decline"  # the user says not to do it ("不要给她打电话", "No, leave it"): say "OK, I won't", do nothing


# Negation (Build 6 of issue 28): a request that says not to do something, or takes it back, is never
# acted on and never asked about. The phrases that only look negative come out first: "do not disturb"
# and 勿扰/免打扰 name a setting, "don't forget"/别忘了 asks for something.
_NOT_NEGATION = re.compile(
    r"\bdo[- ]not[- ]disturb\b|\bdon'?t forget\b|\bdo not forget\b|\bnever forget\b|\bnot to forget\b"
    r"|请勿打扰|免打扰|勿扰|别忘了|别忘记|不要忘了|不要忘记|不要忘|千万别忘|记得别忘", re.IGNORECASE)
_NEGATION_EN = re.compile(
    r"\b(?:don'?t|do not|dont|doesn'?t|never|didn'?t (?:ask|say|tell|want)|did not (?:ask|say|tell|want)"
    r"|no need|not now|not yet|no thanks?|no thank you|nope|no+|leave it|leave that|forget (?:it|that|about it)"
    r"|never ?mind|cancel (?:that|it|this|the request)|skip (?:it|that)|stop(?: it| that)?|hold (?:on|off)"
    r"|scratch that|wait|i changed my mind|changed my mind|not (?:call|text|send|turn|set|open|switch|do))\b"
    r"|\bno[,.!]", re.IGNORECASE)
_NEGATION_ZH = re.compile(
    r"不要|别|千万不|不用|不必|甭|没让你|没叫你|没要你|算了|不需要|用不着|无需|先不|暂时不|不许|不准|不想|"
    r"不打了|不发了|不开了|不关了|取消吧|还是不|停下|等一下|等等|不是让你|谁让你")
# A take-back at the end ("…？算了", "… No, leave it") or a negation up front ("Don't call…", "不要给…"):
# "OK, I won't". A negation in the middle of a request goes to the model with the whole sentence.
_TAKE_BACK = re.compile(
    r"(?:^|[?？!！。.,，;；:：\s])(?:no[,.!\s]*)?(?:no|nope|never ?mind|leave it|leave that|forget it|forget that|cancel (?:that|it|this)"
    r"|don'?t|do not|stop|not now|skip it|scratch that|no need|算了吧?|不用了?|不要了?|别了|别打了|别发了|不打了|不发了|"
    r"还是算了|还是不要了?|取消吧|先不要?了?|不要打了|不要发了|别打了吧|我没让你[^，。！？]*)[\s.!。！~～]*$", re.IGNORECASE)
_LEADING_NEGATION = re.compile(
    r"^(?:please[, ]*|but[, ]*|and[, ]*|oh[, ]*|wait[, ]*|hey[, ]*|请|可)?(?:don'?t|do not|dont|never(?! ?mind\b(?! *[,.!]* *(?:don|do not|$)))|(?:no|nope)\b(?![,.!]? *(?:problem|worries))|stop[,.!]|"
    r"i didn'?t|i did not|不要|别|千万不要|千万别|不用|不必|甭|我没让你|没让你|我不要|我不想|不许|不准|先不|暂时不|算了)",
    re.IGNORECASE)


def _without_names(text: str, facts: PhoneFacts) -> str:
    """The request without the contacts' names in it (a contact called "No Number" negates nothing)."""
    for c in sorted(facts.contacts, key=lambda c: -len(c.name)):
        if len(c.name) >= 2:
            # whole words only, an apostrophe included: a contact "Don" leaves "Don't call" alone
            text = re.sub(r"(?<![\w'’])" + re.escape(c.name) + r"(?![\w'’])", " ", text, flags=re.IGNORECASE)
    return " ".join(text.split())


def takes_back(answer: str) -> bool:
    """Whether an answer to the fast path's question is only a take-back ("算了", "never mind", "no"): the
    request is dropped. Anything more is an answer (a message may well say "don't wait for me")."""
    plain = " ".join(answer.replace("\u2019", "'").split())
    m = _TAKE_BACK.search(plain)
    return m is not None and not plain[: m.start()].strip(" ,.，。!！?？;；:：")


def negation(text: str, message: str = "") -> str:
    """How `text` says not to do something: "decline" (a take-back at the end, or a negation up front:
    "OK, I won't"), "hand_over" (a negation elsewhere: the model reads the whole sentence), or "" (none).
    The words of a message being sent (`message`) do not count: "Text Bob that I don't feel well" asks."""
    plain = _NOT_NEGATION.sub(" ", " ".join(text.replace("\u2019", "'").split())).strip()
    # Up front or at the very end it takes the request back, even where a message's words seem to hold it
    # ("给李波发短信说我晚点到，算了"): nothing is sent.
    if _LEADING_NEGATION.match(plain) or _TAKE_BACK.search(plain):
        return "decline"
    if message:
        plain = plain.replace(_NOT_NEGATION.sub(" ", " ".join(message.replace("\u2019", "'").split())).strip(), " ")
    if _NEGATION_EN.search(plain) or _NEGATION_ZH.search(plain):
        return "hand_over"
    return ""


@dataclass(frozen=True)
class Contact:
    name: str
    numbers: tuple[str, ...]


@dataclass(frozen=True)
class PhoneFacts:
    """What planning needs from the phone: contacts and installed apps (package -> label)."""

    contacts: tuple[Contact, ...] = ()
    apps: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class FastPlan:
    status: PlanStatus
    actions: tuple[Action, ...] = ()
    question: Text | None = None
    slot: str = ""  # the parameter the question asks for
    reason: str = ""
    kind: str = ""


# Settings kinds (harness/verify/kinds) and the tool action each becomes.
SETTING_KINDS: dict[str, tuple[Setting, str]] = {
    "wifi_on": (Setting.WIFI, "on"), "wifi_off": (Setting.WIFI, "off"),
    "bluetooth_on": (Setting.BLUETOOTH, "on"), "bluetooth_off": (Setting.BLUETOOTH, "off"),
    "airplane_on": (Setting.AIRPLANE_MODE, "on"), "airplane_off": (Setting.AIRPLANE_MODE, "off"),
    "dark_theme_on": (Setting.DARK_MODE, "on"), "dark_theme_off": (Setting.DARK_MODE, "off"),
    "location_on": (Setting.LOCATION, "on"), "location_off": (Setting.LOCATION, "off"),
    "dnd_on": (Setting.DO_NOT_DISTURB, "on"), "dnd_off": (Setting.DO_NOT_DISTURB, "off"),
}
QUERY_KINDS: dict[str, Query] = {
    "ask_screen": Query.SCREEN, "ask_notifications": Query.NOTIFICATIONS, "ask_messages": Query.MESSAGES,
    "ask_battery": Query.BATTERY, "ask_time": Query.TIME, "ask_next_alarm": Query.NEXT_ALARM,
    "ask_wifi_network": Query.WIFI_NETWORK,
}
# Two requests in one sentence: each part must plan on its own, else the model takes the whole.
_JOINERS = re.compile(r"\s*(?:,?\s+and then\s+|,?\s+then\s+|,?\s+and also\s+|,?\s+and\s+|[,，]?\s*然后\s*|[,，]?\s*并且\s*|[,，]?\s*再\s+|；|;)\s*",
                      re.IGNORECASE)
# A text request that names only the recipient ("Text Alice Chen", "给陈爱丽发短信"): ask for the words.
_RECIPIENT_ONLY = (
    re.compile(r"^(?:please,? )?(?:text|message|sms|send (?:an? )?(?:text|message|sms)(?: message)? to|write to)\s+"
               r"(?P<r>[^,.!?\d][^,.!?]*?)\s*[.!?]?$", re.IGNORECASE),
    re.compile(r"^(?:请|麻烦)?(?:帮我)?(?:给|发短信给|发信息给)\s*(?P<r>[^，,。！？\s]+?)\s*(?:发(?:个|一条)?(?:短信|消息|信息))?[。！]?$"),
)
# An alarm's label, as people give it: "labelled 'Walk the dog'", "called pills", "标签是“遛狗”".
_ALARM_LABEL = (
    re.compile(r"\b(?:label(?:l)?ed|called|named|titled|with (?:the )?(?:label|name))\s+[\"'“‘]?(?P<l>[^\"'”’]+?)[\"'”’]?\s*[.!]?$",
               re.IGNORECASE),
    re.compile(r"(?:标签|名称|名字|备注)(?:是|为|叫|写)?\s*[“\"「『]?(?P<l>[^”\"」』。！]+)[”\"」』]?[。！]?$"),
)
_LABEL_WORDS = re.compile(r"\b(?:label\w*|called|named|titled)\b|标签|名称|备注", re.IGNORECASE)
# A repeating alarm needs the Clock's own screens (the intent's EXTRA_DAYS is not honoured everywhere).
_REPEAT_WORDS = re.compile(r"\b(?:every|each|daily|weekdays?|weekends?|repeat(?:ing)?|mondays?|tuesdays?|wednesdays?|"
                           r"thursdays?|fridays?|saturdays?|sundays?)\b|每天|每日|每周|工作日|周末|重复|星期|礼拜",
                           re.IGNORECASE)
_DAY_WORDS = re.compile(r"\b(?:today|tonight|tomorrow)\b|今天|今晚|明天|明早", re.IGNORECASE)


def _norm(name: str) -> str:
    return " ".join(name.split()).casefold().strip(" .。!！?？")


def find_contacts(name: str, contacts: Sequence[Contact]) -> list[Contact]:
    """Contacts the user may mean: exact name (any case) first, else those whose name contains it as a
    whole word (English) or a part (Chinese). Never a fuzzy guess."""
    want = _norm(name)
    if not want:
        return []
    exact = [c for c in contacts if _norm(c.name) == want]
    if exact:
        return exact
    out = []
    for c in contacts:
        have = _norm(c.name)
        if re.search(r"[\u4e00-\u9fff]", want):
            if want in have:
                out.append(c)
        elif re.search(rf"(?<!\w){re.escape(want)}(?!\w)", have):
            out.append(c)
    return out


class FastPlanner:
    """Turns a request into a FastPlan (see the module docstring). Pure: no phone access."""

    def __init__(self, kinds: KindRegistry | None = None):
        self.kinds = kinds or KindRegistry.load()
        from harness.phoneworld.split import HeldOutDataError, is_heldout_source

        for kind in self.kinds.kinds:  # phrase data written from the held-out split would leak it
            if is_heldout_source(kind.source):
                raise HeldOutDataError(f"the fast path refuses phrase data from the held-out split: {kind.source}")

    def plan(self, goal: str, facts: PhoneFacts, *, answers: Sequence[str] = ()) -> FastPlan:
        text = " ".join(goal.split())
        if not text:
            return FastPlan(PlanStatus.HAND_OVER, reason="empty request")
        # Never act on, and never ask about, what the user says not to do (or takes back in an answer).
        said = negation(_without_names(text, facts), self._message_words(text))
        if said == "decline" or any(takes_back(a) for a in answers):
            return FastPlan(PlanStatus.DECLINE, reason="the user said not to do it")
        if said:
            return FastPlan(PlanStatus.HAND_OVER, reason="a negation the fast path does not read")
        parts = [p for p in _JOINERS.split(text) if p.strip()]
        if len(parts) > 1 and not answers:
            plans = [self._one(p, facts, ()) for p in parts]
            if all(p.status is PlanStatus.ACT for p in plans) and len({p.kind for p in plans}) == len(plans):
                return FastPlan(PlanStatus.ACT, tuple(a for p in plans for a in p.actions), kind="+".join(p.kind for p in plans))
            whole = self._one(text, facts, answers)
            # "and" inside a message's words is not a second request; anything else the plan would drop is.
            said = whole.actions[0].text or "" if whole.actions and whole.actions[0].kind is ActionKind.SEND_TEXT else ""
            if whole.status is not PlanStatus.ACT or parts[-1].strip(" .。!！") in said:
                return whole
            return FastPlan(PlanStatus.HAND_OVER, reason="a second request the fast path does not understand",
                            kind=whole.kind)
        return self._one(text, facts, answers)

    def _message_words(self, text: str) -> str:
        """The words of the message a texting request would send (not the request's own words)."""
        match = self.kinds.match(text)
        if match is None or match.kind.name != "send_message":
            return ""
        return str(getattr(match.params, "text", "") or "")

    def _one(self, text: str, facts: PhoneFacts, answers: Sequence[str]) -> FastPlan:
        match = self.kinds.match(text)
        if match is None:
            return FastPlan(PlanStatus.HAND_OVER, reason="no task kind recognises this request")
        name = match.kind.name
        try:
            if name in QUERY_KINDS:
                return self._query(match, facts, answers)
            if name in SETTING_KINDS:
                setting, value = SETTING_KINDS[name]
                return _act(name, Action.set_setting(setting, value))
            if name == "set_brightness":
                if match.params.percent < 0:
                    return self._ask(name, "percent", answers, facts, match)
                return _act(name, Action.set_setting(Setting.BRIGHTNESS, str(max(0, min(100, match.params.percent)))))
            if name == "call":
                return self._call(match, facts, answers)
            if name == "send_message":
                return self._text(match, text, facts, answers)
            if name == "set_alarm":
                return self._alarm(match, text, answers, facts)
            if name == "start_timer":
                if match.params.minutes <= 0:
                    return self._ask(name, "minutes", answers, facts, match)
                return _act(name, Action.set_timer(match.params.minutes * 60))
            if name == "open_app":
                return self._open_app(match, facts, answers)
        except ActionError as error:  # a value the action refuses (a bad number): the model decides
            return FastPlan(PlanStatus.HAND_OVER, reason=f"{name}: {error}", kind=name)
        return FastPlan(PlanStatus.HAND_OVER, reason=f"{name} has no tool path", kind=name)

    # --- per kind ------------------------------------------------------------------------------------

    def _ask(self, kind: str, slot: str, answers: Sequence[str], facts: PhoneFacts, match: KindMatch) -> FastPlan:
        if answers:
            # The answer fills the slot; a reply that still does not give it hands over.
            answer = answers[0]
            value: Any = None
            if slot == "time":
                value = extract.parse_clock(answer)
            elif slot == "minutes":
                value = extract.parse_minutes(answer)
            elif slot == "percent":
                value = extract.parse_percent(answer)
            if value:
                from dataclasses import replace

                filled = replace(match, params=replace(match.params, **{slot: value}), missing=())
                return self._from_match(filled, facts, answers[1:])
            return FastPlan(PlanStatus.HAND_OVER, reason=f"the answer did not give the {slot}", kind=kind)
        key = {"recipient": "callee" if kind == "call" else "recipient"}.get(slot, slot)
        return FastPlan(PlanStatus.ASK, question=ASK[key], slot=slot, kind=kind)

    def _from_match(self, match: KindMatch, facts: PhoneFacts, answers: Sequence[str]) -> FastPlan:
        name = match.kind.name
        if name == "set_alarm":
            return _act(name, Action.set_alarm(match.params.time))
        if name == "start_timer":
            return _act(name, Action.set_timer(match.params.minutes * 60))
        if name == "set_brightness":
            return _act(name, Action.set_setting(Setting.BRIGHTNESS, str(max(0, min(100, match.params.percent)))))
        return FastPlan(PlanStatus.HAND_OVER, reason=f"{name}: cannot fill", kind=name)

    def _who(self, kind: str, name: str, facts: PhoneFacts, answers: Sequence[str]) -> tuple[str, str] | FastPlan:
        """(display name, number) for a recipient, or the plan that asks which one."""
        if extract.looks_like_number(name) and re.fullmatch(r"\+?[\d\s\-()]+", name.strip()):
            return "", name.strip()
        found = find_contacts(name, facts.contacts)
        if answers and (len(found) != 1 or not found[0].numbers):
            answer = answers[0]
            if extract.looks_like_number(answer) and re.fullmatch(r"\+?[\d\s\-()]+", answer.strip()):
                return "", answer.strip()
            pool = found or list(facts.contacts)
            narrowed = find_contacts(answer, pool)
            if len(narrowed) != 1:  # the answer may name the full contact, or only what tells them apart
                narrowed = [c for c in pool if _norm(answer) and _norm(answer) in _norm(c.name)]
            if len(narrowed) == 1 and narrowed[0].numbers:
                return narrowed[0].name, narrowed[0].numbers[0]
            return FastPlan(PlanStatus.HAND_OVER, reason=f"the answer {answer!r} did not pick one contact", kind=kind)
        if len(found) == 1 and found[0].numbers:
            return found[0].name, found[0].numbers[0]
        if not found or not any(c.numbers for c in found):
            return FastPlan(PlanStatus.ASK, question=ASK["not_found"].format(name=name), slot="recipient", kind=kind)
        names = [c.name for c in found if c.numbers][:4]
        options = Text(ASK["or"].en.join(names), ASK["or"].zh.join(names))
        return FastPlan(PlanStatus.ASK, slot="recipient", kind=kind,
                        question=Text(ASK["which"].en.format(name=name, options=options.en),
                                      ASK["which"].zh.format(name=name, options=options.zh)))

    def _call(self, match: KindMatch, facts: PhoneFacts, answers: Sequence[str]) -> FastPlan:
        recipient = match.params.recipient
        if not recipient:
            if not answers:
                return self._ask("call", "recipient", answers, facts, match)
            recipient, answers = answers[0], answers[1:]
        who = self._who("call", recipient, facts, answers)
        if isinstance(who, FastPlan):
            return who
        name, number = who
        return _act("call", Action.call(number, name))

    def _text(self, match: KindMatch, text: str, facts: PhoneFacts, answers: Sequence[str]) -> FastPlan:
        p = match.params
        if p.sender or p.about or p.event:
            return FastPlan(PlanStatus.HAND_OVER, reason="the text comes from something on the phone", kind="send_message")
        recipient, body = p.recipient, p.text
        if not recipient and not body:  # "Text Alice Chen": the kind's patterns want the words too
            named = next((m for m in (r.match(text) for r in _RECIPIENT_ONLY) if m), None)
            recipient = named.group("r").strip() if named else ""
        if not recipient:
            if not answers:
                return FastPlan(PlanStatus.ASK, question=ASK["recipient"], slot="recipient", kind="send_message")
            recipient, answers = answers[0], answers[1:]
        who = self._who("send_message", recipient, facts, answers if body else answers[:0])
        if isinstance(who, FastPlan):
            return who
        if not body:
            if not answers:
                return FastPlan(PlanStatus.ASK, question=ASK["text"], slot="text", kind="send_message")
            body = answers[-1]
        name, number = who
        return _act("send_message", Action.send_text(number, body, name))

    def _alarm(self, match: KindMatch, text: str, answers: Sequence[str], facts: PhoneFacts) -> FastPlan:
        """An alarm at a time today or tomorrow, with its label if one is given; a repeating one, or one on
        another day, goes to the model."""
        p = match.params
        if p.sender:
            return FastPlan(PlanStatus.HAND_OVER, reason="the time comes from a message", kind="set_alarm")
        if p.date and not _DAY_WORDS.search(p.date):
            return FastPlan(PlanStatus.HAND_OVER, reason="an alarm on another day needs the Clock's screens", kind="set_alarm")
        if _REPEAT_WORDS.search(text):
            return FastPlan(PlanStatus.HAND_OVER, reason="a repeating alarm needs the Clock's screens", kind="set_alarm")
        label = ""
        if _LABEL_WORDS.search(text):
            found = next((m for m in (r.search(text) for r in _ALARM_LABEL) if m), None)
            if found is None:
                return FastPlan(PlanStatus.HAND_OVER, reason="an alarm label I could not read", kind="set_alarm")
            label = found.group("l").strip()
        if not p.time:
            return self._ask("set_alarm", "time", answers, facts, match)
        return _act("set_alarm", Action.set_alarm(p.time, label))

    def _open_app(self, match: KindMatch, facts: PhoneFacts, answers: Sequence[str]) -> FastPlan:
        from harness.appnames import resolve_app

        name = match.params.app or match.params.package
        if not name:
            return FastPlan(PlanStatus.HAND_OVER, reason="no app named", kind="open_app")
        package = resolve_app(name, facts.apps) if facts.apps else None
        if package is None or package not in facts.apps:
            return FastPlan(PlanStatus.HAND_OVER, reason=f"no installed app called {name!r}", kind="open_app")
        return _act("open_app", Action.open_app(package))

    def _query(self, match: KindMatch, facts: PhoneFacts, answers: Sequence[str]) -> FastPlan:
        query = QUERY_KINDS[match.kind.name]
        if query is not Query.MESSAGES:
            return _act(match.kind.name, Action.ask_phone(query))
        who = self._who(match.kind.name, match.params.sender, facts, answers)
        if isinstance(who, FastPlan):
            return who
        name, number = who
        return _act(match.kind.name, Action.ask_phone(Query.MESSAGES, number=number, contact=name or number))


def _act(kind: str, *actions: Action) -> FastPlan:
    return FastPlan(PlanStatus.ACT, tuple(actions), kind=kind)


# --- reading the facts from a phone ---------------------------------------------------------------------

CONTACTS = ("content query --uri content://com.android.contacts/data "
            "--projection contact_id:mimetype:display_name:data1")


def read_contacts(device: Any) -> tuple[Contact, ...] | None:
    """The phone's contacts from the contacts provider (as the outcome checks read them); None when they
    cannot be read (no shell, a refused query)."""
    from harness.verify import readers
    from harness.verify.probe import ProbeError, probe_for

    probe = probe_for(device)
    if probe is None:
        return None
    try:
        rows = readers.parse_rows(probe.shell(CONTACTS), ("contact_id", "mimetype", "display_name", "data1"))
    except (ProbeError, readers.Unreadable) as error:
        log.warning("contacts unreadable: %s", error)
        return None
    by_id: dict[str, Contact] = {}
    for row in rows:
        cid = row["contact_id"] or ""
        c = by_id.get(cid) or Contact(row["display_name"] or "", ())
        if row["mimetype"] == "vnd.android.cursor.item/phone_v2" and row["data1"]:
            c = Contact(c.name, c.numbers + (row["data1"],))
        by_id[cid] = c
    return tuple(by_id.values())


def contact_book(contacts: Sequence[Contact] | None) -> dict[str, tuple[str, ...]] | None:
    """name -> numbers, for the gate's read-backs (`GateContext.contacts`); None stays None (unread)."""
    if contacts is None:
        return None
    book: dict[str, tuple[str, ...]] = {}
    for c in contacts:
        if c.name:
            book[c.name] = book.get(c.name, ()) + c.numbers
    return book


def read_facts(device: Any) -> PhoneFacts:
    """Contacts (content provider, as the outcome checks read them) and installed apps of a Device."""
    apps = dict(device.installed_apps())
    return PhoneFacts(read_contacts(device) or (), apps)


# --- the policy that runs a plan ----------------------------------------------------------------------------


WITHOUT_MODEL = Text("I can't do that without the model. Without it I can call, text, set alarms and timers, switch settings, open apps and answer questions about the phone.")


@dataclass
class WithoutModel:
    """The fallback when no model is there: says plainly what it cannot do, then finishes."""

    lang: str = "en"
    said: bool = False

    def propose(self, goal: str, observation: Observation, history: Sequence[Step]) -> Proposal:
        if not self.said:
            self.said = True
            return Proposal(Action.output(WITHOUT_MODEL.get(self.lang)), thought=STEP_WORDS.get("no_model", self.lang))
        return Proposal(Action.finish(""), thought=STEP_WORDS.get("no_model", self.lang))


@dataclass
class FastPathPolicy:
    """A Policy: the fast path's plan first; the fallback (the model, the oracle, or noop) for anything
    the plan does not cover, with the original goal, from the step it takes over.

    The user's answers to its questions are the loop's typed exchanges (`observation.exchanges`), read as
    they are: the goal is the request as said, never parsed for answers.

    `facts` is read from `device` once, on the first step. After a tool the phone refused (a step with
    an error) the fallback takes over; after a no to a confirmation the run finishes (nothing is retried).
    """

    planner: FastPlanner
    fallback: Any
    device: Any = None
    facts: PhoneFacts | None = None
    lang: str = "en"
    plan_: FastPlan | None = field(default=None, repr=False)
    handed_at: int | None = None  # history index where the fallback took over
    handover_reason: str = ""
    next_action: int = 0
    answered: int = 0

    @property
    def handed_over(self) -> bool:
        return self.handed_at is not None

    def understands(self, goal: str) -> bool:
        """Whether the fast path would act on or ask about this request (not hand it over), on this phone."""
        if self.facts is None:
            self.facts = read_facts(self.device) if self.device is not None else PhoneFacts()
        return self.planner.plan(goal, self.facts).status is not PlanStatus.HAND_OVER

    def _hand_over(self, reason: str, history: Sequence[Step]) -> None:
        log.info("fast path hands over to the model: %s", reason)
        self.handed_at, self.handover_reason = len(history), reason

    def propose(self, goal: str, observation: Observation, history: Sequence[Step]) -> Proposal:
        if self.handed_at is None:
            answers = [exchange.answer for exchange in observation.exchanges]
            proposal = self._propose(goal, answers, history)
            if proposal is not None:
                return proposal
        # The fallback gets the same goal and the same observation, the user's answers on it.
        return self.fallback.propose(goal, observation, list(history)[self.handed_at or 0:])

    def _propose(self, request: str, answers: list[str], history: Sequence[Step]) -> Proposal | None:
        last = history[-1] if history else None
        if last is not None and last.action.is_tool:
            if last.confirmation is not None and last.confirmation.value != "yes":
                return Proposal(Action.finish(""), thought=STEP_WORDS.get("declined", self.lang))
            if not last.executed:
                self._hand_over(f"the phone refused {last.action.kind}: {last.error}", history)
                return None
        if self.plan_ is None or len(answers) > self.answered:
            if self.facts is None:
                self.facts = read_facts(self.device) if self.device is not None else PhoneFacts()
            self.plan_ = self.planner.plan(request, self.facts, answers=answers)
            self.answered, self.next_action = len(answers), 0
        plan = self.plan_
        if plan.status is PlanStatus.DECLINE:
            return Proposal(Action.finish(WONT.get(self.lang)), thought=STEP_WORDS.get("wont", self.lang))
        if plan.status is PlanStatus.HAND_OVER:
            self._hand_over(plan.reason, history)
            return None
        if plan.status is PlanStatus.ASK:
            if len(answers) > 2:  # asked twice already: the model (or the user) takes it from here
                self._hand_over("still not clear after two answers", history)
                return None
            assert plan.question is not None
            return Proposal(Action.call_user(plan.question.get(self.lang)), thought=STEP_WORDS.get("ask", self.lang))
        if self.next_action < len(plan.actions):
            action = plan.actions[self.next_action]
            self.next_action += 1
            return Proposal(action, thought=STEP_WORDS.get("act", self.lang), raw_text=f"fastpath:{action.to_dict()}")
        return Proposal(Action.finish(""), thought=STEP_WORDS.get("done", self.lang))


__all__ = ["FastPlan", "FastPlanner", "FastPathPolicy", "PhoneFacts", "Contact", "PlanStatus", "WONT", "WithoutModel",
           "contact_book", "find_contacts", "negation", "read_contacts", "read_facts"]
