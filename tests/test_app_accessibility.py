"""Accessibility audit over the live widget trees: names, descriptions, Tab order, contrast, language
switching, and text that survives 200% scaling."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication, QWidget

from app.agent import AgentChoice, AgentKind
from app.audit import accessible_name, audit_widget_tree, focusable_controls, palette_contrasts, tab_chain
from app.confirm_dialog import ConfirmDialog, ConfirmPrompt
from app.settings_dialog import CaregiverSettingsDialog, PinDialog
from app.setup_wizard import SetupWizard
from app.shortcuts import RESERVED_MODIFIERS, SHORTCUTS
from app.strings import APP
from app.theme import HIGH_CONTRAST, STANDARD, contrast_ratio, make_palette
from assistant_core.settings import CaregiverSettings
from tests.app_fixtures import make_window

ROOT = Path(__file__).resolve().parents[1]


def _dialogs(window, lang):
    prompt = ConfirmPrompt(summary="I'm about to call: press “Call” to Sophie Tang in Phone. Shall I go ahead?")
    apps = window.phone.device.installed_apps()
    return [
        ConfirmDialog(prompt, lang=lang, timeout_s=None, parent=window),
        CaregiverSettingsDialog(CaregiverSettings(), AgentChoice(AgentKind.DEMO), apps, lang=lang,
                                model_names=["phonebuddy-0.8b", "phonebuddy-4b"], parent=window),
        PinDialog(lang=lang, new=True, parent=window),
    ]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_focusable_control_is_named_and_reachable_by_tab(qtbot, lang):
    window = make_window(qtbot, lang=lang)
    assert audit_widget_tree(window) == []
    controls = focusable_controls(window)
    names = {accessible_name(w) for w in controls}
    for key in ("talk", "request", "send", "stop", "settings", "help", "mirror", "conversation", "send_keys"):
        assert APP.get(key, lang) in names, key
    assert window.focusWidget() is window.talk_button  # focus starts on the big talk button
    chain = tab_chain(window, start=window.talk_button)
    assert {id(w) for w in chain} == {id(w) for w in controls}
    assert chain[:3] == [window.talk_button, window.request_box, window.send_button]
    for dialog in _dialogs(window, lang):
        dialog.show()
        qtbot.waitExposed(dialog)
        assert audit_widget_tree(dialog) == [], type(dialog).__name__
        dialog.close()


def test_unnamed_control_is_caught_by_the_audit(qtbot):
    from PySide6.QtWidgets import QPushButton, QVBoxLayout

    root = QWidget()
    qtbot.addWidget(root)
    layout = QVBoxLayout(root)
    named = QPushButton("Named")
    named.setAccessibleDescription("has a name")
    layout.addWidget(named)
    layout.addWidget(QPushButton())
    root.show()
    problems = [str(p) for p in audit_widget_tree(root)]
    assert any("no accessible name" in p for p in problems)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_wizard_pages_are_named_and_reachable_by_tab(qtbot, lang):
    wizard = SetupWizard(lang=lang)
    qtbot.addWidget(wizard)
    wizard.show()
    other = "zh" if lang == "en" else "en"
    for page in wizard.pages:
        assert wizard.currentPage() is page
        for current in (lang, other, lang):  # and again after switching the language (F8) back and forth
            wizard.set_language(current)
            assert audit_widget_tree(wizard) == [], (page.title_key, current)
            controls = focusable_controls(wizard)
            assert {id(w) for w in tab_chain(wizard)} == {id(w) for w in controls}
            names = {accessible_name(w) for w in controls}
            assert {APP.get("wiz_speak", current), APP.get("wiz_voice", current), APP.get("cancel", current)} <= names
            if page.action is not None:
                assert APP.get(page.action_key, current) in names
            if page is wizard.language_page:  # Tab reaches the chosen language; the arrows the other one
                assert APP.get("wiz_lang_zh" if current == "zh" else "wiz_lang_en", current) in names
            if page is wizard.models_page:
                assert {APP.get("wiz_server", current), APP.get("wiz_use_server", current)} <= names
        wizard.next()


def test_high_contrast_palette_reaches_7_to_1():
    ratios = palette_contrasts(make_palette(HIGH_CONTRAST))
    assert ratios and min(ratios.values()) >= 7.0, ratios
    assert contrast_ratio(HIGH_CONTRAST.focus, HIGH_CONTRAST.window) >= 7.0
    assert contrast_ratio(HIGH_CONTRAST.accent_text, HIGH_CONTRAST.accent) >= 7.0
    assert contrast_ratio(HIGH_CONTRAST.disabled_text, HIGH_CONTRAST.window) >= 7.0
    # The standard theme still meets AA (4.5:1) everywhere.
    assert min(palette_contrasts(make_palette(STANDARD)).values()) >= 4.5


def test_live_high_contrast_theme_is_what_the_audit_measures(qtbot):
    window = make_window(qtbot)
    window.toggle_contrast()
    ratios = palette_contrasts(QApplication.instance().palette())
    assert min(ratios.values()) >= 7.0
    window.toggle_contrast()
    assert window.theme is STANDARD


def test_wcag_formula_known_values():
    assert contrast_ratio("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast_ratio("#777777", "#777777") == pytest.approx(1.0)
    assert contrast_ratio("#767676", "#ffffff") == pytest.approx(4.54, abs=0.01)


def test_language_switch_relabels_everything_at_run_time(qtbot):
    window = make_window(qtbot, lang="en")
    before = {id(w): accessible_name(w) for w in focusable_controls(window)}
    window.toggle_language()
    after = {id(w): accessible_name(w) for w in focusable_controls(window)}
    assert window.lang == "zh"
    assert window.talk_button.text() == APP.get("talk", "zh")
    changed = [k for k in before if before[k] != after[k]]
    assert len(changed) >= len(before) - 2  # status/live lines may carry phone names in both
    assert audit_widget_tree(window) == []
    assert window.announcer.log[-1].text == APP.get("language_now", "zh")


def test_shortcuts_avoid_screen_reader_and_talkback_modifiers():
    keys = [s.keys for s in SHORTCUTS]
    assert len(keys) == len(set(keys))
    for k in keys:
        for reserved in RESERVED_MODIFIERS:
            assert reserved not in k, k


def test_f1_lists_and_reads_every_shortcut(qtbot):
    window = make_window(qtbot)
    window.show_shortcuts()
    spoken = window.announcer.last  # the whole list, said line by line
    for s in SHORTCUTS:
        if s.help_key:
            assert APP.get(s.help_key, "en") in spoken
    assert window._help_shown is not None and window._help_shown.list.count() >= len([s for s in SHORTCUTS if s.help_key])


SCALE_SCRIPT = r"""
import json, sys
from PySide6.QtWidgets import QApplication, QAbstractButton, QLabel
app = QApplication([])
from app.agent import AgentChoice, AgentKind
from app.main_window import MainWindow
from app.phone import open_simulated
w = MainWindow(lang=sys.argv[1], phone=open_simulated(sys.argv[1]), agent=AgentChoice(AgentKind.DEMO))
w.show()
for _ in range(20):
    app.processEvents()
bad = []
for widget in w.findChildren(QAbstractButton) + w.findChildren(QLabel):
    if not widget.isVisible() or not widget.text():
        continue
    hint = widget.minimumSizeHint()
    if widget.width() < hint.width() or widget.height() < hint.height():
        bad.append([widget.objectName() or widget.text()[:30], widget.width(), hint.width(), widget.height(), hint.height()])
print(json.dumps({"ratio": w.devicePixelRatio(), "bad": bad, "size": [w.width(), w.height()]}))
w.shutdown()
"""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_text_survives_200_percent_scaling(lang):
    env = dict(os.environ, QT_SCALE_FACTOR="2", QT_QPA_PLATFORM="offscreen")
    out = subprocess.run([sys.executable, "-c", SCALE_SCRIPT, lang], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["ratio"] == 2.0
    assert report["bad"] == [], report


def test_self_check_entry_point_reports_ok(capsys):
    from app.main import main

    assert main(["--self-check", "--db", ":memory:"]) == 0
    assert "self-check: OK" in capsys.readouterr().out


def test_f6_moves_between_areas(qtbot):
    window = make_window(qtbot)
    window.talk_button.setFocus()
    seen = []
    for _ in range(len(window.areas)):
        window.next_area()
        seen.append(window.focusWidget())
    assert set(map(id, seen)) == set(map(id, window.areas))
