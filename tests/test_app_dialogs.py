"""The confirmation dialog's every way out, the caregiver settings behind the real PIN guard and
settings store, the setup wizard's pages, the announce() seam with the real voice, and the worker's
cooperative stop."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication

from app.announce import Cue
from app.confirm_dialog import ConfirmDialog, ConfirmPrompt
from app.main_window import AppServices
from app.settings_dialog import CaregiverSettingsDialog, PinDialog
from app.settings_flow import load_agent, open_caregiver_settings
from app.setup_wizard import SetupActions, SetupWizard
from app.strings import tr
from app.workers import GeneratorWorker, WorkerThread
from assistant_core.history import HistoryStore
from assistant_core.safety import Category
from assistant_core.settings import CaregiverSettings, PinGuard, SettingsStore
from assistant_core.types import ConfirmAnswer
from tests.app_fixtures import make_window

PROMPT = ConfirmPrompt(summary="I'm about to send the message “Hi” to Nina Song in Messages. Shall I go ahead?")


def _dialog(qtbot, **kw):
    kw.setdefault("grace_ms", 0)  # these tests are about what each key means; the grace period has its own
    said = []
    dialog = ConfirmDialog(PROMPT, lang="en", announce=lambda text, cue: said.append((text, cue)), **kw)
    qtbot.addWidget(dialog)
    answers = []
    dialog.answered.connect(answers.append)
    dialog.start()
    return dialog, answers, said


@pytest.mark.parametrize(("key", "expected"), [
    (Qt.Key.Key_Y, ConfirmAnswer.YES), (Qt.Key.Key_Return, ConfirmAnswer.NO),  # Enter presses "No", focused first
    (Qt.Key.Key_N, ConfirmAnswer.NO), (Qt.Key.Key_Escape, ConfirmAnswer.NO),  # Esc with no run to stop: no
])
def test_confirm_keys(qtbot, key, expected):
    dialog, answers, said = _dialog(qtbot, timeout_s=None)
    assert said[0][1] is Cue.CONFIRM and PROMPT.summary in said[0][0]  # read back exactly, at once
    qtbot.keyClick(dialog, key)
    assert answers == [expected]
    qtbot.keyClick(dialog, Qt.Key.Key_Y)  # a second answer is ignored
    assert answers == [expected]


def test_enter_on_the_no_button_means_no(qtbot):
    dialog, answers, _ = _dialog(qtbot, timeout_s=None)
    dialog.no_button.setFocus()
    qtbot.keyClick(dialog.no_button, Qt.Key.Key_Return)
    assert answers == [ConfirmAnswer.NO]


def test_closing_the_window_means_no(qtbot):
    dialog, answers, _ = _dialog(qtbot, timeout_s=None)
    dialog.close()
    assert answers == [ConfirmAnswer.NO]


def test_no_answer_means_no(qtbot):
    dialog, answers, said = _dialog(qtbot, timeout_s=1)
    qtbot.waitUntil(lambda: bool(answers), timeout=5000)
    assert answers == [ConfirmAnswer.NO]
    assert said[-1][0] == tr("confirm_timeout", "en")


def test_repeat_reads_it_again_or_asks_the_loop(qtbot):
    dialog, answers, said = _dialog(qtbot, timeout_s=None)
    qtbot.keyClick(dialog, Qt.Key.Key_R)
    assert len(said) == 2 and said[1][0] == said[0][0] and answers == []
    asked = []
    looped, _, _ = _dialog(qtbot, timeout_s=None, on_repeat=lambda: asked.append(1))
    qtbot.keyClick(looped, Qt.Key.Key_R)
    assert asked == [1]


def _fill_pin_when_shown(window, pin, *, repeat=True):
    def fill():
        dialog = window.pin_dialog
        if dialog is None or not dialog.isVisible():
            QTimer.singleShot(20, fill)
            return
        dialog.field.setText(pin)
        if repeat:
            dialog.repeat.setText(pin)
        dialog.ok.click()

    QTimer.singleShot(20, fill)


def test_settings_behind_pin_are_saved_and_applied(qtbot):
    history = HistoryStore.in_memory()
    window = make_window(qtbot, history=history)
    window.pin_dialog = window.settings_dialog = None

    def edit():
        dialog = window.settings_dialog
        if dialog is None or not dialog.isVisible():
            QTimer.singleShot(20, edit)
            return
        for i in range(dialog.apps.count()):
            item = dialog.apps.item(i)
            if item.data(Qt.ItemDataRole.UserRole) == "com.android.settings":
                item.setCheckState(Qt.CheckState.Checked)
        for i in range(dialog.categories.count()):
            item = dialog.categories.item(i)
            if item.data(Qt.ItemDataRole.UserRole) == "settings_change":
                item.setCheckState(Qt.CheckState.Checked)
        dialog.budget.setValue(12)
        dialog.rate.setValue(130)
        dialog.language.setCurrentIndex(1)
        dialog.ok.click()

    _fill_pin_when_shown(window, "4321")
    QTimer.singleShot(50, edit)
    assert open_caregiver_settings(window) is True
    saved = SettingsStore(history).load().settings
    assert saved.allowed_apps == frozenset({"com.android.settings"})
    assert Category.SETTINGS_CHANGE in saved.always_confirm
    assert saved.step_budget == 12 and saved.speech_rate == pytest.approx(1.3) and saved.language == "zh"
    assert window.lang == "zh" and window.announcer.rate_percent == 130
    assert load_agent(history) == window.agent
    assert PinGuard(history).check("4321").ok


def test_wrong_pin_keeps_the_settings_closed(qtbot):
    history = HistoryStore.in_memory()
    PinGuard(history).set_pin("2468", n=2**10)
    window = make_window(qtbot, history=history)
    window.pin_dialog = None
    messages = []

    def wrong_then_cancel():
        dialog = window.pin_dialog
        if dialog is None or not dialog.isVisible():
            QTimer.singleShot(20, wrong_then_cancel)
            return
        dialog.field.setText("1111")
        dialog.ok.click()
        messages.append(dialog.message.text())
        dialog.cancel.click()

    QTimer.singleShot(20, wrong_then_cancel)
    assert open_caregiver_settings(window) is False
    assert messages and "not right" in messages[0]
    assert SettingsStore(history).load().needs_setup  # nothing was saved


def test_bad_server_address_keeps_the_dialog_open(qtbot):
    from app.agent import AgentChoice, AgentKind

    said = []
    dialog = CaregiverSettingsDialog(CaregiverSettings(), AgentChoice(AgentKind.DEMO), {"com.android.settings": "Settings"},
                                     lang="en", announce=said.append)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.agent_kind.setCurrentIndex([dialog.agent_kind.itemData(i) for i in range(dialog.agent_kind.count())].index("server"))
    assert dialog.server.isEnabled()
    dialog.server.setText("192.168.1.20:8000")
    dialog.ok.click()
    assert dialog.isVisible() and dialog.result_settings() is None
    assert said == [tr("cs_server_bad", "en")]
    dialog.server.setText("http://192.168.1.20:8000/v1")
    dialog.ok.click()
    assert dialog.result_agent().server_address == "http://192.168.1.20:8000/v1"


def test_new_pin_must_be_typed_twice(qtbot):
    dialog = PinDialog(lang="zh", new=True)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.field.setText("1234")
    dialog.repeat.setText("1235")
    dialog.ok.click()
    assert dialog.isVisible() and dialog.message.text() == tr("pin_mismatch", "zh")


def test_wizard_reads_steps_and_reports_progress(qtbot):
    said = []
    progress_seen = threading.Event()

    def download(progress):
        for f in (0.1, 0.5, 1.0):
            progress(f)
        progress_seen.set()
        return "whisper base, en_US-joe-medium"

    def no_phone():
        from app.setup_wizard import SetupStepError
        from assistant_core.i18n import Text

        raise SetupStepError(Text("No phone is attached.", "没有连接手机。"))

    wizard = SetupWizard(lang="en", announce=said.append,
                         actions=SetupActions(check_phone=no_phone, install_ime=lambda apk: "ADBKeyboard", download=download))
    qtbot.addWidget(wizard)
    wizard.show()
    welcome, usb, connect, _ime, models = wizard.pages
    assert said == [welcome.spoken()] and said[0].startswith("Welcome to PhoneBuddy")  # the spoken welcome
    wizard.next()
    assert "Build number seven times" in said[-1]  # each page is spoken step by step
    connect.run_action()
    qtbot.waitUntil(lambda: bool(connect.result.text()), timeout=5000)
    assert connect.result.text() == tr("wiz_not_found", "en", detail="No phone is attached.")
    models.run_action()
    qtbot.waitUntil(lambda: models.result.text() == tr("wiz_done", "en"), timeout=5000)
    assert models.bar.value() == 100 and "100%" in said


def test_announce_speaks_with_the_real_voice_and_any_key_stops_it(qtbot):
    from app.voice import make_speaker
    from speech.audio import MemorySink

    sink = MemorySink(22_050, realtime=True)
    speaker = make_speaker(sink)
    window = make_window(qtbot, services=AppServices(speaker=speaker))
    window.announcer.announce("This is a long sentence that takes a few seconds to say. And another one after it.")
    qtbot.waitUntil(lambda: len(sink.blocks) > 2, timeout=30_000)
    aborts = len(sink.aborts)
    qtbot.keyClick(window.request_box, Qt.Key.Key_A)
    assert len(sink.aborts) > aborts
    window.change_rate(+20)
    assert speaker.rate == pytest.approx(1.2)
    window.repeat_last()
    assert window.announcer.log[-1].text.startswith("Speech rate")
    speaker.close()


def test_worker_stops_cooperatively(qtbot):
    closed = threading.Event()
    started = threading.Event()

    def factory(stop):
        def gen():
            try:
                started.set()
                while True:
                    yield "tick"
                    stop.wait(0.01)
            finally:
                closed.set()
        return gen()

    worker = GeneratorWorker(factory)
    events = []
    worker.event.connect(events.append)
    run = WorkerThread(worker)
    run.start()
    qtbot.waitUntil(lambda: len(events) > 3, timeout=5000)
    with qtbot.waitSignal(worker.stopped, timeout=5000):
        run.stop()
    assert closed.wait(2) and run.wait(2000)
    QApplication.processEvents()


def test_no_microphone_is_said_not_raised(qtbot):
    from app.voice import MicrophoneVoice

    window = make_window(qtbot, services=AppServices(voice_input=MicrophoneVoice(), transcriber=lambda a, lang: ""))
    window.start_listening()  # this machine has no input device
    assert window.state == "state_idle"
    last = window.announcer.log[-1]
    assert last.cue is Cue.ERROR and "microphone" in last.text.lower()
