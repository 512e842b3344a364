"""The confirmation dialog: large, reads back exactly what will happen, and no answer means no.

Keys: Y = yes, N = no, Enter presses the focused button (focus starts on "No"), R = repeat, F2 = answer
by voice, Space held = answer by voice (it never answers: it is the push-to-talk key everywhere),
Escape or F4 = stop the whole run (`on_stop`; without one, no). Keys are dropped, and do not stop the
question being read, while the dialog is younger than `grace_ms` (GRACE_MS): a key meant for the
window, pressed or held as the dialog opened, must not land on it. Auto-repeated presses (a key held
since before the dialog) never count. Stop keys are never dropped: stop always wins.

Closing the window is no; the countdown running out is no. The dialog emits
`answered(ConfirmAnswer)` exactly once (YES or NO); REPEAT re-announces and keeps waiting. With
`timeout_s=None` the dialog has no clock of its own: the loop's Patience reminds and, in the end,
counts silence as no (the window then calls `close_quietly`); `on_repeat` hands "repeat" to the loop.

What it shows comes from a `ConfirmPrompt` (built from the loop's confirmation request by
app.agent.prompt_from_request) so the dialog does not depend on the loop's internals.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QFont, QKeyEvent
from PySide6.QtWidgets import QDialog, QGridLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from app.announce import Cue
from app.strings import tr
from assistant_core.types import ConfirmAnswer

log = logging.getLogger(__name__)

# How long after opening the dialog ignores keys. bench/confirm_grace.py measured, under Xvfb with real
# X key events: the dialog is on screen 0.16-0.25 s after the step that needs it is announced, and a key
# reaches Qt within 3 ms. A key aimed at the window in answer to that announcement (reaction about
# 0.2-0.3 s, plus as much again to hold back a press already under way) lands up to ~0.45 s into the
# dialog's life; 0.7 s covers it with room and is still shorter than the question takes to read.
# Held keys are handled separately (auto-repeat never counts).
GRACE_MS = 700

STOP_KEYS = (Qt.Key.Key_Escape, Qt.Key.Key_F4)

@dataclass(frozen=True)
class ConfirmPrompt:
    """What the user is asked: `summary` says exactly what will happen; `reason` why we ask."""

    summary: str
    reason: str = ""
    details: str = ""
    spoken: str = ""  # the exact read-back, when the loop supplies one


Announce = Callable[[str, Cue], object]


class ConfirmDialog(QDialog):
    answered = Signal(object)
    voice_requested = Signal()
    voice_hold = Signal(bool)  # Space pressed (True) / released (False): push-to-talk for the answer
    stop_requested = Signal()  # Escape or F4: the user stops the whole run

    def __init__(
        self,
        prompt: ConfirmPrompt,
        *,
        lang: str,
        announce: Announce | None = None,
        timeout_s: int | None = 60,
        on_repeat: Callable[[], object] | None = None,
        on_stop: Callable[[], object] | None = None,
        grace_ms: int = GRACE_MS,
        parent: QWidget | None = None,
    ):
        super().__init__(parent)
        self.setObjectName("confirmDialog")
        self.prompt = prompt
        self.lang = lang
        self._announce = announce
        self._remaining = timeout_s
        self._on_repeat = on_repeat
        self._on_stop = on_stop
        self.grace_ms = grace_ms
        self._opened_at: float | None = None  # time.monotonic() when shown
        self._space_down = False
        self.dropped_keys: list[int] = []  # keys ignored (too early or held), for review and tests
        self._done = False
        self.answer: ConfirmAnswer | None = None
        self.repeats = 0

        self.title = QLabel()
        self.title.setObjectName("confirmTitle")
        big = QFont(self.font())
        big.setPointSize(max(big.pointSize(), 13) + 8)
        big.setBold(True)
        self.title.setFont(big)
        self.lead = QLabel()
        self.summary = QLabel(prompt.summary)
        self.summary.setObjectName("confirmSummary")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByKeyboard)
        self.summary.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        sfont = QFont(self.font())
        sfont.setPointSize(max(sfont.pointSize(), 13) + 5)
        self.summary.setFont(sfont)
        self.reason = QLabel(prompt.reason)
        self.reason.setWordWrap(True)
        self.reason.setVisible(bool(prompt.reason))
        self.details = QLabel(prompt.details)
        self.details.setWordWrap(True)
        self.details.setVisible(bool(prompt.details))
        self.question = QLabel()
        self.question.setFont(sfont)
        self.countdown = QLabel()

        self.yes_button = QPushButton()
        self.yes_button.setObjectName("confirmYes")
        self.no_button = QPushButton()
        self.no_button.setObjectName("confirmNo")
        self.repeat_button = QPushButton()
        self.repeat_button.setObjectName("confirmRepeat")
        self.voice_button = QPushButton()
        self.voice_button.setObjectName("confirmVoice")
        for b in (self.yes_button, self.no_button, self.repeat_button, self.voice_button):
            b.setMinimumHeight(56)
            b.setFont(sfont)
            b.setAutoDefault(False)
        self.yes_button.clicked.connect(lambda: self._finish(ConfirmAnswer.YES))
        self.no_button.clicked.connect(lambda: self._finish(ConfirmAnswer.NO))
        self.repeat_button.clicked.connect(self.repeat)
        self.voice_button.clicked.connect(self.voice_requested.emit)

        buttons = QGridLayout()
        buttons.addWidget(self.yes_button, 0, 0)
        buttons.addWidget(self.no_button, 0, 1)
        buttons.addWidget(self.repeat_button, 1, 0)
        buttons.addWidget(self.voice_button, 1, 1)
        layout = QVBoxLayout(self)
        for w in (self.title, self.lead, self.summary, self.reason, self.details, self.question):
            layout.addWidget(w)
        layout.addLayout(buttons)
        layout.addWidget(self.countdown)
        self.setTabOrder(self.no_button, self.yes_button)
        self.setTabOrder(self.yes_button, self.repeat_button)
        self.setTabOrder(self.repeat_button, self.voice_button)
        self.setTabOrder(self.voice_button, self.summary)
        # Every key pressed anywhere in the dialog goes through one handler (a button must not answer
        # on Space or on a key that came too early by its own keyPressEvent).
        for w in (self, *self.findChildren(QWidget)):
            w.installEventFilter(self)

        self._timer = QTimer(self)
        self._timer.setInterval(1000)
        self._timer.timeout.connect(self._tick)
        self.retranslate(lang)
        self.question.setVisible(not prompt.spoken)  # the loop's read-back already ends with its question
        self.setMinimumWidth(720)

    # -- text ----------------------------------------------------------------------------------

    def spoken_text(self) -> str:
        """Exactly what is read aloud: the lead, what will happen, why, and the question."""
        if self.prompt.spoken:
            return f"{tr('confirm_lead', self.lang)} {self.prompt.spoken}"
        parts = [tr("confirm_lead", self.lang), self.prompt.summary]
        if self.prompt.reason:
            parts.append(self.prompt.reason)
        parts.append(tr("confirm_question", self.lang))
        return " ".join(parts)

    def retranslate(self, lang: str) -> None:
        self.lang = lang
        self.setWindowTitle(tr("confirm_title", lang))
        self.setAccessibleName(tr("confirm_title", lang))
        self.setAccessibleDescription(self.spoken_text())
        self.title.setText(tr("confirm_title", lang))
        self.lead.setText(tr("confirm_lead", lang))
        self.question.setText(tr("confirm_question", lang))
        self.summary.setAccessibleName(self.prompt.summary)
        self.summary.setAccessibleDescription(tr("confirm_lead", lang))
        pairs = (
            (self.yes_button, "confirm_yes"),
            (self.no_button, "confirm_no"),
            (self.repeat_button, "confirm_repeat"),
            (self.voice_button, "confirm_voice"),
        )
        for button, key in pairs:
            button.setText(tr(key, lang))
            button.setAccessibleName(tr(key, lang))
            button.setAccessibleDescription(tr(f"{key}_desc", lang))
        self._show_countdown()

    def _show_countdown(self) -> None:
        if self._remaining is None:
            self.countdown.setText(tr("confirm_no_answer", self.lang))
        else:
            self.countdown.setText(tr("confirm_countdown", self.lang, seconds=self._remaining))
        self.countdown.setAccessibleName(self.countdown.text())

    # -- flow ----------------------------------------------------------------------------------

    def start(self) -> None:
        """Show, focus No, read the question aloud, start the countdown; keys count only
        after the grace period."""
        self._opened_at = time.monotonic()
        # Not modal: Qt drops every key sent to a window a modal dialog blocks, so an Escape that the X
        # server delivered to the main window just before the dialog took the focus was lost (the run
        # went on). The main window's keys cannot answer the question anyway; its Escape/F4 still stop.
        self.setWindowModality(Qt.WindowModality.NonModal)
        self.show()
        self.raise_()
        self.activateWindow()
        self.no_button.setFocus(Qt.FocusReason.OtherFocusReason)
        self._say(self.spoken_text())
        if self._remaining is not None:
            self._timer.start()

    def in_grace(self) -> bool:
        """True until the dialog has been open for `grace_ms` (and before it opens at all)."""
        if self._opened_at is None:
            return True
        return (time.monotonic() - self._opened_at) * 1000 < self.grace_ms

    def stop(self) -> None:
        """Escape / F4: the run is stopped (by `on_stop`); with nobody to stop, the answer is no."""
        self.stop_requested.emit()
        if self._on_stop is not None:
            self._on_stop()
        else:
            self._finish(ConfirmAnswer.NO)

    def repeat(self) -> None:
        """Read the question again (through the loop when it drives the exchange)."""
        self.repeats += 1
        if self._on_repeat is not None:
            self._on_repeat()
        else:
            self._say(self.spoken_text())

    def close_quietly(self) -> None:
        """The exchange ended elsewhere (the loop gave up waiting, or the run stopped): close, no signal."""
        self._done = True
        self._timer.stop()
        QDialog.reject(self)

    def answer_with(self, answer: ConfirmAnswer) -> None:
        """Answer from outside (a spoken yes/no/repeat)."""
        answer = ConfirmAnswer(answer)
        if answer is ConfirmAnswer.REPEAT:
            self.repeat()
        else:
            self._finish(answer)

    def _say(self, text: str) -> None:
        if self._announce is not None:
            self._announce(text, Cue.CONFIRM)

    def _tick(self) -> None:
        if self._remaining is None:
            return
        self._remaining -= 1
        self._show_countdown()
        if self._remaining <= 0:
            self._finish(ConfirmAnswer.NO, timed_out=True)

    def _finish(self, answer: ConfirmAnswer, *, timed_out: bool = False) -> None:
        if self._done:
            return
        self._done = True
        self._timer.stop()
        self.answer = answer
        if self._announce is not None:
            key = "confirm_said_yes" if answer is ConfirmAnswer.YES else (
                "confirm_timeout" if timed_out else "confirm_said_no")
            self._announce(tr(key, self.lang), Cue.INFO)
        self.answered.emit(answer)
        if answer is ConfirmAnswer.YES:
            self.accept()
        else:
            super().reject()

    # -- keys and closing: every way out that is not "yes" is "no" -----------------------------

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind == QEvent.Type.ShortcutOverride and isinstance(event, QKeyEvent):
            event.accept()  # our keys are ours: no shortcut may take them first
            return False
        if kind == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            self.handle_key_press(event)
            return True
        if kind == QEvent.Type.KeyRelease and isinstance(event, QKeyEvent):
            self.handle_key_release(event)
            return True
        return False

    def handle_key_press(self, event: QKeyEvent) -> None:
        """Every key press in the dialog; see the module docstring for what each key does."""
        key = event.key()
        if key in STOP_KEYS:
            if not event.isAutoRepeat():
                self.stop()
            return
        if event.isAutoRepeat() or self.in_grace() or self._done:
            self.dropped_keys.append(int(key))
            log.info("confirmation: key %s dropped (%s)", key,
                     "held" if event.isAutoRepeat() else "too early" if self.in_grace() else "answered")
            return
        if key == Qt.Key.Key_Space:
            self._space_down = True
            self.voice_hold.emit(True)
        elif key == Qt.Key.Key_Y:
            self._finish(ConfirmAnswer.YES)
        elif key == Qt.Key.Key_N:
            self._finish(ConfirmAnswer.NO)
        elif key == Qt.Key.Key_R:
            self.repeat()
        elif key == Qt.Key.Key_F2:
            self.voice_requested.emit()
        elif key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            focused = self.focusWidget()
            if focused is self.yes_button:
                self._finish(ConfirmAnswer.YES)
            elif focused is self.no_button:
                self._finish(ConfirmAnswer.NO)
            elif isinstance(focused, QPushButton):
                focused.click()
        elif key in (Qt.Key.Key_Tab, Qt.Key.Key_Backtab, Qt.Key.Key_Left, Qt.Key.Key_Right,
                     Qt.Key.Key_Up, Qt.Key.Key_Down):
            forward = key in (Qt.Key.Key_Tab, Qt.Key.Key_Right, Qt.Key.Key_Down)
            self.focusNextPrevChild(forward)

    def handle_key_release(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Space and not event.isAutoRepeat() and self._space_down:
            self._space_down = False
            self.voice_hold.emit(False)

    def reject(self) -> None:
        self._finish(ConfirmAnswer.NO)

    def closeEvent(self, event: QCloseEvent) -> None:
        self._finish(ConfirmAnswer.NO)
        super().closeEvent(event)
