"""The caregiver's privacy dialog (app/profile_dialog.py), reached from the caregiver settings behind the
PIN: every widget named for a screen reader in both languages, the tab order through every field, saving
only with the PIN, hearing what is stored, export and delete."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QComboBox, QLineEdit, QPlainTextEdit, QPushButton

from app.audit import audit_widget_tree
from app.profile_dialog import ProfileDialog
from app.settings_flow import open_caregiver_settings
from assistant_core.history import HistoryStore
from assistant_core.privacy import Kind, Tier
from assistant_core.profile_store import PrivacyStore
from assistant_core.settings import PinGuard
from tests.app_fixtures import make_window

PIN = "2468"


@pytest.fixture
def history(tmp_path: Path) -> HistoryStore:
    h = HistoryStore(tmp_path / "history.db")
    PinGuard(h).set_pin(PIN, n=2**10)
    run = h.start_run("Book a hotel for Wang Fang", lang="en")
    h.add_message("user", "Book a hotel for Wang Fang", run_id=run)
    h.finish_run(run, outcome="finished", steps=0)
    return h


def dialog_for(qtbot, history: HistoryStore, lang: str, said: list[str], **kw) -> ProfileDialog:
    d = ProfileDialog(PrivacyStore.beside(history), history, PinGuard(history), lang=lang, announce=said.append, **kw)
    qtbot.addWidget(d)
    d.show()
    return d


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_widget_is_named_and_reached_by_tab(qtbot, history, lang):
    d = dialog_for(qtbot, history, lang, [])
    widgets = d.findChildren(QLineEdit) + d.findChildren(QPlainTextEdit) + d.findChildren(QComboBox) + \
        d.findChildren(QPushButton)
    assert len(widgets) >= 8 + 8 + 2 + 5
    assert audit_widget_tree(d) == []  # names, descriptions, and Tab reaches every control
    for w in widgets:
        assert w.accessibleName().strip(), w.objectName()
    names = " ".join(w.accessibleName() for w in widgets)
    assert ("身份证号" in names) if lang == "zh" else ("ID number" in names)
    # Tab from the first field visits every field, tier box and button.
    first = d.values["name"]
    first.setFocus()
    seen = {first}
    current = first
    for _ in range(len(widgets) + 5):
        d.focusNextChild()
        current = d.focusWidget()
        seen.add(current)
    assert set(widgets) <= seen


def test_save_needs_the_pin_then_the_gate_uses_the_profile(qtbot, history):
    said: list[str] = []
    d = dialog_for(qtbot, history, "en", said)
    d.values["phone"].setText("13812345678")
    d.tiers["phone"].setCurrentIndex(0)  # share when a task needs it
    d.values["id_number"].setText("11010519491231002X")
    d.tiers["id_number"].setCurrentIndex(2)  # never
    assert d.save() is False and said[-1] == "Type the caregiver PIN first."
    d.pin.setText("1111")
    assert d.save() is False and "PIN" in said[-1]
    assert PrivacyStore.beside(history).load_profile().items == ()
    d.pin.setText(PIN)
    assert d.save() is True and said[-1] == "The profile is saved." and d.pin.text() == ""
    profile = PrivacyStore.beside(history).load_profile()
    assert profile.tier_of(Kind.PHONE) is Tier.SHARE and profile.tier_of(Kind.ID_NUMBER) is Tier.NEVER
    d.values["birth_date"].setText("31/12/1949")
    d.pin.setText(PIN)
    assert d.save() is False and "1950-03-21" in said[-1]


def test_hear_export_and_delete(qtbot, history, tmp_path: Path):
    said: list[str] = []
    target = tmp_path / "out.json"
    d = dialog_for(qtbot, history, "zh", said, confirm=lambda q: True, ask_path=lambda: str(target))
    d.values["name"].setText("王芳")
    d.pin.setText(PIN)
    assert d.save()
    d.hear()
    assert "1 个请求" in said[-1] and "你的姓名（任务需要时提供）" in said[-1] and "王芳" not in said[-1]
    assert d.export() is False  # no PIN typed
    d.pin.setText(PIN)
    assert d.export() is True and target.exists()
    assert json.loads(target.read_text(encoding="utf-8"))["profile"][0]["value"] == "王芳"
    d.pin.setText(PIN)
    assert d.delete() is True and "已删除" in said[-1]
    assert history.runs() == [] and PrivacyStore.beside(history).load_profile().items == ()
    assert d.values["name"].text() == ""


def test_opened_from_the_caregiver_settings(qtbot, history):
    window = make_window(qtbot, history=history)
    window.pin_dialog = window.settings_dialog = None
    window.profile_dialog = None

    def pin():
        if window.pin_dialog is None or not window.pin_dialog.isVisible():
            QTimer.singleShot(20, pin)
            return
        window.pin_dialog.field.setText(PIN)
        window.pin_dialog.ok.click()

    def settings():
        if window.settings_dialog is None or not window.settings_dialog.isVisible():
            QTimer.singleShot(20, settings)
            return
        window.settings_dialog.privacy.click()

    def profile():
        dialog = getattr(window, "profile_dialog", None)
        if dialog is None or not dialog.isVisible():
            QTimer.singleShot(20, profile)
            return
        dialog.values["phone"].setText("13812345678")
        dialog.pin.setText(PIN)
        dialog.buttons["save"].click()
        dialog.buttons["close"].click()

    QTimer.singleShot(20, pin)
    QTimer.singleShot(40, settings)
    QTimer.singleShot(60, profile)
    assert open_caregiver_settings(window) is True
    assert PrivacyStore.beside(history).load_profile().of(Kind.PHONE)[0].value == "13812345678"
