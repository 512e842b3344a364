"""The confirmation contract: what the user is asked before a sensitive action, and how the answer comes.

A `ConfirmationRequest` says in plain words what will happen, to whom, how much and in which app, in
English and Chinese (`spoken(lang)`), plus how to answer. A `Confirmer` is anything that can put the
question to the user (the app's dialog plus spoken yes/no, the console, a test script) and returns
`ConfirmAnswer.YES`, `NO`, `REPEAT`, or None when no answer came within one listening window.

No answer means no. There is no short time limit: `Patience` sets how long each window lasts (None:
wait as long as it takes) and how many spoken reminders come before the request is given up as a no.
The loop drives the exchange (`ConfirmationFlow`) so each reminder and re-reading is a visible event.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from assistant_core.gatewords import Category, category_phrase, context_labels, target_words
from assistant_core.i18n import Catalog, Text
from assistant_core.textcheck import visible_text
from assistant_core.toolbox import TOOLS
from assistant_core.types import Action, ActionKind, ConfirmAnswer, Decision, Observation, UIElement

MSG = Catalog(
    "confirm",
    {
        "question": "{what}{whom}{amount} in {app}. Shall I go ahead?",
        "press": "I'm about to {what}: press “{target}”",
        "act": "I'm about to {what}",
        "typed": ", with the text “{typed}”",
        "to_whom": ", to {whom}",
        "question_unknown": "{what}{amount} in {app}. {note} Shall I go ahead?",
        "whom_unknown_money": "I can't tell who will receive the money.",
        "whom_unknown": "I can't tell who will receive it.",
        "amount": ", for {amount}",
        "item": ": {item}",
        "address": ", delivered to {address}",
        "how_to_answer": "Say yes, no, or repeat.",
        "reminder": "I'm still waiting for your answer: {question}",
        "gave_up": "No answer, so I did not do it.",
        "declined": "OK, I did not do it.",
        "accepted": "OK, doing it now.",
    },
)

# Amounts: ¥12.50, $3, 12 元, 1,299.00 CNY ...
_AMOUNT_RE = re.compile(
    r"(?:[¥￥$€£]\s?\d[\d,]*(?:\.\d+)?|\d[\d,]*(?:\.\d+)?\s?(?:元|块钱|块|USD|CNY|RMB|yuan|dollars?|EUR|GBP))",
    re.IGNORECASE,
)
_TOTAL_RE = re.compile(r"total|amount|due|pay|合计|总计|实付|应付|金额|支付|共计", re.IGNORECASE)
WHOM_CATEGORIES = frozenset({Category.SEND, Category.CALL, Category.TRANSFER, Category.SHARE, Category.PAYMENT})
MAX_READBACK = 60


def _clip(text: str, limit: int = MAX_READBACK) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class ConfirmationRequest:
    """One question to the user before a sensitive action. All fields are already safe to speak.

    `what` is the category phrase; `target` the label of the button; `typed` the text that will be sent
    (never a secret: the gate hands secret fields to the user before a request is built); `to_whom` and
    `how_much` come from the screen's short labels when they can be found, else are empty.
    """

    action: Action
    decision: Decision
    category: Category | None
    app: str
    what: Text
    target: str = ""
    to_whom: str = ""
    how_much: str = ""
    typed: str = ""
    whom_unknown: bool = False  # the step goes to someone, and the screen does not say to whom
    whom_said: Text | None = None  # a tool's recipient as the phone's contacts name it (assistant_core.toolgate)
    item: str = ""  # what is bought (a purchase or payment screen's product name), when the screen says
    address: str = ""  # where it is delivered, when the screen says

    @property
    def payee(self) -> str:
        """Who receives the money: the screen's payee, else (a purchase in a shop's own app) the app."""
        return self.to_whom or (self.app if self.category in PURCHASE_CATEGORIES else "")

    @property
    def question(self) -> Text:
        parts = {}
        for lang in ("en", "zh"):
            what = self.what.get(lang)
            head = (MSG["press"].get(lang, what=what, target=self.target) if self.target
                    else MSG["act"].get(lang, what=what))
            if self.typed:
                head += MSG["typed"].get(lang, typed=self.typed)
            if self.item:
                head += MSG["item"].get(lang, item=self.item)
            if self.address:
                head += MSG["address"].get(lang, address=self.address)
            whom_text = self.whom_said.get(lang) if self.whom_said is not None else self.to_whom
            whom = MSG["to_whom"].get(lang, whom=whom_text) if whom_text else ""
            amount = MSG["amount"].get(lang, amount=self.how_much) if self.how_much else ""
            if not self.to_whom and self.whom_unknown:
                note = MSG["whom_unknown_money" if self.category in MONEY_CATEGORIES else "whom_unknown"].get(lang)
                parts[lang] = MSG["question_unknown"].get(lang, what=head, amount=amount, app=self.app, note=note)
                continue
            parts[lang] = MSG["question"].get(lang, what=head, whom=whom, amount=amount, app=self.app)
        # Nothing shown or spoken may carry bidi controls or invisible characters (safety.visible_text).
        return Text(visible_text(parts["en"]), visible_text(parts["zh"]))

    def spoken(self, lang: str = "en") -> str:
        """The full read-back with how to answer, in one language."""
        return f"{self.question.get(lang)} {MSG['how_to_answer'].get(lang)}"

    @property
    def text(self) -> Text:
        return Text(self.spoken("en"), self.spoken("zh"))

    def reminder(self) -> Text:
        return Text(MSG["reminder"].get("en", question=self.spoken("en")),
                    MSG["reminder"].get("zh", question=self.spoken("zh")))


def build_request(
    action: Action,
    decision: Decision,
    observation: Observation,
    *,
    app: str,
    typed: str = "",
) -> ConfirmationRequest:
    """Read the request back from the action, the gate's decision and the screen's short labels."""
    raw_category = decision.details.get("category")
    category = Category(raw_category) if raw_category else None
    target_el: UIElement | None = observation.element_at(*action.point) if action.point is not None else None
    target = _clip(target_el.label or target_words_only(observation, target_el)) if target_el is not None else ""
    if category is not None:
        what = category_phrase(category)
    else:
        what = decision.reason
    labels = context_labels(observation)
    amount = find_amount(([target_el.label] if target_el is not None and target_el.label else []) + list(labels))
    if decision.details.get("privacy"):
        amount = ""  # a privacy question is about what is typed where, not about the screen's price
    whom = (find_recipient(observation, category=category, target=target_el, target_label=target)
            if category in WHOM_CATEGORIES else "")
    if action.kind is ActionKind.TYPE and action.text:
        typed = action.text
    if typed and whom and _digits(typed) and _digits(typed) == _digits(whom):
        typed = ""  # the number typed on the keypad is who is called: say it once
    if action.is_tool:
        # A tool does not act on the screen: read back what the action itself will do, with the app that
        # handles it (never the screen's recipient or the foreground app, which may be anything).
        # The gate's read-back comes from the phone: the number digit by digit with its contact's name, the
        # whole message (never clipped), what a connection-cutting switch does.
        said = decision.details.get("say_whom")
        whom_said = said if isinstance(said, Text) else None
        whom = whom_said.en if whom_said is not None else (action.number or "")
        typed = str(decision.details.get("say_text", action.text or "")) if action.kind is ActionKind.SEND_TEXT else ""
        # What the tool will do, as its spec reads it back (assistant_core.toolbox); the gate's own words
        # for a switch that can cut the connection come first.
        what = decision.details.get("say_what") or TOOLS[action.kind.value].read_back(action)  # type: ignore[assignment]
        app = str(decision.details.get("app") or app)
        return ConfirmationRequest(action=action, decision=decision, category=category, app=app, what=what,
                                   to_whom=whom, typed=typed, whom_said=whom_said,
                                   whom_unknown=category in WHOM_CATEGORIES and not whom)
    item = address = ""
    if category in PURCHASE_CATEGORIES and not action.is_tool:
        item = _clip(_field(observation, _ITEM_FIELD_RE), 40)
        address = _clip(_field(observation, _ADDRESS_FIELD_RE), 50)
    return ConfirmationRequest(action=action, decision=decision, category=category, app=app, what=what,
                               target=target, to_whom=_clip(whom, 40), how_much=amount,
                               typed=" ".join(typed.split()),  # in full: a yes counts for every word that is sent
                               whom_unknown=category in WHOM_CATEGORIES and not whom, item=item, address=address)


def target_words_only(observation: Observation, target: UIElement) -> str:
    """The labels inside a target that has none of its own (a list row)."""
    own = target.text or target.content_desc
    return own or target_words(observation, target).replace(target.resource_id.rsplit("/", 1)[-1].replace("_", " "), "").strip()


def find_amount(labels: Iterable[str]) -> str:
    """The amount of money the screen is about: one next to 'total'/'合计' first, else the first one."""
    first = ""
    for label in labels:
        match = _AMOUNT_RE.search(label)
        if match is None:
            continue
        if _TOTAL_RE.search(label):
            return match.group(0).strip()
        first = first or match.group(0).strip()
    return first


_PHONE_NUMBER_RE = re.compile(r"\+?[\d\s\-()]{5,}")
# Fields that hold who a message, call or share goes to; the payee of a payment; a person's name.
_RECIPIENT_FIELD_RE = re.compile(r"recipient|(?:^|_)to(?:$|_)|receiver|contact_name|phone_number|(?:^|_)number(?:$|_)|digits")
_PAYEE_FIELD_RE = re.compile(r"payee|merchant|receiver|recipient|beneficiary")
_NAME_FIELD_RE = re.compile(r"(?:^|_)(?:name|contact_name|chat_title|display_name)$")
_TITLE_FIELD_RE = re.compile(r"(?:^|_)(?:title|toolbar_title)$")
# How an empty field's hint reads (uiautomator reports an empty EditText's hint as its text).
_HINT_RE = re.compile(r"\((?:optional|required)\)|（(?:选填|可选|必填)）|^(?:enter|type|search|add)\b|^(?:请输入|输入|搜索|添加)",
                      re.IGNORECASE)
# "Pay Shop" / "Pay to Shop" / "向商城付款" / "付款给商城": the payee inside the label.
_PAYEE_WORDS_RE = re.compile(r"^(?:pay(?:ing)?(?:\s+to)?|to|收款方[:：]?|付款给|支付给|向)\s*|\s*(?:付款|支付)$", re.IGNORECASE)
MONEY_CATEGORIES = frozenset({Category.PAYMENT, Category.TRANSFER})
# A purchase is asked once, with what is bought, for how much, from whom, delivered where and in which app;
# its later steps with the same amount and payee are covered by that yes (assistant_core.loop).
PURCHASE_CATEGORIES = frozenset({Category.PAYMENT, Category.PURCHASE})
_ITEM_FIELD_RE = re.compile(r"(?:^|_)(?:product|item|goods|dish)_?(?:name|title)$")
_ADDRESS_FIELD_RE = re.compile(r"(?:^|_)(?:delivery_)?address$")
TITLE_CATEGORIES = frozenset({Category.SEND, Category.CALL})  # a chat's or contact's title names the person


def _digits(text: str) -> str:
    return re.sub(r"\D", "", text) if _PHONE_NUMBER_RE.fullmatch(text.strip()) else ""


def _rid(el: UIElement) -> str:
    return el.resource_id.rsplit("/", 1)[-1].lower()


def _is_hint(el: UIElement) -> bool:
    """An empty input field showing its hint: '(optional)', 'Enter…', or its own field name as text."""
    text = el.text.strip()
    if not text or _HINT_RE.search(text):
        return True
    if "edittext" in el.class_name.lower():
        words = _rid(el).replace("_", " ").strip()
        return bool(words) and words in text.lower()
    return False


def _field(observation: Observation, pattern: re.Pattern[str]) -> str:
    """The text of the first field whose resource id matches; never a hint or an empty field."""
    for el in observation.elements or ():
        if el.text and pattern.search(_rid(el)) and len(el.text) <= 40 and not _is_hint(el):
            return el.text.strip()
    return ""


def _is_generic_title(text: str) -> bool:
    """A title that names the screen ("Send to…", "New message:"), not a person."""
    return text.rstrip().endswith(("…", "...", ":", "：")) or len(text) > 30


def find_recipient(observation: Observation, *, category: Category | None = None,
                   target: UIElement | None = None, target_label: str = "") -> str:
    """Who the step goes to, from the fields that hold it, or "" when the screen does not say (the
    read-back then says it cannot tell, rather than guess).

    Money (payment, transfer): only a payee/merchant field counts ("Pay Shop" → "Shop"); a delivery name
    or the screen's title is not who receives the money. Otherwise: a recipient or number field, with the
    person's name before it when a name field holds one; a contact row pressed in a list; and, for a
    message or a call only, the chat's or contact's title. Empty fields and their hints never count.
    """
    if not observation.elements:
        return ""
    if category in MONEY_CATEGORIES:
        payee = _field(observation, _PAYEE_FIELD_RE)
        return _PAYEE_WORDS_RE.sub("", payee).strip() if payee else ""
    recipient = _field(observation, _RECIPIENT_FIELD_RE)
    name = _field(observation, _NAME_FIELD_RE)
    if recipient:
        if name and _PHONE_NUMBER_RE.fullmatch(recipient) and not _PHONE_NUMBER_RE.fullmatch(name):
            return f"{name} ({recipient})"  # a person is easier to recognise by name than by number
        return recipient
    if name:
        return name
    title = _field(observation, _TITLE_FIELD_RE)
    label = target_label or (target.label if target is not None else "")
    if (title and _is_generic_title(title) and label and target is not None
            and "button" not in target.class_name.lower() and not _is_generic_title(label)):
        return label.strip()  # the screen asks "Send to…" and the pressed row is the answer
    if (category is None or category in TITLE_CATEGORIES) and title and not _is_generic_title(title):
        return title
    return ""


# --- who answers ----------------------------------------------------------------------------------------


@runtime_checkable
class Confirmer(Protocol):
    """Puts a request to the user. Returns YES, NO, REPEAT, or None when no answer came in `timeout_s`
    (None: wait as long as it takes). Must not raise for a missing answer."""

    def ask(self, request: ConfirmationRequest, *, timeout_s: float | None) -> ConfirmAnswer | None: ...


@dataclass(frozen=True)
class Patience:
    """How long to wait for an answer: each window lasts `window_s` (None: no limit) and after each silent
    window a reminder is spoken, up to `reminders` times; then the answer counts as no. `max_repeats`
    bounds how often the user can ask to hear the request again."""

    window_s: float | None = 60.0
    reminders: int = 3
    max_repeats: int = 10


@dataclass
class FixedConfirmer:
    """Always the same answer (the CLI's --confirm yes / no). Records every request it saw."""

    answer: ConfirmAnswer | None
    seen: list[ConfirmationRequest] = field(default_factory=list)

    def ask(self, request: ConfirmationRequest, *, timeout_s: float | None) -> ConfirmAnswer | None:
        self.seen.append(request)
        return self.answer


@dataclass
class ScriptedConfirmer:
    """Answers from a list in order (tests); when the list runs out, no answer (which means no)."""

    answers: list[ConfirmAnswer | None]
    seen: list[ConfirmationRequest] = field(default_factory=list)

    def ask(self, request: ConfirmationRequest, *, timeout_s: float | None) -> ConfirmAnswer | None:
        self.seen.append(request)
        return self.answers.pop(0) if self.answers else None


@dataclass
class CallbackConfirmer:
    """Wraps a plain callable `(request, timeout_s) -> answer`, e.g. a Qt dialog bridge."""

    callback: Callable[[ConfirmationRequest, float | None], ConfirmAnswer | None]

    def ask(self, request: ConfirmationRequest, *, timeout_s: float | None) -> ConfirmAnswer | None:
        return self.callback(request, timeout_s)


@dataclass(frozen=True)
class FlowStep:
    """One moment of a confirmation exchange: something to say (a reminder, the read-back again) or the
    final answer (`final` set)."""

    say: Text | None = None
    final: ConfirmAnswer | None = None
    by_default: bool = False  # the answer is "no" because no answer came


def confirmation_flow(
    request: ConfirmationRequest,
    confirmer: Confirmer,
    patience: Patience,
    *,
    stopped: Callable[[], bool] = lambda: False,
) -> Iterator[FlowStep]:
    """Ask until a yes or no, re-reading on "repeat" and reminding after silence; ends with a final step.

    The final answer is YES only when the user said yes; silence past the reminders, a stop, or too many
    repeats all end as NO.
    """
    reminders = repeats = 0
    while True:
        if stopped():
            yield FlowStep(final=ConfirmAnswer.NO, by_default=True)
            return
        answer = confirmer.ask(request, timeout_s=patience.window_s)
        if stopped():
            yield FlowStep(final=ConfirmAnswer.NO, by_default=True)
            return
        if answer is ConfirmAnswer.YES or answer is ConfirmAnswer.NO:
            yield FlowStep(final=answer)
            return
        if answer is ConfirmAnswer.REPEAT:
            repeats += 1
            if repeats > patience.max_repeats:
                yield FlowStep(say=MSG["gave_up"], final=ConfirmAnswer.NO, by_default=True)
                return
            yield FlowStep(say=request.text)
            continue
        # No answer in this window.
        if reminders >= patience.reminders or patience.window_s is None:
            yield FlowStep(say=MSG["gave_up"], final=ConfirmAnswer.NO, by_default=True)
            return
        reminders += 1
        yield FlowStep(say=request.reminder())
