"""Spoken answers to a confirmation: a table of natural yes/no phrasings per language, a negation always
winning, unclear answers asked again in the question's own words, a spoken stop stopping the run, and a
transcript the recogniser marks uncertain read back before anything is done with it."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from app.main_window import AppServices
from app.strings import tr
from assistant_core.answers import NO_PHRASES, YES_PHRASES, Heard, classify_answer, parse_answer
from assistant_core.confirm import MSG as CONFIRM_MSG
from assistant_core.types import ConfirmAnswer
from tests.app_fixtures import make_window


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_at_least_forty_natural_phrasings_each_way_are_understood(lang):
    assert len(YES_PHRASES[lang]) >= 40 and len(NO_PHRASES[lang]) >= 40
    wrong = [p for p in YES_PHRASES[lang] if classify_answer(p) is not Heard.YES]
    wrong += [p for p in NO_PHRASES[lang] if classify_answer(p) is not Heard.NO]
    assert wrong == []
    # as people say them: capitals, punctuation, politeness
    for said in ("Yes, go ahead.", "Yes please!", "OK, do it.", "Sure — go ahead", "好的，确认。", "可以。", "行吧"):
        assert classify_answer(said) is Heard.YES, said
    for said in ("No.", "Nope!", "不要。", "算了吧", "先别。", "No, thanks.", "取消！"):
        assert classify_answer(said) is Heard.NO, said


@pytest.mark.parametrize("said", ["don't go ahead", "yes, but not now", "Yes. No, wait.", "okay no", "I'm not sure",
                                  "go ahead, no, don't", "好的，不要了", "可以，先别发", "确认，不对，取消", "是的不要"])
def test_a_negation_wins(said):
    assert classify_answer(said) is Heard.NO
    assert parse_answer(said) is ConfirmAnswer.NO


@pytest.mark.parametrize("said", ["maybe", "hmm", "what is it?", "who is Sophie?", "这是什么？", "嗯", "I think",
                                  "call Sophie Tang", "打开设置", ""])
def test_unclear_answers_are_asked_again(said):
    assert classify_answer(said) is Heard.UNCLEAR
    assert parse_answer(said) is None


@pytest.mark.parametrize("said", ["stop", "Stop!", "停止"])
def test_a_spoken_stop_is_a_stop(said):
    assert classify_answer(said) is Heard.STOP


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_retry_uses_the_same_words_as_the_question(lang):
    how = CONFIRM_MSG["how_to_answer"].get(lang)
    assert how in tr("confirm_not_understood", lang)
    assert tr("confirm_question", lang).endswith(how)


@dataclass
class Last:
    status: str


class Ears:
    """A transcriber stand-in: queued (text, status) pairs; `last` carries the status as speech.asr's does."""

    def __init__(self, heard):
        self.heard = list(heard)
        self.last = None

    def __call__(self, audio, lang):
        text, status = self.heard.pop(0)
        self.last = Last(status)
        return text


class Voice:
    def start(self):
        pass

    def stop(self):
        return "clip.wav"


def _speak(qtbot, window):
    window.start_listening()
    window.stop_listening()
    qtbot.waitUntil(lambda: window.state != "state_transcribing", timeout=5000)


def test_an_uncertain_transcript_is_read_back_before_anything_is_done(qtbot):
    ears = Ears([("Call Sophie Tang", "confirm"), ("no", "ok"), ("Call Sophie Tang", "confirm"), ("yes", "ok")])
    window = make_window(qtbot, services=AppServices(voice_input=Voice(), transcriber=ears))
    _speak(qtbot, window)
    assert not window.is_running()
    assert window.announcer.log[-1].text == tr("did_you_say", "en", text="Call Sophie Tang")
    _speak(qtbot, window)  # "no": nothing happens, it asks to hear it again
    assert not window.is_running() and window.announcer.log[-1].text == tr("say_it_again", "en")
    _speak(qtbot, window)
    assert not window.is_running()
    _speak(qtbot, window)  # "yes": now the request runs
    assert window.is_running()
    window.stop_run()
    with qtbot.waitSignal(window.run_finished, timeout=30_000):
        pass


def test_spoken_answers_in_the_dialog(qtbot):
    ears = Ears([("hmm", "ok"), ("yes, go ahead", "ok")])
    window = make_window(qtbot, services=AppServices(voice_input=Voice(), transcriber=ears))
    window.submit_request("Call Sophie Tang")
    qtbot.waitUntil(lambda: window._dialog is not None, timeout=30_000)
    _speak(qtbot, window)
    assert window._dialog is not None and window.announcer.log[-1].text == tr("confirm_not_understood", "en")
    with qtbot.waitSignal(window.run_finished, timeout=30_000):
        _speak(qtbot, window)
    assert window.phone.world.sensitive_events  # "yes, go ahead" was a yes: the call was placed


def test_a_spoken_stop_in_the_dialog_stops_the_run(qtbot):
    ears = Ears([("stop", "ok")])
    window = make_window(qtbot, services=AppServices(voice_input=Voice(), transcriber=ears))
    window.submit_request("Call Sophie Tang")
    qtbot.waitUntil(lambda: window._dialog is not None, timeout=30_000)
    with qtbot.waitSignal(window.run_finished, timeout=30_000):
        _speak(qtbot, window)
    assert window.last_result is None or str(window.last_result.outcome) == "stopped"
    assert window.conversation.entries[-1].text == tr("stopped_by_user", "en")
    assert not window.phone.world.sensitive_events


def test_a_spoken_stop_wins_even_when_the_recogniser_is_unsure(qtbot):
    ears = Ears([("Stop.", "confirm")])
    window = make_window(qtbot, services=AppServices(voice_input=Voice(), transcriber=ears))
    window.submit_request("Call Sophie Tang")
    with qtbot.waitSignal(window.run_finished, timeout=30_000):
        _speak(qtbot, window)
    assert window.conversation.entries[-1].text == tr("stopped_by_user", "en")
    assert not window.phone.world.sensitive_events
