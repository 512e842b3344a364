"""Small things a blind user met on the walk-through (issue 29, item 10), each checked as the user meets it:
the demonstration's "I can only do" list starts with everyday examples and never with the injected-page
task; "Text Sophie Tang that I am late" finds the same Sophie Tang as "Call Sophie Tang"; F1 says one
shortcut per line, each its own utterance; F6 into the conversation lands on the newest entry; the talk
button's accessible name says "Listening" while it listens. English and Chinese."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from app.conversation import EntryKind
from app.main_window import AppServices, State
from app.runner import EVERYDAY_DEMO_TASKS
from app.shortcuts import help_lines
from app.strings import tr
from app.voice import WavFileVoice
from tests.app_fixtures import make_window
from tests.test_app_answers import RecordingSpeaker


def _active(qtbot, window) -> None:
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=5000)  # the window's shortcuts work in the active window


def _submit(qtbot, window, text: str) -> None:
    qtbot.waitUntil(lambda: not window.is_running(), timeout=10_000)
    with qtbot.waitSignal(window.run_finished, timeout=60_000):
        assert window.submit_request(text)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_what_needs_the_model_starts_with_everyday_examples(qtbot, lang):
    from harness.phoneworld.tasks import registry

    window = make_window(qtbot, lang=lang)
    _submit(qtbot, window, "Order me a pizza with extra cheese" if lang == "en" else "帮我订一个披萨")
    said = window.conversation.entries[-1].text
    first = registry.get(EVERYDAY_DEMO_TASKS[0])
    call = first.instruction(first.params(first.rng_for(0))).get(lang).rstrip(".。")
    assert call in said and said.index(call) < 80, said  # an everyday example comes first
    for task in registry.TASKS:
        if task.is_safety:
            instruction = task.instruction(task.params(task.rng_for(0))).get(lang).rstrip(".。")
            assert instruction not in said, (task.id, said)
    assert "gift" not in said.lower() and "礼品卡" not in said


@pytest.mark.parametrize(("lang", "call", "text"), [
    ("en", "Call Sophie Tang", "Text Sophie Tang that I am late"),
    ("zh", "给唐苏菲打电话", "给唐苏菲发短信说我晚点到"),
])
def test_a_text_finds_the_contact_a_call_finds(qtbot, lang, call, text):
    window = make_window(qtbot, lang=lang)
    numbers = []
    for request in (text, call):
        window.request_box.setText(request)
        qtbot.keyClick(window.request_box, Qt.Key.Key_Return)
        qtbot.waitUntil(lambda: window._dialog is not None and window._dialog.isVisible(), timeout=60_000)
        summary = window._dialog.summary.text()
        assert ("Sophie Tang" if lang == "en" else "唐苏菲") in summary, summary
        numbers.append([c.phone for c in window.phone.world.phone.contacts if c.name.en == "Sophie Tang"][0])
        qtbot.wait(800)
        with qtbot.waitSignal(window.run_finished, timeout=60_000):
            qtbot.keyClick(window._dialog, Qt.Key.Key_N)
    assert numbers[0] == numbers[1]  # the same person, with the same number, for the text and the call
    assert window.phone.world.apps["com.android.dialer"].state.calls == []


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_f1_says_one_shortcut_per_line(qtbot, lang):
    speaker = RecordingSpeaker()
    window = make_window(qtbot, lang=lang, services=AppServices(speaker=speaker))
    speaker.calls.clear()
    _active(qtbot, window)
    window.request_box.setFocus()
    qtbot.keyClick(window.request_box, Qt.Key.Key_F1)
    qtbot.waitUntil(lambda: window._help_shown is not None, timeout=5000)
    lines = help_lines(lang)
    said = [t for k, t in speaker.calls if k == "say"][-len(lines):]  # (after the start-up lines)
    assert said[0].startswith(lines[0]), said  # one utterance per shortcut
    for line, spoken in zip(lines, said, strict=True):
        assert spoken.startswith(line) and spoken[-1] in ".。", spoken  # each its own sentence: a pause after it
    first_say = max(i for i, c in enumerate(speaker.calls) if c == ("say", said[0]))
    assert ("stop", "") not in speaker.calls[first_say:]  # no line cuts off the one before
    speaker.calls.clear()
    window._help_shown.close()
    window.repeat_last()  # F3 repeats the whole list, line by line
    assert [t for k, t in speaker.calls if k == "say"] == said


def test_f6_into_the_conversation_lands_on_the_newest_entry(qtbot):
    window = make_window(qtbot)
    for request in ("How much battery do I have?", "What time is it?"):
        _submit(qtbot, window, request)
    window.talk_button.setFocus()
    for _ in range(len(window.areas)):
        qtbot.keyClick(window.focusWidget(), Qt.Key.Key_F6)
        if window.focusWidget() is window.conversation:
            break
    assert window.focusWidget() is window.conversation
    newest = window.conversation.count() - 1
    assert window.conversation.currentRow() == newest
    assert window.conversation.currentItem().text() == window.conversation.entries[-1].text
    assert window.conversation.entries[-1].kind is EntryKind.RESULT


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_talk_buttons_name_says_listening_while_it_listens(qtbot, tmp_path, lang):
    window = make_window(qtbot, lang=lang, services=AppServices(voice_input=WavFileVoice(tmp_path / "a.wav"),
                                                               transcriber=lambda audio, lg: ""))
    assert window.talk_button.accessibleName() == tr("talk", lang)
    _active(qtbot, window)
    window.request_box.setFocus()
    qtbot.keyClick(window.request_box, Qt.Key.Key_F2)
    assert window.state == State.LISTENING
    assert window.talk_button.accessibleName() == tr("talk_listening", lang)
    qtbot.keyClick(window.request_box, Qt.Key.Key_F2)
    qtbot.waitUntil(lambda: window.state != State.LISTENING, timeout=5000)
    assert window.talk_button.accessibleName() == tr("talk", lang)
