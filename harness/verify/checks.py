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
import logging
from collections.abc import Sequence

from assistant_core.events import VerificationStatus
from assistant_core.i18n import Text
from harness.verify import extract
from harness.verify.checkbase import (  # noqa: F401 (re-exported: the common parts live in checkbase, issue 26)
    CONTACT_COLS,
    CONTACTS,
    DATE,
    FOUND,
    INBOX,
    PARAM_NAMES,
    PHONE_MIME,
    TZ,
    Check,
    Finding,
    Params,
    Readings,
    Underivable,
    _Contact,
    _contacts,
    _from_sender,
    _Judged,
    _labels,
    _latest_text_from,
    _local,
    _new_rows,
    _norm,
    _numbers_for,
    _sender_reads,
    _today,
    _zone,
    cannot,
    not_verified,
    verified,
)
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
            return phones[0], Text("{about}'s number {phones}").format(about=params.about, phones=phones[0])
        today = _today(r)
        times = [f"{e[2]:%H:%M}" for e in _events(r) if _norm(e[1]) == _norm(params.event) and e[2].date() == today]
        if not times:
            raise Underivable(FOUND["no_event"].format(title=params.event), f"no event {params.event!r} today")
        return times[0], Text("the time {times}").format(times=times[0])

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
        what = Text("the Wi-Fi network", ctx="harness.verify.checks")
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
