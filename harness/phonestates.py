"""What to tell a person about the phone connection, for every state a phone (and the adb server) can be in.

    instruction_for(list_devices(client))   -> Text   # the one thing to say now, with what to do
    state_instruction("unauthorized")       -> Text   # the instruction for one adb state
    phone_name(info)                        -> Text   # "Pixel 7 ending in 4821": how a phone is named aloud

Every message is bilingual and written to be heard: a blind user with TalkBack, or a caregiver reading
it aloud, can follow it step by step. The PIN of a locked phone is never asked for or typed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from assistant_core.i18n import Catalog, Text

UDEV_RULE_PATH = "/etc/udev/rules.d/51-android.rules"
# Any USB device whose interface is adb (class ff, subclass 42, protocol 01) becomes usable by the
# logged-in user: no vendor list to keep up to date.
UDEV_RULE = 'SUBSYSTEM=="usb", ENV{ID_USB_INTERFACES}=="*:ff4201:*", MODE="0660", TAG+="uaccess"'
UDEV_COMMAND = (
    f"echo '{UDEV_RULE}' | sudo tee {UDEV_RULE_PATH} && sudo udevadm control --reload-rules && sudo udevadm trigger"
)

STATES = Catalog(
    "phonestates",
    {
        "no_phone": ("No phone is connected. Step 1: plug the phone into this computer with its USB cable. "
            "Step 2: on the phone, open Settings, then About phone, and tap Build number seven times to turn on "
            "Developer options; with TalkBack, double-tap it seven times. "
            "Step 3: go back to Settings, open System, then Developer options, and turn on USB debugging. "
            "I will notice the phone by myself as soon as it is ready."),
        "unauthorized": ("Your phone is asking whether to allow USB debugging from this computer. Unlock the phone. "
            "With TalkBack, swipe right until you hear \"Always allow from this computer\" and double-tap to tick it, "
            "then swipe to Allow and double-tap. If you hear no question, unplug the cable and plug it in again."),
        "authorizing": "The phone is checking this computer's key. Unlock the phone and wait a moment.",
        "offline": ("The phone is connected but not answering. Unlock it and wait a few seconds. If it stays silent, "
            "unplug the cable and plug it in again, or turn USB debugging off and on."),
        "offline_wifi": ("The phone at {host} is not answering. Check that it is on the same network as this computer, that it "
            "is unlocked, and that Wireless debugging is still on."),
        "connect_refused": ("Nothing at {address} accepted the connection, so it is not in the phone list. On the phone, open "
            "Developer options, then Wireless debugging, and use the address and port it shows now; the port "
            "changes each time Wireless debugging is turned on."),
        "connect_silent": ("The phone at {address} did not answer, so I took it off the phone list. Check that it is on the same "
            "network as this computer and that Wireless debugging is on, then connect again."),
        "remembered_silent": ("The remembered phone at {address} is not answering. Check that it is on the same network as this "
            "computer and that Wireless debugging is on, or forget it."),
        "forgot": "I forgot the phone at {address}; I will not try to reconnect it.",
        "not_remembered": "The phone at {address} was not remembered, so there was nothing to forget.",
        "no_permissions": ("The phone is plugged in, but this computer does not let PhoneBuddy use it yet. A caregiver can fix "
            "this once by running this command in a terminal, then unplugging the phone and plugging it in again: {command}"),
        "several": ("{count} phones are connected: {names}. Say or press the number of the phone to use; I will "
            "remember it."),
        "several_item": "number {number}, {name}",
        "phone_name": "{model} ending in {digits}",
        "phone_name_bare": "the phone ending in {digits}",
        "ready": "{name} is connected and ready.",
        "locked": ("The phone's screen is locked. Please unlock it yourself; I will never type your PIN or password. "
            "I'll carry on as soon as it is unlocked."),
        "plugged": "A phone was connected: {name}.",
        "unplugged": ("The phone was disconnected. Plug it back in or reconnect it; what you asked for is kept and I'll "
            "continue when it is back."),
        "back": "{name} is back.",
        "unknown_state": "The phone is in a state I don't know ({state}). Unplug it and plug it in again.",
        "server_starting": "Starting the phone connection helper.",
        "server_lost": "The phone connection helper stopped. Restarting it; what you asked for is kept.",
        "server_back": "The phone connection helper is running again.",
        "server_port_taken": ("Another program is using the phone connection port {port}, so the phone connection helper cannot "
            "start. Close that program, or ask a caregiver to set ANDROID_ADB_SERVER_PORT to a free port, then "
            "try again."),
        "server_failed": ("The phone connection helper could not start. Ask a caregiver to run \"phonebuddy devices list\" in a "
            "terminal to see why."),
        "server_remote": ("No phone connection helper answers at {address}, and PhoneBuddy only starts one on this computer. "
            "Start it there, or ask a caregiver to clear ANDROID_ADB_SERVER_ADDRESS."),
        "server_off": ("No phone connection helper is running, and starting one is turned off (PHONEBUDDY_ADB_START=never). "
            "Ask a caregiver to start the adb server."),
        "pair_failed": ("Pairing with {address} failed. On the phone, open Developer options, then Wireless debugging, then "
            "Pair device with pairing code, and use the address and six-digit code it shows now."),
    },
)

_KNOWN = {"unauthorized", "authorizing", "offline"}
_WIFI = re.compile(r"^[\w.\-\[\]:]+:\d+$")


def _digits(serial: str) -> str:
    """The last four characters of a serial a person can read out (the port of a Wi-Fi address)."""
    tail = serial.rsplit(":", 1)[-1] if ":" in serial else serial
    return tail[-4:]


def phone_name(info: Any) -> Text:
    """How a phone is named aloud: its model and the last digits of its serial."""
    model = (getattr(info, "model", "") or "").replace("_", " ").strip()
    digits = _digits(info.serial)
    if model:
        return STATES["phone_name"].format(model=model, digits=digits)
    return STATES["phone_name_bare"].format(digits=digits)


def is_wifi(serial: str) -> bool:
    """A Wi-Fi (TCP) phone's serial: HOST:PORT, or an mDNS name adb gives a wireless-debugging phone."""
    return serial.startswith("adb-") or bool(_WIFI.match(serial))


def wifi_host(serial: str) -> str:
    """The host part of a Wi-Fi serial (192.168.1.20 from 192.168.1.20:5555), as a person reads it."""
    return serial.rsplit(":", 1)[0].strip("[]") if ":" in serial else serial


def state_instruction(state: str, serial: str = "") -> Text:
    """The instruction for one adb device state (`device`, `unauthorized`, `no permissions...`). With the
    phone's `serial`, an offline Wi-Fi phone gets network advice, not "unplug the cable"."""
    if state.startswith("no permissions"):
        return STATES["no_permissions"].format(command=UDEV_COMMAND)
    if state == "offline" and serial and is_wifi(serial):
        return STATES["offline_wifi"].format(host=wifi_host(serial))
    if state in _KNOWN:
        return STATES[state]
    return STATES["unknown_state"].format(state=state)


def several_phones(devices: Sequence[Any]) -> Text:
    items = [STATES["several_item"].format(number=i, name=phone_name(d).en) for i, d in enumerate(devices, 1)]
    items_zh = [STATES["several_item"].format(number=i, name=phone_name(d).zh) for i, d in enumerate(devices, 1)]
    return Text(
        STATES["several"].en.format(count=len(devices), names="; ".join(t.en for t in items)),
        STATES["several"].zh.format(count=len(devices), names="；".join(t.zh for t in items_zh)),
    )


def instruction_for(devices: Sequence[Any], *, chosen: str | None = None) -> Text:
    """The one thing to tell the user about these devices (harness.adb.DeviceInfo or anything with
    `serial`, `state`, `model`): which phone is ready, or what to do so that one becomes ready.
    `chosen` is the serial the user picked before (used when several phones are connected)."""
    if chosen:
        picked = [d for d in devices if d.serial == chosen]
        if picked:
            devices = picked
    if not devices:
        return STATES["no_phone"]
    ready = [d for d in devices if d.state == "device"]
    if len(devices) > 1 and len(ready) != 1:
        return several_phones(devices)
    info = ready[0] if ready else devices[0]
    if info.state == "device":
        return named("ready", info)
    return state_instruction(info.state, info.serial)


def named(key: str, info: Any) -> Text:
    """A message with a {name} placeholder filled with the phone's spoken name in each language."""
    name = phone_name(info)
    return Text(STATES[key].en.format(name=name.en), STATES[key].zh.format(name=name.zh))
