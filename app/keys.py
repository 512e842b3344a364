"""Forwarding the desktop keyboard to the phone ("send all keys to the phone"), so a user can drive
TalkBack directly: Qt keys map to Android keycodes with their modifier meta state; printable text with
no modifier is typed.

`KeyForwarder.forward(event)` returns True when it sent something. It talks to the phone through the
device's optional `press_key(keycode, meta_state)` (the ADB harness), else the simulated World's
`key()`, else the nearest assistant_core Action (back/home/enter/delete/type).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeyEvent

from assistant_core.types import Action, Button

log = logging.getLogger(__name__)

K = Qt.Key
QT_TO_ANDROID: dict[int, int] = {
    K.Key_Up: 19, K.Key_Down: 20, K.Key_Left: 21, K.Key_Right: 22,
    K.Key_Return: 66, K.Key_Enter: 66, K.Key_Backspace: 67, K.Key_Delete: 112,
    K.Key_Tab: 61, K.Key_Space: 62, K.Key_Escape: 4, K.Key_Home: 122, K.Key_End: 123,
    K.Key_PageUp: 92, K.Key_PageDown: 93, K.Key_Menu: 82,
}
for _i in range(26):
    QT_TO_ANDROID[K.Key_A + _i] = 29 + _i
for _i in range(10):
    QT_TO_ANDROID[K.Key_0 + _i] = 7 + _i

META_SHIFT_ON, META_ALT_ON, META_CTRL_ON = 0x1, 0x2, 0x1000
KEYCODE_TO_BUTTON = {4: Button.BACK, 3: Button.HOME, 66: Button.ENTER, 67: Button.DELETE, 82: Button.MENU}


@dataclass(frozen=True)
class PhoneKey:
    keycode: int | None
    meta_state: int
    text: str


def translate(event: QKeyEvent) -> PhoneKey | None:
    """The phone key for a desktop key press, or None for a bare modifier."""
    key = event.key()
    if key in (K.Key_Shift, K.Key_Control, K.Key_Alt, K.Key_Meta, K.Key_AltGr):
        return None
    mods = event.modifiers()
    meta = 0
    if mods & Qt.KeyboardModifier.ShiftModifier:
        meta |= META_SHIFT_ON
    if mods & Qt.KeyboardModifier.AltModifier:
        meta |= META_ALT_ON
    if mods & Qt.KeyboardModifier.ControlModifier:
        meta |= META_CTRL_ON
    code = QT_TO_ANDROID.get(key)
    text = event.text() if event.text().isprintable() else ""
    if code is None and not text:
        return None
    return PhoneKey(code, meta, text)


class KeyForwarder:
    def __init__(self, device, world_of=None):
        """`world_of()` returns the simulated World (None for a real phone); asked on every key because
        the simulated phone can be swapped for a demonstration task's."""
        self.device = device
        self._world_of = world_of or (lambda: None)
        self.sent: list[PhoneKey] = []

    @property
    def world(self):
        return self._world_of()

    def send(self, key: PhoneKey) -> bool:
        press = getattr(self.device, "press_key", None)
        plain = not (key.meta_state & (META_ALT_ON | META_CTRL_ON))
        if key.keycode is not None and callable(press):
            press(key.keycode, key.meta_state)
        elif key.text and plain:
            self.device.act(Action.type_text(key.text))
        elif key.keycode in KEYCODE_TO_BUTTON and key.meta_state == 0:
            self.device.act(Action.press(KEYCODE_TO_BUTTON[key.keycode]))
        elif key.keycode is not None and self.world is not None:
            with self.device.lock:
                self.world.key(key.keycode)
        else:
            log.info("this phone cannot take key %s with meta %#x", key.keycode, key.meta_state)
            return False
        self.sent.append(key)
        return True

    def forward(self, event: QKeyEvent) -> bool:
        key = translate(event)
        return False if key is None else self.send(key)
