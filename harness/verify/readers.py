"""Parsers for what a phone prints to the shell, into typed records. Pure functions over text.

Every parser either returns records or raises `Unreadable(reason)`: output that is garbled, cut short or
not what the command prints (an error from the provider, a permission denial, a service that is
missing) is never read as "nothing there". Checks turn Unreadable into cannot_verify with the reason.

Formats (Android 14, no root):
- `settings get NS KEY` → one line, the value or `null`.
- `content query --uri URI --projection a:b` → `Row: N a=..., b=...` lines, or `No result found.`
  Values may contain ", "; a row is split only at ", NAME=" for the projected names.
- `dumpsys alarm` → `RTC_WAKEUP #i: Alarm{TOKEN type T origWhen MS ... PACKAGE}` then `tag=...` lines.
- `dumpsys notification --noredact` → `NotificationRecord(...: pkg=P ... id=N ...)` then
  `android.title=String (..)` / `android.text=String (..)` extras.
- `dumpsys wifi` → `mWifiInfo SSID: "NAME", ... Supplicant state: STATE`.
- `dumpsys window` → `mCurrentFocus=Window{... u0 PKG/ACTIVITY}`.
- `pm list packages` → `package:NAME` lines.
- `ls -l DIR`, `stat -c '%s %Y %n' PATH`, `date +%s`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


class Unreadable(ValueError):
    """The output could not be read as what the command prints; the message says why."""


_ERROR_MARKS = (
    "Error while accessing provider",
    "Exception",
    "Permission Denial",
    "Can't find service",
    "inaccessible or not found",
    "No such file or directory",
    "Unknown URI",
    "usage:",
    "Usage:",
)


def _refuse_errors(text: str, what: str) -> None:
    """Raise Unreadable when the phone printed an error instead of data. Lines carrying user data (a
    row's values, a notification's text) are not searched: a message may well say "Exception"."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("Row: ") or re.match(r"^\s*android\.(title|text)=", line):
            continue
        for mark in _ERROR_MARKS:
            if mark in line:
                said = " / ".join(ln.strip() for ln in lines[i : i + 2] if ln.strip())
                raise Unreadable(f"{what}: the phone answered with an error: {said[:200]}")


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return (flat[:80] + "…") if len(flat) > 80 else flat or "(nothing)"


# --- settings ------------------------------------------------------------------------------------------

_SETTING_VALUE = re.compile(r"^[\w.\-:+,/ ]{0,200}$")


def parse_setting(text: str, what: str = "settings get") -> str | None:
    """The value `settings get` printed; None for `null`."""
    _refuse_errors(text, what)
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    if len(lines) != 1 or not _SETTING_VALUE.match(lines[0]):
        raise Unreadable(f"{what}: expected one value, got {_short(text)!r}")
    return None if lines[0] == "null" else lines[0]


# --- content providers -------------------------------------------------------------------------------------

_ROW = re.compile(r"^Row: (\d+) (.*)$")


def parse_rows(text: str, columns: tuple[str, ...], what: str = "content query") -> list[dict[str, str | None]]:
    """Rows of `content query` with exactly the projected `columns` (in order), values as text (NULL → None)."""
    _refuse_errors(text, what)
    body = text.strip()
    if body == "No result found.":
        return []
    if not body:
        raise Unreadable(f"{what}: the phone printed nothing (not even 'No result found.')")
    # A value may hold line breaks (a text message's body): lines that do not start a row continue it.
    records: list[str] = []
    for line in body.splitlines():
        line = line.rstrip("\r")
        if line.startswith("Row: ") or not records:
            records.append(line)
        else:
            records[-1] += "\n" + line
    rows: list[dict[str, str | None]] = []
    for record in records:
        m = _ROW.match(record.split("\n", 1)[0])
        if m is None:
            raise Unreadable(f"{what}: a line is not a row: {_short(record)!r}")
        if int(m.group(1)) != len(rows):
            raise Unreadable(f"{what}: rows out of order at {_short(record)!r}")
        rest = record[m.start(2):]
        rows.append(_split_row(rest, columns, what))
    return rows


def _split_row(rest: str, columns: tuple[str, ...], what: str) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    pos = 0
    for i, col in enumerate(columns):
        head = f"{col}="
        if not rest.startswith(head, pos):
            raise Unreadable(f"{what}: expected column {col!r} in {_short(rest)!r}")
        start = pos + len(head)
        if i + 1 < len(columns):
            nxt = rest.find(f", {columns[i + 1]}=", start)
            if nxt < 0:
                raise Unreadable(f"{what}: column {columns[i + 1]!r} missing in {_short(rest)!r}")
            value, pos = rest[start:nxt], nxt + 2
        else:
            value, pos = rest[start:], len(rest)
        out[col] = None if value == "NULL" else value
    return out


def as_int(value: str | None, what: str) -> int:
    try:
        return int(value or "")
    except ValueError:
        raise Unreadable(f"{what}: {value!r} is not a number") from None


# --- alarms ------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PendingAlarm:
    kind: str  # RTC_WAKEUP, RTC, ELAPSED_WAKEUP, ELAPSED
    when_ms: int  # origWhen: epoch ms for RTC alarms
    package: str
    tag: str


_ALARM = re.compile(r"^\s*(RTC_WAKEUP|RTC|ELAPSED_WAKEUP|ELAPSED) #\d+: Alarm\{\S+ type (\d+) origWhen (-?\d+) .*?(\S+)\}\s*$")
_TAG = re.compile(r"^\s*tag=(\S+)")


def parse_alarms(text: str) -> list[PendingAlarm]:
    """Pending alarms from `dumpsys alarm` (any package)."""
    _refuse_errors(text, "dumpsys alarm")
    if "Alarm Manager" not in text:
        raise Unreadable(f"dumpsys alarm: this is not the alarm manager's state: {_short(text)!r}")
    alarms: list[PendingAlarm] = []
    pending: tuple[str, int, str] | None = None
    for line in text.splitlines():
        m = _ALARM.match(line)
        if m:
            if pending is not None:
                alarms.append(PendingAlarm(pending[0], pending[1], pending[2], ""))
            pending = (m.group(1), int(m.group(3)), m.group(4))
            continue
        if re.search(r"#\d+: Alarm\{", line):
            raise Unreadable(f"dumpsys alarm: an alarm line I can't read: {_short(line)!r}")
        t = _TAG.match(line)
        if t and pending is not None:
            alarms.append(PendingAlarm(pending[0], pending[1], pending[2], t.group(1)))
            pending = None
    if pending is not None:
        alarms.append(PendingAlarm(pending[0], pending[1], pending[2], ""))
    return alarms


# --- notifications ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PostedNotification:
    package: str
    id: int
    title: str | None  # None when the phone redacted it
    text: str | None


_RECORD = re.compile(r"NotificationRecord\(0x[0-9a-f]+: pkg=(\S+) user=\S+ id=(-?\d+)")
_EXTRA = re.compile(r"^\s*android\.(title|text)=(?:String \((.*)\)|String \[length=\d+\]|(null))\s*$")


def parse_notifications(text: str) -> list[PostedNotification]:
    _refuse_errors(text, "dumpsys notification")
    if "Notification Manager" not in text and "Notification List" not in text:
        raise Unreadable(f"dumpsys notification: not the notification manager's state: {_short(text)!r}")
    out: list[PostedNotification] = []
    current: dict[str, object] | None = None

    def flush() -> None:
        if current is not None:
            out.append(PostedNotification(str(current["pkg"]), int(current["id"]),  # type: ignore[arg-type]
                                          current.get("title"), current.get("text")))  # type: ignore[arg-type]

    for line in text.splitlines():
        m = _RECORD.search(line)
        if m:
            flush()
            current = {"pkg": m.group(1), "id": int(m.group(2))}
            continue
        e = _EXTRA.match(line)
        if e and current is not None:
            current[e.group(1)] = e.group(2)
    flush()
    return out


# --- wifi, foreground, packages, files, time ------------------------------------------------------------------

_SSID = re.compile(r'mWifiInfo SSID: (?:"(.*?)"|(<unknown ssid>)|(\S+)),.*Supplicant state: (\w+)')


def parse_wifi_ssid(text: str) -> str | None:
    """The connected network's SSID from `dumpsys wifi`; None when not connected."""
    _refuse_errors(text, "dumpsys wifi")
    m = _SSID.search(text)
    if m is None:
        raise Unreadable(f"dumpsys wifi: no mWifiInfo line: {_short(text)!r}")
    if m.group(4) != "COMPLETED" or m.group(2):
        return None
    return m.group(1) if m.group(1) is not None else m.group(3)


_FOCUS = re.compile(r"mCurrentFocus=Window\{\S+ u\d+ ([\w.]+)/([\w.$]+)\}")
_FOCUS_OTHER = re.compile(r"mCurrentFocus=(?:Window\{\S+ u\d+ (\S+?)\}|null)")


def parse_foreground(text: str) -> tuple[str, str]:
    """(package, activity) of the focused window in `dumpsys window`; ("", name) for a system window."""
    _refuse_errors(text, "dumpsys window")
    m = _FOCUS.search(text)
    if m:
        return m.group(1), m.group(2)
    other = _FOCUS_OTHER.search(text)
    if other:
        return "", other.group(1) or ""
    raise Unreadable(f"dumpsys window: no mCurrentFocus line: {_short(text)!r}")


def parse_packages(text: str) -> frozenset[str]:
    _refuse_errors(text, "pm list packages")
    names = set()
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if not line.startswith("package:"):
            raise Unreadable(f"pm list packages: unexpected line {_short(line)!r}")
        names.add(line.removeprefix("package:").rsplit("=", 1)[-1])
    if not names:
        raise Unreadable("pm list packages: no packages at all")
    return frozenset(names)


@dataclass(frozen=True)
class DirEntry:
    name: str
    is_dir: bool
    size: int


_LS_LINE = re.compile(r"^([dlcbps-])[rwxsStT-]{9}\S*\s+\d+\s+\S+\s+\S+\s+(\d+)\s+\d{4}-\d\d-\d\d \d\d:\d\d (.+)$")


def parse_ls(text: str, path: str) -> list[DirEntry] | None:
    """Entries of `ls -l PATH`; None when the folder does not exist."""
    if "No such file or directory" in text:
        return None
    _refuse_errors(text, f"ls {path}")
    out = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("total "):
            continue
        m = _LS_LINE.match(line.rstrip("\r"))
        if m is None:
            raise Unreadable(f"ls {path}: a line I can't read: {_short(line)!r}")
        out.append(DirEntry(m.group(3), m.group(1) == "d", int(m.group(2))))
    return out


def parse_epoch(text: str) -> int:
    """`date +%s` → epoch seconds."""
    value = text.strip()
    if not re.fullmatch(r"\d{9,11}", value):
        raise Unreadable(f"date +%s: not a time: {_short(text)!r}")
    return int(value)


def digits(number: str | None) -> str:
    return "".join(c for c in number or "" if c.isdigit())


def same_number(a: str | None, b: str | None) -> bool:
    """Phone numbers equal by digits; a national number matches its +CC form (last 8+ digits agree)."""
    da, db = digits(a), digits(b)
    if not da or not db:
        return False
    if da == db:
        return True
    short, long_ = sorted((da, db), key=len)
    return len(short) >= 8 and long_.endswith(short)
