"""Voice end to end in the window: a spoken request in a WAV file (espeak-ng) is transcribed by the real
faster-whisper model, run by the real loop with the PhoneWorld-lite oracle as a scripted policy, stops at
the confirmation dialog, is answered by key, and the result is announced by the real piper voice (into a
MemorySink: there is no sound card here) and to the accessibility API. The GUI thread keeps ticking."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from PySide6.QtCore import Qt

from app.announce import Cue
from app.confirm_dialog import GRACE_MS
from app.conversation import EntryKind
from app.main_window import AppServices
from app.voice import EarconPlayer, WavFileVoice, WhisperTranscription, make_speaker
from assistant_core.safety import Category
from assistant_core.settings import CaregiverSettings
from tests.app_fixtures import Ticker, make_window


@pytest.fixture(scope="module")
def request_wav(tmp_path_factory):
    assert shutil.which("espeak-ng"), "espeak-ng is installed by scripts/dev.sh"
    path = tmp_path_factory.mktemp("voice") / "wifi.wav"
    subprocess.run(["espeak-ng", "-s", "140", "-w", str(path), "open the settings and turn on wifi"], check=True)
    return path


@pytest.fixture(scope="module")
def transcriber():
    from speech.asr import AsrSettings, FasterWhisperTranscriber

    return WhisperTranscription(FasterWhisperTranscriber(AsrSettings(model="tiny.en", language="en", cpu_threads=2)))


@pytest.mark.slow
def test_spoken_request_runs_to_a_confirmed_result(qtbot, request_wav, transcriber):
    from speech.audio import MemorySink

    sink = MemorySink(22_050)
    speaker = make_speaker(sink)
    earcons = EarconPlayer(MemorySink(22_050))
    voice = WavFileVoice(request_wav)
    window = make_window(qtbot, services=AppServices(speaker=speaker, earcons=earcons, voice_input=voice,
                                                     transcriber=transcriber))
    apps = frozenset(window.phone.device.installed_apps())
    # The caregiver wants settings changes confirmed too, so turning on Wi-Fi must stop and ask.
    window.apply_settings(CaregiverSettings(allowed_apps=apps, always_confirm=frozenset({Category.SETTINGS_CHANGE})))
    ticker = Ticker().start()

    window.talk_button.setFocus()
    qtbot.keyPress(window.talk_button, Qt.Key.Key_Space)
    assert window.state == "state_listening" and voice.starts == 1
    qtbot.keyRelease(window.talk_button, Qt.Key.Key_Space)
    qtbot.waitUntil(window.is_running, timeout=60_000)
    request = [e.text for e in window.conversation.entries if e.kind is EntryKind.REQUEST]
    assert request and "wi-fi" in request[-1].lower(), request

    qtbot.waitUntil(lambda: window._dialog is not None and window._dialog.isVisible(), timeout=60_000)
    world = window.phone.world
    assert world.settings_get("global", "wifi_on") in (None, "0")
    ticks_before_answer = ticker.count
    qtbot.wait(GRACE_MS + 100)  # keys in the dialog's first moments are dropped
    qtbot.keyClick(window._dialog, Qt.Key.Key_Y)
    with qtbot.waitSignal(window.run_finished, timeout=60_000):
        pass
    ticker.stop()
    assert world.settings_get("global", "wifi_on") == "1"
    assert ticks_before_answer > 20, "the GUI thread must keep running while the worker works"
    last = window.announcer.log[-1]
    assert last.cue is Cue.SUCCESS and last.spoken
    assert window.live_region.text() == last.text
    # The result was checked on the phone itself, not taken from the model's word.
    spoken = " ".join(entry.text for entry in window.announcer.log)
    assert "I checked on the phone" in spoken, spoken
    assert speaker.wait_idle(timeout=60)
    assert sink.audio.size > 22_050 // 2, "the result was really spoken"
    assert {"listening", "confirm", "success"} <= set(earcons.played)
    speaker.close()


def test_spoken_yes_answers_the_dialog(qtbot, tmp_path, transcriber):
    """Answering the confirmation by voice: 'yes' (espeak-ng) through Whisper and the session's parser."""
    yes = tmp_path / "yes.wav"
    subprocess.run(["espeak-ng", "-s", "130", "-w", str(yes), "yes, do it"], check=True)
    voice = WavFileVoice(yes)
    window = make_window(qtbot, services=AppServices(voice_input=voice, transcriber=transcriber))
    window.submit_request("Call Sophie Tang")
    qtbot.waitUntil(lambda: window._dialog is not None and window._dialog.isVisible(), timeout=30_000)
    qtbot.wait(GRACE_MS + 100)
    qtbot.keyClick(window._dialog, Qt.Key.Key_F2)  # start listening
    assert window.state == "state_listening"
    qtbot.keyClick(window._dialog, Qt.Key.Key_F2)  # stop: transcribe
    qtbot.waitUntil(lambda: window.state != "state_transcribing", timeout=60_000)
    if str(transcriber.last.status) == "confirm":  # Whisper was unsure: it is read back, and "yes" confirms it
        assert window.announcer.log[-1].text.startswith("I'm not sure I heard you right")
        assert window._dialog is not None and window._dialog.answer is None
        qtbot.keyClick(window._dialog, Qt.Key.Key_F2)
        qtbot.keyClick(window._dialog, Qt.Key.Key_F2)
    with qtbot.waitSignal(window.run_finished, timeout=60_000):
        pass
    assert [e for e in window.phone.world.sensitive_events if "call" in str(getattr(e, "kind", e)).lower()]


@pytest.mark.slow
def test_chinese_spoken_request_in_the_chinese_window(qtbot, tmp_path):
    """打开飞行模式, spoken (espeak-ng reads Chinese only from pinyin), heard by Whisper base in Chinese, run
    in the Chinese window; the dialog and the result are in Chinese."""
    from speech.asr import AsrSettings, FasterWhisperTranscriber

    wav = tmp_path / "zh.wav"
    subprocess.run(["espeak-ng", "-v", "cmn-latn-pinyin", "-s", "130", "-w", str(wav), "da3 kai1 fei1 xing2 mo2 shi4"],
                   check=True)
    transcriber = WhisperTranscription(FasterWhisperTranscriber(AsrSettings(model="base", language="zh", cpu_threads=2)))
    window = make_window(qtbot, lang="zh", services=AppServices(voice_input=WavFileVoice(wav), transcriber=transcriber))
    apps = frozenset(window.phone.device.installed_apps())
    window.apply_settings(CaregiverSettings(allowed_apps=apps, language="zh",
                                            always_confirm=frozenset({Category.SETTINGS_CHANGE})))
    window.toggle_listening()
    window.toggle_listening()
    qtbot.waitUntil(lambda: window._dialog is not None and window._dialog.isVisible(), timeout=90_000)
    assert "飞行模式" in [e.text for e in window.conversation.entries if e.kind is EntryKind.REQUEST][-1]
    assert window._dialog.yes_button.text() == "是，执行（Y）"
    assert any("\u4e00" <= ch <= "\u9fff" for ch in window._dialog.summary.text())
    qtbot.wait(GRACE_MS + 100)
    qtbot.keyClick(window._dialog, Qt.Key.Key_Y)
    with qtbot.waitSignal(window.run_finished, timeout=60_000):
        pass
    assert window.phone.world.settings_get("global", "airplane_mode_on") == "1"
    assert window.announcer.log[-1].cue is Cue.SUCCESS and window.announcer.log[-1].text.startswith("完成")
