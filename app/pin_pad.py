"""The hand-over's end in the window: F10 (or typing/saying "done") answers "I finished that step", and on
the simulated phone a PIN box lets the user finish the protected step from the keyboard.

On a real phone the user finishes a protected screen on the phone itself. PhoneWorld-lite has no hands, so
while a hand-over waits and the simulated phone shows its protected PIN screen, `PinPad` shows a password
box beside the mirror: its digits are pressed on the simulated phone's own keypad (harness.phoneworld.pinpad)
as the user's touches, never through the assistant's loop, never spoken, logged or kept.
"""

from __future__ import annotations

import logging
from typing import Any

from PySide6.QtWidgets import QLineEdit

from app.announce import Cue
from app.strings import tr
from app.workers import BackgroundOp

log = logging.getLogger(__name__)

# app.main_window.MainWindow, which imports this module: named, not imported, so the app has no import cycle.
MainWindow = Any


class PinPad(QLineEdit):
    """A password box for the simulated phone's protected PIN screen (hidden unless one is waiting)."""

    def __init__(self, window: MainWindow):
        super().__init__(window)
        self.window_ = window
        self.setObjectName("pinPad")
        self.setEchoMode(QLineEdit.EchoMode.Password)
        self.setMaxLength(12)
        self.returnPressed.connect(self.press)
        self.setVisible(False)
        self.retranslate(window.lang)

    def retranslate(self, lang: str) -> None:
        self.setAccessibleName(tr("pin_pad", lang))
        self.setAccessibleDescription(tr("pin_pad_desc", lang))
        self.setPlaceholderText(tr("pin_pad", lang))

    def on_event(self, event: Any) -> None:
        """Show the box when a hand-over waits on the simulated phone's protected keypad; hide it after."""
        from assistant_core.events import Paused, PauseReason, Resumed

        w = self.window_
        if isinstance(event, Paused) and event.reason is PauseReason.HANDOVER:
            phone = w.phone
            if phone is None or not phone.is_simulated or not _keypad(phone.device):
                return
            self.clear()
            self.setVisible(True)
            self.setFocus()
            w.announcer.announce(tr("pin_pad_shown", w.lang), Cue.CONFIRM, queued=True)
        elif isinstance(event, Resumed) and event.reason is PauseReason.HANDOVER:
            self.clear()
            self.setVisible(False)

    def press(self) -> None:
        """Enter: the digits go to the simulated phone's keypad (off the GUI thread); the box is emptied."""
        from harness.phoneworld.pinpad import enter_pin

        w = self.window_
        digits, phone = self.text(), w.phone
        self.clear()
        if phone is None or not digits:
            return
        device, n = phone.device, len(digits.strip())

        def said(ok: object) -> None:
            key = "pin_pressed" if ok else "pin_not_pressed"
            w.announcer.announce(tr(key, w.lang, n=n), Cue.INFO if ok else Cue.ERROR)
            w.refresh_mirror()
            if ok:
                w.request_box.setFocus()  # next: "done" there, or F10

        BackgroundOp(lambda: enter_pin(device, digits), on_done=said,
                     on_failed=lambda e: said(False), parent=self).start()


def _keypad(device: Any) -> bool:
    from harness.phoneworld.pinpad import pin_pad_showing

    try:
        return pin_pad_showing(device)
    except Exception:  # a phone that cannot be read shows no PIN box; the hand-over still waits for "done"
        log.exception("could not look for the protected keypad")
        return False


def handover_done(window: MainWindow) -> None:
    """F10: answer the waiting hand-over with "done" (the loop looks at the screen again)."""
    from phonebuddy.assistant import Heard, TurnState

    if window.is_running() and window.assistant.state in (TurnState.HANDING_OVER, TurnState.ASKING):
        window.assistant.hear(Heard(tr("done_word", window.lang), typed=True))  # the assistant answers it
        return
    window.announcer.announce(tr("nothing_handed_over", window.lang))
