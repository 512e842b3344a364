"""The Chinese voice wired into the window (issue 15): the caregiver's female/male choice in the settings
dialog reaches the speaker's router; the user's voice is warmed at start-up without holding the window;
the phone's app labels reach Whisper as hotwords; the setup wizard fetches the Chinese voice for a Chinese
user; settings problems found at start-up are said once."""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QTimer

from app.agent import AgentChoice, AgentKind
from app.main_window import AppServices, State
from app.settings_dialog import CaregiverSettingsDialog
from app.settings_flow import open_caregiver_settings
from app.setup_wizard import SetupActions, SetupWizard, _download_chinese_voice
from app.strings import tr
from app.voice import HOTWORDS, WavFileVoice, WhisperTranscription
from assistant_core.history import HistoryStore
from assistant_core.settings import MSG, SETTINGS_KEY, CaregiverSettings, PinGuard, SettingsStore
from speech.asr import Transcript, TranscriptStatus, hotword_list
from speech.audio import MemorySink, write_wav
from speech.kokoro import KokoroEngine
from speech.models import KOKORO_SIZE, ModelLocator
from speech.tts import Speaker, SpeechChunk, VoiceRouter, default_router
from tests.app_fixtures import make_window
from tests.speech_fixtures import locator
from tests.test_app_dialogs import _fill_pin_when_shown


def _when_settings_shown(window, act):
    def run():
        dialog = window.settings_dialog
        if dialog is None or not dialog.isVisible():
            QTimer.singleShot(20, run)
            return
        act(dialog)

    QTimer.singleShot(50, run)


# -- 1. the Chinese voice as a caregiver setting ---------------------------------------------------------


def test_voice_choice_is_named_and_offered_in_both_languages(qtbot):
    for lang in ("en", "zh"):
        dialog = CaregiverSettingsDialog(CaregiverSettings(), AgentChoice(AgentKind.DEMO), {}, lang=lang)
        qtbot.addWidget(dialog)
        assert dialog.voice.accessibleName() == tr("cs_voice", lang)
        assert [dialog.voice.itemData(i) for i in range(dialog.voice.count())] == ["female", "male"]
        assert [dialog.voice.itemText(i) for i in range(2)] == [tr("cs_voice_female", lang), tr("cs_voice_male", lang)]
        assert dialog.voice.currentData() == "female"  # the default: zf_xiaoxiao
    assert "男声" in tr("cs_voice_male", "zh") and "Male" in tr("cs_voice_male", "en")
    stored_male = CaregiverSettingsDialog(CaregiverSettings(voice="male"), AgentChoice(AgentKind.DEMO), {}, lang="en")
    qtbot.addWidget(stored_male)
    assert stored_male.voice.currentData() == "male"


def test_choosing_male_makes_the_next_chinese_sentence_come_from_the_male_voice(qtbot):
    history = HistoryStore.in_memory()
    speaker = Speaker(default_router(locator=locator()), MemorySink(22_050))
    try:
        window = make_window(qtbot, history=history, services=AppServices(speaker=speaker))
        window.pin_dialog = window.settings_dialog = None
        before = window.services.speaker.router.plan("正在打开设置。")
        assert isinstance(before[0].engine, KokoroEngine) and before[0].engine.voice == "zf_xiaoxiao"

        def choose_male(dialog):
            dialog.voice.setCurrentIndex(dialog.voice.findData("male"))
            dialog.ok.click()

        _fill_pin_when_shown(window, "4321")
        _when_settings_shown(window, choose_male)
        assert open_caregiver_settings(window) is True
        assert SettingsStore(history).load().settings.voice == "male"
        plans = window.services.speaker.router.plan("正在打开设置。")
        assert [(p.lang, type(p.engine).__name__) for p in plans] == [("zh", "KokoroEngine")]
        assert plans[0].engine.voice == "zm_yunxi"
        assert plans[0].engine.synthesize("好的。", "zh").voice == "kokoro:zm_yunxi"
        # and back: the female voice again from the next sentence
        window.apply_settings(CaregiverSettings(voice="female"))
        assert window.services.speaker.router.plan("好的。")[0].engine.voice == "zf_xiaoxiao"
        window.apply_settings(CaregiverSettings(voice="en_US-joe-medium"))  # not a Mandarin voice: the default
        assert window.services.speaker.router.plan("好的。")[0].engine.voice == "zf_xiaoxiao"
    finally:
        speaker.close()


# -- 2. the user's voice warmed at start-up, in the background --------------------------------------------


class SlowVoice:
    """A voice whose loading takes as long as the test says (`release`), recording who asked for which
    language on which thread."""

    def __init__(self):
        self.asked: list[tuple[str, str]] = []
        self.release = threading.Event()
        self.voices: list[str | None] = []

    def available(self, lang):
        self.asked.append((lang, threading.current_thread().name))
        self.release.wait(20)
        return True

    def set_voice(self, voice):
        self.voices.append(voice)

    def synthesize(self, sentence, lang, *, rate=1.0):
        return SpeechChunk(np.zeros(10, np.float32), 22_050, sentence, lang, "slow")


def test_start_up_warms_the_users_voice_in_the_background_without_holding_the_window(qtbot, tmp_path):
    from app.main import build_parser, build_window
    from app.phone import open_simulated

    zh, en = SlowVoice(), SlowVoice()
    speaker = Speaker(VoiceRouter(en, preferred={"zh": zh}), MemorySink(22_050))
    history = HistoryStore.in_memory()
    SettingsStore(history).save(CaregiverSettings(language="zh", voice="male"))
    try:
        services = AppServices(speaker=speaker, history=history, simulated_phone=lambda lg: open_simulated(lg))
        started = time.monotonic()
        window = build_window(build_parser().parse_args(["--demo", "--lang", "zh"]), services=services)
        built_s = time.monotonic() - started
        qtbot.addWidget(window)
        window.show()
        qtbot.waitExposed(window)
        # The Chinese voice is loading on its own thread while the window is already shown (its loading
        # is held until `release`): the window did not wait for it.
        qtbot.waitUntil(lambda: ("zh", "voice-warm-up") in zh.asked, timeout=5000)
        assert not zh.release.is_set() and window.isVisible()
        assert built_s < 20, built_s  # not the 20 s the held voice would have cost
        assert not any(thread == "voice-warm-up" for _lang, thread in en.asked)  # only the user's language
        assert zh.voices[-1] == "male"  # the caregiver's choice was set before the warm-up
    finally:
        zh.release.set()
        en.release.set()
        speaker.close()


# -- 3. the phone's app labels reach Whisper as hotwords ---------------------------------------------------


class RecordingWhisper:
    """Stands in for speech.asr.FasterWhisperTranscriber at its `transcribe` call, recording what it got."""

    def __init__(self):
        self.calls: list[dict] = []

    def transcribe(self, samples, *, language=None, hotwords=()):
        self.calls.append({"language": language, "hotwords": tuple(hotwords)})
        # "nothing usable heard": the window asks again and stays idle (no run to wait for)
        return Transcript("", language or "zh", 1.0, 0.0, -2.0, 0.9, TranscriptStatus.REPEAT)


def test_the_phones_contacts_and_app_labels_reach_the_transcriber_as_hotwords(qtbot, tmp_path, monkeypatch):
    import harness.fastpath

    wav = write_wav(tmp_path / "heard.wav", np.zeros(16_000, np.float32), 16_000)
    whisper = RecordingWhisper()
    transcription = WhisperTranscription(whisper)
    window = make_window(qtbot, lang="zh", services=AppServices(voice_input=WavFileVoice(wav),
                                                                 transcriber=transcription))
    facts = harness.fastpath.read_facts(window.phone.device.inner)  # as the outcome checks read the phone
    contacts = [c.name for c in facts.contacts if c.name]
    labels = [label for label in facts.apps.values() if label]
    assert contacts and labels
    window.toggle_listening()
    window.toggle_listening()
    qtbot.waitUntil(lambda: bool(whisper.calls), timeout=10_000)
    call = whisper.calls[-1]
    assert call["language"] == "zh"
    assert call["hotwords"] == hotword_list(contacts, HOTWORDS["zh"], labels)
    assert call["hotwords"][0] == contacts[0] and set(HOTWORDS["zh"]) <= set(call["hotwords"])
    assert any(label in call["hotwords"] for label in labels if label not in HOTWORDS["zh"]), (labels, call)
    # read once per phone: a second push-to-talk uses the names already read
    reads = []
    monkeypatch.setattr(harness.fastpath, "read_facts", lambda device: reads.append(device) or facts)
    qtbot.waitUntil(lambda: window.state == State.IDLE, timeout=10_000)
    window.toggle_listening()
    window.toggle_listening()
    qtbot.waitUntil(lambda: len(whisper.calls) == 2, timeout=10_000)
    assert whisper.calls[-1]["hotwords"] == call["hotwords"] and reads == []


def test_a_busy_phone_does_not_hold_up_what_was_heard(qtbot, tmp_path):
    wav = write_wav(tmp_path / "heard.wav", np.zeros(16_000, np.float32), 16_000)
    whisper = RecordingWhisper()
    window = make_window(qtbot, lang="zh", services=AppServices(voice_input=WavFileVoice(wav),
                                                                 transcriber=WhisperTranscription(whisper)))
    held, release = threading.Event(), threading.Event()

    def busy():  # e.g. a long step of a run holding the phone
        with window.phone.device.lock:
            held.set()
            release.wait(30)

    threading.Thread(target=busy, daemon=True).start()
    held.wait(5)
    try:
        window.toggle_listening()
        window.toggle_listening()
        qtbot.waitUntil(lambda: bool(whisper.calls), timeout=5_000)  # not the 30 s the phone is held
        assert whisper.calls[-1]["hotwords"] == HOTWORDS["zh"]  # the fixed words only, this time
    finally:
        release.set()
    qtbot.waitUntil(lambda: window.state == State.IDLE, timeout=10_000)
    window.toggle_listening()
    window.toggle_listening()
    qtbot.waitUntil(lambda: len(whisper.calls) == 2, timeout=10_000)
    assert len(whisper.calls[-1]["hotwords"]) > len(HOTWORDS["zh"])  # the phone's names, once it was free


def test_contact_names_come_first_and_the_list_stays_short():
    transcription = WhisperTranscription(RecordingWhisper())
    transcription.set_phone_names(contacts=["王小明", "Nina Song"], apps=[f"App number {i}" for i in range(40)])
    words = transcription.hotwords_for("zh")
    assert words[:2] == ("王小明", "Nina Song") and words[2:2 + len(HOTWORDS["zh"])] == HOTWORDS["zh"]
    assert sum(len(w) + 1 for w in words) <= 120 and "App number 0" in words and "App number 39" not in words


# -- 4. the setup wizard fetches the Chinese voice for a Chinese user --------------------------------------


def _wizard(qtbot, lang, chinese_voice, downloads):
    said: list[str] = []

    def download(progress):
        downloads.append(lang)
        progress(1.0)
        return "models"

    actions = SetupActions(check_phone=lambda: "", install_ime=lambda apk: "", download=download,
                           chinese_voice=chinese_voice)
    wizard = SetupWizard(lang=lang, announce=said.append, actions=actions)
    qtbot.addWidget(wizard)
    return wizard, said


def test_a_chinese_wizard_downloads_the_chinese_voice_with_progress(qtbot):
    got, fractions, downloads = [], [], []

    def chinese_voice(progress):
        def seen(f):
            fractions.append(f)
            progress(f)

        got.append(_download_chinese_voice(seen, locator=ModelLocator(cache_dir=locator().cache_dir)))
        return got[-1]

    wizard, said = _wizard(qtbot, "zh", chinese_voice, downloads)
    wizard.models_page.run_action()
    qtbot.waitUntil(lambda: bool(wizard.models_page.result.text()), timeout=120_000)
    assert wizard.models_page.result.text() == tr("wiz_done", "zh"), wizard.models_page.result.text()
    assert wizard.models_page.bar.value() == 100 and "100%" in said
    model, *voices = got[0].splitlines()
    assert Path(model).stat().st_size == KOKORO_SIZE
    assert sorted(Path(v).stem for v in voices) == ["zf_xiaoxiao", "zm_yunxi"]
    assert fractions[0] == 0.0 and fractions[-1] == 1.0 and downloads == ["zh"]  # then the other models
    assert "中文声音" in tr("wiz_models_steps", "zh")


def test_an_english_wizard_does_not_fetch_the_chinese_voice(qtbot):
    asked, downloads = [], []
    wizard, _said = _wizard(qtbot, "en", lambda progress: asked.append(1) or "voice", downloads)
    wizard.models_page.run_action()
    qtbot.waitUntil(lambda: bool(wizard.models_page.result.text()), timeout=10_000)
    assert wizard.models_page.result.text() == tr("wiz_done", "en") and asked == [] and downloads == ["en"]


def test_a_failed_chinese_voice_download_is_said_in_plain_words(qtbot, tmp_path, monkeypatch):
    import huggingface_hub.constants as hub_constants

    from harness.adbserver import free_port

    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", False)
    nowhere = ModelLocator(cache_dir=tmp_path, use_wheels=False, allow_download=True,
                           endpoint=f"http://127.0.0.1:{free_port()}")  # nothing answers there
    downloads: list[str] = []
    wizard, said = _wizard(qtbot, "zh", lambda p: _download_chinese_voice(p, locator=nowhere), downloads)
    wizard.models_page.run_action()
    qtbot.waitUntil(lambda: bool(wizard.models_page.result.text()), timeout=60_000)
    expected = tr("wiz_failed", "zh", detail=tr("wiz_zh_voice_failed", "zh"))
    assert wizard.models_page.result.text() == expected and expected in said
    assert "中文声音没有下载成功" in expected and not re.search(r"Error|errno|http|/", expected)
    assert downloads == []  # the rest waits for the next press of Download
    assert "could not be downloaded" in tr("wiz_zh_voice_failed", "en")


# -- 5. settings problems found at start-up are said once --------------------------------------------------


def _start(qtbot, history, lang):
    from app.main import build_parser, build_window
    from app.phone import open_simulated

    services = AppServices(history=history, simulated_phone=lambda lg: open_simulated(lg))
    window = build_window(build_parser().parse_args(["--demo", "--lang", lang, "--no-speech"]), services=services)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    return window


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("damage", ["bad_value", "outside_the_app"])
def test_settings_problems_are_said_once_at_start_up(qtbot, lang, damage):
    history = HistoryStore.in_memory()
    SettingsStore(history).save(CaregiverSettings(allowed_apps=frozenset({"com.android.settings"}), language=lang))
    PinGuard(history).set_pin("2468", n=2**10)  # with a PIN, the app's saves are sealed
    assert not SettingsStore(history).load().problems
    record = json.loads(history.get_setting(SETTINGS_KEY))
    if damage == "bad_value":
        record["step_budget"] = "lots"  # not a number: a safe value is used instead
    else:
        record["step_budget"] = 400  # valid, but written past the app (the seal no longer matches)
    history.put_setting(SETTINGS_KEY, json.dumps(record))
    problem = SettingsStore(history).load().problems[-1].get(lang)
    window = _start(qtbot, history, lang)
    qtbot.waitUntil(lambda: any(problem in a.text for a in window.announcer.log), timeout=5000)
    said = [a.text for a in window.announcer.log if problem in a.text]
    assert said == [problem] and window.announcer.log[-1].text == problem  # once, and last
    assert ("caregiver" in problem) if lang == "en" else ("照护人" in problem)
    window.announce_startup()  # the start-up lines again (e.g. after the reader question): not the problem
    assert [a.text for a in window.announcer.log if problem in a.text] == [problem]


def test_a_fresh_start_says_no_settings_problem(qtbot):
    window = _start(qtbot, HistoryStore.in_memory(), "en")
    qtbot.waitUntil(lambda: any(tr("demo_note", "en") in a.text for a in window.announcer.log), timeout=5000)
    assert not any(MSG["missing"].en in a.text for a in window.announcer.log)
