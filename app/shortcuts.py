"""The window's keyboard shortcuts, in one table, so the F1 list, the key bindings and the tests agree.

Chosen to collide with no screen reader and not with TalkBack: NVDA, JAWS and Narrator use Insert or
Caps Lock as their modifier (and plain Ctrl to silence speech, which we also honour: any key stops our
speech); TalkBack's keyboard shortcuts use Alt (or Search), so no shortcut here uses Alt or Insert, and
with "send all keys to the phone" on every key but F9 goes to the phone.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Command(StrEnum):
    HELP = "help"
    TALK = "talk"
    REPEAT = "repeat"
    STOP = "stop"
    STOP_ALT = "stop_alt"
    SIM_PHONE = "sim_phone"
    CHANNEL = "channel"
    REQUEST_BOX = "request_box"
    NEXT_AREA = "next_area"
    CONTRAST = "contrast"
    LANGUAGE = "language"
    SEND_KEYS = "send_keys"
    RATE_UP = "rate_up"
    RATE_DOWN = "rate_down"
    HANDOVER_DONE = "handover_done"
    FORGET_PHONE = "forget_phone"
    SETTINGS = "settings"
    QUIT = "quit"


@dataclass(frozen=True)
class Shortcut:
    command: Command
    keys: str  # QKeySequence portable text
    help_key: str  # catalog key of the line read aloud by F1 ("" = described together with another)


SHORTCUTS: tuple[Shortcut, ...] = (
    Shortcut(Command.HELP, "F1", "sc_help"),
    Shortcut(Command.TALK, "F2", "sc_talk"),
    Shortcut(Command.REPEAT, "F3", "sc_repeat"),
    Shortcut(Command.STOP, "Esc", "sc_stop"),
    Shortcut(Command.STOP_ALT, "F4", ""),
    Shortcut(Command.SIM_PHONE, "F5", "sc_sim"),
    Shortcut(Command.REQUEST_BOX, "Ctrl+L", "sc_request"),
    Shortcut(Command.NEXT_AREA, "F6", "sc_areas"),
    Shortcut(Command.CONTRAST, "F7", "sc_contrast"),
    Shortcut(Command.LANGUAGE, "F8", "sc_language"),
    Shortcut(Command.SEND_KEYS, "F9", "sc_keys"),
    Shortcut(Command.RATE_UP, "Ctrl+Up", "sc_rate"),
    Shortcut(Command.RATE_DOWN, "Ctrl+Down", ""),
    Shortcut(Command.HANDOVER_DONE, "F10", "sc_done"),
    Shortcut(Command.CHANNEL, "F11", "sc_channel"),
    Shortcut(Command.SETTINGS, "F12", "sc_settings"),
    Shortcut(Command.FORGET_PHONE, "Ctrl+Shift+F", "sc_forget"),
    Shortcut(Command.QUIT, "Ctrl+Q", "sc_quit"),
)

# Modifiers that belong to screen readers or TalkBack; a shortcut using one would be swallowed.
RESERVED_MODIFIERS = ("Alt", "Meta", "Insert", "CapsLock")


def help_lines(lang: str) -> list[str]:
    """The F1 list, in order, as read aloud."""
    from app.strings import tr

    lines = [tr("shortcuts_intro", lang)]
    lines += [tr(s.help_key, lang) for s in SHORTCUTS if s.help_key]
    lines.append(tr("sc_any", lang))
    return lines
