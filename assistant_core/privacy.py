"""What the assistant may type and send about its user: the privacy check and the remote masking.

Two halves, both decided in code, never by the model:

1. **Minimal form filling** (`PrivacyGate`). It wraps the safety gate and looks at every TYPE action the
   gate did not refuse. When the typed text is personal data (an item of the user's profile, or anything
   that looks like a Chinese resident ID number with a valid checksum, a payment card number with a
   valid Luhn digit, or a phone number), it asks what the *task* needs, from the user's request and the
   form's own field, never from the model:
   - the field's kind (phone, ID number, birthday, ...) comes from its label, hint and resource id; a field
     is optional when it says so ("(optional)", "选填", "可选", "非必填");
   - the data is needed when the request names that kind of data ("leave my phone number", "身份证号")
     and the field is of that kind, or when the field is a required name, phone or address field;
   - "never" data is refused (DENY, rule `deny.privacy`), wherever it is typed;
   - anything typed into an optional personal field (phone, ID number, birthday...) that the request does
     not ask for is asked about, whatever it looks like;
   - data the task does not need (an optional field, a field of another kind, an ID number the request
     never mentioned) is asked about (CONFIRM, rule `confirm.privacy`), reading back the field and the
     app; a "no" leaves the field empty (the loop then refuses the same action again);
   - needed data of the "ask me each time" tier is always asked about, with the same read-back;
   - needed data of the "share when a task needs it" tier is typed with no question.
   A look-alike that is not a profile item is not known to be the user's: it is judged like "share" data
   (typed where needed, asked about elsewhere), and a phone-number look-alike only in personal-data or
   optional fields (a recipient or search box holds numbers by nature).
   The privacy check can only raise the gate's verdict, never lower it.

2. **What leaves this computer** (`Outbound`). Before a remote policy request the screenshot is masked
   (black rectangles on the UI bounds of password fields and fields labelled as secret, of every
   notification row in the shade that cannot be attributed to an allowed app, and of any element that
   shows a "never" profile item) and the request's text has the "never" items and card numbers replaced
   by "[hidden]". Every request is logged (time, host, bytes, what was masked) through a `RemoteLog`.

Pure (no I/O) apart from `Outbound`'s call to its log. The profile store is `assistant_core.profile_store`.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Protocol

from assistant_core.i18n import Catalog, Text
from assistant_core.safety import GateContext, Rule, SafetyGate
from assistant_core.types import Action, ActionKind, Decision, Observation, UIElement, Verdict


class Tier(StrEnum):
    SHARE = "share"  # share when a task needs it
    ASK = "ask"  # ask me each time
    NEVER = "never"


class Kind(StrEnum):
    NAME = "name"
    PHONE = "phone"
    ADDRESS = "address"
    ID_NUMBER = "id_number"
    BIRTH_DATE = "birth_date"
    CARD = "card"  # the card's last digits
    NOTES = "notes"


MSG = Catalog(
    "privacy",
    {
        "kind.name": "your name",
        "kind.phone": "your phone number",
        "kind.address": "your address",
        "kind.id_number": "your ID number",
        "kind.birth_date": "your date of birth",
        "kind.card": "your card number",
        "kind.notes": "your private notes",
        "tier.share": "share when a task needs it",
        "tier.ask": "ask me each time",
        "tier.never": "never",
        "never": "{kind} is marked “never” in your profile, so I will not type it anywhere.",
        "not_needed": "type {kind} into “{field}”, which what you asked for does not need",
        "ask_each_time": "type {kind} into “{field}”",
        "a_field": "a field",
    },
)

# --- recognising personal data in text -------------------------------------------------------------------

_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_ID_CHECK = "10X98765432"
_ID_RE = re.compile(r"(?<![0-9])[1-9]\d{16}[0-9Xx](?![0-9A-Za-z])")
_CARD_RE = re.compile(r"(?<!\d)\d(?:[ -]?\d){12,18}(?!\d)")
_PHONE_RE = re.compile(r"(?<![\d+])(?:\+?\d{1,3}[ -]?)?(?:\(?\d{2,4}\)?[ -]?)?\d{3,4}[ -]?\d{4}(?!\d)")
_DATE_RE = re.compile(r"(?<!\d)(?:19|20)\d{2}\s*[-/.年]\s*\d{1,2}\s*[-/.月]\s*\d{1,2}(?:\s*日)?(?!\d)"
                      r"|(?<!\d)\d{1,2}\s*[-/.]\s*\d{1,2}\s*[-/.]\s*(?:19|20)\d{2}(?!\d)"
                      r"|(?<!\d)\d{1,2}:\d{2}(?!\d)")
_CARD_WORD_RE = re.compile(r"card|卡|尾号", re.I)
_CN_MOBILE_RE = re.compile(r"(?<!\d)(?:\+?86[ -]?)?1[3-9]\d(?:[ -]?\d){8}(?!\d)")


def cn_id_valid(text: str) -> bool:
    """A mainland resident ID number: 18 characters, a real date of birth, and the ISO 7064 check digit
    (GB 11643-1999)."""
    s = text.strip().upper()
    if len(s) != 18 or not s[:17].isdigit() or s[17] not in "0123456789X":
        return False
    try:
        dt.date(int(s[6:10]), int(s[10:12]), int(s[12:14]))
    except ValueError:
        return False
    total = sum(int(c) * w for c, w in zip(s[:17], _ID_WEIGHTS, strict=True))
    return _ID_CHECK[total % 11] == s[17]


def luhn_valid(digits: str) -> bool:
    if not 13 <= len(digits) <= 19 or not digits.isdigit():
        return False
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _digits(text: str) -> str:
    return re.sub(r"\D", "", text)


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def _date_forms(value: str) -> set[str]:
    """Digit strings a date may be typed as: 19900512, 1990512, 199051, 12051990, 05121990."""
    parts = re.findall(r"\d+", value)
    if len(parts) != 3:
        return {_digits(value)} if len(_digits(value)) >= 6 else set()
    y, m, d = parts if len(parts[0]) == 4 else (parts[2], parts[1], parts[0])
    m2, d2 = m.zfill(2), d.zfill(2)
    return {y + m2 + d2, y + m.lstrip("0") + d.lstrip("0"), d2 + m2 + y, m2 + d2 + y}


@dataclass(frozen=True)
class ProfileItem:
    kind: Kind
    value: str
    tier: Tier = Tier.ASK
    label: str = ""  # "home", "work" for addresses; free for notes

    def occurs_in(self, text: str) -> bool:
        """Whether typed or shown text carries this item."""
        value = self.value.strip()
        if not value:
            return False
        if self.kind in (Kind.PHONE, Kind.ID_NUMBER):
            mine = _digits(value) + ("X" if value.upper().endswith("X") else "")
            return len(_digits(value)) >= 6 and mine.rstrip("X") in _digits(text)
        if self.kind is Kind.CARD:
            last = _digits(value)
            runs = re.findall(r"\d+", _digits_joined(text))
            # a whole card number ending in them, or the digits themselves next to a word for a card
            return len(last) >= 4 and (any(12 <= len(r) <= 19 and r.endswith(last) for r in runs) or (
                last in runs and bool(_CARD_WORD_RE.search(text))))
        if self.kind is Kind.BIRTH_DATE:
            forms = _date_forms(value)
            return bool(forms) and (_digits(text) in forms or any(f in _digits(text) for f in forms if len(f) == 8))
        needle = _norm(value)
        return len(needle) >= 2 and needle in _norm(text)


def _digits_joined(text: str) -> str:
    """Digit runs with spaces and dashes inside them closed up ("6222 0210 0112 3456" is one run)."""
    return re.sub(r"(?<=\d)[ -](?=\d)", "", text)


@dataclass(frozen=True)
class Profile:
    """The user's personal facts, each with a tier (see `Tier`)."""

    items: tuple[ProfileItem, ...] = ()

    def of(self, kind: Kind) -> tuple[ProfileItem, ...]:
        return tuple(i for i in self.items if i.kind is kind)

    def tier_of(self, kind: Kind) -> Tier:
        """The strictest tier the profile gives this kind (ASK when it has none)."""
        tiers = {i.tier for i in self.of(kind) if i.value.strip()}
        for tier in (Tier.NEVER, Tier.ASK, Tier.SHARE):
            if tier in tiers:
                return tier
        return Tier.ASK

    def never_values(self) -> tuple[ProfileItem, ...]:
        return tuple(i for i in self.items if i.tier is Tier.NEVER and i.value.strip())


@dataclass(frozen=True)
class Finding:
    kind: Kind
    tier: Tier
    from_profile: bool


def find_personal(text: str, profile: Profile | None) -> list[Finding]:
    """Every kind of personal data the text carries: profile items first, then look-alikes."""
    profile = profile or Profile()
    found: dict[Kind, Finding] = {}
    for item in profile.items:
        if item.occurs_in(text):
            prior = found.get(item.kind)
            if prior is None or _rank(item.tier) > _rank(prior.tier):
                found[item.kind] = Finding(item.kind, item.tier, True)
    text = _DATE_RE.sub(" ", text)  # a date (check-in, appointment) is not a number to protect; a birthday is
    joined = _digits_joined(text)   # found above when it is the profile's
    if Kind.ID_NUMBER not in found and any(cn_id_valid(m) for m in _ID_RE.findall(joined)):
        found[Kind.ID_NUMBER] = Finding(Kind.ID_NUMBER, Tier.SHARE, False)
    mobiles = [m.span() for m in _CN_MOBILE_RE.finditer(text)]
    cards = [m for m in _CARD_RE.finditer(text)
             if luhn_valid(_digits(m.group(0))) and not any(a <= m.start() and m.end() <= b for a, b in mobiles)]
    if Kind.CARD not in found and cards:
        found[Kind.CARD] = Finding(Kind.CARD, Tier.SHARE, False)
    if Kind.PHONE not in found and Kind.ID_NUMBER not in found and Kind.CARD not in found and (
            _CN_MOBILE_RE.search(text) or _PHONE_RE.search(text)):
        found[Kind.PHONE] = Finding(Kind.PHONE, Tier.SHARE, False)
    idf, birth = found.get(Kind.ID_NUMBER), found.get(Kind.BIRTH_DATE)
    if idf is not None and birth is not None and _rank(birth.tier) <= _rank(idf.tier):
        del found[Kind.BIRTH_DATE]  # an ID number carries the date of birth: the ID's question covers it
    if not found:
        # A long run of digits that fits none of the checks still looks like one of them: an ID number
        # with a wrong check digit (15 or 18 characters), a card, or a phone number.
        for run in re.findall(r"\d{7,}[Xx]?", joined):
            kind = (Kind.ID_NUMBER if len(run) in (15, 18) else Kind.CARD if len(run) >= 13 else Kind.PHONE)
            found.setdefault(kind, Finding(kind, Tier.SHARE, False))
    return list(found.values())


def _rank(tier: Tier) -> int:
    return {Tier.SHARE: 0, Tier.ASK: 1, Tier.NEVER: 2}[tier]


# --- what a field is, and what the request needs ---------------------------------------------------------

_FIELD_WORDS: tuple[tuple[Kind, re.Pattern[str]], ...] = (
    (Kind.ID_NUMBER, re.compile(r"\bid\b|id[ _]?(?:number|no|card)|identity|passport|身份证|证件", re.I)),
    (Kind.CARD, re.compile(r"card|银行卡|卡号", re.I)),
    (Kind.BIRTH_DATE, re.compile(r"birth|生日|出生", re.I)),
    (Kind.PHONE, re.compile(r"phone|mobile|\btel\b|手机|电话|联系方式", re.I)),
    (Kind.ADDRESS, re.compile(r"address|地址", re.I)),
    (Kind.NAME, re.compile(r"name|姓名|名字|就诊人|收货人|联系人|patient|guest|入住人", re.I)),
)
_OPTIONAL_RE = re.compile(r"optional|选填|可选|非必填", re.I)
_REQUEST_WORDS: dict[Kind, re.Pattern[str]] = {
    # Whole words only: "PhoneBuddy" in a request does not ask for a phone number.
    Kind.PHONE: re.compile(r"\b(?:phone|mobile|cell)(?: number)?\b|my number|手机|电话", re.I),
    Kind.ID_NUMBER: re.compile(r"\bid\b|\bidentity\b|\bpassport\b|身份证|证件", re.I),
    Kind.BIRTH_DATE: re.compile(r"\bbirth|\bbirthday\b|生日|出生", re.I),
    Kind.ADDRESS: re.compile(r"\baddress\b|\bdeliver|地址|送到", re.I),
    Kind.CARD: re.compile(r"\bcards?\b|银行卡", re.I),
    Kind.NAME: re.compile(r"\bname\b|名字|姓名", re.I),
}
BASIC_KINDS = frozenset({Kind.NAME, Kind.PHONE, Kind.ADDRESS})


def field_words(el: UIElement | None) -> str:
    if el is None:
        return ""
    rid = el.resource_id.rsplit("/", 1)[-1].replace("_", " ")
    return " ".join(p for p in (el.text, el.content_desc, rid) if p)


def field_kind(el: UIElement | None) -> Kind | None:
    words = field_words(el)
    for kind, pattern in _FIELD_WORDS:
        if pattern.search(words):
            return kind
    return None


def field_optional(el: UIElement | None) -> bool:
    return bool(_OPTIONAL_RE.search(field_words(el)))


def request_needs(request: str) -> frozenset[Kind]:
    """The kinds of personal data the user's request itself names."""
    return frozenset(kind for kind, pattern in _REQUEST_WORDS.items() if pattern.search(request or ""))


# --- the check -------------------------------------------------------------------------------------------


def privacy_decision(action: Action, observation: Observation, context: GateContext, *, request: str,
                     profile: Profile | None) -> Decision | None:
    """The privacy ruling on a TYPE action, or None when it carries no personal data or is needed and
    shared freely (see the module docstring)."""
    if action.kind is ActionKind.SEND_TEXT and action.text:
        # A message sent by the tool path: the gate already reads it back before sending; "never" data is
        # refused here as anywhere else.
        never = [f for f in find_personal(action.text, profile) if f.tier is Tier.NEVER and f.from_profile]
        if never:
            kind = MSG[f"kind.{never[0].kind}"]
            return Decision(Verdict.DENY, str(Rule.DENY_PRIVACY),
                            Text(MSG["never"].en.format(kind=kind.en).capitalize(), MSG["never"].zh.format(kind=kind.zh)),
                            {"privacy": "never", "kind": str(never[0].kind), "app": context.label_of(observation.foreground)})
        return None
    if action.kind is not ActionKind.TYPE or not action.text:
        return None
    findings = find_personal(action.text, profile)
    field_el = observation.focused_element()
    if field_el is not None and field_el.text and not field_el.password:
        # Typed in pieces: what the field will hold once this is typed is judged too.
        known = {f.kind for f in findings}
        findings += [f for f in find_personal(field_el.text + action.text, profile)
                     if f.kind not in known and (f.from_profile or f.kind in (Kind.ID_NUMBER, Kind.CARD))]
        if any(f.kind is Kind.ID_NUMBER for f in findings):  # the ID's question covers its date of birth
            findings = [f for f in findings if f.kind is not Kind.BIRTH_DATE or f.tier is Tier.NEVER]
    fkind = field_kind(field_el)
    optional = field_optional(field_el)
    needs = request_needs(request)
    # A number that only looks like a phone number is not known to be the user's: in a field that is not a
    # personal-data field (a recipient, a search box, a message) it is what the task is about. The user's own
    # data, and ID and card look-alikes, are judged in every field.
    findings = [f for f in findings if f.from_profile or fkind is not None or optional
                or f.kind in (Kind.ID_NUMBER, Kind.CARD)]
    if not findings and optional and fkind is not None and fkind not in needs:
        # Whatever is typed, an optional personal field the request did not ask for is asked about.
        findings = [Finding(fkind, Tier.ASK, False)]
    if not findings:
        return None
    app = context.label_of(observation.foreground)
    shown = (field_el.text or field_el.content_desc) if field_el is not None else ""
    shown = shown if shown and shown.strip() != action.text.strip() else ""
    for f in findings:
        if f.tier is Tier.NEVER:
            kind = MSG[f"kind.{f.kind}"]
            return Decision(Verdict.DENY, str(Rule.DENY_PRIVACY),
                            Text(MSG["never"].en.format(kind=kind.en).capitalize(), MSG["never"].zh.format(kind=kind.zh)),
                            {"privacy": "never", "kind": str(f.kind), "app": app})
    asks: list[tuple[Finding, bool]] = []
    for f in findings:
        needed = fkind is f.kind and (f.kind in needs or (not optional and f.kind in BASIC_KINDS))
        if not needed or f.tier is Tier.ASK:
            asks.append((f, needed))
    if not asks:
        return None
    f, needed = next(((f, n) for f, n in asks if not n), asks[0])
    kind = MSG[f"kind.{f.kind}"]
    field_name = Text(shown or MSG["a_field"].en, shown or MSG["a_field"].zh)
    key = "ask_each_time" if needed else "not_needed"
    reason = Text(MSG[key].en.format(kind=kind.en, field=field_name.en),
                  MSG[key].zh.format(kind=kind.zh, field=field_name.zh))
    return Decision(Verdict.CONFIRM, str(Rule.CONFIRM_PRIVACY), reason,
                    {"privacy": "ask_each_time" if needed else "not_needed", "kind": str(f.kind),
                     "field": shown, "app": app, "needed": needed})


@dataclass(frozen=True)
class PrivacyGate(SafetyGate):
    """The safety gate with the privacy check on top: `check` returns the stricter of the two."""

    inner: SafetyGate = field(default_factory=SafetyGate)
    request: str = ""
    profile: Profile | None = None

    def check(self, action: Action, observation: Observation, context: GateContext, *, thought: str = "") -> Decision:
        decision = self.inner.check(action, observation, context, thought=thought)
        if decision.verdict is Verdict.DENY:
            return decision
        ruling = privacy_decision(action, observation, context, request=self.request, profile=self.profile)
        return decision if ruling is None else ruling


# --- what leaves this computer ---------------------------------------------------------------------------

HIDDEN = "[hidden]"
_SECRET_LABEL_RE = re.compile(r"password|passcode|\bpin\b|one.?time|verification code|cvv|cvc|密码|验证码|口令|安全码", re.I)
_NOTIFICATION_ROW_RE = re.compile(r"status_bar_latest_event_content|expandableNotificationRow|notification_row", re.I)
SYSTEMUI = "com.android.systemui"


@dataclass(frozen=True)
class MaskNote:
    """What was masked in one request (kinds and counts, never the values)."""

    secure_fields: int = 0
    shade_rows: int = 0
    never_items: int = 0
    text_replacements: int = 0

    def parts(self) -> dict[str, int]:
        return {k: v for k, v in (("secure_fields", self.secure_fields), ("shade_rows", self.shade_rows),
                                  ("never_items", self.never_items), ("text", self.text_replacements)) if v}


def _inside(inner: tuple[int, int, int, int], outer: tuple[int, int, int, int]) -> bool:
    return inner[0] >= outer[0] and inner[1] >= outer[1] and inner[2] <= outer[2] and inner[3] <= outer[3]


def mask_regions(observation: Observation, *, allowed_apps: Iterable[str], app_labels: Mapping[str, str],
                 profile: Profile | None) -> tuple[list[tuple[int, int, int, int]], list[str], MaskNote]:
    """The UI bounds to black out, the labels to drop from text, and the count of each kind."""
    elements = observation.elements or ()
    allowed = set(allowed_apps)
    allowed_labels = {_norm(app_labels.get(p, "")) for p in allowed} - {""}
    boxes: list[tuple[int, int, int, int]] = []
    labels: list[str] = []
    secure = shade = never = 0
    for el in elements:
        if el.password or (el.class_name.endswith("EditText") and _SECRET_LABEL_RE.search(field_words(el))):
            boxes.append(el.bounds)
            if el.label:
                labels.append(el.label)
            secure += 1
    rows = [el for el in elements if el.package == SYSTEMUI and _NOTIFICATION_ROW_RE.search(el.resource_id)]
    for row in rows:
        inside = [e for e in elements if _inside(e.bounds, row.bounds)]
        named = {_norm(e.label) for e in inside if e.resource_id.endswith("app_name_text") and e.label}
        if named & allowed_labels:
            continue  # a notification of an allowed app stays
        boxes.append(row.bounds)
        labels.extend(e.label for e in inside if e.label)
        shade += 1
    never_items = profile.never_values() if profile is not None else ()
    for el in elements:
        if el.label and any(item.occurs_in(el.label) for item in never_items):
            boxes.append(el.bounds)
            labels.append(el.label)
            never += 1
    return boxes, labels, MaskNote(secure, shade, never)


def paint_mask(image: Any, boxes: Sequence[tuple[int, int, int, int]], width: int, height: int) -> Any:
    """A copy of the screenshot with each box (device pixels) filled black."""
    if image is None or not boxes:
        return image
    from PIL import ImageDraw

    out = image.convert("RGB").copy()
    sx, sy = out.width / max(1, width), out.height / max(1, height)
    draw = ImageDraw.Draw(out)
    for left, top, right, bottom in boxes:
        draw.rectangle((int(left * sx), int(top * sy), max(int(left * sx), int(right * sx + 0.999) - 1),
                        max(int(top * sy), int(bottom * sy + 0.999) - 1)), fill=(0, 0, 0))
    return out


def mask_text(text: str, *, labels: Iterable[str] = (), profile: Profile | None = None) -> tuple[str, int]:
    """The text with masked labels, "never" profile items and card numbers replaced; and how many."""
    count = 0
    for label in sorted({lb for lb in labels if len(lb.strip()) >= 2}, key=len, reverse=True):
        if label in text:
            count += text.count(label)
            text = text.replace(label, HIDDEN)
    for item in profile.never_values() if profile is not None else ():
        pattern = _item_pattern(item)
        text, n = pattern.subn(HIDDEN, text)
        count += n

    def card(m: re.Match[str]) -> str:
        nonlocal count
        if luhn_valid(_digits(m.group(0))):
            count += 1
            return HIDDEN
        return m.group(0)

    return _CARD_RE.sub(card, text), count


def _item_pattern(item: ProfileItem) -> re.Pattern[str]:
    value = item.value.strip()
    if item.kind in (Kind.PHONE, Kind.ID_NUMBER, Kind.CARD):
        digits = _digits(value)
        tail = "[Xx]?" if value.upper().endswith("X") else ""
        return re.compile(r"[ -]?".join(re.escape(d) for d in digits) + tail)
    return re.compile(re.escape(value), re.I)


class RemoteLog(Protocol):
    def record_remote(self, *, host: str, nbytes: int, masked: Mapping[str, int], backend: str = "remote",
                      note: str = "") -> None: ...


@dataclass
class Outbound:
    """Masks what a remote policy request carries and logs each request (see the module docstring)."""

    allowed_apps: frozenset[str] = frozenset()
    app_labels: Mapping[str, str] = field(default_factory=dict)
    profile: Profile | None = None
    log: RemoteLog | None = None
    last: MaskNote = field(default_factory=MaskNote)
    _labels: list[str] = field(default_factory=list)

    def mask_observation(self, observation: Observation, *, keep: str = "") -> Observation:
        """The observation with its screenshot masked. Masked labels are also hidden in the request's text,
        except those inside `keep` (the user's own request: "Reply to Li Wei" keeps "Li Wei")."""
        boxes, labels, note = mask_regions(observation, allowed_apps=self.allowed_apps, app_labels=self.app_labels,
                                           profile=self.profile)
        self._labels = [label for label in labels if label not in keep]
        self.last = note
        if not boxes:
            return observation
        return replace(observation, screenshot=paint_mask(observation.screenshot, boxes, observation.width,
                                                           observation.height))

    def mask_prompt_text(self, text: str) -> str:
        out, n = mask_text(text, labels=self._labels, profile=self.profile)
        if n:
            self.last = replace(self.last, text_replacements=self.last.text_replacements + n)
        return out

    def sent(self, host: str, nbytes: int) -> None:
        if self.log is not None:
            self.log.record_remote(host=host, nbytes=nbytes, masked=self.last.parts() if nbytes else {})


def _remote_inside(policy: Any) -> Any:
    """The remote backend a policy sends through (itself, or the fallback of a fast-path wrapper)."""
    for candidate in (policy, getattr(policy, "fallback", None), getattr(policy, "inner", None)):
        if candidate is not None and hasattr(candidate, "outbound") and hasattr(candidate, "base_url"):
            return candidate
    return None


def attach_privacy(gate: SafetyGate, policy: Any, *, goal: str, context: GateContext, profile: Profile | None,
                   log: Any = None) -> PrivacyGate:
    """The gate with the privacy check for this request; a remote policy gets an `Outbound` (masking and
    the log), and a run on a local policy is logged as "nothing sent"."""
    remote = _remote_inside(policy)
    if remote is not None:
        remote.outbound = Outbound(allowed_apps=frozenset(context.allowed_apps), app_labels=dict(context.app_labels),
                                   profile=profile, log=log)
    elif log is not None:
        log.record_local_run()
    if isinstance(gate, PrivacyGate):
        return gate
    return PrivacyGate(inner=gate, request=goal, profile=profile)


__all__ = [
    "attach_privacy",
    "BASIC_KINDS", "Finding", "Kind", "MaskNote", "Outbound", "PrivacyGate", "Profile", "ProfileItem", "RemoteLog",
    "Tier", "cn_id_valid", "field_kind", "field_optional", "find_personal", "luhn_valid", "mask_regions", "mask_text",
    "paint_mask", "privacy_decision", "request_needs",
]
