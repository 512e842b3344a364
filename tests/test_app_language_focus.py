"""The language a person chose stays chosen: F8 (and --lang) are kept in the caregiver settings, and the
caregiver dialog opened in a Chinese session shows Chinese and keeps it on OK. In the setup wizard Enter
goes on from every page (Next, then Finish), and focus lands on the page's own action."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt, QTimer

from app.main import build_parser, build_window
from app.settings_flow import open_caregiver_settings
from app.setup_wizard import SetupActions, SetupWizard
from assistant_core.history import HistoryStore
from assistant_core.settings import PinGuard, SettingsStore
from tests.app_fixtures import make_window


def test_f8_is_kept_for_the_next_start(qtbot):
    history = HistoryStore.in_memory()
    window = make_window(qtbot, history=history)
    window.toggle_language()  # F8
    assert window.lang == "zh"
    assert SettingsStore(history).load().settings.language == "zh"
    window.toggle_language()  # F8
    assert SettingsStore(history).load().settings.language == "en"


def test_lang_on_the_command_line_is_kept(qtbot, tmp_path):
    db = tmp_path / "history.db"
    window = build_window(build_parser().parse_args(["--demo", "--lang", "zh", "--no-speech", "--db", str(db)]))
    qtbot.addWidget(window)
    assert window.lang == "zh"
    assert SettingsStore(window.services.history).load().settings.language == "zh"
    window.shutdown()


def test_the_caregiver_dialog_in_a_chinese_session_shows_and_keeps_chinese(qtbot):
    history = HistoryStore.in_memory()
    PinGuard(history).set_pin("2468", n=2**10)
    window = make_window(qtbot, history=history)  # started in English, stored English
    window.toggle_language()  # F8
    SettingsStore(history).save(SettingsStore(history).load().settings.__class__(language="en"))  # stale record
    window.pin_dialog = window.settings_dialog = None
    seen = {}

    def pin():
        dialog = window.pin_dialog
        if dialog is None or not dialog.isVisible():
            QTimer.singleShot(20, pin)
            return
        dialog.field.setText("2468")
        dialog.ok.click()
        QTimer.singleShot(20, settings)

    def settings():
        dialog = window.settings_dialog
        if dialog is None or not dialog.isVisible():
            QTimer.singleShot(20, settings)
            return
        seen["title"] = dialog.windowTitle()
        seen["language"] = dialog.language.currentData()
        dialog.ok.click()

    QTimer.singleShot(20, pin)
    assert open_caregiver_settings(window) is True
    assert seen["language"] == "zh" and any("\u4e00" <= ch <= "\u9fff" for ch in seen["title"]), seen
    assert window.lang == "zh"  # OK did not switch the app to English
    assert SettingsStore(history).load().settings.language == "zh"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_enter_goes_on_from_every_wizard_page(qtbot, lang):
    said: list[str] = []
    wizard = SetupWizard(lang=lang, announce=said.append, actions=SetupActions(
        check_phone=lambda: "phone", install_ime=lambda apk: "ime", download=lambda progress: "models"))
    qtbot.addWidget(wizard)
    wizard.show()
    qtbot.waitExposed(wizard)
    wizard.activateWindow()
    visited = []
    for _ in range(len(wizard.pages)):
        page = wizard.currentPage()
        visited.append(wizard.currentId())
        focused = wizard.focusWidget()  # the wizard's own, whichever window the test run left active
        if page is not wizard.language_page:
            assert focused is wizard.forward_button()  # Next (Finish on the last page): Enter goes on
        qtbot.keyClick(focused or wizard, Qt.Key.Key_Return)
        qtbot.wait(50)
    assert visited == list(range(len(wizard.pages)))
    assert not wizard.isVisible() and wizard.result() == int(wizard.DialogCode.Accepted)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_enter_presses_the_focused_button_not_next(qtbot, lang):
    """Issue 29: Enter on a focused page button (Check, Read aloud, Back) presses that button; the page
    stays. After a check that worked the focus is on Next again; after one that failed, on Check."""
    said: list[str] = []
    checks: list[int] = []
    outcome = {"ok": False}

    def check() -> str:
        checks.append(1)
        if not outcome["ok"]:
            raise RuntimeError("no phone")
        return "Pixel 7"

    wizard = SetupWizard(lang=lang, announce=said.append, actions=SetupActions(
        check_phone=check, install_ime=lambda apk: "ime", download=lambda progress: "models"))
    qtbot.addWidget(wizard)
    wizard.show()
    qtbot.waitExposed(wizard)
    wizard.activateWindow()
    wizard.next()
    wizard.next()
    page = wizard.currentPage()
    assert page.action is not None and wizard.focusWidget() is wizard.forward_button()
    page.action.setFocus()
    qtbot.keyClick(page.action, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: page.op is None and page.action.isEnabled(), timeout=5000)
    assert checks == [1] and wizard.currentPage() is page  # pressed Check, did not go on
    assert wizard.focusWidget() is page.action  # failed: Enter tries again
    outcome["ok"] = True
    qtbot.keyClick(page.action, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: page.op is None and page.action.isEnabled(), timeout=5000)
    assert checks == [1, 1] and wizard.currentPage() is page
    assert wizard.focusWidget() is wizard.forward_button()  # worked: Enter goes on
    before = len(said)
    page.speak.setFocus()
    qtbot.keyClick(page.speak, Qt.Key.Key_Return)
    assert wizard.currentPage() is page and said[before:] == [page.spoken()]  # read aloud, still here
    back = wizard.button(wizard.WizardButton.BackButton)
    back.setFocus()
    qtbot.keyClick(back, Qt.Key.Key_Return)
    assert wizard.currentId() == 1  # Back, not Next
