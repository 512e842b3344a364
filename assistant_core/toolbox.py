"""The tool actions, each registered once as a `ToolSpec` (assistant_core.toolspec): what the model is
shown, how its Action is checked, how the gate judges it and how it is read back. Their shell paths and
outcome checks are attached in `harness/tools.py` (`shell_tool`); `harness.tools.check_registry()`
refuses a tool that lacks either half.

Adding a tool: its spec here, its shell path in harness/tools.py, and a test. Nothing else derives a
tool list by hand: `types.ActionKind` and `TOOL_KINDS`, the parser's accepted names
(`policy.parsing`), the prompt's tool list (`policy.prompt.tool_action_schemas`), the gate's rules
(`toolgate`) and the read-back (`confirm`) all come from `TOOLS`.

This module imports only `toolspec` and `i18n` (types builds its enums from it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from assistant_core.i18n import Catalog, Text
from assistant_core.toolspec import TOOLS, GateRule, Input, ToolSpec, register


class Setting(StrEnum):
    """What set_setting may switch: the quick-settings a person switches. Nothing that weakens security
    (screen lock, unknown sources, USB debugging) is here, so no tool can reach it."""

    WIFI = "wifi"
    BLUETOOTH = "bluetooth"
    AIRPLANE_MODE = "airplane_mode"
    DO_NOT_DISTURB = "do_not_disturb"
    DARK_MODE = "dark_mode"
    LOCATION = "location"
    BRIGHTNESS = "brightness"  # value: a percentage 0-100


class Query(StrEnum):
    """What a read-only query may read."""

    NOTIFICATIONS = "notifications"
    SCREEN = "screen"
    MESSAGES = "messages"  # the thread with `number` (and `contact` to name it)
    BATTERY = "battery"
    TIME = "time"
    NEXT_ALARM = "next_alarm"
    WIFI_NETWORK = "wifi_network"


NUMBER_RE = re.compile(r"\+?[0-9][0-9 ()\-]{1,30}")
CLOCK_RE = re.compile(r"([01]?\d|2[0-3]):([0-5]\d)")
MAX_TIMER_MS = 24 * 3600 * 1000

READ_BACK = Catalog(
    "toolbox",
    {
        "call": "make a call",
        "send_text": "send a message",
        "set_alarm": "set an alarm for {clock}",
        "set_timer": "start a timer for {minutes} minutes",
        "turn_on": "turn on {what}",
        "turn_off": "turn off {what}",
        "brightness": "set the brightness to {pct}%",
        "open_link": "open {url}",
        "query": "read {what} on the phone",
        "ringer_mode": "read whether the phone rings, vibrates or is silent",
    },
)

SETTING_NAMES: dict[Setting, Text] = {
    Setting.WIFI: Text("Wi-Fi"),
    Setting.BLUETOOTH: Text("Bluetooth"),
    Setting.AIRPLANE_MODE: Text("Airplane mode"),
    Setting.DO_NOT_DISTURB: Text("Do not disturb"),
    Setting.DARK_MODE: Text("Dark mode"),
    Setting.LOCATION: Text("Location"),
    Setting.BRIGHTNESS: Text("Brightness"),
}
QUERY_NAMES: dict[Query, Text] = {
    Query.NOTIFICATIONS: Text("the notifications"),
    Query.SCREEN: Text("the screen"),
    Query.MESSAGES: Text("the messages"),
    Query.BATTERY: Text("the battery level"),
    Query.TIME: Text("the time"),
    Query.NEXT_ALARM: Text("the next alarm"),
    Query.WIFI_NETWORK: Text("the Wi-Fi network"),
}

# The apps that answer each tool's intent on common phones (AOSP, Google, Samsung, Xiaomi, Huawei/Honor,
# OPPO/OnePlus/realme, vivo), in the order a phone's default usually is.
DIALERS = ("com.android.dialer", "com.google.android.dialer", "com.samsung.android.dialer",
           "com.android.incallui", "com.android.contacts", "com.huawei.contacts")
MESSAGING = ("com.android.messaging", "com.google.android.apps.messaging", "com.samsung.android.messaging",
             "com.android.mms")
CLOCKS = ("com.android.deskclock", "com.google.android.deskclock", "com.sec.android.app.clockpackage",
          "com.android.alarmclock", "com.huawei.deskclock", "com.coloros.alarmclock")
BROWSERS = ("com.android.browser", "com.android.chrome", "org.chromium.chrome", "com.sec.android.app.sbrowser",
            "com.huawei.browser", "com.heytap.browser")

# Argument names models write for each Action field (the first is the one the prompt shows).
NUMBER = Input("number", "string", "The phone number, digits with an optional leading +",
               ("number", "phone", "phone_number", "to"))
CONTACT = Input("contact", "string", "The contact's name as the user said it (only read back, never trusted)",
                ("contact", "name", "recipient"), required=False)


def _check_number(fields: dict[str, Any], kind: str) -> None:
    number = (fields.get("number") or "").strip()
    if not NUMBER_RE.fullmatch(number) or sum(c.isdigit() for c in number) < 3:
        raise ValueError(f"{kind} needs a phone number (digits, +, spaces, dashes), got {fields.get('number')!r}")
    fields["number"] = number


def _validate_call(fields: dict[str, Any]) -> dict[str, Any]:
    _check_number(fields, "call")
    return fields


def _validate_send_text(fields: dict[str, Any]) -> dict[str, Any]:
    _check_number(fields, "send_text")
    if not (isinstance(fields.get("text"), str) and fields["text"].strip()):
        raise ValueError("send_text needs the message text")
    return fields


def _validate_alarm(fields: dict[str, Any]) -> dict[str, Any]:
    m = CLOCK_RE.fullmatch((fields.get("clock") or "").strip())
    if m is None:
        raise ValueError(f"set_alarm needs a time as HH:MM, got {fields.get('clock')!r}")
    fields["clock"] = f"{int(m.group(1)):02d}:{m.group(2)}"
    return fields


def _validate_timer(fields: dict[str, Any]) -> dict[str, Any]:
    ms = fields.get("duration_ms")
    if not (ms and 1000 <= ms <= MAX_TIMER_MS):
        raise ValueError(f"set_timer needs a duration from 1 s to 24 h, got {ms!r} ms")
    return fields


def _validate_setting(fields: dict[str, Any]) -> dict[str, Any]:
    try:
        setting = Setting(fields.get("setting"))
    except ValueError:
        raise ValueError(f"set_setting: unknown setting {fields.get('setting')!r}; "
                         f"known: {[s.value for s in Setting]}") from None
    fields["setting"] = setting
    value = (fields.get("value") or "").strip().lower()
    if setting is Setting.BRIGHTNESS:
        if not value.isdigit() or not 0 <= int(value) <= 100:
            raise ValueError(f"set_setting brightness needs a percentage 0-100, got {fields.get('value')!r}")
    elif value not in ("on", "off"):
        raise ValueError(f"set_setting {setting} needs 'on' or 'off', got {fields.get('value')!r}")
    fields["value"] = value
    return fields


def _validate_link(fields: dict[str, Any]) -> dict[str, Any]:
    url = (fields.get("url") or "").strip()
    if not re.fullmatch(r"https?://[^\s\"'`<>]+", url, flags=re.IGNORECASE):
        raise ValueError(f"open_link needs an http(s) address, got {fields.get('url')!r}")
    fields["url"] = url
    return fields


def _validate_query(fields: dict[str, Any]) -> dict[str, Any]:
    if fields.get("number"):
        _check_number(fields, "query")
    try:
        fields["query"] = Query(fields.get("query"))
    except ValueError:
        raise ValueError(f"query: unknown query {fields.get('query')!r}; known: {[q.value for q in Query]}") from None
    if fields["query"] is Query.MESSAGES and not fields.get("number"):
        raise ValueError("query messages needs the number of the conversation")
    return fields


def _no_inputs(fields: dict[str, Any]) -> dict[str, Any]:
    return fields


def _timer_seconds(args: Mapping[str, Any]) -> dict[str, Any]:
    seconds = args.get("seconds", args.get("duration", args.get("length")))
    minutes = args.get("minutes")
    try:
        total = float(seconds) if seconds is not None else float(minutes) * 60 if minutes is not None else 0.0
    except (TypeError, ValueError):
        raise ValueError('set_timer needs "seconds" (or "minutes") as a number') from None
    return {"duration_ms": int(total * 1000)}


def _switch_flag(args: Mapping[str, Any]) -> dict[str, Any]:
    return {"value": "on" if args["on"] else "off"} if isinstance(args.get("on"), bool) else {}


def _setting_read_back(action: Any) -> Text:
    setting = Setting(action.setting)
    if setting is Setting.BRIGHTNESS:
        return READ_BACK["brightness"].format(pct=action.value)
    name = SETTING_NAMES[setting]
    template = READ_BACK["turn_on" if action.value == "on" else "turn_off"]
    return Text(template.en.format(what=name.en), template.zh.format(what=name.zh))


def _query_read_back(action: Any) -> Text:
    what = QUERY_NAMES[Query(action.query)]
    return Text(READ_BACK["query"].en.format(what=what.en), READ_BACK["query"].zh.format(what=what.zh))


register(ToolSpec(
    "call", "Call a phone number (the user is asked first, with the number read back from the contacts)",
    (NUMBER, CONTACT), GateRule(handlers=DIALERS, confirm="call"), lambda a: READ_BACK["call"], _validate_call,
    aliases=("phone_call", "make_call", "dial_number"),
))
register(ToolSpec(
    "send_text", "Send a text message (the user is asked first, with the whole message read back)",
    (NUMBER, Input("text", "string", "The message", ("text", "message", "body", "content", "label")), CONTACT),
    GateRule(handlers=MESSAGING, confirm="send", secret_text=True), lambda a: READ_BACK["send_text"],
    _validate_send_text, aliases=("send_sms", "sms", "send_message"),
))
register(ToolSpec(
    "set_alarm", "Set an alarm in the Clock app",
    (Input("clock", "string", "The time as HH:MM, 24-hour", ("time", "clock", "at")),
     Input("text", "string", "A label for the alarm", ("label", "text", "message", "body", "content"), required=False)),
    GateRule(handlers=CLOCKS), lambda a: READ_BACK["set_alarm"].format(clock=a.clock), _validate_alarm,
    aliases=("create_alarm",),
))
register(ToolSpec(
    "set_timer", "Start a countdown timer in the Clock app",
    (), GateRule(handlers=CLOCKS),
    lambda a: READ_BACK["set_timer"].format(minutes=f"{(a.duration_ms or 0) / 60000:g}"), _validate_timer,
    aliases=("start_timer",), convert=_timer_seconds,
    extra_schema={"seconds": {"description": "How long, in seconds", "type": "number"}},
))
register(ToolSpec(
    "set_setting", "Switch a quick setting on or off, or set the screen brightness",
    (Input("setting", "string", "Which setting", ("setting", "name", "key"), enum=tuple(s.value for s in Setting)),
     Input("value", "string", "on or off; for brightness a percentage 0-100", ("value", "state", "level", "on"))),
    GateRule(caregiver="settings_change"), _setting_read_back, _validate_setting,
    aliases=("toggle_setting", "change_setting"), convert=_switch_flag,
))
register(ToolSpec(
    "open_link", "Open a web address in the phone's browser",
    (Input("url", "string", "The http(s) address", ("url", "link", "address")),),
    GateRule(handlers=BROWSERS, caregiver="app_launch"), lambda a: READ_BACK["open_link"].format(url=a.url),
    _validate_link, aliases=("open_url",),
))
register(ToolSpec(
    "query", "Read something from the phone without changing anything",
    (Input("query", "string", "What to read", ("query", "what", "item"), enum=tuple(q.value for q in Query)),
     Input("number", "string", "For messages: the number of the conversation", NUMBER.keys, required=False),
     CONTACT),
    GateRule(handlers=lambda a: MESSAGING if a.query == Query.MESSAGES else None, read_only=True),
    _query_read_back, _validate_query, aliases=("ask_phone", "read_phone"),
))
# Whether the phone rings, vibrates or is silent (AudioService keeps the ringer mode in
# Settings.Global.MODE_RINGER; AudioManager.RINGER_MODE_SILENT 0, VIBRATE 1, NORMAL 2).
register(ToolSpec(
    "ringer_mode", "Read whether the phone will ring, vibrate or stay silent for calls",
    (), GateRule(read_only=True), lambda a: READ_BACK["ringer_mode"], _no_inputs,
    aliases=("get_ringer_mode", "sound_mode"),
))

TOOL_NAMES: tuple[str, ...] = tuple(TOOLS)
