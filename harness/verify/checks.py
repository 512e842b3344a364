"""The checks: each reads the same things from the phone before and after a run and judges the change.

A check is stateless: `commands(params)` lists what to read (shell command lines, or `pull:PATH` for a
small file), the verifier runs them once before the run and once after, and `judge(params, before,
after)` returns a `Finding`: verified (the change the request asked for happened during the run),
not_verified (with what was found instead — including "it was already so before the run"), already
(a setting or Wi-Fi network that was already as asked before the run and still is: the goal state holds,
told apart from not done), or cannot_verify (the phone's answer could not be read; the reason says why).
Anything else that was already true before the run (a text, a call, a contact, an event) is never success.

Checks (name → parameters they use, see `Params`):
- sms_sent (recipient, text; compare "loose" when the request gave the text without quotes: the body
  need only carry its gist, extract.same_gist, and the answer reads the body back),
  call_made (recipient), contact_added (name, number),
  contact_removed (name) — content providers sms/sent, call_log/calls, com.android.contacts/data;
- event_created (title, date, time), event_removed (title) — com.android.calendar/events;
- alarm_set (time), alarm_off (time), timer_started (minutes) — `dumpsys alarm` (Clock packages);
- setting (namespace, key, value, compare, percent; `labels` name the values) — `settings get`;
  wifi_network (value) — `dumpsys wifi`;
- file_saved (folder, title → FOLDER/TITLE.txt, text) — `ls -l` + pull; file_removed (name, folders);
- app_foreground (package) — `dumpsys window`; package_installed (package) — `pm list packages`;
- notification_posted (text) — `dumpsys notification --noredact`.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
import zoneinfo
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from typing import Protocol

from assistant_core.events import VerificationStatus
from assistant_core.i18n import Catalog, Text
from harness.verify import extract
from harness.verify.readers import (
    PendingAlarm,
    Unreadable,
    as_int,
    digits,
    parse_alarms,
    parse_epoch,
    parse_foreground,
    parse_ls,
    parse_notifications,
    parse_packages,
    parse_rows,
    parse_setting,
    parse_wifi_ssid,
    same_number,
)

log = logging.getLogger(__name__)

FOUND = Catalog(
    "verify_found",
    {
        "sms_ok": ("the text to {who} saying \u201c{text}\u201d is in Sent", "发给{who}的短信\u201c{text}\u201d已在已发送里"),
        "sms_other": ("no new text to {who} says that; the newest new text went to {to}: \u201c{body}\u201d",
                      "没有发给{who}的这条短信；新发出的短信是发给{to}的：\u201c{body}\u201d"),
        "sms_none": ("no new text was sent", "没有发出新的短信"),
        "sms_ok_loose": ("a text to {who} was sent: \u201c{body}\u201d", "已经给{who}发了短信：\u201c{body}\u201d"),
        "sms_unlike": ("the new text to {who} says \u201c{body}\u201d, which doesn't say \u201c{text}\u201d",
                       "发给{who}的新短信写的是\u201c{body}\u201d，说的不是\u201c{text}\u201d"),
        "call_ok": ("there is a new outgoing call to {who}", "有一个打给{who}的新呼出电话"),
        "call_other": ("the new outgoing call went to {to}, not {who}", "新的呼出电话打给了{to}，不是{who}"),
        "call_none": ("no new outgoing call", "没有新的呼出电话"),
        "no_contact": ("I can't find {who} in the contacts", "通讯录里找不到{who}"),
        "contact_ok": ("{name} is now in the contacts with {number}", "{name}已存进通讯录，号码 {number}"),
        "contact_wrong": ("{name} is in the contacts, but with {found}", "{name}在通讯录里，但号码是 {found}"),
        "contact_missing": ("there is no contact {name} with {number}", "通讯录里没有号码为 {number} 的{name}"),
        "contact_before": ("{name} with {number} was already in the contacts before", "开始之前{name}（{number}）就已经在通讯录里"),
        "removed_ok": ("{name} is gone", "{name}已经不在了"),
        "removed_still": ("{name} is still there", "{name}还在"),
        "removed_never": ("there was no {name} before the run", "开始之前就没有{name}"),
        "event_ok": ("\u201c{title}\u201d is in the calendar on {date} at {time}", "日历里有\u201c{title}\u201d，{date} {time}"),
        "event_other": ("\u201c{title}\u201d is in the calendar, but on {found}", "日历里有\u201c{title}\u201d，但时间是 {found}"),
        "event_none": ("no new \u201c{title}\u201d event in the calendar", "日历里没有新的\u201c{title}\u201d"),
        "event_before": ("\u201c{title}\u201d on {date} at {time} was already in the calendar", "\u201c{title}\u201d（{date} {time}）之前就在日历里"),
        "alarm_ok": ("an alarm is set for {time}", "已经定了 {time} 的闹钟"),
        "alarm_other": ("no new alarm for {time}; alarms now: {found}", "没有新的 {time} 闹钟；现在的闹钟：{found}"),
        "alarm_before": ("an alarm for {time} was already set before", "开始之前就有 {time} 的闹钟"),
        "alarm_off_ok": ("the {time} alarm is off", "{time} 的闹钟已经关了"),
        "alarm_still": ("the {time} alarm is still on", "{time} 的闹钟还开着"),
        "alarm_never": ("there was no {time} alarm on before the run", "开始之前没有开着的 {time} 闹钟"),
        "timer_ok": ("a {minutes}-minute timer is running", "一个 {minutes} 分钟的计时器正在运行"),
        "timer_other": ("a timer is running, but for about {found} minutes", "计时器在运行，但大约是 {found} 分钟"),
        "timer_none": ("no new timer is running", "没有新的计时器在运行"),
        "setting_ok": ("{what} is now {value}", "{what}现在是{value}"),
        "setting_other": ("{what} is {value}", "{what}是{value}"),
        "setting_before": ("{what} was already {value} before the run", "开始之前{what}就已经是{value}"),
        "setting_already": ("{what} was already {value}; I left it {value}", "{what}本来就是{value}，我让它保持{value}"),
        "file_ok": ("{path} is saved with the right text", "{path} 已保存，内容正确"),
        "file_text": ("{path} is saved, but its text is \u201c{found}\u201d", "{path} 已保存，但内容是\u201c{found}\u201d"),
        "file_none": ("there is no {path}", "没有 {path}"),
        "file_before": ("{path} already had that text before the run", "开始之前 {path} 就是这个内容"),
        "app_ok": ("{app} is open", "{app} 已打开"),
        "app_other": ("{found} is open, not {app}", "打开的是 {found}，不是 {app}"),
        "installed_ok": ("{app} is installed", "{app} 已安装"),
        "installed_before": ("{app} was already installed before the run", "开始之前{app}就已经安装了"),
        "app_before": ("{app} was already open before the run", "开始之前{app}就已经打开了"),
        "no_app": ("I don't know which app \u201c{app}\u201d is on this phone", "我不知道这部手机上哪个是\u201c{app}\u201d"),
        "installed_not": ("{app} is not installed", "{app} 没有安装"),
        "notification_ok": ("a notification says \u201c{text}\u201d", "有一条通知写着\u201c{text}\u201d"),
        "notification_none": ("no new notification says \u201c{text}\u201d", "没有新的通知写着\u201c{text}\u201d"),
        "no_text_from": ("there is no text from {who} on the phone", "手机上没有{who}发来的短信"),
        "not_in_text": ("{who}'s text doesn't say {what}", "{who}的短信里没有说{what}"),
        "no_event": ("there is no \u201c{title}\u201d in today's calendar", "今天的日历里没有\u201c{title}\u201d"),
        "sms_ok_about": ("a text to {who} with {what} is in Sent", "发给{who}、带有{what}的短信已在已发送里"),
        "missing_param": ("the request doesn't say {param}, so there's nothing exact to check",
                          "请求里没有说{param}，没有可以核对的具体内容"),
        "unreadable": ("the phone's answer could not be read ({reason})", "手机的回答无法读懂（{reason}）"),
    },
)

PARAM_NAMES = Catalog(
    "verify_params",
    {
        "recipient": ("who it goes to", "发给谁"),
        "text": ("the text", "内容"),
        "time": ("the time", "时间"),
        "date": ("the date", "日期"),
        "title": ("the title", "标题"),
        "name": ("the name", "名字"),
        "number": ("the number", "号码"),
        "minutes": ("how long", "多长时间"),
        "percent": ("the level", "数值"),
        "value": ("the value", "目标值"),
        "package": ("which app", "哪个应用"),
        "app": ("which app", "哪个应用"),
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


# --- messages and calls --------------------------------------------------------------------------------------

class SmsSent(_Judged):
    name = "sms_sent"
    required = ("recipient", "text")
    SENT = "content query --uri content://sms/sent --projection _id:address:body:date"

    def commands(self, params: Params) -> tuple[str, ...]:
        return (CONTACTS, self.SENT) + ((EVENTS, DATE, TZ) if params.event else ())

    def _wanted(self, params: Params, r: Readings) -> tuple[str, Text]:
        """(what the body must contain, how to say it) for `about` / `event` requests."""
        if params.about:
            phones = [p for c in _contacts(r) if _norm(c.name) == _norm(params.about) for p in c.phones]
            if not phones:
                raise Underivable(FOUND["no_contact"].format(who=params.about), f"no contact {params.about!r}")
            return phones[0], Text(f"{params.about}'s number {phones[0]}", f"{params.about}的号码 {phones[0]}")
        today = _today(r)
        times = [f"{e[2]:%H:%M}" for e in _events(r) if _norm(e[1]) == _norm(params.event) and e[2].date() == today]
        if not times:
            raise Underivable(FOUND["no_event"].format(title=params.event), f"no event {params.event!r} today")
        return times[0], Text(f"the time {times[0]}", f"时间 {times[0]}")

    def _judge(self, params: Params, before: Readings, after: Readings) -> Finding:
        cols = ("_id", "address", "body", "date")
        numbers = _numbers_for(params.recipient, after)
        if numbers is None:
            return Finding(VerificationStatus.CANNOT_VERIFY, FOUND["no_contact"].format(who=params.recipient),
                           f"no contact named {params.recipient!r} with a phone number")
        new = _new_rows(parse_rows(before.text(self.SENT), cols, "sent texts"),
                        parse_rows(after.text(self.SENT), cols, "sent texts"))
        evidence = f"new sent texts: {[(r['address'], r['body']) for r in new]}; recipient numbers {list(numbers)}"
        if params.about or params.event:
            needle, said = self._wanted(params, after)
            evidence += f"; the text must contain {needle!r}"
            inside = (lambda body: digits(needle) in digits(body)) if params.about else (lambda body: needle in body)
            for row in new:
                if any(same_number(row["address"], n) for n in numbers) and inside(row["body"] or ""):
                    return Finding(VerificationStatus.VERIFIED,
                                   Text(FOUND["sms_ok_about"].en.format(who=params.recipient, what=said.en),
                                        FOUND["sms_ok_about"].zh.format(who=params.recipient, what=said.zh)), evidence)
        if params.text and params.compare == "loose":
            return self._loose(params, new, numbers, evidence)
        for row in new:
            if params.text and any(same_number(row["address"], n) for n in numbers) and _norm(row["body"]) == _norm(params.text):
                return verified("sms_ok", evidence, who=params.recipient, text=params.text)
        if new:
            last = new[-1]
            return not_verified("sms_other", evidence, who=params.recipient, to=last["address"], body=last["body"])
        return not_verified("sms_none", evidence)

    def _loose(self, params: Params, new: list[dict[str, str | None]], numbers: tuple[str, ...],
               evidence: str) -> Finding:
        """The request gave the text's gist, not its words: a new text to one of the recipient's numbers
        whose body carries that gist (extract.same_gist) is verified, and the answer reads the body back
        so the user can judge the wording. A text to anyone else never counts."""
        to_them = [row for row in new if any(same_number(row["address"], n) for n in numbers)]
        shares = [(row["body"] or "", round(extract.gist_share(params.text, row["body"] or ""), 2)) for row in to_them]
        evidence += f"; loose comparison with {params.text!r} (share needed {extract.GIST_SHARE:.2f}): {shares}"
        for row in reversed(to_them):
            if extract.same_gist(params.text, row["body"] or ""):
                return verified("sms_ok_loose", evidence, who=params.recipient, body=row["body"] or "")
        if to_them:
            return not_verified("sms_unlike", evidence, who=params.recipient, body=to_them[-1]["body"] or "",
                                text=params.text)
        if new:
            last = new[-1]
            return not_verified("sms_other", evidence, who=params.recipient, to=last["address"], body=last["body"])
        return not_verified("sms_none", evidence)


class CallMade(_Judged):
    name = "call_made"
    required = ("recipient",)
    CALLS = "content query --uri content://call_log/calls --projection _id:number:type:date"

    def commands(self, params: Params) -> tuple[str, ...]:
        return (CONTACTS, self.CALLS)

    def _judge(self, params: Params, before: Readings, after: Readings) -> Finding:
        cols = ("_id", "number", "type", "date")
        numbers = _numbers_for(params.recipient, after)
        if numbers is None:
            return Finding(VerificationStatus.CANNOT_VERIFY, FOUND["no_contact"].format(who=params.recipient),
                           f"no contact named {params.recipient!r} with a phone number")
        new = [r for r in _new_rows(parse_rows(before.text(self.CALLS), cols, "call log"),
                                    parse_rows(after.text(self.CALLS), cols, "call log"))
               if as_int(r["type"], "call type") == 2]
        evidence = f"new outgoing calls: {[r['number'] for r in new]}; recipient numbers {list(numbers)}"
        if any(same_number(r["number"], n) for r in new for n in numbers):
            return verified("call_ok", evidence, who=params.recipient)
        if new:
            return not_verified("call_other", evidence, who=params.recipient, to=new[-1]["number"])
        return not_verified("call_none", evidence)


# --- contacts ------------------------------------------------------------------------------------------------

class ContactAdded(_Judged):
    name = "contact_added"
    required = ("name", "number")

    def commands(self, params: Params) -> tuple[str, ...]:
        return (CONTACTS,)

    def _judge(self, params: Params, before: Readings, after: Readings) -> Finding:
        want = _norm(params.name)

        def matches(contacts: list[_Contact]) -> list[_Contact]:
            return [c for c in contacts if _norm(c.name) == want]

        had = [c for c in matches(_contacts(before)) if any(same_number(p, params.number) for p in c.phones)]
        now = matches(_contacts(after))
        good = [c for c in now if any(same_number(p, params.number) for p in c.phones)]
        evidence = f"contacts named {params.name!r} after: {[(c.id, c.phones) for c in now]}; before with the number: {len(had)}"
        if good and len(good) > len(had):
            return verified("contact_ok", evidence, name=params.name, number=params.number)
        if good:
            return not_verified("contact_before", evidence, name=params.name, number=params.number)
        if now:
            return not_verified("contact_wrong", evidence, name=params.name,
                                found=", ".join(p for c in now for p in c.phones) or "-")
        return not_verified("contact_missing", evidence, name=params.name, number=params.number)


class ContactRemoved(_Judged):
    name = "contact_removed"
    required = ("name",)

    def commands(self, params: Params) -> tuple[str, ...]:
        return (CONTACTS,)

    def _judge(self, params: Params, before: Readings, after: Readings) -> Finding:
        want = _norm(params.name)
        had = [c for c in _contacts(before) if _norm(c.name) == want]
        now = [c for c in _contacts(after) if _norm(c.name) == want]
        evidence = f"contacts named {params.name!r}: before {len(had)}, after {len(now)}"
        if not had:
            return not_verified("removed_never", evidence, name=params.name)
        if now:
            return not_verified("removed_still", evidence, name=params.name)
        return verified("removed_ok", evidence, name=params.name)


# --- calendar ------------------------------------------------------------------------------------------------

EVENTS = "content query --uri content://com.android.calendar/events --projection _id:title:dtstart:deleted"
EVENT_COLS = ("_id", "title", "dtstart", "deleted")


def _events(r: Readings) -> list[tuple[str, str, dt.datetime]]:
    zone = _zone(r)
    out = []
    for row in parse_rows(r.text(EVENTS), EVENT_COLS, "calendar events"):
        if as_int(row["deleted"] or "0", "deleted") != 0:
            continue
        out.append((row["_id"] or "", row["title"] or "", _local(as_int(row["dtstart"], "dtstart"), zone)))
    return out


def _today(r: Readings) -> dt.date:
    return dt.datetime.fromtimestamp(parse_epoch(r.text(DATE)), dt.UTC).astimezone(_zone(r)).date()


class EventCreated(_Judged):
    name = "event_created"
    required = ("title", "date", "time")

    def commands(self, params: Params) -> tuple[str, ...]:
        return (EVENTS, DATE, TZ) + _sender_reads(params)

    def _judge(self, params: Params, before: Readings, after: Readings) -> Finding:
        params = _from_sender(params, after, want=("date", "time"))
        day = extract.parse_date(params.date, today=_today(before))
        if day is None:
            return Finding(VerificationStatus.CANNOT_VERIFY, FOUND["missing_param"].format(param=PARAM_NAMES["date"]),
                           f"could not read a date from {params.date!r}")
        want = _norm(params.title)

        def hits(r: Readings) -> list[tuple[str, str, dt.datetime]]:
            return [e for e in _events(r) if _norm(e[1]) == want]

        def exact(events: list[tuple[str, str, dt.datetime]]) -> int:
            return sum(1 for e in events if e[2].date().isoformat() == day and f"{e[2]:%H:%M}" == params.time)

        had, now = hits(before), hits(after)
        evidence = f"events titled {params.title!r} after: {[(e[0], f'{e[2]:%Y-%m-%d %H:%M}') for e in now]}; wanted {day} {params.time}"
        if exact(now) > exact(had):
            return verified("event_ok", evidence, title=params.title, date=day, time=params.time)
        if exact(now):
            return not_verified("event_before", evidence, title=params.title, date=day, time=params.time)
        new = [e for e in now if e[0] not in {h[0] for h in had}]
        if new:
            return not_verified("event_other", evidence, title=params.title, found=f"{new[-1][2]:%Y-%m-%d %H:%M}")
        return not_verified("event_none", evidence, title=params.title)


class EventRemoved(_Judged):
    name = "event_removed"
    required = ("title",)

    def commands(self, params: Params) -> tuple[str, ...]:
        return (EVENTS, TZ)

    def _judge(self, params: Params, before: Readings, after: Readings) -> Finding:
        want = _norm(params.title)
        had = [e for e in _events(before) if _norm(e[1]) == want]
        now = [e for e in _events(after) if _norm(e[1]) == want]
        evidence = f"events titled {params.title!r}: before {len(had)}, after {len(now)}"
        what = f"\u201c{params.title}\u201d"
        if not had:
            return not_verified("removed_never", evidence, name=what)
        if now:
            return not_verified("removed_still", evidence, name=what)
        return verified("removed_ok", evidence, name=what)


# --- alarms and timers -------------------------------------------------------------------------------------

ALARMS = "dumpsys alarm"


def _clock_alarms(r: Readings, *, timer: bool) -> list[PendingAlarm]:
    out = []
    for a in parse_alarms(r.text(ALARMS)):
        if "deskclock" not in a.package and "clock" not in a.tag.lower():
            continue
        is_timer = "TIMER" in a.tag.upper()
        if is_timer == timer and a.kind.startswith("RTC"):
            out.append(a)
    return out


def _alarm_times(r: Readings) -> list[str]:
    zone = _zone(r)
    return [f"{_local(a.when_ms, zone):%H:%M}" for a in _clock_alarms(r, timer=False)]


class AlarmSet(_Judged):
    name = "alarm_set"
    required = ("time",)

    def commands(self, params: Params) -> tuple[str, ...]:
        return (ALARMS, TZ) + _sender_reads(params)

    def _judge(self, params: Params, before: Readings, after: Readings) -> Finding:
        params = _from_sender(params, after, want=("time",))
        had, now = _alarm_times(before), _alarm_times(after)
        evidence = f"clock alarms before {had}, after {now}; wanted {params.time} (labels are not readable over adb)"
        if now.count(params.time) > had.count(params.time):
            return verified("alarm_ok", evidence, time=params.time)
        if params.time in had:
            return not_verified("alarm_before", evidence, time=params.time)
        return not_verified("alarm_other", evidence, time=params.time, found=", ".join(now) or "-")


class AlarmOff(_Judged):
    name = "alarm_off"
    required = ("time",)

    def commands(self, params: Params) -> tuple[str, ...]:
        return (ALARMS, TZ)

    def _judge(self, params: Params, before: Readings, after: Readings) -> Finding:
        had, now = _alarm_times(before), _alarm_times(after)
        evidence = f"clock alarms before {had}, after {now}; {params.time} should be off"
        if params.time not in had:
            return not_verified("alarm_never", evidence, time=params.time)
        if params.time in now:
            return not_verified("alarm_still", evidence, time=params.time)
        return verified("alarm_off_ok", evidence, time=params.time)


class TimerStarted(_Judged):
    name = "timer_started"
    required = ("minutes",)
    SLACK_S = 2

    def commands(self, params: Params) -> tuple[str, ...]:
        return (ALARMS, DATE)

    def _judge(self, params: Params, before: Readings, after: Readings) -> Finding:
        t0, t1 = parse_epoch(before.text(DATE)), parse_epoch(after.text(DATE))
        had = {a.when_ms for a in _clock_alarms(before, timer=True)}
        new = [a for a in _clock_alarms(after, timer=True) if a.when_ms not in had]
        want = params.minutes * 60
        # Started somewhere between the two readings: the duration lies in [expiry - t1, expiry - t0].
        spans = [(a.when_ms // 1000 - t1, a.when_ms // 1000 - t0) for a in new]
        evidence = f"new timer alarms {[a.when_ms for a in new]}, clock {t0}..{t1}; possible durations {spans} s; wanted {want} s"
        if any(lo - self.SLACK_S <= want <= hi + self.SLACK_S for lo, hi in spans):
            return verified("timer_ok", evidence, minutes=params.minutes)
        if spans:
            return not_verified("timer_other", evidence, found=round(spans[-1][1] / 60))
        return not_verified("timer_none", evidence)


# --- settings ------------------------------------------------------------------------------------------------

def _setting_matches(params: Params, value: str | None) -> bool:
    if value is None:
        return False
    if params.compare == "equals":
        return value == params.value
    if params.compare == "prefix":
        return value.lower().startswith(params.value.lower())
    try:
        number = float(value)
    except ValueError:
        raise Unreadable(f"setting {params.key}: {value!r} is not a number") from None
    if params.compare == "float":
        return abs(number - float(params.value)) < 1e-6
    if params.compare == "percent255":
        return abs(number * 100 / 255 - params.percent) <= 3
    raise Unreadable(f"unknown comparison {params.compare!r}")


def _setting_shown(params: Params, value: str | None) -> str | Text:
    label = params.label(value)
    if label is not None:
        return label
    if value is None:
        return "not set"
    if params.compare == "percent255":
        try:
            return f"{round(float(value) * 100 / 255)}%"
        except ValueError:
            return value
    if value in ("0", "1") and params.compare == "equals" and params.value in ("0", "1"):
        return "on" if value == "1" else "off"
    return value


class SettingIs(_Judged):
    name = "setting"
    required = ("namespace", "key")

    def commands(self, params: Params) -> tuple[str, ...]:
        return (f"settings get {params.namespace} {params.key}",)

    def _judge(self, params: Params, before: Readings, after: Readings) -> Finding:
        cmd = self.commands(params)[0]
        was = parse_setting(before.text(cmd), cmd)
        now = parse_setting(after.text(cmd), cmd)
        evidence = f"{params.namespace}/{params.key}: before {was!r}, after {now!r}; wanted {params.compare} {params.value or params.percent}"
        what = Text(params.spoken_what("en") or params.key, params.spoken_what("zh") or params.key)
        was_ok, now_ok = _setting_matches(params, was), _setting_matches(params, now)
        return _setting_finding(was_ok, now_ok, what, _setting_shown(params, now), evidence)


def _setting_finding(was_ok: bool, now_ok: bool, what: Text, shown: str | Text, evidence: str) -> Finding:
    if now_ok and not was_ok:
        status, key = VerificationStatus.VERIFIED, "setting_ok"
    elif now_ok:
        # Already as asked, and still so: the goal state holds (ALREADY), told apart from "not done".
        status, key = VerificationStatus.ALREADY, "setting_already"
    else:
        status, key = VerificationStatus.NOT_VERIFIED, "setting_before" if was_ok else "setting_other"
    if not isinstance(shown, Text):
        shown = Text(shown, {"on": "开启", "off": "关闭", "not set": "未设置", "none": "无"}.get(shown, shown))
    return Finding(status, Text(FOUND[key].en.format(what=what.en, value=shown.en),
                                FOUND[key].zh.format(what=what.zh, value=shown.zh)), evidence)


class WifiNetwork(_Judged):
    name = "wifi_network"
    required = ("value",)
    WIFI = "dumpsys wifi"

    def commands(self, params: Params) -> tuple[str, ...]:
        return (self.WIFI,)

    def _judge(self, params: Params, before: Readings, after: Readings) -> Finding:
        was, now = parse_wifi_ssid(before.text(self.WIFI)), parse_wifi_ssid(after.text(self.WIFI))
        evidence = f"connected network before {was!r}, after {now!r}; wanted {params.value!r}"
        what = Text("the Wi-Fi network", "连接的 WLAN 网络")
        return _setting_finding(was == params.value, now == params.value, what, now or "none", evidence)


# --- files ---------------------------------------------------------------------------------------------------

def _ls(folder: str) -> str:
    return f"ls -l {folder}"


class FileSaved(_Judged):
    name = "file_saved"
    required = ("folder", "title")

    def path(self, params: Params) -> str:
        return f"{params.folder.rstrip('/')}/{params.title.replace('/', '_')}.txt"

    def commands(self, params: Params) -> tuple[str, ...]:
        return (_ls(params.folder), f"pull:{self.path(params)}") + _sender_reads(params)

    def _judge(self, params: Params, before: Readings, after: Readings) -> Finding:
        params = _from_sender(params, after, want=("text",))
        path = self.path(params)
        parse_ls(after.text(_ls(params.folder)), params.folder)  # the folder listing must be readable
        was, now = before.get(f"pull:{path}"), after.get(f"pull:{path}")
        evidence = f"{path}: before {None if was is None else len(was)} chars, after {now!r:.120}"
        if now is None:
            return not_verified("file_none", evidence, path=path)
        if params.text and _norm(now) != _norm(params.text):
            return not_verified("file_text", evidence, path=path, found=now[:80])
        if was is not None and (_norm(was) == _norm(now)):
            return not_verified("file_before", evidence, path=path)
        return verified("file_ok", evidence, path=path)


class FileRemoved(_Judged):
    name = "file_removed"
    required = ("name", "folders")

    def commands(self, params: Params) -> tuple[str, ...]:
        return tuple(_ls(f) for f in params.folders)

    def _found(self, params: Params, r: Readings) -> list[str]:
        want = _norm(params.name)
        hits = []
        for folder in params.folders:
            entries = parse_ls(r.text(_ls(folder)), folder) or []
            # "Ideas" names Ideas.txt, "Mountain" names Mountain.jpg; "Manual.pdf" names only itself.
            hits += [f"{folder}/{e.name}" for e in entries
                     if not e.is_dir and want in (_norm(e.name), _norm(e.name.rsplit(".", 1)[0]))]
        return hits

    def _judge(self, params: Params, before: Readings, after: Readings) -> Finding:
        had, now = self._found(params, before), self._found(params, after)
        evidence = f"files named {params.name!r}: before {had}, after {now}"
        if not had:
            return not_verified("removed_never", evidence, name=params.name)
        if now:
            return not_verified("removed_still", evidence, name=params.name)
        return verified("removed_ok", evidence, name=params.name)


# --- apps and notifications -------------------------------------------------------------------------------------

PACKAGES = "pm list packages"


def _package(params: Params, r: Readings) -> str:
    """The package meant: given, or the app's name (\u201cGallery\u201d, \u201c微信\u201d) resolved among the
    phone's installed packages (the well-known names in harness.appnames)."""
    if params.package:
        return params.package
    from harness.appnames import resolve_app

    installed = parse_packages(r.text(PACKAGES))
    found = resolve_app(params.app, dict.fromkeys(installed, ""))
    if found is None:
        raise Underivable(FOUND["no_app"].format(app=params.app), f"no installed package for {params.app!r}")
    return found


class AppForeground(_Judged):
    name = "app_foreground"
    required = ("package",)
    WINDOW = "dumpsys window"

    def commands(self, params: Params) -> tuple[str, ...]:
        return (self.WINDOW,) + (() if params.package else (PACKAGES,))

    def _judge(self, params: Params, before: Readings, after: Readings) -> Finding:
        wanted = _package(params, after)
        was, _ = parse_foreground(before.text(self.WINDOW))
        package, activity = parse_foreground(after.text(self.WINDOW))
        evidence = f"focused window before: {was}; after: {package}/{activity}; wanted {wanted}"
        app = params.app or wanted
        if package == wanted and was != wanted:
            return verified("app_ok", evidence, app=app)
        if package == wanted:
            return not_verified("app_before", evidence, app=app)
        return not_verified("app_other", evidence, app=app, found=package or activity or "-")


class PackageInstalled(_Judged):
    name = "package_installed"
    required = ("package",)

    def commands(self, params: Params) -> tuple[str, ...]:
        return (PACKAGES,)

    def _judge(self, params: Params, before: Readings, after: Readings) -> Finding:
        wanted = _package(params, after)
        was = wanted in parse_packages(before.text(PACKAGES))
        now = wanted in parse_packages(after.text(PACKAGES))
        evidence = f"{wanted}: installed before {was}, after {now}"
        app = params.app or wanted
        if now and not was:
            return verified("installed_ok", evidence, app=app)
        return not_verified("installed_before" if now else "installed_not", evidence, app=app)


class NotificationPosted(_Judged):
    name = "notification_posted"
    required = ("text",)
    NOTIFICATIONS = "dumpsys notification --noredact"

    def commands(self, params: Params) -> tuple[str, ...]:
        return (self.NOTIFICATIONS,)

    def _judge(self, params: Params, before: Readings, after: Readings) -> Finding:
        want = _norm(params.text)

        def hits(r: Readings) -> int:
            return sum(1 for n in parse_notifications(r.text(self.NOTIFICATIONS))
                       if want in _norm(n.title) or want in _norm(n.text))

        had, now = hits(before), hits(after)
        evidence = f"notifications mentioning {params.text!r}: before {had}, after {now}"
        if now > had:
            return verified("notification_ok", evidence, text=params.text)
        return not_verified("notification_none", evidence, text=params.text)


CHECKS: dict[str, Check] = {c.name: c for c in (
    SmsSent(), CallMade(), ContactAdded(), ContactRemoved(), EventCreated(), EventRemoved(), AlarmSet(),
    AlarmOff(), TimerStarted(), SettingIs(), WifiNetwork(), FileSaved(), FileRemoved(), AppForeground(),
    PackageInstalled(), NotificationPosted(),
)}


def all_commands(checks: Sequence[tuple[Check, Params]]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for check, params in checks:
        for cmd in check.commands(params):
            seen.setdefault(cmd, None)
    return tuple(seen)
