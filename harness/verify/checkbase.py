"""The checks' common parts: their parameters (`Params`), the phone's readings (`Readings`), the
verdict (`Finding`), the `Check` protocol and the readings several checks share (the clock, the time
zone, the contacts, the inbox). Split out of `harness.verify.checks` (issue 26: no module over 800 lines);
`harness.verify.checks` re-exports every name here and holds the checks themselves.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
import zoneinfo
from dataclasses import dataclass, fields, replace
from typing import Protocol

from assistant_core.events import VerificationStatus
from assistant_core.i18n import Catalog, Text
from harness.verify import extract
from harness.verify.readers import (
    Unreadable,
    as_int,
    parse_epoch,
    parse_rows,
    same_number,
)

log = logging.getLogger(__name__)

FOUND = Catalog(
    "verify_found",
    {
        "sms_ok": "the text to {who} saying \u201c{text}\u201d is in Sent",
        "sms_other": "no new text to {who} says that; the newest new text went to {to}: \u201c{body}\u201d",
        "sms_none": "no new text was sent",
        "sms_ok_loose": "a text to {who} was sent: \u201c{body}\u201d",
        "sms_unlike": "the new text to {who} says \u201c{body}\u201d, which doesn't say \u201c{text}\u201d",
        "call_ok": "there is a new outgoing call to {who}",
        "call_other": "the new outgoing call went to {to}, not {who}",
        "call_none": "no new outgoing call",
        "no_contact": "I can't find {who} in the contacts",
        "contact_ok": "{name} is now in the contacts with {number}",
        "contact_wrong": "{name} is in the contacts, but with {found}",
        "contact_missing": "there is no contact {name} with {number}",
        "contact_before": "{name} with {number} was already in the contacts before",
        "removed_ok": "{name} is gone",
        "removed_still": "{name} is still there",
        "removed_never": "there was no {name} before the run",
        "event_ok": "\u201c{title}\u201d is in the calendar on {date} at {time}",
        "event_other": "\u201c{title}\u201d is in the calendar, but on {found}",
        "event_none": "no new \u201c{title}\u201d event in the calendar",
        "event_before": "\u201c{title}\u201d on {date} at {time} was already in the calendar",
        "alarm_ok": "an alarm is set for {time}",
        "alarm_other": "no new alarm for {time}; alarms now: {found}",
        "alarm_before": "an alarm for {time} was already set before",
        "alarm_off_ok": "the {time} alarm is off",
        "alarm_still": "the {time} alarm is still on",
        "alarm_never": "there was no {time} alarm on before the run",
        "timer_ok": "a {minutes}-minute timer is running",
        "timer_other": "a timer is running, but for about {found} minutes",
        "timer_none": "no new timer is running",
        "setting_ok": "{what} is now {value}",
        "setting_other": "{what} is {value}",
        "setting_before": "{what} was already {value} before the run",
        "setting_already": "{what} was already {value}; I left it {value}",
        "file_ok": "{path} is saved with the right text",
        "file_text": "{path} is saved, but its text is \u201c{found}\u201d",
        "file_none": "there is no {path}",
        "file_before": "{path} already had that text before the run",
        "app_ok": "{app} is open",
        "app_other": "{found} is open, not {app}",
        "installed_ok": "{app} is installed",
        "installed_before": "{app} was already installed before the run",
        "app_before": "{app} was already open before the run",
        "no_app": "I don't know which app \u201c{app}\u201d is on this phone",
        "installed_not": "{app} is not installed",
        "notification_ok": "a notification says \u201c{text}\u201d",
        "notification_none": "no new notification says \u201c{text}\u201d",
        "no_text_from": "there is no text from {who} on the phone",
        "not_in_text": "{who}'s text doesn't say {what}",
        "no_event": "there is no \u201c{title}\u201d in today's calendar",
        "sms_ok_about": "a text to {who} with {what} is in Sent",
        "missing_param": "the request doesn't say {param}, so there's nothing exact to check",
        "unreadable": "the phone's answer could not be read ({reason})",
    },
)

PARAM_NAMES = Catalog(
    "verify_params",
    {
        "recipient": "who it goes to",
        "text": "the text",
        "time": "the time",
        "date": "the date",
        "title": "the title",
        "name": "the name",
        "number": "the number",
        "minutes": "how long",
        "percent": "the level",
        "value": "the value",
        "package": "which app",
        "app": "which app",
    },
)


@dataclass(frozen=True)
class Params:
    """A check's parameters: taken from the request by a kind's patterns, or fixed by the kind's file."""

    recipient: str = ""
    text: str = ""
    time: str = ""  # "HH:MM"
    date: str = ""  # the request's words for the day; resolved against the phone's clock
    title: str = ""
    name: str = ""
    number: str = ""
    minutes: int = 0
    percent: int = -1
    namespace: str = ""
    key: str = ""
    value: str = ""
    # equals | float | prefix | percent255 for settings; "loose" for sms_sent (a text given without quotes)
    compare: str = "equals"
    what: str = ""  # a setting's spoken name (en|zh, split at "|")
    # what a setting's values are called, (value, en, zh): ("0", "silent", "静音"); in a kind file
    # {"0": ["silent", "静音"], ...}. Values without a name are said as they are (0/1 as off/on).
    labels: tuple[tuple[str, str, str], ...] = ()
    folder: str = ""
    folders: tuple[str, ...] = ()
    package: str = ""
    # Details the request points at instead of stating, read from the phone itself:
    sender: str = ""  # "the time Eric texted me": the latest text from this contact gives time/date/text
    about: str = ""  # "the phone number of Ruby": the text must carry this contact's number
    event: str = ""  # "what time my 'Parent meeting' is": the text must carry this event's time today
    app: str = ""  # an app as the user names it ("Gallery", "微信"): resolved to an installed package

    @classmethod
    def from_mapping(cls, values: dict[str, object]) -> Params:
        known = {f.name: f for f in fields(cls)}
        kwargs: dict[str, object] = {}
        for key, value in values.items():
            if key not in known:
                raise ValueError(f"unknown parameter {key!r}; known: {', '.join(sorted(known))}")
            if key in ("minutes", "percent"):
                value = int(value)  # type: ignore[arg-type]
            elif key == "folders":
                value = tuple(value) if isinstance(value, list | tuple) else tuple(str(value).split(","))
            elif key == "labels":
                value = _labels(value)
            else:
                value = str(value)
            kwargs[key] = value
        return cls(**kwargs)  # type: ignore[arg-type]

    def merged(self, other: Params) -> Params:
        """These params with `other`'s non-default values on top."""
        default = Params()
        return replace(self, **{f.name: getattr(other, f.name) for f in fields(self)
                                if getattr(other, f.name) != getattr(default, f.name)})

    def to_dict(self) -> dict[str, object]:
        default = Params()
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) != getattr(default, f.name)}

    def spoken_what(self, lang: str) -> str:
        en, _, zh = self.what.partition("|")
        return (zh or en) if lang == "zh" else en

    def label(self, value: str | None) -> Text | None:
        """What `labels` call this setting value, in both languages; None when it has no name."""
        return next((Text(en, zh) for v, en, zh in self.labels if v == value), None)


def _labels(raw: object) -> tuple[tuple[str, str, str], ...]:
    """`labels` from a kind file ({"0": ["silent", "静音"]}) or as Params holds them ((value, en, zh), ...)."""
    if isinstance(raw, dict):
        items = list(raw.items())
    elif isinstance(raw, list | tuple) and all(isinstance(t, list | tuple) and len(t) == 3 for t in raw):
        items = [(t[0], t[1:]) for t in raw]
    else:
        raise ValueError("labels must map setting values to [English, Chinese]")
    out = []
    for value, names in items:
        if not (isinstance(names, list | tuple) and len(names) == 2 and all(isinstance(n, str) and n.strip() for n in names)):
            raise ValueError(f"labels: {value!r} must be named [English, Chinese]")
        out.append((str(value), names[0], names[1]))
    return tuple(out)


@dataclass(frozen=True)
class Readings:
    """What the phone printed for each command at one moment (None: a pulled file that does not exist)."""

    outputs: tuple[tuple[str, str | None], ...]

    def get(self, command: str) -> str | None:
        for cmd, out in self.outputs:
            if cmd == command:
                return out
        raise Unreadable(f"{command!r} was not read")

    def text(self, command: str) -> str:
        out = self.get(command)
        if out is None:
            raise Unreadable(f"{command!r}: no output")
        return out

    def to_json(self) -> str:
        return json.dumps([list(p) for p in self.outputs], ensure_ascii=False)

    @classmethod
    def from_json(cls, data: str) -> Readings:
        try:
            raw = json.loads(data)
            return cls(tuple((str(c), None if o is None else str(o)) for c, o in raw))
        except (ValueError, TypeError) as error:
            raise Unreadable(f"saved readings are not valid: {error}") from None


@dataclass(frozen=True)
class Finding:
    status: VerificationStatus
    detail: Text
    evidence: str


def verified(key: str, evidence: str, **kw: object) -> Finding:
    return Finding(VerificationStatus.VERIFIED, FOUND[key].format(**kw), evidence)


def not_verified(key: str, evidence: str, **kw: object) -> Finding:
    return Finding(VerificationStatus.NOT_VERIFIED, FOUND[key].format(**kw), evidence)


def cannot(reason: str) -> Finding:
    return Finding(VerificationStatus.CANNOT_VERIFY, FOUND["unreadable"].format(reason=reason), reason)


class Check(Protocol):
    name: str
    required: tuple[str, ...]

    def commands(self, params: Params) -> tuple[str, ...]: ...

    def judge(self, params: Params, before: Readings, after: Readings) -> Finding: ...


# --- shared readings ----------------------------------------------------------------------------------------

DATE = "date +%s"
TZ = "getprop persist.sys.timezone"
CONTACTS = ("content query --uri content://com.android.contacts/data "
            "--projection contact_id:mimetype:display_name:data1")
CONTACT_COLS = ("contact_id", "mimetype", "display_name", "data1")
PHONE_MIME = "vnd.android.cursor.item/phone_v2"


def _zone(r: Readings) -> dt.tzinfo:
    name = (r.get(TZ) or "").strip()
    if not name:
        return dt.UTC
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise Unreadable(f"unknown time zone {name!r}") from None


def _local(ms: int, zone: dt.tzinfo) -> dt.datetime:
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).astimezone(zone)


def _norm(text: str | None) -> str:
    return " ".join((text or "").split()).casefold().strip(" .。!！")


@dataclass(frozen=True)
class _Contact:
    id: str
    name: str
    phones: tuple[str, ...]


def _contacts(r: Readings) -> list[_Contact]:
    rows = parse_rows(r.text(CONTACTS), CONTACT_COLS, "contacts")
    by_id: dict[str, _Contact] = {}
    for row in rows:
        cid = row["contact_id"] or ""
        c = by_id.get(cid) or _Contact(cid, row["display_name"] or "", ())
        if row["mimetype"] == PHONE_MIME and row["data1"]:
            c = replace(c, phones=c.phones + (row["data1"],))
        by_id[cid] = c
    return list(by_id.values())


def _numbers_for(recipient: str, r: Readings) -> tuple[str, ...] | None:
    if extract.looks_like_number(recipient):
        return (recipient,)
    want = _norm(recipient)
    contacts = _contacts(r)
    phones = tuple(p for c in contacts if _norm(c.name) == want for p in c.phones)
    if not phones and want:
        # "Text Bob" when one contact is Bob Li: the same rule as the fast path (harness.fastpath.find_contacts);
        # two or more such contacts are not guessed between.
        cjk = re.search(r"[\u4e00-\u9fff]", want) is not None
        partial = [c for c in contacts if c.phones and (want in _norm(c.name) if cjk else
                   re.search(rf"(?<!\w){re.escape(want)}(?!\w)", _norm(c.name)))]
        if len(partial) == 1:
            phones = partial[0].phones
    return phones or None


def _new_rows(before: list[dict[str, str | None]], after: list[dict[str, str | None]]) -> list[dict[str, str | None]]:
    """Rows in `after` that were not in `before` (multiset difference on all projected columns)."""
    seen: dict[tuple, int] = {}
    for row in before:
        key = tuple(sorted(row.items()))
        seen[key] = seen.get(key, 0) + 1
    out = []
    for row in after:
        key = tuple(sorted(row.items()))
        if seen.get(key, 0):
            seen[key] -= 1
        else:
            out.append(row)
    return out


class Underivable(Exception):
    """A detail the request points at (a text from someone, a contact's number) is not on the phone."""

    def __init__(self, detail: Text, evidence: str):
        super().__init__(evidence)
        self.detail = detail


class _Judged:
    """A check's `judge`: its own `_judge`, with unreadable readings turned into cannot_verify."""

    def judge(self, params: Params, before: Readings, after: Readings) -> Finding:
        try:
            return self._judge(params, before, after)  # type: ignore[attr-defined]
        except Unreadable as error:
            return cannot(str(error))
        except Underivable as error:
            return Finding(VerificationStatus.CANNOT_VERIFY, error.detail, str(error))


INBOX = "content query --uri content://sms/inbox --projection _id:address:body:date"


def _sender_reads(params: Params) -> tuple[str, ...]:
    return (CONTACTS, INBOX) if params.sender else ()


def _latest_text_from(sender: str, r: Readings) -> str:
    """The body of the newest received text from `sender` (a contact's name or a number)."""
    numbers = _numbers_for(sender, r)
    if numbers is None:
        raise Underivable(FOUND["no_contact"].format(who=sender), f"no contact named {sender!r}")
    rows = [row for row in parse_rows(r.text(INBOX), ("_id", "address", "body", "date"), "received texts")
            if any(same_number(row["address"], n) for n in numbers)]
    if not rows:
        raise Underivable(FOUND["no_text_from"].format(who=sender), f"no received text from {sender!r}")
    rows.sort(key=lambda row: as_int(row["date"], "date"))
    return rows[-1]["body"] or ""


def _today(r: Readings) -> dt.date:
    return dt.datetime.fromtimestamp(parse_epoch(r.text(DATE)), dt.UTC).astimezone(_zone(r)).date()


def _from_sender(params: Params, r: Readings, *, want: tuple[str, ...]) -> Params:
    """`params` with time / date / text taken from the sender's latest text where the request gave none."""
    if not params.sender:
        return params
    body = _latest_text_from(params.sender, r)
    found: dict[str, object] = {}
    if "time" in want and not params.time:
        found["time"] = extract.parse_clock(body) or ""
    if "date" in want and not params.date:
        found["date"] = body if extract.parse_date(body, today=_today(r)) else ""
    if "text" in want and not params.text:
        found["text"] = body
    lacking = [k for k, v in found.items() if not v]
    if lacking:
        raise Underivable(FOUND["not_in_text"].format(who=params.sender, what=PARAM_NAMES[lacking[0]]),
                          f"the text from {params.sender!r} ({body!r:.80}) gives no {lacking[0]}")
    return replace(params, **found)  # type: ignore[arg-type]
