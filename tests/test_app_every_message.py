"""Every message reaches the ear: PIN errors and the lockout, the start-up state (no phone → the simulated
one with its key; the simulated phone and the scripted demonstration), the wizard finishing or cancelled,
a failed download in plain words with what to do, Enter in the request box not silencing what it started,
and nothing spoken carrying an exception class name or errno text."""

from __future__ import annotations

import errno

import pytest
from PySide6.QtCore import Qt, QTimer

from app.agent import AgentChoice, AgentKind
from app.failures import DOWNLOAD_ADVICE, describe_failure, speakable
from app.main_window import AppServices, MainWindow
from app.phone import open_simulated
from app.settings_flow import open_caregiver_settings
from app.setup_wizard import SetupActions, SetupWizard
from app.strings import tr
from assistant_core.history import HistoryStore
from assistant_core.settings import PinGuard
from tests.app_fixtures import make_window


class Speaker:
    def __init__(self) -> None:
        self.calls: list[tuple[str, ...]] = []

    def say(self, text: str) -> None:
        self.calls.append(("say", text))

    def stop(self) -> None:
        self.calls.append(("stop",))


def _said(window) -> list[str]:
    return [a.text for a in window.announcer.log]


def test_a_wrong_pin_and_the_lockout_are_said(qtbot):
    history = HistoryStore.in_memory()
    PinGuard(history).set_pin("2468", n=2**10)
    window = make_window(qtbot, history=history)
    window.pin_dialog = None
    shown: list[str] = []

    def wrong_five_times_then_cancel():
        dialog = window.pin_dialog
        if dialog is None or not dialog.isVisible():
            QTimer.singleShot(20, wrong_five_times_then_cancel)
            return
        for _ in range(6):
            dialog.field.setText("1111")
            dialog.ok.click()
            shown.append(dialog.message.text())
        dialog.cancel.click()

    QTimer.singleShot(20, wrong_five_times_then_cancel)
    assert open_caregiver_settings(window) is False
    said = _said(window)
    assert shown and all(text in said for text in shown), (shown, said[-8:])  # every message shown was said
    assert len(set(shown)) >= 2, shown  # the wrong PIN, then the lockout, each said in its own words


def test_start_up_says_there_is_no_phone_and_f5_opens_the_simulated_one(qtbot):
    window = MainWindow(lang="en", services=AppServices(history=HistoryStore.in_memory(),
                                                        simulated_phone=lambda lg: open_simulated(lg)),
                        phone=None, agent=AgentChoice(AgentKind.DEMO))
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: tr("startup_no_phone", "en") in _said(window), timeout=5000)
    assert "F5" in tr("startup_no_phone", "en") and "F5" in tr("startup_no_phone", "zh")
    qtbot.keyClick(window.talk_button, Qt.Key.Key_F5)
    assert window.phone is not None and window.phone.is_simulated
    assert _said(window)[-2:] == [window.phone.label.get("en"), tr("demo_note", "en")]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_start_up_on_the_simulated_phone_says_so_and_that_it_is_a_demonstration(qtbot, lang):
    window = make_window(qtbot, lang=lang)
    qtbot.waitUntil(lambda: tr("demo_note", lang) in _said(window), timeout=5000)
    first = _said(window)[0]
    assert first.startswith(tr("startup_phone", lang, phone="").split(":")[0].split("：")[0])
    assert window.phone.label.get(lang).rstrip("。.") in first


@pytest.mark.parametrize("finish", [True, False])
def test_the_wizard_says_when_it_finishes_or_is_cancelled(qtbot, finish):
    said: list[str] = []
    wizard = SetupWizard(lang="zh", announce=said.append, actions=SetupActions(
        check_phone=lambda: "phone", install_ime=lambda apk: "ime", download=lambda progress: "models"))
    qtbot.addWidget(wizard)
    wizard.show()
    if finish:
        wizard.accept()
    else:
        wizard.reject()
    assert said[-1] == tr("wiz_finished_said" if finish else "wiz_cancelled_said", "zh")


class LocalEntryNotFoundError(FileNotFoundError):
    """Named like huggingface_hub's: what the hub raises offline when a file is not in the cache."""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_failed_download_is_said_in_plain_words_with_what_to_do(qtbot, lang):
    said: list[str] = []

    def download(progress):
        raise LocalEntryNotFoundError("[Errno -2] Name or service not known: /root/.cache/huggingface/hub/x")

    wizard = SetupWizard(lang=lang, announce=said.append, actions=SetupActions(
        check_phone=lambda: "phone", install_ime=lambda apk: "ime", download=download))
    qtbot.addWidget(wizard)
    wizard.show()
    models = wizard.models_page
    models.run_action()
    qtbot.waitUntil(lambda: bool(models.result.text()), timeout=5000)
    message = models.result.text()
    assert DOWNLOAD_ADVICE.get(lang) in message and message in said
    assert speakable(message) and "Errno" not in message and "Error" not in message and "/root" not in message


def test_failures_are_described_without_class_names_or_errno():
    cases = [LocalEntryNotFoundError("[Errno -2] x"), OSError(errno.ENOSPC, "No space left on device"),
             PermissionError(13, "Permission denied: '/home/u/.cache'"), TimeoutError("timed out"),
             ConnectionError("[Errno 111] Connection refused"), RuntimeError("CUDA error: device-side assert")]
    for exc in cases:
        for lang in ("en", "zh"):
            text = describe_failure(exc, lang)
            assert text and speakable(text) and "Errno" not in text and type(exc).__name__ not in text, text
    assert len({describe_failure(e, "en") for e in cases}) >= 5  # each kind of failure in its own words


def test_enter_in_the_request_box_does_not_silence_what_it_starts(qtbot):
    speaker = Speaker()
    window = make_window(qtbot, services=AppServices(speaker=speaker))
    qtbot.wait(100)
    window.request_box.setFocus()
    window.request_box.setText("Call Sophie Tang")
    speaker.calls.clear()
    qtbot.keyClick(window.request_box, Qt.Key.Key_Return)
    said_at = speaker.calls.index(("say", tr("started", "en", text="Call Sophie Tang")))
    assert speaker.calls[said_at + 1:] == []  # the same key travelling on to the parents stopped it before
    window.stop_run()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_loop_error_carrying_an_exception_is_said_in_plain_words(lang):
    from app.events import present
    from assistant_core.events import ErrorEvent, ErrorKind
    from assistant_core.i18n import Text

    raw = "The assistant's model is not available: OSError: [Errno 2] No such file: '/root/.cache/x/model.bin'"
    shown = present(ErrorEvent(0, ErrorKind.POLICY_UNAVAILABLE, Text(raw, raw), False, "detail"), lang)
    assert speakable(shown.text) and "Errno" not in shown.text and "F12" in shown.text
    fine = Text("The phone is not connected.", "手机没有连接。")
    assert fine.get(lang) in present(ErrorEvent(0, ErrorKind.DEVICE, fine, True, ""), lang).text


class _RecordingSpeaker:
    """What the window asks of its voice, in order (say / stop)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def say(self, text: str, lang: str | None = None) -> None:
        self.calls.append(("say", text))

    def stop(self) -> None:
        self.calls.append(("stop", ""))

    def set_rate(self, rate: float) -> None:
        pass


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_start_up_lines_are_all_heard_none_cuts_off_the_one_before(qtbot, lang):
    """The phone line, the demonstration note and a settings problem are spoken one after another: the
    voice is not stopped between them (each announcement used to stop the one before, so only the last
    start-up line was really heard)."""
    from assistant_core.i18n import Text

    speaker = _RecordingSpeaker()
    window = MainWindow(lang=lang, services=AppServices(speaker=speaker, history=HistoryStore.in_memory()),
                        phone=open_simulated(lang), agent=AgentChoice(AgentKind.DEMO))
    window.startup_problems = [Text("A setting was reset.", "有一项设置被重置了。")]
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: any(t in ("A setting was reset.", "有一项设置被重置了。") for _k, t in speaker.calls),
                    timeout=5000)
    said = [(k, t) for k, t in speaker.calls]
    first = next(i for i, (k, t) in enumerate(said) if k == "say")
    assert [k for k, _t in said[first:]] == ["say", "say", "say"], said
    assert said[first + 1][1] == tr("demo_note", lang)
