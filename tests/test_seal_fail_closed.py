"""The settings seal fails closed (issue 28, build 3).

One SQL line used to switch the seal off: deleting or damaging the caregiver PIN row made every seal
"hold", so a widened allow-list was used with no note, and whoever opened the settings next chose a new
PIN. On the simulated phone a detected tamper even *widened* the list to every app, because the emptied
list read as "not set". Now a removed or damaged PIN record, a removed seal or an edited list each end
deny-all on every phone (the simulated one included), the PIN is locked for 30 s where there is one, the
caregiver hears what changed (en and zh, through the start-up announcement), and no new PIN can be set
over a deleted row.
"""

from __future__ import annotations

import io
import json
import sqlite3
from contextlib import redirect_stderr, redirect_stdout
from types import SimpleNamespace

import pytest

from app.main import build_parser, build_window
from app.main_window import AppServices
from app.phone import open_simulated
from app.runner import run_parts
from assistant_core.history import HistoryStore
from assistant_core.settings import (
    PIN_KEY,
    SEAL_SETTINGS_KEY,
    AppsState,
    CaregiverSettings,
    PinGuard,
    SettingsError,
    SettingsStore,
)
from phonebuddy import run_cli

CHOSEN = CaregiverSettings(allowed_apps=frozenset({"com.android.settings"}), step_budget=12)
PIN = "2468"


class Clock:
    def __init__(self):
        self.t = 1_000_000.0

    def __call__(self):
        return self.t


def _sealed(path, clock):
    store = HistoryStore(path, clock=clock)
    SettingsStore(store).save(CHOSEN, app_labels={"com.android.settings": "Settings"})
    PinGuard(store).set_pin(PIN, n=2**10)
    assert SettingsStore(store).load().settings.allowed_apps == CHOSEN.allowed_apps
    store.close()


def _sql(path, *statements):
    db = sqlite3.connect(path)
    for statement, args in statements:
        db.execute(statement, args)
    db.commit()
    db.close()


WIDEN = ("INSERT INTO allowed_apps (package, label) VALUES ('com.phoneworld.wallet', 'Wallet')", [])
ATTACKS = {
    "delete the PIN row": [("DELETE FROM settings WHERE key = ?", [PIN_KEY]), WIDEN],
    "damage the PIN row": [("UPDATE settings SET value = '{\"salt\": \"zz\"}' WHERE key = ?", [PIN_KEY]), WIDEN],
    "delete the seal": [("DELETE FROM settings WHERE key = ?", [SEAL_SETTINGS_KEY]), WIDEN],
    "edit the list": [WIDEN],
}
# What the caregiver is told, in words, per attack (a piece of the English and of the Chinese sentence).
SAID = {
    "delete the PIN row": ("PIN was deleted outside the app", "PIN 码在应用之外被删除"),
    "damage the PIN row": ("PIN record was damaged outside the app", "PIN 码的记录在应用之外被损坏"),
    "delete the seal": ("check mark that protects the caregiver settings was removed", "校验记录在应用之外被删除"),
    "edit the list": ("Apps added outside the app: com.phoneworld.wallet", "在应用之外被加入的应用：com.phoneworld.wallet"),
}
HAS_PIN_LEFT = {"delete the seal", "edit the list"}


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_each_attack_ends_deny_all_with_words_and_a_lock(tmp_path, attack):
    path, clock = tmp_path / "h.db", Clock()
    _sealed(path, clock)
    _sql(path, *ATTACKS[attack])
    store = HistoryStore(path, clock=clock)
    loaded = SettingsStore(store).load()
    assert loaded.tampered and loaded.settings.allowed_apps == frozenset()
    assert loaded.settings.apps_state is AppsState.LOCKED
    en, zh = SAID[attack]
    assert en in loaded.problems[-1].en and zh in loaded.problems[-1].zh
    check = PinGuard(store).check(PIN)
    assert not check.ok  # the right PIN does not open the settings now
    if attack in HAS_PIN_LEFT:
        assert check.retry_after_s > 0 and "30 seconds" in loaded.problems[-1].en
        clock.t += 31
        assert PinGuard(store).check(PIN).ok  # the caregiver gets in after the pause, checks and saves
        SettingsStore(store).save(CHOSEN)
        assert SettingsStore(store).load().settings.allowed_apps == CHOSEN.allowed_apps
    else:
        clock.t += 3600
        assert not PinGuard(store).check(PIN).ok  # no PIN record: nobody gets in, ever


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_on_the_simulated_phone_the_command_line_allows_nothing_and_says_why(tmp_path, attack):
    path, clock = tmp_path / "h.db", Clock()
    _sealed(path, clock)
    _sql(path, *ATTACKS[attack])
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        run_cli.main(["Open the wallet", "--device", "sim", "--policy", "noop", "--db", str(path), "--json",
                      "--lang", "zh"])
    result = json.loads(out.getvalue().strip().splitlines()[-1])
    assert result["allowed_apps"] == [] and result["allowed_apps_from"].startswith("locked")
    assert any(SAID[attack][1] in note for note in result["notes"])


@pytest.mark.parametrize("attack", ["delete the PIN row", "edit the list"])
def test_the_app_says_it_at_start_up_and_the_simulated_phone_allows_nothing(qtbot, tmp_path, attack):
    path, clock = tmp_path / "h.db", Clock()
    _sealed(path, clock)
    _sql(path, *ATTACKS[attack])
    history = HistoryStore(path, clock=clock)
    services = AppServices(history=history, simulated_phone=lambda lg: open_simulated(lg))
    window = build_window(build_parser().parse_args(["--demo", "--lang", "en", "--no-speech"]), services=services)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    qtbot.waitUntil(lambda: any(SAID[attack][0] in a.text for a in window.announcer.log), timeout=10_000)
    parts = run_parts(SimpleNamespace(connection=window.phone, lang="en", settings=window.caregiver_settings))
    assert window.phone.is_simulated and parts.allowed.apps == frozenset()
    assert parts.context.allowed_apps == frozenset()


def test_nobody_can_set_a_new_pin_after_deleting_the_row(qtbot, tmp_path):
    path, clock = tmp_path / "h.db", Clock()
    _sealed(path, clock)
    _sql(path, ("DELETE FROM settings WHERE key = ?", [PIN_KEY]))
    store = HistoryStore(path, clock=clock)
    guard = PinGuard(store)
    assert guard.has_pin  # a removed PIN still counts: the "choose a new PIN" dialog is not offered
    with pytest.raises(SettingsError):
        guard.set_pin("1111", n=2**10)
    assert store.get_setting(PIN_KEY) is None
    # Through the app: the settings are not opened and the caregiver hears why (no PIN dialog at all).
    from app.settings_flow import open_caregiver_settings
    from tests.app_fixtures import make_window

    window = make_window(qtbot, history=store)
    window.pin_dialog = window.settings_dialog = None
    assert open_caregiver_settings(window) is False
    assert window.pin_dialog is None and window.settings_dialog is None
    assert "no new PIN can be set" in window.announcer.log[-1].text
    # Deleting the seals and the PIN row together is still seen (the audit row of the PIN being set).
    _sql(path, ("DELETE FROM settings WHERE key LIKE 'caregiver_seal%'", []))
    assert PinGuard(HistoryStore(path, clock=clock)).refusal() is not None


def test_an_empty_saved_list_never_widens_on_the_simulated_phone(tmp_path):
    path = tmp_path / "h.db"
    store = HistoryStore(path)
    PinGuard(store).set_pin(PIN, n=2**10)
    SettingsStore(store).save(CaregiverSettings())  # the caregiver (behind the PIN) chose no app at all
    store.close()
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        run_cli.main(["Open the wallet", "--device", "sim", "--policy", "noop", "--db", str(path), "--json"])
    result = json.loads(out.getvalue().strip().splitlines()[-1])
    assert result["allowed_apps"] == [] and result["allowed_apps_from"] == "caregiver settings"


@pytest.mark.parametrize("language_chosen", [False, True])
def test_a_first_run_with_no_apps_chosen_still_uses_the_simulated_phone(tmp_path, language_chosen):
    path = tmp_path / "h.db"
    if language_chosen:  # the first-run wizard saved only the language (no PIN, no app chosen)
        from app.settings_flow import save_language

        store = HistoryStore(path)
        assert save_language(store, "zh")
        store.close()
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        run_cli.main(["Open the wallet", "--device", "sim", "--policy", "noop", "--db", str(path), "--json"])
    result = json.loads(out.getvalue().strip().splitlines()[-1])
    assert len(result["allowed_apps"]) > 5 and result["allowed_apps_from"] == "simulated phone"


def test_an_old_database_with_a_pin_but_no_seal_loads_as_changed_outside_the_app(tmp_path):
    # Made as a version before the seal did: the PIN and the settings, no seal rows.
    path, clock = tmp_path / "h.db", Clock()
    _sealed(path, clock)
    _sql(path, ("DELETE FROM settings WHERE key LIKE 'caregiver_seal%'", []))
    store = HistoryStore(path, clock=clock)
    loaded = SettingsStore(store).load()
    assert loaded.tampered and loaded.settings.allowed_apps == frozenset()
    assert "older PhoneBuddy" in loaded.problems[-1].en and "旧版" in loaded.problems[-1].zh
    clock.t += 31
    assert PinGuard(store).check(PIN).ok
    SettingsStore(store).save(CHOSEN)  # the caregiver checks and saves: sealed from now on
    again = SettingsStore(store).load()
    assert not again.tampered and again.settings.allowed_apps == CHOSEN.allowed_apps
