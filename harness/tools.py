"""Tool actions carried out over the shell, the way a phone allows them from `adb shell` (no root):
intents with their extras, `cmd` services, `settings`, `content`, `dumpsys`.

    result = carry_out(Action.set_alarm("07:00"), runner)      # runner: command line -> Ran
    result.said.get("zh"), result.result, result.handler
    # a phone that refuses raises ToolRefused: .fallback is the same goal for the GUI path (the model)

Each tool, its shell path and where that path works (API levels from the AOSP sources and the
android.provider.AlarmClock / android.content.Intent reference):

| tool | shell path | works on | when a phone refuses |
|---|---|---|---|
| call | `am start -a android.intent.action.CALL -d tel:N` | Intent.ACTION_CALL since API 1; the shell package (com.android.shell) holds CALL_PHONE in its manifest; no dialer (tablets) → "unable to resolve Intent" | GUI: open the Phone app and call |
| send_text | `am start -a android.intent.action.SENDTO -d smsto:N --es sms_body TEXT`, then the Send button found by its label in `uiautomator dump` and tapped | ACTION_SENDTO + `sms_body` since API 1 (AOSP Messaging, Google Messages, Samsung Messages honour it); Android has no public shell command that sends an SMS by itself (`service call isms` is a private binder call that changes every release, so we never use it) | GUI: the model finds Send (another Messages app, a changed label) |
| set_alarm | `am start -a android.intent.action.SET_ALARM --ei android.intent.extra.alarm.HOUR H --ei ...MINUTES M --ez ...SKIP_UI true [--es ...MESSAGE L]` | AlarmClock.ACTION_SET_ALARM API 9, EXTRA_SKIP_UI API 11; the Clock app must declare it (AOSP DeskClock, Google Clock, most makers' clocks) and may require com.android.alarm.permission.SET_ALARM from the caller | GUI: open Clock and add the alarm |
| set_timer | `am start -a android.intent.action.SET_TIMER --ei android.intent.extra.alarm.LENGTH S --ez ...SKIP_UI true` | AlarmClock.ACTION_SET_TIMER and EXTRA_LENGTH API 19 | GUI: open Clock's timer |
| set_setting wifi | `cmd wifi set-wifi-enabled enabled\\|disabled`, else `svc wifi enable\\|disable` | `cmd wifi` (WifiShellCommand) API 30+; `svc wifi` on older versions | GUI: Settings or quick settings |
| set_setting bluetooth | `cmd bluetooth_manager enable\\|disable`, else `svc bluetooth enable\\|disable` | `cmd bluetooth_manager` API 33+; `svc bluetooth` API 31-32 | GUI |
| set_setting airplane_mode | `cmd connectivity airplane-mode enable\\|disable` | API 30+ (ConnectivityService shell command); before that the AIRPLANE_MODE broadcast is protected and refused to the shell | GUI |
| set_setting do_not_disturb | `cmd notification set_dnd on\\|off` | API 29+ (NotificationShellCommand) | GUI |
| set_setting dark_mode | `cmd uimode night yes\\|no` | API 29+ (dark theme; UiModeManagerService shell command) | GUI |
| set_setting location | `cmd location set-location-enabled true\\|false` | API 30+ (LocationShellCommand) | GUI |
| set_setting brightness | `settings put system screen_brightness_mode 0` then `settings put system screen_brightness N` (0-255) | all versions (Settings.System; the shell holds WRITE_SETTINGS) | GUI |
| open_link | `cmd package resolve-activity --brief -a android.intent.action.VIEW -d URL` (which app), then `am start -a android.intent.action.VIEW -d URL` | ACTION_VIEW API 1; `cmd package resolve-activity` API 24+ | GUI: the browser |
| query notifications | `dumpsys notification --noredact` | API 21+ (without --noredact texts may come back redacted) | the screen-reader path: open the shade |
| query screen | `uiautomator dump` + `cat` | API 16+ (uiautomator) | — (the screenshot) |
| query messages | `content query --uri content://sms --projection address:body:date:type` | the SMS provider since API 19 (Telephony.Sms); READ_SMS is held by the shell | GUI: open the thread |
| query battery / time / next_alarm / wifi_network | `dumpsys battery` / `date +%s` / `dumpsys alarm` / `dumpsys wifi` | all versions | — |
| ringer_mode | `settings get global mode_ringer` (0 silent, 1 vibrate, 2 normal: AudioService persists AudioManager's ringer mode in Settings.Global.MODE_RINGER) | all versions | — (said as unreadable) |

Each tool's core half (name, description, inputs, gate rule, read-back) is its ToolSpec in
assistant_core/toolbox.py; its shell path and outcome check are attached here once with `shell_tool`, and
`check_registry()` refuses a tool missing either half.

A tool reports what it read or did (`ToolResult`), or raises `ToolRefused` when the phone says no (a
missing app, a permission, a service this Android version lacks): the caller then hands the same goal
to the GUI path. Read-only queries run only reading commands (`READ_ONLY_PREFIXES`).
"""

from __future__ import annotations

import datetime as dt
import logging
import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from assistant_core.i18n import Catalog, Text
from assistant_core.textcheck import visible_text
from assistant_core.toolbox import SETTING_NAMES
from assistant_core.toolspec import TOOLS, ToolSpecError, tool_spec
from assistant_core.types import Action, ActionKind, DeviceError, Query, Setting, UIElement
from harness.verify.checks import CHECKS, Check, Params

log = logging.getLogger(__name__)

SAY = Catalog(
    "tools",
    {
        "called": "Calling {who}.",
        "texted": "Sent a text to {who}: “{text}”.",
        "alarm": "Alarm set for {time}.",
        "timer": "Timer started for {what}.",
        "setting": "{what} is now {value}.",
        "link": "Opened {url} in {app}.",
        "on": "on",
        "off": "off",
        "brightness_value": "{pct}%",
        "no_notifications": "You have no notifications.",
        "notifications": "You have {n} notifications. {items}",
        "notification": "From {app}: {title}. {text}",
        "screen": "On the screen, in {app}: {items}",
        "screen_empty": "I can't read any text on the screen.",
        "no_messages": "There are no messages with {who}.",
        "last_message": "The last message from {who}, at {time}: “{text}”.",
        "last_sent": "No message from {who} yet; your last one to them, at {time}: “{text}”.",
        "battery": "The battery is at {level}%{charging}.",
        "charging": ", charging",
        "time": "It is {time} on {date}.",
        "next_alarm": "Your next alarm is at {time}{day}.",
        "tomorrow": " tomorrow",
        "no_alarm": "You have no alarms set.",
        "wifi": "You are connected to the Wi-Fi network {name}.",
        "no_wifi": "You are not connected to Wi-Fi.",
        "refused": "The phone did not allow that directly ({reason}); I'll do it on the screen instead.",
        "why_permission": "it needs a permission the phone does not give this computer",
        "why_no_app": "no app on the phone handles it",
        "why_no_command": "this Android version has no such command",
        "why_other": "the phone refused",
        "one_notification": "You have one notification. {items}",
        "unreadable": "I could not read that from the phone ({reason}).",
        "ringer_normal": "The phone will ring for calls.",
        "ringer_vibrate": "The phone is on vibrate.",
        "ringer_silent": "The phone is on silent.",
        "screen_not_allowed": "The app on the screen is not one your caregiver allowed, so I won't read it.",
    },
)

# What a query may run: reading commands only (the gate's read-only rule checks the action; this list
# keeps the tool itself honest).
READ_ONLY_PREFIXES = ("dumpsys ", "date ", "content query ", "uiautomator dump ", "cat ", "getprop ", "settings get ",
                      "rm -f /sdcard/window_dump.xml", "pm list packages", "cmd package resolve-activity ")
UI_DUMP = "/sdcard/window_dump.xml"
SEND_LABELS = re.compile(r"^(?:send|send sms|send message|send text|发送|发送短信|发送信息)$", re.IGNORECASE)
_REFUSAL = re.compile(r"unable to resolve|does not exist|Security exception|Permission Denial|SecurityException|"
                      r"Can't find service|Unknown command|Exception|Error:", re.IGNORECASE)


@dataclass(frozen=True)
class Ran:
    """One command's outcome: stdout, stderr and exit status, as text."""

    command: str
    out: str
    err: str = ""
    code: int = 0

    @property
    def text(self) -> str:
        return self.out + self.err

    @property
    def refused(self) -> bool:
        return self.code != 0 or bool(_REFUSAL.search(self.text))


Runner = Callable[[str], Ran]


@dataclass(frozen=True)
class ToolResult:
    """What a tool did or read: `said` for the user (both languages), `result` for the model and the
    history (English), the commands run and the app that handled an intent."""

    action: Action
    said: Text
    result: str
    commands: tuple[str, ...] = ()
    handler: str = ""
    # Where what was read comes from, so it can be kept to the caregiver's allowed apps (`only_from`): the
    # notifications read (each with its app's package), the app whose screen was read.
    notifications: tuple[Any, ...] = ()
    screen_app: str = ""

    def only_from(self, allowed: Callable[[str], bool]) -> ToolResult:
        """This result without what apps outside `allowed` showed: their notifications are left out, and
        the screen of an app that is not allowed is not read. The loop calls this before the result
        reaches the model, the history or the voice (issue 27/28: the caregiver's allowed apps)."""
        if self.notifications:
            kept = tuple(n for n in self.notifications if allowed(n.package))
            if len(kept) == len(self.notifications):
                return self
            said = _notifications_said(kept)
            return replace(self, said=said, result=said.en, notifications=kept)
        if self.screen_app and not allowed(self.screen_app):
            said = SAY["screen_not_allowed"]
            return replace(self, said=said, result=said.en)
        return self


class ToolRefused(DeviceError):
    """The phone refused the shell path; `fallback` is the goal for the GUI path, `reason` why."""

    def __init__(self, action: Action, reason: str, *, commands: tuple[str, ...] = ()):
        self.action = action
        self.reason = reason
        self.commands = commands
        self.fallback = gui_goal(action)
        super().__init__(_fmt(SAY["refused"], reason=_why(reason)), detail=f"{reason} (ran: {'; '.join(commands)})")


def _why(reason: str) -> Text:
    """A refusal in words a person can follow (the raw line stays in the detail)."""
    if re.search(r"permission|SecurityException", reason, re.IGNORECASE):
        return SAY["why_permission"]
    if re.search(r"unable to resolve|does not exist|No activity", reason, re.IGNORECASE):
        return SAY["why_no_app"]
    if re.search(r"Can't find service|Unknown command", reason, re.IGNORECASE):
        return SAY["why_no_command"]
    return SAY["why_other"]


def app_label(package: str) -> str:
    """A package's everyday name where we know it (harness.appnames), else the package."""
    from harness.appnames import label_for

    return label_for(package) or package


def _fmt(template: Text, **kwargs: object) -> Text:
    """Fill a template per language: Text values give their own language's words."""
    en = {k: v.en if isinstance(v, Text) else v for k, v in kwargs.items()}
    zh = {k: v.zh if isinstance(v, Text) else v for k, v in kwargs.items()}
    return Text(template.en.format(**en), template.zh.format(**zh))


def gui_goal(action: Action) -> Text:
    """The same request in words, for the model (or the demo's oracle) to do on the screen."""
    who = action.contact or action.number or ""
    k = action.kind
    if k is ActionKind.CALL:
        return Text("Call {who}").format(who=who)
    if k is ActionKind.SEND_TEXT:
        return Text("Send a text to {who}: \"{text}\"").format(who=who, text=action.text)
    if k is ActionKind.SET_ALARM:
        return Text("Set an alarm for {clock}").format(clock=action.clock)
    if k is ActionKind.SET_TIMER:
        minutes = (action.duration_ms or 0) / 60000
        return Text("Start a timer for {minutes:g} minutes").format(minutes=minutes)
    if k is ActionKind.SET_SETTING:
        name = SETTING_NAMES[Setting(action.setting)]
        if action.setting is Setting.BRIGHTNESS:
            return Text("Set the brightness to {value}%").format(value=action.value)
        on = action.value == "on"
        return Text(f"Turn {'on' if on else 'off'} {name.en}", f"{'打开' if on else '关闭'}{name.zh}")
    if k is ActionKind.OPEN_LINK:
        return Text("Open {url} in the browser").format(url=action.url)
    if k is ActionKind.QUERY:
        return Text("Tell me: {query}").format(query=action.query)
    said = tool_spec(k.value).read_back(action)  # any other tool: its read-back, as a request
    return Text(said.en[:1].upper() + said.en[1:], said.zh)


def _refuse(action: Action, ran: Ran, commands: list[str]) -> ToolRefused:
    line = next((ln.strip() for ln in ran.text.splitlines() if _REFUSAL.search(ln)), ran.text.strip()[:120])
    return ToolRefused(action, line[:160] or f"exit status {ran.code}", commands=tuple(commands))


def _run(runner: Runner, command: str, log_: list[str]) -> Ran:
    log_.append(command)
    return runner(command)


def _tel(number: str) -> str:
    return "".join(c for c in number if c.isdigit() or c == "+")


# --- actions that change the phone ---------------------------------------------------------------------


def _start(runner: Runner, action: Action, intent: str, done: list[str]) -> str:
    """Resolve the handler, check it is the app the gate judged (assistant_core.toolgate.handler_for: the
    first known handler installed), then `am start`; ToolRefused when they differ or the phone says no."""
    resolve = _run(runner, f"cmd package resolve-activity --brief {intent}", done)
    lines = [ln.strip() for ln in resolve.out.splitlines() if ln.strip()]
    handler = lines[-1].split("/", 1)[0] if lines and "/" in lines[-1] else ""
    candidates = tool_spec(action.kind.value).gate.candidates(action) or ()  # the gate's own list
    if handler and candidates:
        installed = {ln.removeprefix("package:").strip() for ln in _run(runner, "pm list packages", done).out.splitlines()
                     if ln.startswith("package:")}
        judged = next((p for p in candidates if p in installed), None)
        if handler != judged:  # another app would answer: the allow-list was judged for a different one
            raise ToolRefused(action, f"Error: the phone's app for this is {handler}, not {judged}",
                              commands=tuple(done))
    ran = _run(runner, f"am start -W {intent}", done)
    if ran.refused:
        raise _refuse(action, ran, done)
    return handler


def _call(runner: Runner, action: Action) -> ToolResult:
    done: list[str] = []
    handler = _start(runner, action, f"-a android.intent.action.CALL -d tel:{_tel(action.number or '')}", done)
    who = action.contact or action.number or ""
    return ToolResult(action, SAY["called"].format(who=who), f"calling {who} ({action.number})", tuple(done), handler)


def _send_text(runner: Runner, action: Action) -> ToolResult:
    done: list[str] = []
    intent = (f"-a android.intent.action.SENDTO -d smsto:{_tel(action.number or '')} "
              f"--es sms_body {shlex.quote(action.text or '')}")
    handler = _start(runner, action, intent, done)
    send = None
    for _attempt in range(3):  # a real phone may still be drawing the composer when am start returns
        send = _find(runner, done, SEND_LABELS, action)
        if send is not None:
            break
        _run(runner, "sleep 0.7", done)
    if send is None:
        raise ToolRefused(action, "the message is written but I could not find the Send button", commands=tuple(done))
    x, y = send.center
    ran = _run(runner, f"input tap {x} {y}", done)
    if ran.refused:
        raise _refuse(action, ran, done)
    who = action.contact or action.number or ""
    return ToolResult(action, SAY["texted"].format(who=who, text=action.text),
                      f"sent a text to {who} ({action.number}): {action.text!r}", tuple(done), handler)


def _set_alarm(runner: Runner, action: Action) -> ToolResult:
    done: list[str] = []
    hour, minute = (int(p) for p in (action.clock or "0:0").split(":"))
    extra = "android.intent.extra.alarm."
    intent = (f"-a android.intent.action.SET_ALARM --ei {extra}HOUR {hour} --ei {extra}MINUTES {minute} "
              f"--ez {extra}SKIP_UI true")
    if action.text:
        intent += f" --es {extra}MESSAGE {shlex.quote(action.text)}"
    handler = _start(runner, action, intent, done)
    return ToolResult(action, SAY["alarm"].format(time=action.clock), f"alarm set for {action.clock}", tuple(done), handler)


def _set_timer(runner: Runner, action: Action) -> ToolResult:
    done: list[str] = []
    seconds = (action.duration_ms or 0) // 1000
    extra = "android.intent.extra.alarm."
    handler = _start(runner, action, f"-a android.intent.action.SET_TIMER --ei {extra}LENGTH {seconds} "
                                     f"--ez {extra}SKIP_UI true", done)
    what = _duration(seconds)
    return ToolResult(action, _fmt(SAY["timer"], what=what), f"timer started for {seconds} s", tuple(done), handler)


def _duration(seconds: int) -> Text:
    minutes, secs = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    en = " ".join(p for p in (f"{hours} h" if hours else "", f"{minutes} min" if minutes else "",
                              f"{secs} s" if secs else "") if p)
    zh = "".join(p for p in (f"{hours}小时" if hours else "", f"{minutes}分钟" if minutes else "",
                             f"{secs}秒" if secs else "") if p)
    return Text(en, zh)


SETTING_COMMANDS: dict[Setting, tuple[tuple[str, str], ...]] = {
    # (command for on, command for off), newest first; the first the phone accepts is used.
    Setting.WIFI: (("cmd wifi set-wifi-enabled enabled", "cmd wifi set-wifi-enabled disabled"),
                   ("svc wifi enable", "svc wifi disable")),
    Setting.BLUETOOTH: (("cmd bluetooth_manager enable", "cmd bluetooth_manager disable"),
                        ("svc bluetooth enable", "svc bluetooth disable")),
    Setting.AIRPLANE_MODE: (("cmd connectivity airplane-mode enable", "cmd connectivity airplane-mode disable"),),
    Setting.DO_NOT_DISTURB: (("cmd notification set_dnd on", "cmd notification set_dnd off"),),
    Setting.DARK_MODE: (("cmd uimode night yes", "cmd uimode night no"),),
    Setting.LOCATION: (("cmd location set-location-enabled true", "cmd location set-location-enabled false"),),
}
# How each switch reads back (svc prints nothing useful and exits 0 even when it did nothing).
SETTING_READBACK: dict[Setting, tuple[str, str, str]] = {
    Setting.WIFI: ("settings get global wifi_on", "1", "0"),
    Setting.BLUETOOTH: ("settings get global bluetooth_on", "1", "0"),
    Setting.AIRPLANE_MODE: ("settings get global airplane_mode_on", "1", "0"),
    Setting.DO_NOT_DISTURB: ("settings get global zen_mode", "1", "0"),
    Setting.DARK_MODE: ("settings get secure ui_night_mode", "2", "1"),
    Setting.LOCATION: ("settings get secure location_mode", "3", "0"),
}


def _set_setting(runner: Runner, action: Action) -> ToolResult:
    done: list[str] = []
    setting = Setting(action.setting)
    name = SETTING_NAMES[setting]
    if setting is Setting.BRIGHTNESS:
        level = round(int(action.value or 0) * 255 / 100)
        for command in ("settings put system screen_brightness_mode 0", f"settings put system screen_brightness {level}"):
            ran = _run(runner, command, done)
            if ran.refused:
                raise _refuse(action, ran, done)
        value = SAY["brightness_value"].format(pct=action.value)
        return ToolResult(action, _fmt(SAY["setting"], what=name, value=value),
                          f"brightness set to {action.value}% ({level}/255)", tuple(done), "com.android.settings")
    on = action.value == "on"
    last: Ran | None = None
    readback, yes, no = SETTING_READBACK[setting]
    for on_cmd, off_cmd in SETTING_COMMANDS[setting]:
        last = _run(runner, on_cmd if on else off_cmd, done)
        if last.refused:
            continue
        state = _run(runner, readback, done).out.strip()
        if state == (yes if on else no) or (setting is Setting.DO_NOT_DISTURB and on and state not in ("0", "")):
            word = SAY["on" if on else "off"]
            return ToolResult(action, _fmt(SAY["setting"], what=name, value=word),
                              f"{setting} switched {'on' if on else 'off'}", tuple(done), "com.android.settings")
        last = Ran(readback, state, "", 1)
    assert last is not None
    raise ToolRefused(action, f"{last.text.strip()[:120] or 'no change'}", commands=tuple(done))


def _open_link(runner: Runner, action: Action) -> ToolResult:
    done: list[str] = []
    handler = _start(runner, action, f"-a android.intent.action.VIEW -d {shlex.quote(action.url or '')}", done)
    return ToolResult(action, _fmt(SAY["link"], url=action.url, app=app_label(handler) if handler else Text("the browser")),
                      f"opened {action.url} in {handler}", tuple(done), handler)


# --- read-only queries -------------------------------------------------------------------------------------


def _read(runner: Runner, command: str, done: list[str], action: Action) -> str:
    """Run a reading command (only those: READ_ONLY_PREFIXES); ToolRefused when the phone refuses it."""
    if not command.startswith(READ_ONLY_PREFIXES):
        raise ValueError(f"a query may only read the phone, not run {command!r}")
    ran = _run(runner, command, done)
    if ran.code != 0:
        raise ToolRefused(action, ran.text.strip()[:120] or f"exit status {ran.code}", commands=tuple(done))
    return ran.out


def _find(runner: Runner, done: list[str], label: re.Pattern[str], action: Action) -> UIElement | None:
    elements = _screen(runner, done, action)
    hits = [e for e in elements if e.enabled and (e.clickable or e.focusable) and label.match(e.label.strip())]
    return hits[-1] if hits else None


def _screen(runner: Runner, done: list[str], action: Action) -> tuple[UIElement, ...]:
    from xml.etree.ElementTree import ParseError

    from harness.screenparse import parse_ui_xml

    _read(runner, f"rm -f {UI_DUMP}", done, action)
    text = _run(runner, f"uiautomator dump {UI_DUMP} >/dev/null && cat {UI_DUMP}", done).out
    start = text.find("<?xml")
    start = text.find("<hierarchy") if start < 0 else start
    if start < 0:
        return ()
    try:
        return parse_ui_xml(text[start:])
    except (ParseError, ValueError) as error:  # a truncated dump reads as no screen
        log.warning("uiautomator dump unreadable: %s", error)
        return ()


MAX_SCREEN_ITEMS = 25
_STATUS_BAR = ("com.android.systemui", "com.phoneworld.systemui")


def screen_summary(elements: tuple[UIElement, ...], app: str | Text = "") -> Text:
    """The screen as a screen-reader user would want it summarised: labelled things top to bottom, left
    to right, each once, without the status bar; buttons named as buttons."""
    seen: set[str] = set()
    items_en: list[str] = []
    items_zh: list[str] = []
    ordered = sorted((e for e in elements if e.label.strip() and e.area > 0 and not e.package.startswith(_STATUS_BAR)),
                     key=lambda e: (e.bounds[1] // 40, e.bounds[0]))
    for el in ordered:
        label = " ".join(el.label.split())
        if label in seen or el.password:
            continue
        seen.add(label)
        button = el.clickable and "Button" in el.class_name
        items_en.append(f"{label} (button)" if button else label)
        items_zh.append(f"{label}（按钮）" if button else label)
        if len(items_en) >= MAX_SCREEN_ITEMS:
            break
    if not items_en:
        return SAY["screen_empty"]
    name = app if isinstance(app, Text) else Text(app or "?", app or "?")
    return Text(SAY["screen"].en.format(app=name.en, items="; ".join(items_en)),
                SAY["screen"].zh.format(app=name.zh, items="；".join(items_zh)))


def _notifications_said(posted: Sequence[Any]) -> Text:
    """The notifications read out: how many, then up to ten of them with their app, title and text."""
    if not posted:
        return SAY["no_notifications"]
    parts = [_fmt(SAY["notification"], app=app_label(n.package), title=n.title or "", text=n.text or "")
             for n in posted[:10]]
    template = SAY["one_notification"] if len(posted) == 1 else SAY["notifications"]
    return Text(visible_text(template.en.format(n=len(posted), items=" ".join(p.en for p in parts))),
                visible_text(template.zh.format(n=len(posted), items=" ".join(p.zh for p in parts))))


def _query(runner: Runner, action: Action) -> ToolResult:
    from harness.verify import readers

    done: list[str] = []
    q = Query(action.query)
    try:
        if q is Query.NOTIFICATIONS:
            posted = readers.parse_notifications(_read(runner, "dumpsys notification --noredact", done, action))
            return ToolResult(action, _notifications_said(posted), _notifications_said(posted).en, tuple(done),
                              notifications=tuple(posted))
        elif q is Query.SCREEN:
            elements = _screen(runner, done, action)
            app = next((e.package for e in elements if e.package and not e.package.startswith(_STATUS_BAR)), "")
            home = "launcher" in app or not app
            said = screen_summary(elements, Text("the home screen") if home else app_label(app))
            if app and not home:
                return ToolResult(action, said, said.en, tuple(done), screen_app=app)
        elif q is Query.MESSAGES:
            said = _messages(runner, action, done)
        elif q is Query.BATTERY:
            text = _read(runner, "dumpsys battery", done, action)
            level = re.search(r"^\s*level: (\d+)", text, re.M)
            if level is None:
                raise readers.Unreadable(f"dumpsys battery: no level: {text[:80]!r}")
            charging = re.search(r"^\s*(?:AC|USB|Wireless) powered: true", text, re.M) is not None \
                or re.search(r"^\s*status: 2\b", text, re.M) is not None
            said = Text(SAY["battery"].en.format(level=level.group(1), charging=SAY["charging"].en if charging else ""),
                        SAY["battery"].zh.format(level=level.group(1), charging=SAY["charging"].zh if charging else ""))
        elif q is Query.TIME:
            now = _now(runner, done, action)
            said = Text(SAY["time"].en.format(time=now.strftime("%H:%M"), date=now.strftime("%A %d %B %Y")),
                SAY["time"].zh.format(time=now.strftime("%H:%M"), date=f"{now.year}年{now.month}月{now.day}日"))
        elif q is Query.NEXT_ALARM:
            said = _next_alarm(runner, done, action)
        else:
            ssid = readers.parse_wifi_ssid(_read(runner, "dumpsys wifi", done, action))
            said = SAY["wifi"].format(name=ssid) if ssid else SAY["no_wifi"]
    except readers.Unreadable as error:
        said = SAY["unreadable"].format(reason=str(error)[:120])
    return ToolResult(action, said, said.en, tuple(done))


def _now(runner: Runner, done: list[str], action: Action) -> dt.datetime:
    from harness.verify import readers

    epoch = readers.parse_epoch(_read(runner, "date +%s", done, action))
    offset = _read(runner, "date +%z", done, action).strip()
    m = re.fullmatch(r"([+-])(\d\d)(\d\d)", offset)
    tz = dt.timezone(dt.timedelta(hours=int(m.group(2)), minutes=int(m.group(3))) * (-1 if m.group(1) == "-" else 1)) \
        if m else dt.UTC
    return dt.datetime.fromtimestamp(epoch, tz)


def _next_alarm(runner: Runner, done: list[str], action: Action) -> Text:
    from harness.verify import readers

    alarms = readers.parse_alarms(_read(runner, "dumpsys alarm", done, action))
    now = _now(runner, done, action)
    clock_alarms = sorted(a.when_ms for a in alarms if "ALARM_ALERT" in a.tag or "alarm" in a.tag.lower()
                          and "TIMER" not in a.tag and a.kind.startswith("RTC"))
    upcoming = [ms for ms in clock_alarms if ms >= now.timestamp() * 1000 - 60_000]
    if not upcoming:
        return SAY["no_alarm"]
    when = dt.datetime.fromtimestamp(upcoming[0] / 1000, now.tzinfo)
    tomorrow = when.date() > now.date()
    return Text(SAY["next_alarm"].en.format(time=when.strftime("%H:%M"), day=SAY["tomorrow"].en if tomorrow else ""),
                SAY["next_alarm"].zh.format(time=when.strftime("%H:%M"), day=SAY["tomorrow"].zh if tomorrow else "今天"))


def _messages(runner: Runner, action: Action, done: list[str]) -> Text:
    from harness.verify import readers

    who = action.contact or action.number or ""
    rows = readers.parse_rows(_read(runner, "content query --uri content://sms --projection address:body:date:type", done, action),
                              ("address", "body", "date", "type"))
    thread = [r for r in rows if readers.same_number(r.get("address"), action.number)]
    if not thread:
        return SAY["no_messages"].format(who=who)
    thread.sort(key=lambda r: int(r.get("date") or 0))
    received = [r for r in thread if r.get("type") == "1"]
    row = (received or thread)[-1]
    when = dt.datetime.fromtimestamp(int(row.get("date") or 0) / 1000, dt.UTC).strftime("%H:%M")
    key = "last_message" if received else "last_sent"
    return SAY[key].format(who=who, time=when, text=row.get("body") or "")


def _ringer_mode(runner: Runner, action: Action) -> ToolResult:
    """Whether the phone rings, vibrates or is silent: AudioService keeps the ringer mode in
    Settings.Global.MODE_RINGER ("mode_ringer"; AudioManager.RINGER_MODE_SILENT 0, VIBRATE 1, NORMAL 2,
    see frameworks/base services/core/java/com/android/server/audio/AudioService.java
    readPersistedSettings), readable by the shell with `settings get global mode_ringer` on every version."""
    done: list[str] = []
    value = _read(runner, "settings get global mode_ringer", done, action).strip()
    key = {"0": "ringer_silent", "1": "ringer_vibrate", "2": "ringer_normal"}.get(value)
    said = SAY[key] if key else SAY["unreadable"].format(reason=f"mode_ringer is {value or 'empty'}")
    return ToolResult(action, said, said.en, tuple(done))


# --- the harness half of each tool (assistant_core.toolbox holds the other half) --------------------------


@dataclass(frozen=True)
class ShellTool:
    """A tool's harness half: its shell path (`run`) and its outcome check: `check`, a name in
    harness.verify.checks.CHECKS, with the parameters this action gives it (`params(action, result)`);
    no check only for a tool that only reads the phone (nothing changes, nothing to check)."""

    name: str
    run: Callable[[Runner, Action], ToolResult]
    check: str | None = None
    params: Callable[[Action, ToolResult], Params] | None = None


SHELL_TOOLS: dict[str, ShellTool] = {}


def shell_tool(name: str, run: Callable[[Runner, Action], ToolResult], check: str | None = None,
               params: Callable[[Action, ToolResult], Params] | None = None) -> ShellTool:
    """Attach the shell path and the outcome check to the registered tool `name`; ToolSpecError when there
    is no such tool, it is attached twice, or a tool that changes the phone has no outcome check."""
    try:
        spec = tool_spec(name)
    except KeyError:
        raise ToolSpecError(f"no tool named {name!r} is registered (assistant_core.toolbox)") from None
    if spec.name != name or name in SHELL_TOOLS:
        raise ToolSpecError(f"tool {name!r}: its shell path is attached once, under its own name")
    if (check is None or params is None) and not spec.gate.read_only:
        raise ToolSpecError(f"tool {name!r} changes the phone, so it needs an outcome check and its parameters")
    if check is not None and check not in CHECKS:
        raise ToolSpecError(f"tool {name!r}: outcome check {check!r} is not in harness.verify.checks.CHECKS")
    SHELL_TOOLS[name] = ShellTool(name, run, check, params)
    return SHELL_TOOLS[name]


def check_registry() -> None:
    """Every registered tool has its harness half and every harness half its tool; ToolSpecError lists
    what is missing."""
    problems = [f"{n}: no shell path (harness.tools.shell_tool)" for n in TOOLS if n not in SHELL_TOOLS]
    problems += [f"{n}: a shell path without a tool (assistant_core.toolbox)" for n in SHELL_TOOLS if n not in TOOLS]
    if problems:
        raise ToolSpecError("the tool registry is incomplete: " + "; ".join(problems))


def outcome_check(action: Action, result: ToolResult) -> tuple[Check, Params] | None:
    """The check (harness.verify.checks) and its parameters that prove `action` did what it said on the
    phone; None for a tool that only reads."""
    tool = SHELL_TOOLS[action.kind.value]
    if tool.check is None or tool.params is None:
        return None
    return CHECKS[tool.check], tool.params(action, result)


def _setting_params(action: Action, result: ToolResult) -> Params:
    setting = Setting(action.setting)
    if setting is Setting.BRIGHTNESS:
        return Params(namespace="system", key="screen_brightness", compare="percent255", percent=int(action.value or 0))
    command, yes, no = SETTING_READBACK[setting]
    namespace, key = command.split()[2:4]
    return Params(namespace=namespace, key=key, value=yes if action.value == "on" else no)


shell_tool("call", _call, "call_made", lambda a, r: Params(recipient=a.number or ""))
shell_tool("send_text", _send_text, "sms_sent", lambda a, r: Params(recipient=a.number or "", text=a.text or ""))
shell_tool("set_alarm", _set_alarm, "alarm_set", lambda a, r: Params(time=a.clock or ""))
shell_tool("set_timer", _set_timer, "timer_started", lambda a, r: Params(minutes=round((a.duration_ms or 0) / 60000)))
shell_tool("set_setting", _set_setting, "setting", _setting_params)
shell_tool("open_link", _open_link, "app_foreground", lambda a, r: Params(package=r.handler))
shell_tool("query", _query)
shell_tool("ringer_mode", _ringer_mode)
check_registry()


_LOOPBACK = ("127.", "localhost", "[::1]", "::1")


def link_over_wifi(device: object) -> bool | None:
    """Whether `device` is reached over Wi-Fi (adb over TCP to another machine: "192.168.1.20:5555", or a
    wireless-debugging mDNS name), so turning the phone's Wi-Fi off cuts this computer's link to it. USB
    serials, emulators, loopback addresses (the simulated phone's adbd) and in-process phones are not;
    None for a device of unknown kind."""
    serial = getattr(device, "serial", None)
    if serial is None:
        return False if hasattr(device, "world") else None
    serial = str(serial)
    if "._adb-tls-connect." in serial or "._adb._tcp" in serial:
        return True
    host, sep, port = serial.rpartition(":")
    if sep and port.isdigit() and host:
        return not host.startswith(_LOOPBACK)
    return False


def carry_out(action: Action, runner: Runner) -> ToolResult:
    """Carry one tool action out over the shell. ToolRefused when the phone refuses (use `.fallback`)."""
    tool = SHELL_TOOLS.get(getattr(action.kind, "value", ""))
    if tool is None:
        raise ValueError(f"{action.kind} is not a tool action")
    done = tool.run(runner, action)
    # What is said and stored carries no bidi controls or invisible characters (a name, a message, a
    # notification may hold them to reorder or hide what is heard and shown).
    return replace(done, said=Text(visible_text(done.said.en), visible_text(done.said.zh)),
                   result=visible_text(done.result))


@dataclass
class InProcessRunner:
    """A Runner over PhoneWorld-lite's shell, in-process (SimDevice): the same command lines and output
    text as over adb, without sockets."""

    phone: object
    commands: list[str] = field(default_factory=list)

    def __call__(self, command: str) -> Ran:
        out, err = _Collect(), _Collect()
        self.commands.append(command)
        code = self.phone.shell.run(command, _Split(out, err))  # type: ignore[attr-defined]
        return Ran(command, out.text(), err.text(), code)


class _Collect:
    def __init__(self) -> None:
        self.data = bytearray()

    def add(self, data: bytes | str) -> None:
        self.data += data.encode("utf-8") if isinstance(data, str) else data

    def text(self) -> str:
        return self.data.decode("utf-8", "replace")


class _Split:
    def __init__(self, out: _Collect, err: _Collect):
        self._out, self._err = out, err

    def out(self, data: bytes | str) -> None:
        self._out.add(data)

    def err(self, data: bytes | str) -> None:
        self._err.add(data)

    def read_stdin(self, timeout: float | None = None) -> bytes | None:
        return b""

    def cancelled(self) -> bool:
        return False
