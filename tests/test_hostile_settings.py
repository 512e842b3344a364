"""Caregiver settings under bad luck and tampering (issue 20): values of the wrong type or out of range get
a note and the safe default instead of a crash or silent acceptance; changes made outside the app (allowed
apps widened, the lockout row deleted) are noticed, said, and not used."""

from __future__ import annotations

import json
import sqlite3

import pytest

from assistant_core.history import HistoryStore
from assistant_core.safety import Category
from assistant_core.settings import (
    PIN_GUARD_KEY,
    SETTINGS_KEY,
    CaregiverSettings,
    PinGuard,
    SettingsError,
    SettingsStore,
)

CHOSEN = CaregiverSettings(allowed_apps=frozenset({"com.android.settings"}),
                           always_confirm=frozenset({Category.TEXT_ENTRY}), step_budget=12, language="zh")


class Clock:
    def __init__(self):
        self.t = 1_000_000.0

    def __call__(self):
        return self.t


@pytest.mark.parametrize("field,value", [("language", 5), ("voice", ["x"]), ("model", None), ("step_budget", True),
                                         ("step_budget", 12.0), ("confirm_window_s", float("nan")),
                                         ("confirm_window_s", float("inf")), ("confirm_window_s", True),
                                         ("speech_rate", "fast"), ("confirm_reminders", 10**30),
                                         ("loop_guard_repeats", -1)])
def test_a_bad_value_gets_a_note_and_the_safe_default(tmp_path, field, value):
    store = HistoryStore(tmp_path / "h.db")
    record = json.loads(CHOSEN.to_json())
    record[field] = value
    store.put_setting(SETTINGS_KEY, json.dumps(record))
    loaded = SettingsStore(store).load()
    default = getattr(CaregiverSettings(), field)
    assert getattr(loaded.settings, field) == default
    assert loaded.needs_setup and loaded.settings.allowed_apps == frozenset()
    assert field in loaded.problems[-1].en and loaded.problems[-1].zh
    assert loaded.settings.step_budget == (12 if field != "step_budget" else 30)  # good fields are kept


@pytest.mark.parametrize("kwargs", [{"language": 5}, {"step_budget": True}, {"confirm_window_s": float("nan")},
                                    {"allowed_apps": "com.a"}, {"speech_rate": False}])
def test_constructing_bad_settings_is_a_settings_error(kwargs):
    with pytest.raises(SettingsError):
        CaregiverSettings(**kwargs)


def test_no_pin_no_seal_needed(tmp_path):
    store = HistoryStore(tmp_path / "h.db")
    SettingsStore(store).save(CHOSEN)
    loaded = SettingsStore(store).load()
    assert loaded.settings == CHOSEN and not loaded.tampered and not loaded.problems


def sealed_store(tmp_path, clock=None):
    store = HistoryStore(tmp_path / "h.db")
    SettingsStore(store).save(CHOSEN)
    PinGuard(store, clock=clock or Clock()).set_pin("2468", n=2**10)
    return store


def test_allowed_apps_widened_outside_the_app_are_noticed_and_not_used(tmp_path):
    store = sealed_store(tmp_path)
    assert SettingsStore(store).load().settings == CHOSEN  # sealed by the app's own saves, and the PIN change
    db = sqlite3.connect(tmp_path / "h.db")
    db.execute("INSERT INTO allowed_apps (package, label) VALUES ('com.phoneworld.wallet', 'Wallet')")
    db.commit()
    db.close()
    loaded = SettingsStore(store).load()
    assert loaded.tampered and loaded.needs_setup
    assert loaded.settings.allowed_apps == frozenset()
    assert "outside the app" in loaded.problems[-1].en and "应用之外" in loaded.problems[-1].zh
    assert any(kind == "settings_tampered" for kind, *_ in store.audit_rows())
    # The caregiver checks and saves again (after the PIN): trusted again.
    SettingsStore(store).save(CHOSEN)
    assert SettingsStore(store).load().settings == CHOSEN


def test_the_settings_record_edited_outside_the_app_is_noticed(tmp_path):
    store = sealed_store(tmp_path)
    record = json.loads(CHOSEN.to_json())
    record["allowed_apps"] = ["com.phoneworld.wallet"]
    record["step_budget"] = 500
    store.put_setting(SETTINGS_KEY, json.dumps(record))  # a raw write, not SettingsStore.save
    loaded = SettingsStore(store).load()
    assert loaded.tampered and loaded.settings.allowed_apps == frozenset()


def test_a_pin_change_does_not_launder_a_tampered_record(tmp_path):
    store = sealed_store(tmp_path)
    db = sqlite3.connect(tmp_path / "h.db")
    db.execute("INSERT INTO allowed_apps (package, label) VALUES ('com.phoneworld.wallet', 'Wallet')")
    db.commit()
    db.close()
    PinGuard(store, clock=Clock()).set_pin("1357", n=2**10)
    assert SettingsStore(store).load().tampered


@pytest.mark.parametrize("how", ["delete", "zero"])
def test_the_lockout_cannot_be_reset_by_deleting_or_editing_its_row(tmp_path, how):
    clock = Clock()
    store = sealed_store(tmp_path, clock)
    guard = PinGuard(store, clock=clock)
    for wrong in ("0000", "1111", "2222"):
        assert not guard.check(wrong).ok
    assert not guard.check("2468").ok  # locked
    db = sqlite3.connect(tmp_path / "h.db")
    if how == "delete":
        db.execute("DELETE FROM settings WHERE key = ?", [PIN_GUARD_KEY])
    else:
        db.execute("UPDATE settings SET value = ? WHERE key = ?",
                   [json.dumps({"failures": 0, "locked_until": 0.0}), PIN_GUARD_KEY])
    db.commit()
    db.close()
    reopened = PinGuard(store, clock=clock)
    assert reopened.tampered
    check = reopened.check("2468")
    assert not check.ok and check.retry_after_s > 0
    clock.t += 31
    assert PinGuard(store, clock=clock).check("2468").ok  # the caregiver still gets in, after the pause
