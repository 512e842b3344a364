"""A typed request runs the real loop on the simulated phone, stops at the confirmation dialog, is
answered by key, and the result is announced; the window keeps ticking meanwhile."""

from __future__ import annotations

from PySide6.QtCore import Qt

from app.announce import Cue
from app.confirm_dialog import GRACE_MS
from app.conversation import EntryKind
from app.strings import tr
from tests.app_fixtures import Ticker, make_window


def _calls(window):
    return [e for e in window.phone.world.sensitive_events if "call" in str(getattr(e, "kind", e)).lower()]


def test_typed_request_confirmed_by_y_key(qtbot):
    window = make_window(qtbot)
    ticker = Ticker().start()
    window.request_box.setText("Call Sophie Tang")
    qtbot.keyClick(window.request_box, Qt.Key.Key_Return)
    assert window.is_running()
    qtbot.waitUntil(lambda: window._dialog is not None and window._dialog.isVisible(), timeout=30_000)
    dialog = window._dialog
    ticks_at_dialog = ticker.count
    from assistant_core.events import ConfirmationRequested

    asked = [e for e in window.events_seen if isinstance(e, ConfirmationRequested)]
    assert asked and asked[-1].question.en.startswith(dialog.summary.text())  # exactly what the loop asks
    assert "call" in dialog.summary.text().lower()
    assert any(a.cue is Cue.CONFIRM for a in window.announcer.log)
    assert _calls(window) == []  # nothing happened before the yes
    qtbot.wait(GRACE_MS + 100)  # keys in the grace period after the dialog opens are dropped
    qtbot.keyClick(dialog, Qt.Key.Key_Y)
    with qtbot.waitSignal(window.run_finished, timeout=30_000):
        pass
    ticker.stop()
    assert ticks_at_dialog > 5 and ticker.count > ticks_at_dialog
    assert _calls(window), "the call was confirmed, so it must have happened"
    kinds = [e.kind for e in window.conversation.entries]
    assert EntryKind.QUESTION in kinds and EntryKind.ANSWER in kinds and kinds[-1] is EntryKind.RESULT
    assert window.announcer.log[-1].cue is Cue.SUCCESS
    assert window.announcer.log[-1].text == window.conversation.entries[-1].text


def test_escape_in_the_dialog_stops_the_run_and_nothing_happens(qtbot):
    window = make_window(qtbot)
    window.submit_request("Call Sophie Tang")
    qtbot.waitUntil(lambda: window._dialog is not None and window._dialog.isVisible(), timeout=30_000)
    with qtbot.waitSignal(window.run_finished, timeout=30_000):
        qtbot.keyClick(window._dialog, Qt.Key.Key_Escape)  # at once: stop keys are never dropped
    assert _calls(window) == []
    assert window._dialog is None
    assert window.conversation.entries[-1].text == tr("stopped_by_user", "en")
    assert window.announcer.log[-1].text == tr("stopped_by_user", "en")


def test_stop_key_ends_a_waiting_run_as_no(qtbot):
    window = make_window(qtbot)
    window.submit_request("Call Sophie Tang")
    qtbot.waitUntil(lambda: window._dialog is not None, timeout=30_000)
    window.stop_run()
    with qtbot.waitSignal(window.run_finished, timeout=30_000):
        pass
    assert _calls(window) == []
    assert not window.is_running() or window._run is not None


def test_unknown_demo_request_is_explained(qtbot):
    window = make_window(qtbot)
    window.submit_request("order me a pizza with extra cheese")
    with qtbot.waitSignal(window.run_finished, timeout=30_000):
        pass
    last = window.conversation.entries[-1]
    assert last.kind is EntryKind.ERROR
    assert "scripted demonstration" in last.text


def test_spoken_stop_ends_the_run(qtbot):
    """'stop' (the session's meta-command parser) is a command, not a request for the model."""
    window = make_window(qtbot)
    window.submit_request("Call Sophie Tang")
    qtbot.waitUntil(lambda: window._dialog is not None, timeout=30_000)
    from phonebuddy.assistant import Heard, Route, TurnState, route

    assert window.assistant.hear(Heard("stop please")).route is Route.COMMAND
    with qtbot.waitSignal(window.run_finished, timeout=30_000):
        pass
    assert _calls(window) == []
    assert route(Heard("stop the alarm at seven"), TurnState.IDLE).route is Route.REQUEST  # a sentence is a request


def _reply(tool: str, **arguments) -> str:
    import json

    return f"<think>{tool}</think><tool_call>{json.dumps({'name': tool, 'arguments': arguments})}</tool_call>"


def test_a_question_from_the_assistant_is_answered_in_the_request_box(qtbot):
    """call_user: the loop pauses, the window shows and says the question, the next typed text answers it,
    and the run resumes with the answer (the real loop and parser, a replayed policy)."""
    from app.main_window import AppServices
    from app.runner import start_episode
    from assistant_core.policies import ScriptedPolicy

    policy = ScriptedPolicy.from_replies([_reply("call_user", text="Which Nina do you mean?"),
                                          _reply("finish", text="All done.")])
    window = make_window(qtbot, services=AppServices(episode_starter=lambda req: start_episode(req, policy=policy)))
    window.submit_request("Text Nina")
    # The loop marks the question pending on the worker thread; the window shows it when the queued
    # signal arrives on the GUI thread, so wait for both.
    def asked() -> bool:
        return window.user_bridge.pending and any(e.kind is EntryKind.QUESTION for e in window.conversation.entries)

    qtbot.waitUntil(asked, timeout=30_000)
    question = [e for e in window.conversation.entries if e.kind is EntryKind.QUESTION]
    assert question and "Which Nina" in question[-1].text, [(e.kind, e.text) for e in window.conversation.entries]
    assert window.announcer.log[-1].cue is Cue.CONFIRM
    window.request_box.setText("Nina Song")
    qtbot.keyClick(window.request_box, Qt.Key.Key_Return)
    with qtbot.waitSignal(window.run_finished, timeout=30_000):
        pass
    # The answer reached the model as a typed exchange; the goal it got is still the request as said.
    assert policy.seen_goals[1:] and set(policy.seen_goals) == {"Text Nina"}
    assert [e.answer for e in policy.seen_exchanges[-1]] == ["Nina Song"]
    assert window.conversation.entries[-1].kind is EntryKind.RESULT


def test_silence_at_the_confirmation_is_a_no_after_the_reminders(qtbot):
    """No answer means no: the loop reminds (spoken), then gives up; the dialog closes by itself."""
    from assistant_core.settings import CaregiverSettings

    window = make_window(qtbot)
    apps = frozenset(window.phone.device.installed_apps())
    window.apply_settings(CaregiverSettings(allowed_apps=apps, confirm_window_s=0.4, confirm_reminders=1))
    window.submit_request("Call Sophie Tang")
    with qtbot.waitSignal(window.run_finished, timeout=60_000):
        pass
    assert _calls(window) == []
    assert window._dialog is None
    texts = [e.text for e in window.conversation.entries]
    assert any("still waiting" in t for t in texts)  # the reminder
    assert any(tr_text in t for t in texts for tr_text in ("No answer, so I will not do it.",))
