"""What the fast path's steps say is plain words in the window's language: no internal label ("fast path:
ask for the recipient", "fast path: battery") reaches the screen reader or the voice, in English or Chinese."""

from __future__ import annotations

import re

import pytest
from PySide6.QtCore import Qt

from tests.app_fixtures import make_window

INTERNAL = re.compile(r"fast ?path|call_user|\bslot\b|hand over", re.IGNORECASE)


def _said(qtbot, lang: str, request: str, *, asks: bool) -> list[str]:
    window = make_window(qtbot, lang=lang)
    said: list[str] = []
    window.announcer.announced.connect(lambda text, _cue: said.append(text))
    window.request_box.setText(request)
    if asks:
        qtbot.keyClick(window.request_box, Qt.Key.Key_Return)
        qtbot.waitUntil(lambda: window.state == "state_waiting", timeout=30_000)
        qtbot.wait(200)
        with qtbot.waitSignal(window.run_finished, timeout=30_000):
            window.stop_run()
    else:
        with qtbot.waitSignal(window.run_finished, timeout=30_000):
            qtbot.keyClick(window.request_box, Qt.Key.Key_Return)
    return said


@pytest.mark.parametrize(("lang", "request_", "asks"), [
    ("en", "How much battery do I have?", False),
    ("zh", "电池还剩多少电？", False),
    ("en", "Call Walter Smith", True),
    ("zh", "给王小明打电话", True),
])
def test_fast_path_steps_say_no_internal_words(qtbot, lang, request_, asks):
    said = _said(qtbot, lang, request_, asks=asks)
    assert len(said) >= 2, said
    assert [s for s in said if INTERNAL.search(s)] == [], said
    if lang == "zh":
        assert [s for s in said if re.search(r"\b[a-z]{2,} [a-z]{2,}\b", s)] == [], said
