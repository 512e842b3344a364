"""Typing any text, Chinese above all, into the focused field of a phone over ADB.

Three paths, chosen per call:
1. `input text` for plain printable ASCII (fast, no IME switch). Android's `input text` turns `%s`
   into a space and cannot type anything its virtual key map lacks (CJK, emoji), so spaces are sent as
   `%s`, a literal "%s" is typed in two pieces, newlines become KEYCODE_ENTER, and the argument is
   single-quoted for the phone's shell.
2. ADBKeyboard (`com.android.adbkeyboard/.AdbIME`) when installed: remember the current IME, enable and
   select ADBKeyboard, optionally ADB_CLEAR_TEXT, broadcast ADB_INPUT_B64 with the UTF-8 text in base64,
   then restore the previous IME, even when a step fails.
3. The scrcpy control channel when mirroring is on: set the clipboard and paste, then put the user's
   previous clipboard back (so we do not leave what we typed on the clipboard).
For non-ASCII text ADBKeyboard is preferred (it does not touch the clipboard, which other apps can
read); without it the mirror's clipboard path is used; with neither, TextEntryUnavailable says what to
install.

A line break is the ENTER key on every path (KEYCODE_ENTER between the lines), never a character
committed by an IME or pasted: what ENTER does in a field (send a message, start a call) must not depend
on the typing path, and the safety gate judges a newline in typed text as that key press.
"""

from __future__ import annotations

import base64
import logging
import re
import shlex
import time
from collections.abc import Callable
from enum import StrEnum
from typing import Protocol

from assistant_core.i18n import Catalog
from assistant_core.types import DeviceError

log = logging.getLogger(__name__)

ADB_KEYBOARD_IME = "com.android.adbkeyboard/.AdbIME"
ENTER = 66

TEXT = Catalog(
    "textentry",
    {
        "unavailable": "I can't type this text on the phone. Install the ADBKeyboard app on the phone, or turn on mirroring, then try again.",
        "ime_failed": "The phone did not accept the typing keyboard. Check that ADBKeyboard is installed and allowed.",
    },
)


class TextEntryMethod(StrEnum):
    INPUT_TEXT = "input_text"
    ADB_KEYBOARD = "adb_keyboard"
    MIRROR_CLIPBOARD = "mirror_clipboard"


class TextEntryUnavailable(DeviceError):
    """No way to type this text on this phone right now."""


class ClipboardChannel(Protocol):
    """What textentry needs from a mirror: harness.mirror.Mirror provides it."""

    @property
    def connected(self) -> bool: ...

    def paste_text(self, text: str) -> None: ...

    def set_clipboard(self, text: str) -> None: ...

    def get_clipboard(self) -> str: ...


_LINE_BREAK_RE = re.compile(r"\r\n|[\n\r\u2028\u2029\x85]")


def is_plain_ascii(text: str) -> bool:
    return all(32 <= ord(c) < 127 or c in "\n\r" for c in text)


def split_lines(text: str) -> list[str]:
    """`text` cut at every line break (each break is one ENTER key press)."""
    return _LINE_BREAK_RE.split(text)


def input_text_commands(text: str) -> list[str]:
    """Shell command lines that type ASCII `text` through `input text` exactly."""
    commands: list[str] = []
    for i, line in enumerate(split_lines(text)):
        if i:
            commands.append(f"input keyevent {ENTER}")
        pieces = line.split("%s")
        for j, piece in enumerate(pieces):
            if j:
                # "%s" would become a space: send "%" and "s" as separate arguments.
                commands.append("input text '%'")
                piece = "s" + piece
            if piece:
                commands.append("input text " + shlex.quote(piece.replace(" ", "%s")))
    return commands


class TextEntry:
    """Types text through the best available path. `shell(cmd) -> output` runs one command line."""

    def __init__(
        self,
        shell: Callable[[str], str],
        *,
        mirror: ClipboardChannel | None = None,
        sleep: Callable[[float], None] = time.sleep,
        restore_delay_s: float = 0.3,
    ):
        self.shell = shell
        self.mirror = mirror
        self.sleep = sleep
        self.restore_delay_s = restore_delay_s
        self._has_adb_keyboard: bool | None = None

    def has_adb_keyboard(self) -> bool:
        if self._has_adb_keyboard is None:
            listing = self.shell("ime list -a -s")
            self._has_adb_keyboard = ADB_KEYBOARD_IME in listing.split()
        return self._has_adb_keyboard

    def choose(self, text: str) -> TextEntryMethod:
        if is_plain_ascii(text):
            return TextEntryMethod.INPUT_TEXT
        if self.has_adb_keyboard():
            return TextEntryMethod.ADB_KEYBOARD
        if self.mirror is not None and self.mirror.connected:
            return TextEntryMethod.MIRROR_CLIPBOARD
        raise TextEntryUnavailable(TEXT["unavailable"], detail=f"{len(text)} characters, no ADBKeyboard, no mirror")

    def type(self, text: str, *, method: TextEntryMethod | None = None, clear: bool = False) -> TextEntryMethod:
        """Type `text` into the focused field; returns the path used. `clear` empties the field first
        (ADBKeyboard path only; other paths ignore it)."""
        if not text and not clear:
            return TextEntryMethod.INPUT_TEXT
        method = method or (TextEntryMethod.ADB_KEYBOARD if clear and self.has_adb_keyboard() else self.choose(text))
        if method is TextEntryMethod.INPUT_TEXT:
            if not is_plain_ascii(text):
                raise TextEntryUnavailable(TEXT["unavailable"], detail="input text cannot type non-ASCII characters")
            for command in input_text_commands(text):
                self.shell(command)
        else:
            for i, line in enumerate(split_lines(text)):
                if i:
                    self.shell(f"input keyevent {ENTER}")
                if method is TextEntryMethod.ADB_KEYBOARD:
                    if line or (clear and i == 0):
                        self._type_adb_keyboard(line, clear=clear and i == 0)
                elif line:
                    self._type_mirror(line)
        log.debug("typed %d characters via %s", len(text), method)
        return method

    def _type_adb_keyboard(self, text: str, *, clear: bool) -> None:
        previous = self.shell("settings get secure default_input_method").strip()
        switched = previous != ADB_KEYBOARD_IME
        try:
            if switched:
                self.shell(f"ime enable {ADB_KEYBOARD_IME}")
                answer = self.shell(f"ime set {ADB_KEYBOARD_IME}")
                if "selected" not in answer:
                    raise TextEntryUnavailable(TEXT["ime_failed"], detail=answer.strip())
            if clear:
                self.shell("am broadcast -a ADB_CLEAR_TEXT")
            if text:
                payload = base64.b64encode(text.encode("utf-8")).decode("ascii")
                self.shell(f"am broadcast -a ADB_INPUT_B64 --es msg {payload}")
        finally:
            if switched and previous and previous != "null":
                self.shell(f"ime set {shlex.quote(previous)}")

    def _type_mirror(self, text: str) -> None:
        mirror = self.mirror
        if mirror is None or not mirror.connected:
            raise TextEntryUnavailable(TEXT["unavailable"], detail="mirroring is not connected")
        try:
            saved = mirror.get_clipboard()
        except (ConnectionError, OSError, RuntimeError):
            saved = None
        mirror.paste_text(text)
        mirror.get_clipboard()  # a round trip: the phone has handled the paste message before answering
        if saved is not None and saved != text:
            # The app reads the clipboard when it handles the paste key; give it a moment before restoring.
            self.sleep(self.restore_delay_s)
            mirror.set_clipboard(saved)
            mirror.get_clipboard()
