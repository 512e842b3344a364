"""The demo with no model: a request the fast path understands (and no demonstration task matches) is
done on the simulated phone by tools and answered in the window; a call still stops at the confirmation
dialog with its read-back; a request it does not understand says what needs the model."""

from __future__ import annotations

from PySide6.QtCore import Qt

from app.confirm_dialog import GRACE_MS
from app.conversation import EntryKind
from assistant_core.toolgate import digits_aloud
from tests.app_fixtures import make_window


def _run(qtbot, window, text: str) -> None:
    window.request_box.setText(text)
    with qtbot.waitSignal(window.run_finished, timeout=30_000):  # armed first: a fast run may end at once
        qtbot.keyClick(window.request_box, Qt.Key.Key_Return)


def _texts(window) -> str:
    return "\n".join(e.text for e in window.conversation.entries)


def test_a_question_and_a_setting_without_the_model(qtbot):
    window = make_window(qtbot)
    _run(qtbot, window, "How much battery do I have?")
    assert f"The battery is at {window.phone.world.sys.battery}%" in _texts(window)
    settings = window.phone.world.apps["com.android.settings"].state
    assert not settings.dnd
    _run(qtbot, window, "Turn on do not disturb")
    assert settings.dnd and "Do not disturb is now on." in _texts(window)
    assert window.conversation.entries[-1].kind is EntryKind.RESULT


def test_a_call_without_the_model_is_confirmed_with_its_read_back(qtbot):
    window = make_window(qtbot, lang="zh")
    world = window.phone.world
    contact = world.apps["com.android.dialer"].state.contacts[0]
    window.request_box.setText(f"给{contact.name.zh}打个电话吧")
    qtbot.keyClick(window.request_box, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: window._dialog is not None and window._dialog.isVisible(), timeout=30_000)
    summary = window._dialog.summary.text()
    # The name from the phone's contacts and the number digit by digit (assistant_core.toolgate).
    assert contact.name.zh in summary and digits_aloud(contact.phone).zh in summary
    assert world.apps["com.android.dialer"].state.calls == []
    qtbot.wait(GRACE_MS + 100)
    qtbot.keyClick(window._dialog, Qt.Key.Key_N)
    with qtbot.waitSignal(window.run_finished, timeout=30_000):
        pass
    assert world.apps["com.android.dialer"].state.calls == []


def test_what_needs_the_model_is_said_plainly(qtbot):
    window = make_window(qtbot)
    _run(qtbot, window, "Order me a pizza with extra cheese")
    last = window.conversation.entries[-1]
    assert last.kind is EntryKind.ERROR and "Without the model I can do everyday things" in last.text
