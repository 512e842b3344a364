"""What a real phone's content providers and system services show over `adb shell`, answered from the
World's app state — so outcome checks (harness.verify) read the simulated phone exactly as a real one.

- `content query --uri URI [--projection a:b:c] [--where "col='v' AND col2=3"] [--sort "col DESC"]` for
  content://sms (and /sent, /inbox), content://call_log/calls, content://com.android.contacts/data,
  content://com.android.calendar/events. Output as Android's `content` tool prints it:
  `Row: 0 _id=1, address=+1 555 0147, body=hello` per row, `No result found.` for none. Times are
  epoch milliseconds; the world's clock is read as UTC (the simulated phone has no
  persist.sys.timezone, and readers fall back to UTC).
- `dumpsys alarm`: enabled Clock alarms and a running timer as pending RTC_WAKEUP alarms of
  com.android.deskclock (tags `*walarm*:com.android.deskclock.ALARM_ALERT` / `...TIMER_EXPIRED`).
- (`dumpsys notification` is SimPhone's own; readers also accept Android's redacted
  `String [length=N]` extras, which a real phone prints without --noredact.)
- `dumpsys wifi`: the connected network (`mWifiInfo SSID: "NAME", ... Supplicant state: COMPLETED`).
- `date [+FORMAT]`: the world's clock (`+%s` epoch seconds).
- Files: the Notes app's notes as text files under /sdcard/Documents/Notes/<title>.txt (the way
  file-backed notes apps keep them), the Gallery's photos as /sdcard/DCIM/Camera/<title>.jpg and the
  Files app's files under /sdcard/<folder>/<name>, mirrored
  into the phone's VirtualFS before each shell command (`sync_files`), so ls/stat/cat/pull see them.

Pure functions of the world; the caller holds `phone.lock`.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

NOTES_DIR = "/sdcard/Documents/Notes"
DESKCLOCK = "com.android.deskclock"
UTC = dt.UTC


class ProviderError(ValueError):
    """A query the provider rejects; the message is what Android prints."""


def epoch_ms(moment: dt.datetime) -> int:
    return int(moment.replace(tzinfo=UTC).timestamp() * 1000)


def _at(world: Any, date: str, hhmm: str) -> int:
    try:
        day = dt.date.fromisoformat(date)
        hour, minute = (int(p) for p in hhmm.split(":")[:2])
    except ValueError:
        return 0
    return epoch_ms(dt.datetime.combine(day, dt.time(hour, minute)))


def _today_at(world: Any, hhmm: str) -> int:
    return _at(world, world.now.date().isoformat(), hhmm)


def _state(world: Any, package: str) -> Any:
    app = world.apps.get(package)
    return getattr(app, "state", None)


# --- content providers ------------------------------------------------------------------------------------

Row = dict[str, object]


def sms_rows(world: Any, box: str) -> list[Row]:
    st = _state(world, "com.android.messaging")
    rows: list[Row] = []
    for tid, thread in enumerate(getattr(st, "threads", []), start=1):
        for msg in thread.messages:
            kind = 2 if msg.outgoing else 1
            if (box == "sent" and kind != 2) or (box == "inbox" and kind != 1):
                continue
            when = _today_at(world, msg.time)
            rows.append({"_id": len(rows) + 1, "thread_id": tid, "address": thread.number, "date": when,
                         "date_sent": when if kind == 2 else 0, "read": 1, "type": kind, "body": msg.text})
    return rows


def call_rows(world: Any) -> list[Row]:
    st = _state(world, "com.android.dialer")
    return [{"_id": i, "number": c.number, "date": _today_at(world, c.time), "duration": 0,
             "type": 2 if c.outgoing else 1, "name": c.name or None}
            for i, c in enumerate(getattr(st, "calls", []), start=1)]


def contact_data_rows(world: Any) -> list[Row]:
    st = _state(world, "com.android.dialer")
    lang = getattr(world, "language", "en")
    rows: list[Row] = []
    for cid, c in enumerate(getattr(st, "contacts", []), start=1):
        name = c.name.get(lang) if hasattr(c.name, "get") else str(c.name)
        base = {"contact_id": cid, "raw_contact_id": cid, "display_name": name}
        rows.append({"_id": len(rows) + 1, **base, "mimetype": "vnd.android.cursor.item/name", "data1": name})
        if c.phone:
            rows.append({"_id": len(rows) + 1, **base, "mimetype": "vnd.android.cursor.item/phone_v2",
                         "data1": c.phone})
        if c.email:
            rows.append({"_id": len(rows) + 1, **base, "mimetype": "vnd.android.cursor.item/email_v2",
                         "data1": c.email})
    return rows


def event_rows(world: Any) -> list[Row]:
    st = _state(world, "com.android.calendar")
    rows: list[Row] = []
    for i, e in enumerate(getattr(st, "events", []), start=1):
        start = _at(world, e.date, e.time)
        rows.append({"_id": i, "calendar_id": 1, "title": e.title, "dtstart": start, "dtend": start + 3_600_000,
                     "eventLocation": e.location or None, "allDay": 0, "eventTimezone": "UTC", "deleted": 0})
    return rows


PROVIDERS: dict[str, Callable[[Any], list[Row]]] = {
    "content://sms": lambda w: sms_rows(w, "all"),
    "content://sms/sent": lambda w: sms_rows(w, "sent"),
    "content://sms/inbox": lambda w: sms_rows(w, "inbox"),
    "content://call_log/calls": call_rows,
    "content://com.android.contacts/data": contact_data_rows,
    "content://com.android.calendar/events": event_rows,
}

_WHERE_TERM = re.compile(r"^\s*(\w+)\s*(=|!=|<>|>=|<=|>|<|LIKE)\s*('(?:[^']|'')*'|-?\d+|NULL)\s*$", re.IGNORECASE)


def _where(clause: str) -> Callable[[Row], bool]:
    """A tiny SQL WHERE: terms `col OP value` joined by AND (what the verifier and most scripts send)."""
    terms = []
    for part in re.split(r"\s+AND\s+", clause.strip(), flags=re.IGNORECASE):
        m = _WHERE_TERM.match(part)
        if m is None:
            raise ProviderError(f"android.database.sqlite.SQLiteException: near \"{part.strip()[:20]}\": syntax error")
        col, op, raw = m.group(1), m.group(2).upper(), m.group(3)
        value: object = None if raw.upper() == "NULL" else raw[1:-1].replace("''", "'") if raw.startswith("'") else int(raw)
        terms.append((col, op, value))

    def test(row: Row) -> bool:
        for col, op, value in terms:
            if col not in row:
                raise ProviderError(f"android.database.sqlite.SQLiteException: no such column: {col}")
            got = row[col]
            if op == "LIKE":
                pattern = "^" + re.escape(str(value)).replace("%", ".*").replace("_", ".") + "$"
                ok = re.match(pattern, str(got), re.IGNORECASE) is not None
            elif op == "=":
                ok = str(got) == str(value) if value is not None else got is None
            elif op in ("!=", "<>"):
                ok = str(got) != str(value)
            else:
                try:
                    a, b = float(got), float(value)  # type: ignore[arg-type]
                except (TypeError, ValueError):
                    return False
                ok = {">": a > b, "<": a < b, ">=": a >= b, "<=": a <= b}[op]
            if not ok:
                return False
        return True

    return test


def _fmt(value: object) -> str:
    return "NULL" if value is None else str(value)


def content_query(world: Any, uri: str, projection: list[str] | None, where: str | None, sort: str | None) -> str:
    """The text `content query` prints, or ProviderError with Android's message."""
    maker = PROVIDERS.get(uri.rstrip("/"))
    if maker is None:
        raise ProviderError(f"Error while accessing provider:{uri.removeprefix('content://').split('/')[0]}\n"
                            f"java.lang.IllegalArgumentException: Unknown URI {uri}")
    rows = maker(world)
    if where:
        test = _where(where)
        rows = [r for r in rows if test(r)]
    if sort:
        col, _, order = sort.strip().partition(" ")
        if rows and col not in rows[0]:
            raise ProviderError(f"android.database.sqlite.SQLiteException: no such column: {col}")
        rows.sort(key=lambda r: (r.get(col) is None, r.get(col) if not isinstance(r.get(col), str) else str(r.get(col))),
                  reverse=order.strip().upper() == "DESC")
    if not rows:
        return "No result found.\n"
    out = []
    for i, row in enumerate(rows):
        cols = projection or list(row)
        for col in cols:
            if col not in row:
                raise ProviderError(f"android.database.sqlite.SQLiteException: no such column: {col}")
        out.append(f"Row: {i} " + ", ".join(f"{c}={_fmt(row[c])}" for c in cols))
    return "\n".join(out) + "\n"


def parse_content_args(args: list[str]) -> tuple[str, str | None, list[str] | None, str | None, str | None]:
    """(sub, uri, projection, where, sort) from `content` arguments; ValueError with a usage message."""
    if not args:
        raise ValueError("usage: content [query|insert|update|delete] --uri <URI> ...")
    sub = args[0]
    uri = where = sort = None
    projection: list[str] | None = None
    it = iter(args[1:])
    for a in it:
        if a == "--uri":
            uri = next(it, None)
        elif a == "--projection":
            projection = [p for p in re.split(r"[:,]", next(it, "") or "") if p]
        elif a == "--where":
            where = next(it, None)
        elif a == "--sort":
            sort = next(it, None)
        elif a == "--user":
            next(it, None)
        else:
            raise ValueError(f"Unsupported argument: {a}")
    return sub, uri, projection, where, sort


# --- dumpsys ------------------------------------------------------------------------------------------------

def _next_at(now: dt.datetime, hhmm: str) -> dt.datetime | None:
    try:
        hour, minute = (int(p) for p in hhmm.split(":")[:2])
    except ValueError:
        return None
    moment = now.replace(hour=hour, minute=minute, second=0, microsecond=0)
    return moment if moment > now else moment + dt.timedelta(days=1)


@dataclass(frozen=True)
class _Pending:
    when: dt.datetime
    tag: str


def _pending_alarms(world: Any) -> list[_Pending]:
    st = _state(world, DESKCLOCK)
    now = world.now
    out: list[_Pending] = []
    for alarm in getattr(st, "alarms", []):
        when = _next_at(now, alarm.time) if alarm.enabled else None
        if when is not None:
            out.append(_Pending(when, f"*walarm*:{DESKCLOCK}.ALARM_ALERT"))
    started = getattr(st, "timer_started_ms", None)
    if started is not None and getattr(st, "timer_seconds", 0):
        expiry = world.clock.start + dt.timedelta(milliseconds=started + st.timer_seconds * 1000)
        if expiry > now:
            out.append(_Pending(expiry, f"*walarm*:{DESKCLOCK}.action.TIMER_EXPIRED"))
    return sorted(out, key=lambda p: p.when)


def _rel(delta: dt.timedelta) -> str:
    total = int(delta.total_seconds() * 1000)
    sign = "+" if total >= 0 else "-"
    total = abs(total)
    h, rem = divmod(total, 3_600_000)
    m, rem = divmod(rem, 60_000)
    s, ms = divmod(rem, 1000)
    return f"{sign}{h}h{m}m{s}s{ms}ms" if h else f"{sign}{m}m{s}s{ms}ms"


def dumpsys_alarm(world: Any, args: list[str]) -> str:
    now = world.now
    lines = [
        "Current Alarm Manager state:",
        "  Settings:",
        "    min_futurity=+5s0ms",
        "",
        f"  nowRTC={epoch_ms(now)}={now:%Y-%m-%d %H:%M:%S}.000 nowELAPSED=+{world.clock.elapsed_ms}ms",
        "",
        f"  Pending alarms: {len(_pending_alarms(world))}",
    ]
    for i, p in enumerate(_pending_alarms(world)):
        when = epoch_ms(p.when)
        token = f"{(when // 1000) & 0xFFFFFFF:07x}"
        lines += [
            f"    RTC_WAKEUP #{i}: Alarm{{{token} type 0 origWhen {when} window 0 exactAllowReason=policy_permission "
            f"repeatInterval 0 count 0 flags 0x9 {DESKCLOCK}}}",
            f"      tag={p.tag}",
            f"      type=RTC_WAKEUP origWhen={p.when:%Y-%m-%d %H:%M:%S}.000 window=0 exactAllowReason=policy_permission "
            "repeatInterval=0 count=0 flags=0x9",
            f"      whenElapsed={_rel(p.when - now)} maxWhenElapsed={_rel(p.when - now)}",
            f"      operation=PendingIntent{{{token}: PendingIntentRecord{{{token} {DESKCLOCK} broadcastIntent}}}}",
        ]
    return "\n".join(lines) + "\n"


def dumpsys_wifi(world: Any, args: list[str]) -> str:
    st = _state(world, "com.android.settings")
    on = bool(getattr(st, "wifi", False)) and not getattr(st, "airplane", False)
    ssid = getattr(st, "wifi_network", "") if on else ""
    lines = [f"Wi-Fi is {'enabled' if on else 'disabled'}"]
    if ssid:
        lines.append(f'mWifiInfo SSID: "{ssid}", BSSID: 02:00:00:00:01:00, MAC: 02:00:00:00:00:00, '
                     "Supplicant state: COMPLETED, Wi-Fi standard: 11ac, RSSI: -55, Link speed: 433Mbps")
    else:
        lines.append("mWifiInfo SSID: <unknown ssid>, BSSID: <none>, MAC: 02:00:00:00:00:00, "
                     "Supplicant state: DISCONNECTED, RSSI: -127, Link speed: -1Mbps")
    return "\n".join(lines) + "\n"


DUMPSYS: dict[str, Callable[[Any, list[str]], str]] = {
    "alarm": dumpsys_alarm,
    "wifi": dumpsys_wifi,
}


def date_text(world: Any, args: list[str]) -> str:
    now = world.now
    fmt = next((a[1:] for a in args if a.startswith("+")), None)
    if fmt is None:
        return f"{now:%a %b %d %H:%M:%S} UTC {now:%Y}\n"
    seconds = str(epoch_ms(now) // 1000)
    return now.strftime(fmt.replace("%s", seconds)) + "\n"


# --- files ----------------------------------------------------------------------------------------------------

_UNSAFE = re.compile(r"[/\\\x00]")


def world_files(world: Any) -> dict[str, bytes]:
    """The files the world's apps keep on shared storage: path -> content."""
    out: dict[str, bytes] = {}
    notes = _state(world, "com.phoneworld.notes")
    for note in getattr(notes, "notes", []):
        name = _UNSAFE.sub("_", note.title.strip()) or note.id
        out[f"{NOTES_DIR}/{name}.txt"] = note.body.encode("utf-8")
    gallery = _state(world, "com.android.gallery3d")
    for photo in getattr(gallery, "photos", []):
        name = _UNSAFE.sub("_", photo.title.strip()) or photo.id
        out[f"/sdcard/DCIM/Camera/{name}.jpg"] = f"photo:{photo.seed}".encode()
    files = _state(world, "com.android.documentsui")
    for f in getattr(files, "files", []):
        out[f"/sdcard/{f.folder}/{_UNSAFE.sub('_', f.name)}"] = (f.content or f"photo:{f.photo_seed}").encode("utf-8")
    return out


def sync_files(phone: Any) -> None:
    """Mirror `world_files` into the phone's VirtualFS: write new or changed files, remove vanished ones.
    Files the host pushed itself are left alone."""
    wanted = world_files(phone.world)
    mirrored: dict[str, bytes] = phone.__dict__.setdefault("_mirrored_files", {})
    for path in [p for p in mirrored if p not in wanted]:
        if phone.fs.exists(path):
            phone.fs.remove(path)
        del mirrored[path]
    for path, data in wanted.items():
        if mirrored.get(path) != data:
            phone.fs.write(path, data)
            mirrored[path] = data
    phone.fs.mkdir(NOTES_DIR)
