"""The first-run experience: the spoken welcome and every page through the window's announce() seam,
the language choice by keyboard and by voice (the window's own push-to-talk), switching the wizard and
the window at once and saved in the settings, the server address on the models page (a malformed one
refused in both languages, a good one saved and running the remote policy), and, with no phone
attached, the offer of the simulated phone."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWizard

from app.agent import AgentChoice, AgentKind, check_server_address, make_policy
from app.first_run import FirstRun, open_wizard
from app.main_window import AppServices
from app.settings_flow import SETTINGS_KEY, load_agent, make_setup_wizard
from app.setup_wizard import SetupActions, WizardCommand, parse_wizard_command
from app.strings import tr
from app.voice import WavFileVoice
from assistant_core.history import HistoryStore
from assistant_core.settings import CaregiverSettings, SettingsStore
from tests.app_fixtures import make_window, process

GOOD = "http://192.168.1.20:8000/v1"
NO_ACTIONS = SetupActions(check_phone=lambda: "Phone X", install_ime=lambda apk: "ADBKeyboard",
                          download=lambda progress: "done")


def _wizard(qtbot, window):
    wizard = make_setup_wizard(window, actions=NO_ACTIONS)
    qtbot.addWidget(wizard)
    wizard.show()
    wizard.activateWindow()  # as app.first_run.open_wizard does: the keyboard is in the wizard
    qtbot.waitUntil(wizard.isActiveWindow, timeout=5000)
    return wizard


def _spoken(window) -> list[str]:
    return [a.text for a in window.announcer.log]


def _next_text(wizard) -> str:
    return wizard.button(QWizard.WizardButton.NextButton).text()


# -- the spoken welcome and every page ------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_welcome_and_every_page_go_through_the_announce_seam(qtbot, tmp_path, lang):
    window = make_window(qtbot, lang=lang)
    first_run = FirstRun(tmp_path)
    wizard = open_wizard(window, first_run)  # what the bundle does on its first start
    qtbot.addWidget(wizard)
    qtbot.waitExposed(wizard)
    welcome = window.announcer.log[-1]
    assert welcome.text.startswith(tr("wiz_welcome_title", lang))
    assert tr("wiz_welcome_steps", lang) in welcome.text
    assert window.live_region.text() == welcome.text  # the Qt accessibility announcement carries it too
    assert wizard.focusWidget() is wizard.language_page.radio(lang)  # the choice has the keyboard at once

    for page in wizard.pages[1:]:
        before = len(window.announcer.log)
        wizard.next()
        assert wizard.currentPage() is page
        assert len(window.announcer.log) == before + 1  # said once, not twice
        said = window.announcer.log[-1].text
        assert said == page.spoken()
        assert said.startswith(tr(page.title_key, lang)) and tr(page.steps_key, lang) in said

    wizard.back()  # going back is a page change too
    assert window.announcer.log[-1].text == wizard.pages[3].spoken()
    wizard.pages[3].speak.click()  # "read this page aloud"
    assert window.announcer.log[-1].text == wizard.pages[3].spoken()
    assert first_run.pending()
    wizard.reject()
    assert not first_run.pending()  # closing the wizard records the first run


# -- the language choice -----------------------------------------------------------------------------------


def test_language_by_keyboard_switches_wizard_and_window_and_is_saved(qtbot):
    history = HistoryStore.in_memory()
    SettingsStore(history).save(CaregiverSettings(allowed_apps=frozenset({"com.android.settings"}), step_budget=12),
                                app_labels={"com.android.settings": "Settings"})
    window = make_window(qtbot, lang="en", history=history)
    wizard = _wizard(qtbot, window)
    page = wizard.language_page
    assert _next_text(wizard) == "Next" and page.english.isChecked()

    qtbot.keyClick(page.english, Qt.Key.Key_C)  # the shortcut letter for 中文
    assert page.chinese.isChecked()
    assert wizard.lang == "zh" and window.lang == "zh"
    assert _next_text(wizard) == "下一步" and wizard.windowTitle() == "首次设置"
    assert page.title() == "欢迎使用手机助手" and page.steps.text() == tr("wiz_welcome_steps", "zh")
    assert wizard.voice_button.accessibleName() == "说出指令（F2）"
    assert window.talk_button.text() == tr("talk", "zh") and window.settings_button.text() == tr("settings", "zh")
    said = window.announcer.log[-1].text
    assert said.startswith("语言：中文") and "欢迎使用手机助手" in said  # one announcement, in the new language
    saved = SettingsStore(history).load().settings
    assert saved.language == "zh"
    assert saved.step_budget == 12 and saved.allowed_apps == frozenset({"com.android.settings"})  # the rest kept
    assert history.allowed_apps() == {"com.android.settings": "Settings"}

    page.chinese.setFocus()
    qtbot.keyClick(page.chinese, Qt.Key.Key_Up)  # arrow keys move within the choice, and choose
    assert page.english.isChecked() and wizard.lang == "en" and window.lang == "en"
    assert _next_text(wizard) == "Next" and window.talk_button.text() == tr("talk", "en")
    assert SettingsStore(history).load().settings.language == "en"
    assert window.announcer.log[-1].text.startswith("Language: English")

    qtbot.keyClick(page.english, Qt.Key.Key_Return)  # Enter goes on
    assert wizard.currentPage() is wizard.pages[1]
    qtbot.keyClick(wizard, Qt.Key.Key_C)  # the letters belong to the welcome page only
    assert wizard.lang == "en"


def test_language_choice_saves_a_first_settings_record(qtbot):
    history = HistoryStore.in_memory()
    window = make_window(qtbot, lang="en", history=history)
    assert history.get_setting(SETTINGS_KEY) is None
    wizard = _wizard(qtbot, window)
    qtbot.keyClick(wizard.language_page.english, Qt.Key.Key_Z)
    loaded = SettingsStore(history).load()
    assert not loaded.needs_setup and loaded.settings.language == "zh"
    assert loaded.settings.allowed_apps == frozenset()  # still deny-all: only the language was chosen


def test_f8_in_the_window_or_the_wizard_keeps_both_in_one_language(qtbot):
    window = make_window(qtbot, lang="en")
    wizard = _wizard(qtbot, window)
    window.toggle_language()  # F8 in the main window
    assert wizard.lang == "zh" and _next_text(wizard) == "下一步" and wizard.language_page.chinese.isChecked()
    qtbot.keyClick(wizard.language_page.chinese, Qt.Key.Key_F8)  # F8 in the wizard
    assert wizard.lang == "en" and window.lang == "en" and window.talk_button.text() == tr("talk", "en")


class _Transcriber:
    """Stands in for Whisper at the window's transcriber seam: says what it is told, records the call."""

    def __init__(self):
        self.replies: list[str] = []
        self.calls: list[tuple[object, str]] = []

    def __call__(self, audio, lang):
        self.calls.append((audio, lang))
        return self.replies.pop(0)


def _say(qtbot, wizard, window, transcriber, text):
    transcriber.replies.append(text)
    heard = len(wizard.heard)
    qtbot.keyClick(wizard, Qt.Key.Key_F2)  # starts the window's push-to-talk
    assert window.state == "state_listening"
    qtbot.keyClick(wizard, Qt.Key.Key_F2)  # stops it; the words go to the wizard
    qtbot.waitUntil(lambda: len(wizard.heard) > heard, timeout=10_000)
    assert window.state == "state_idle"


def test_language_and_moving_by_voice_through_the_window_push_to_talk(qtbot, tmp_path):
    history = HistoryStore.in_memory()
    wav = tmp_path / "said.wav"
    transcriber = _Transcriber()
    window = make_window(qtbot, lang="en", history=history,
                         services=AppServices(voice_input=WavFileVoice(wav), transcriber=transcriber))
    wizard = _wizard(qtbot, window)
    started = []
    window.request_started.connect(started.append)

    _say(qtbot, wizard, window, transcriber, "中文。")
    assert transcriber.calls[-1] == (wav, "auto")  # the language is not known yet: the transcriber detects it
    assert wizard.lang == "zh" and window.lang == "zh" and wizard.language_page.chinese.isChecked()
    assert SettingsStore(history).load().settings.language == "zh"
    assert "语言：中文" in _spoken(window)[-1]

    _say(qtbot, wizard, window, transcriber, "下一步")
    assert wizard.currentPage() is wizard.pages[1]
    assert _spoken(window)[-1] == wizard.pages[1].spoken()

    _say(qtbot, wizard, window, transcriber, "重复")
    assert transcriber.calls[-1] == (wav, "zh")  # past the welcome: the chosen language
    assert _spoken(window)[-1] == wizard.pages[1].spoken()

    _say(qtbot, wizard, window, transcriber, "what is the weather")
    assert _spoken(window)[-1] == tr("wiz_voice_unknown", "zh", text="what is the weather")
    assert wizard.currentPage() is wizard.pages[1]

    _say(qtbot, wizard, window, transcriber, "Go back.")
    assert wizard.currentPage() is wizard.language_page
    before = len(window.announcer.log)
    _say(qtbot, wizard, window, transcriber, "English")
    assert transcriber.calls[-1] == (wav, "auto")
    assert tr("state_transcribing", "zh") in _spoken(window)[before:]  # still said in the window's language
    assert wizard.lang == "en" and window.lang == "en"

    assert started == [] and not window.is_running()  # none of it became a request for the phone
    assert window.conversation.count() == 1  # only the simulated phone's demonstration note


def test_no_voice_input_is_said_in_the_wizard(qtbot):
    window = make_window(qtbot, lang="zh")
    wizard = _wizard(qtbot, window)
    qtbot.keyClick(wizard, Qt.Key.Key_F2)
    assert _spoken(window)[-1] == tr("wiz_no_voice", "zh")
    assert window.state == "state_idle"


@pytest.mark.parametrize(("said", "expected"), [
    ("Chinese.", WizardCommand.CHINESE), ("中文", WizardCommand.CHINESE), ("我要用普通话", WizardCommand.CHINESE),
    ("English please", WizardCommand.ENGLISH), ("英文。", WizardCommand.ENGLISH),
    ("Next.", WizardCommand.NEXT), ("下一步", WizardCommand.NEXT), ("go back", WizardCommand.BACK),
    ("上一步", WizardCommand.BACK), ("say that again", WizardCommand.REPEAT), ("再说一遍", WizardCommand.REPEAT),
    ("Download", WizardCommand.DOWNLOAD), ("检查", WizardCommand.CHECK), ("finish", WizardCommand.FINISH),
    ("turn on wifi", None), ("", None), ("backpack", None),
])
def test_wizard_voice_commands(said, expected):
    assert parse_wizard_command(said) == expected


def test_spoken_button_name_runs_the_page_action(qtbot, tmp_path):
    transcriber = _Transcriber()
    window = make_window(qtbot, services=AppServices(voice_input=WavFileVoice(tmp_path / "a.wav"),
                                                     transcriber=transcriber))
    wizard = _wizard(qtbot, window)
    wizard.next()
    wizard.next()  # the phone-connection page
    _say(qtbot, wizard, window, transcriber, "Download")  # not this page's button
    assert _spoken(window)[-1] == tr("wiz_voice_unknown", "en", text="Download")
    _say(qtbot, wizard, window, transcriber, "Check")
    qtbot.waitUntil(lambda: wizard.pages[2].result.text() == tr("wiz_found", "en", phone="Phone X"), timeout=10_000)


# -- the server address ------------------------------------------------------------------------------------


def _to_models_page(wizard):
    while wizard.currentPage() is not wizard.models_page:
        wizard.next()
    return wizard.models_page


def test_bad_server_address_is_refused_in_both_languages_and_a_good_one_runs_the_remote_policy(qtbot):
    from assistant_core.policy.remote import RemotePolicy

    history = HistoryStore.in_memory()
    window = make_window(qtbot, lang="en", history=history)
    assert window.agent.kind is AgentKind.DEMO
    wizard = _wizard(qtbot, window)
    page = _to_models_page(wizard)
    assert page.server.accessibleName() == tr("wiz_server", "en")

    page.server.setText("192.168.1.20:8000")
    page.use_server.click()
    bad_en = tr("wiz_server_bad", "en", address="192.168.1.20:8000")
    assert page.result.text() == bad_en and _spoken(window)[-1] == bad_en
    assert "http://192.168.1.20:8000/v1" in bad_en  # it shows the right form
    assert window.agent.kind is AgentKind.DEMO and load_agent(history) is None
    wizard.button(QWizard.WizardButton.FinishButton).click()  # Finish does not slip past it
    assert wizard.isVisible() and wizard.result() == 0
    assert page.server.hasFocus()

    qtbot.keyClick(page.server, Qt.Key.Key_F8)  # the message follows the language
    bad_zh = tr("wiz_server_bad", "zh", address="192.168.1.20:8000")
    assert page.result.text() == bad_zh and "这不是有效的服务器地址" in bad_zh
    assert load_agent(history) is None

    page.server.setText(f"  {GOOD} ")
    page.use_server.click()
    assert page.result.text() == tr("wiz_server_saved", "zh", address=GOOD)
    assert _spoken(window)[-1] == tr("wiz_server_saved", "zh", address=GOOD)
    assert window.agent.kind is AgentKind.SERVER and window.agent.server_address == GOOD
    assert load_agent(history) == window.agent  # where the caregiver settings keep it
    assert GOOD in window.status_line.text()
    policy = make_policy(window.agent, lang="zh")
    assert isinstance(policy, RemotePolicy) and policy.base_url == GOOD


def test_finish_with_a_typed_address_saves_it(qtbot):
    history = HistoryStore.in_memory()
    window = make_window(qtbot, history=history)
    wizard = _wizard(qtbot, window)
    page = _to_models_page(wizard)
    page.server.setText("https://models.example.org/v1")
    wizard.button(QWizard.WizardButton.FinishButton).click()
    assert not wizard.isVisible() and wizard.result() == 1
    assert load_agent(history) == AgentChoice(AgentKind.SERVER, server_address="https://models.example.org/v1",
                                              profile=window.agent.profile)
    assert window.agent.kind is AgentKind.SERVER


def test_empty_server_field_means_no_server(qtbot):
    history = HistoryStore.in_memory()
    window = make_window(qtbot, history=history)
    wizard = _wizard(qtbot, window)
    page = _to_models_page(wizard)
    page.use_server.click()
    assert page.result.text() == tr("wiz_server_empty", "en")
    wizard.button(QWizard.WizardButton.FinishButton).click()  # nothing typed: finishing is fine
    assert wizard.result() == 1 and load_agent(history) is None and window.agent.kind is AgentKind.DEMO


@pytest.mark.parametrize("address", [
    "192.168.1.20:8000", "http://", "htp://192.168.1.20:8000/v1", "ftp://host/v1", "http://192.168.1.20:99999/v1",
    "http://host:port/v1", "http://my host/v1", "http://-host/v1", "", "   ",
])
def test_malformed_server_addresses(address):
    with pytest.raises(ValueError):
        check_server_address(address)


@pytest.mark.parametrize("address", [GOOD, "https://models.example.org/v1", "http://localhost:8000/v1",
                                     "http://[::1]:8000/v1"])
def test_well_formed_server_addresses(address):
    assert check_server_address(f" {address} ") == address


# -- no phone attached: the simulated phone is offered -----------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_phone_attached_offers_the_simulated_phone(qtbot, monkeypatch, lang):
    from app.main import build_parser, build_window
    from app.phone import open_simulated
    from harness.adbserver import free_port

    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(free_port()))  # no adb server there: no phone
    services = AppServices(history=HistoryStore.in_memory(), simulated_phone=lambda lg: open_simulated(lg))
    window = build_window(build_parser().parse_args(["--lang", lang, "--no-speech"]), services=services)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    assert window.phone is None
    assert window.offer_bar.isVisible()
    offer = window.offer_label.text()
    assert offer == tr("sim_phone_offer", lang)
    assert ("simulated phone" in offer) if lang == "en" else ("模拟手机" in offer)
    assert window.use_sim_button.text() == tr("use_sim", lang)
    assert window.use_sim_button.accessibleName() == tr("use_sim", lang)
    assert tr("no_phone", lang) in window.status_line.text()

    qtbot.mouseClick(window.use_sim_button, Qt.MouseButton.LeftButton)  # accept the offer
    label = "Simulated phone (PhoneWorld-lite)" if lang == "en" else "模拟手机（PhoneWorld-lite）"
    assert window.phone is not None and window.phone.is_simulated
    assert window.phone_label.text() == label and label in window.status_line.text()
    assert not window.offer_bar.isVisible()
    assert [a.text for a in list(window.announcer.log)[-2:]] == [label, tr("demo_note", lang)]  # and that it is a script
    qtbot.waitUntil(lambda: window.mirror.frames_shown > 0, timeout=20_000)  # its screen is on show
    process(50)
    window.shutdown()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_wizard_waits_for_the_voice_question_and_our_voice_stays_silent_meanwhile(qtbot, tmp_path, lang):
    """Issue 29: with a screen reader running, "Which voice?" is asked first; the wizard opens (and its
    welcome is read) only once it is answered, and until then the announcer leaves speech to the reader."""
    from app.agent import AgentChoice, AgentKind
    from app.first_run import FirstRun, start
    from app.main_window import AppServices, MainWindow
    from app.phone import open_simulated
    from app.screen_reader import SpeechChannel
    from assistant_core.history import HistoryStore
    from tests.app_fixtures import process

    services = AppServices(history=HistoryStore.in_memory(), simulated_phone=lambda lg: open_simulated(lg),
                           extra={"detect_screen_reader": lambda: "Orca"})
    window = MainWindow(lang=lang, services=services, phone=open_simulated(lang), agent=AgentChoice(AgentKind.DEMO))
    qtbot.addWidget(window)
    window.show()
    start(window, first_run=FirstRun(tmp_path), env={"PHONEBUDDY_FIRST_RUN": "1"})
    process(400)
    dialog = window.channel_dialog
    assert dialog is not None and dialog.isVisible()
    assert getattr(window, "setup_wizard", None) is None  # not opened behind the question
    assert window.announcer.channel == "screen_reader"  # our voice silent until it is answered
    welcome = tr("wiz_welcome_title", lang)
    assert not any(welcome in a.text for a in window.announcer.log)
    dialog.choose(SpeechChannel.OWN_VOICE)
    qtbot.waitUntil(lambda: getattr(window, "setup_wizard", None) is not None and window.setup_wizard.isVisible(),
                    timeout=5000)
    assert window.announcer.channel == "own_voice"
    texts = [a.text for a in window.announcer.log]
    asked = next(i for i, t in enumerate(texts) if t == dialog.question.text())
    assert any(welcome in t for t in texts[asked + 1:])
    window.setup_wizard.close()


@pytest.mark.slow
def test_a_low_confidence_spoken_next_in_the_wizard_is_read_back_not_dropped(qtbot, tmp_path):
    """Issue 29: "Next." in our own voice (piper) in a noisy room, heard by the real Whisper base with a
    confidence under the repeat threshold, was answered "I did not hear anything". Now it is read back
    ("Did you say: Next!?"), and a spoken yes goes on.

    The recogniser here has its second decode off (`retry_unheard`): that decode samples (temperature
    fallback), and CTranslate2's seeded draw is not reproducible (OpenNMT/CTranslate2 issue 1757): a CI run
    with both cores busy heard "Let's go." in the window where the search had just heard "next" in the same
    recording. What is tested is the read-back of what the greedy decode was unsure of; the second decode
    has its own tests (tests/test_speech_asr_retry.py).

    Two things vary from run to run and machine to machine. Piper samples its voice (VITS noise drawn inside
    its ONNX graph, no seed), so "Next." is said once per run and the noise added to that one recording; the
    old search re-synthesised it for every seed and so never tried the same recordings twice. And which noisy
    recordings Whisper base is unsure of depends on the processor: with AVX-512 several of the first seeds
    hear "next" under the default `repeat_below` (0.2); with AVX2 (CTranslate2 forced to it, as on the CI
    machine) often none of 40 did. So the test takes the least sure reading of "next" and, where that is
    above the default threshold, raises the threshold to just above it: the path under test (a short command
    under `repeat_below` is read back, not dropped) is the same on every processor, and where the default already catches it nothing is changed."""
    from dataclasses import replace

    import numpy as np

    from app.voice import WhisperTranscription
    from speech.asr import READ_BACK_FLOOR, FasterWhisperTranscriber
    from speech.audio import ASR_RATE, resample, write_wav
    from tests.speech_fixtures import base_transcriber, locator, piper_engine

    voice: dict[str, np.ndarray] = {}  # piper samples its voice (VITS noise): each phrase is said once per run

    def our_voice(text: str, noise_db: float | None = None, seed: int = 0) -> np.ndarray:
        if text not in voice:
            chunk = piper_engine().synthesize(text, "en")
            voice[text] = resample(chunk.samples, chunk.sample_rate, ASR_RATE)
        samples = voice[text]
        samples = np.concatenate([np.zeros(ASR_RATE // 2, np.float32), samples, np.zeros(ASR_RATE // 2, np.float32)])
        if noise_db is not None:  # a noisy room
            power = float(np.mean(samples[np.abs(samples) > 1e-3] ** 2))
            noise = np.random.default_rng(seed).normal(0, np.sqrt(power / 10 ** (noise_db / 10)), len(samples))
            samples = samples + noise.astype(np.float32)
        return samples

    wav = tmp_path / "said.wav"
    greedy = FasterWhisperTranscriber(replace(base_transcriber().settings, retry_unheard=False), locator=locator())
    greedy.load()
    transcriber = WhisperTranscription(greedy)
    window = make_window(qtbot, services=AppServices(voice_input=WavFileVoice(wav), transcriber=transcriber))
    contacts, apps = window._phone_names()  # the hotwords the window gives the recogniser
    transcriber.set_phone_names(contacts=contacts, apps=apps)
    readings = []  # (confidence, seed) of each noisy recording heard as "next"
    for seed in range(40):
        write_wav(wav, our_voice("Next.", noise_db=-5, seed=seed), ASR_RATE)
        transcriber(wav, "en")
        t = transcriber.last
        if "next" in t.text.lower() and not t.retried and t.confidence >= READ_BACK_FLOOR:
            readings.append((t.confidence, seed))
            if t.confidence < greedy.settings.repeat_below:
                break
    assert readings, "no noisy recording of 'Next.' was heard as next at all"
    confidence, seed = min(readings)
    if confidence >= greedy.settings.repeat_below:  # this processor is surer: the threshold goes just above
        greedy.settings = replace(greedy.settings, repeat_below=confidence + 0.01)
    assert greedy.settings.repeat_below < greedy.settings.confirm_below
    write_wav(wav, our_voice("Next.", noise_db=-5, seed=seed), ASR_RATE)
    wizard = _wizard(qtbot, window)
    wizard.next()
    assert wizard.currentId() == 1

    def say(samples=None) -> None:
        if samples is not None:
            write_wav(wav, samples, ASR_RATE)
        before = len(window.announcer.log)
        wizard.toggle_voice()
        wizard.toggle_voice()
        qtbot.waitUntil(lambda: window.state != "state_transcribing" and len(window.announcer.log) > before + 1,
                        timeout=60_000)
        process(100)

    say()
    heard = transcriber.last
    spoken = _spoken(window)
    assert tr("heard_nothing", "en") not in spoken, heard.to_dict()
    assert spoken[-1] == tr("did_you_say", "en", text=heard.text) and "next" in heard.text.lower(), heard.to_dict()
    assert wizard.currentId() == 1  # not acted on before the yes
    say(our_voice("Yes."))
    qtbot.waitUntil(lambda: wizard.currentId() == 2, timeout=10_000)
