"""Is a screen reader running, and which channel speaks: PhoneBuddy's own voice or the screen reader.

A screen reader user hears every message twice when both speak it. `detect_screen_reader()` looks:
- Linux: the AT-SPI bus's `org.a11y.Status.ScreenReaderEnabled` (what Orca sets), over D-Bus;
- Windows: `SystemParametersInfo(SPI_GETSCREENREADER)`, and NVDA, JAWS or Narrator among the processes;
- macOS: VoiceOver's `voiceOverOnOffKey` in com.apple.universalaccess.
`SpeechChannel` is the choice, kept in the history store's settings under CHANNEL_KEY: OWN_VOICE speaks
with our voice only, SCREEN_READER leaves speech to the screen reader (accessibility announcements only),
BOTH is for people without a screen reader (our voice; the announcements reach no one else).
"""

from __future__ import annotations

import logging
import subprocess
import sys
from enum import StrEnum

log = logging.getLogger(__name__)

CHANNEL_KEY = "speech_channel"
WINDOWS_READERS = ("nvda.exe", "jfw.exe", "narrator.exe")


class SpeechChannel(StrEnum):
    BOTH = "both"
    OWN_VOICE = "own_voice"
    SCREEN_READER = "screen_reader"


def _linux() -> str | None:
    from PySide6.QtDBus import QDBusConnection, QDBusInterface

    bus = QDBusConnection.sessionBus()
    if not bus.isConnected():
        return None
    props = QDBusInterface("org.a11y.Bus", "/org/a11y/bus", "org.freedesktop.DBus.Properties", bus)
    if not props.isValid():
        return None
    reply = props.call("Get", "org.a11y.Status", "ScreenReaderEnabled")
    args = reply.arguments()
    value = args[0] if args else None
    value = value.variant() if hasattr(value, "variant") else value
    return "a screen reader (AT-SPI)" if value is True else None


def _windows() -> str | None:  # pragma: no cover - Windows only
    import ctypes

    flag = ctypes.c_int(0)
    on = ctypes.windll.user32.SystemParametersInfoW(0x0046, 0, ctypes.byref(flag), 0) and flag.value
    listing = subprocess.run(["tasklist", "/fo", "csv", "/nh"], capture_output=True, text=True, timeout=3).stdout.lower()
    for exe in WINDOWS_READERS:
        if exe in listing:
            return exe.removesuffix(".exe")
    return "a screen reader" if on else None


def _macos() -> str | None:  # pragma: no cover - macOS only
    out = subprocess.run(["defaults", "read", "com.apple.universalaccess", "voiceOverOnOffKey"],
                         capture_output=True, text=True, timeout=3).stdout.strip()
    return "VoiceOver" if out == "1" else None


def detect_screen_reader() -> str | None:
    """The running screen reader's name, or None (also when it cannot be told: nothing is assumed)."""
    probe = _windows if sys.platform == "win32" else _macos if sys.platform == "darwin" else _linux
    try:
        return probe()
    except Exception:  # a missing bus or tool: no screen reader can be seen, say nothing of one
        log.info("could not tell whether a screen reader runs", exc_info=True)
        return None


def load_channel(history) -> SpeechChannel | None:
    """The stored choice, or None when none was made yet."""
    raw = history.get_setting(CHANNEL_KEY) if history is not None else None
    try:
        return SpeechChannel(raw) if raw else None
    except ValueError:
        return None


def save_channel(history, channel: SpeechChannel) -> None:
    if history is not None:
        history.put_setting(CHANNEL_KEY, str(channel))
