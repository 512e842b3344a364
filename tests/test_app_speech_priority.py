"""Speech priority during a question: a key the confirmation ignores (a `y` inside the grace period,
whether it reaches the dialog or the main window that still had the focus; a key that is not the
dialog's own) never stops the question being read. Only stop, repeat or a counted answer do. Asserted
on the speech queue the window fills (say / stop, in order), in English and Chinese."""

from __future__ import annotations

import time

import pytest
from PySide6.QtCore import Qt

from app.confirm_dialog import GRACE_MS
from app.main_window import AppServices
from tests.app_fixtures import make_window
from tests.test_app_answers import RecordingSpeaker

REQUEST = {"en": "Call Sophie Tang", "zh": "给唐苏菲打电话"}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_ignored_early_key_never_stops_the_question(qtbot, lang):
    speaker = RecordingSpeaker()
    window = make_window(qtbot, lang=lang, services=AppServices(speaker=speaker))
    window.request_box.setText(REQUEST[lang])
    qtbot.keyClick(window.request_box, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: window._dialog is not None and window._dialog.isVisible(), timeout=60_000)
    dialog = window._dialog
    question = dialog.spoken_text()
    qtbot.waitUntil(lambda: ("say", question) in speaker.calls, timeout=5000)
    asked = speaker.calls.index(("say", question))
    opened = time.monotonic()
    # A y 0.15 s into the question, once on the main window (it still had the focus) and once on the dialog.
    qtbot.wait(150)
    qtbot.keyClick(window.request_box, Qt.Key.Key_Y)
    qtbot.keyClick(dialog, Qt.Key.Key_Y)
    assert time.monotonic() - opened < GRACE_MS / 1000, "the machine was too slow to press inside the grace period"
    assert window._dialog is dialog and dialog.answer is None  # not counted as an answer
    assert speaker.calls[asked + 1:] == [], speaker.calls[asked:]  # and the question is still being read
    # After the grace period, a key that is not the dialog's own is ignored too, and silences nothing.
    qtbot.wait(GRACE_MS + 100)
    qtbot.keyClick(dialog, Qt.Key.Key_X)
    qtbot.keyClick(window.request_box, Qt.Key.Key_X)
    assert speaker.calls[asked + 1:] == [], speaker.calls[asked:]
    # R repeats: it may silence the question, to read it again from the start.
    qtbot.keyClick(dialog, Qt.Key.Key_R)
    qtbot.waitUntil(lambda: any(k == "say" for k, _t in speaker.calls[asked + 1:]), timeout=10_000)
    assert speaker.calls[asked + 1] == ("stop", "")
    reread = next(t for k, t in speaker.calls[asked + 1:] if k == "say")
    assert REQUEST["en"].split()[-1] in reread or "唐苏菲" in reread, reread  # the question again
    # N is a counted answer: it silences the question and is said.
    again = len(speaker.calls)
    with qtbot.waitSignal(window.run_finished, timeout=60_000):
        qtbot.keyClick(window._dialog or dialog, Qt.Key.Key_N)
    assert ("stop", "") in speaker.calls[again:]
    assert window.phone.world.apps["com.android.dialer"].state.calls == []
