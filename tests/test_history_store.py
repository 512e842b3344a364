"""The history store and the caregiver settings: durability settings, migrations, a damaged file set
aside (deny-all afterwards), trigram search in Chinese, consent-gated export, the PIN and its back-off."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import sqlite3

import pytest
import sqlite_utils
from PIL import Image

from assistant_core.errors import SettingsError
from assistant_core.history import (
    MIGRATIONS,
    SCHEMA_VERSION,
    ConsentPurpose,
    ConsentRequiredError,
    HistoryError,
    HistoryStore,
    make_thumbnail,
)
from assistant_core.i18n import Text
from assistant_core.safety import Category
from assistant_core.settings import SAFE_DEFAULTS, CaregiverSettings, PinGuard, SettingsStore


class FakeClock:
    def __init__(self, t: float = 1_800_000_000.0):
        self.t = t

    def __call__(self) -> float:
        return self.t


def test_wal_mode_schema_version_and_durable_rows(tmp_path):
    store = HistoryStore(tmp_path / "h.db")
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.schema_version == SCHEMA_VERSION
    run = store.start_run("打开飞行模式", lang="zh", device="sim", policy="scripted")
    step = store.record_step(run, 0, action={"kind": "click", "x": 1, "y": 2}, verdict="confirm",
                             rule="confirm.target", reason=Text("r", "理由"))
    store.record_confirmation(run, 0, step, answer="no", by_default=False, question="Pay?")
    # The connection is back to NORMAL between durable commits.
    assert store.db.execute("PRAGMA synchronous").fetchone()[0] == 1
    store.close()
    again = HistoryStore(tmp_path / "h.db")
    (rec,) = again.steps(run)
    assert rec.confirmation == "no" and rec.reason.zh == "理由" and not rec.executed
    kinds = [k for k, *_ in again.audit_rows()]
    assert kinds == ["run_started", "decision", "confirmation"]


def test_consent_decision_and_audit_rows_commit_under_synchronous_full(tmp_path):
    store = HistoryStore(tmp_path / "h.db")
    run = store.start_run("Pay the bill", device="sim", policy="scripted")
    statements: list[str] = []
    store.db.conn.set_trace_callback(statements.append)

    def mode_at_commit(write) -> list[str]:
        """What synchronous was set to at each COMMIT of `write` (the last PRAGMA before it)."""
        statements.clear()
        write()
        modes, mode = [], "NORMAL"
        for sql in statements:
            upper = " ".join(sql.upper().split())
            if upper.startswith("PRAGMA SYNCHRONOUS="):
                mode = upper.split("=", 1)[1]
            elif upper.startswith(("COMMIT", "RELEASE")):  # the transaction's end (or a savepoint's)
                modes.append(mode)
        return modes

    step = []
    assert set(mode_at_commit(lambda: step.append(store.record_step(run, 0, action={"kind": "click"},
                                                                     verdict="confirm")))) == {"FULL"}
    assert set(mode_at_commit(lambda: store.record_confirmation(run, 0, step[0], answer="yes", by_default=False,
                                                                question="Pay?"))) == {"FULL"}
    assert set(mode_at_commit(lambda: store.record_consent(ConsentPurpose.TRAINING_EXPORT, True))) == {"FULL"}
    assert set(mode_at_commit(lambda: store.audit("left_allowed_apps", run_id=run))) == {"FULL"}
    # Conversation text is not an audit row: it commits at the connection's normal level.
    assert set(mode_at_commit(lambda: store.add_message("user", "hello"))) == {"NORMAL"}
    store.db.conn.set_trace_callback(None)


def test_an_old_schema_is_migrated(tmp_path):
    path = tmp_path / "old.db"
    db = sqlite_utils.Database(sqlite3.connect(path))
    MIGRATIONS[0](db)
    db.execute("PRAGMA user_version=1")
    db["runs"].insert({"goal": "old run", "lang": "en", "started": 1.0, "steps": 0})
    db.conn.commit()
    db.conn.close()
    store = HistoryStore(path)
    assert store.schema_version == SCHEMA_VERSION
    assert store.get_run(1).goal == "old run" and store.get_run(1).verification is None
    store.add_message("user", "飞行模式怎么开")
    assert store.search("飞行模式")


def test_a_schema_2_database_migrates_and_steps_record_the_screen_size(tmp_path):
    path = tmp_path / "v2.db"
    db = sqlite_utils.Database(sqlite3.connect(path))
    MIGRATIONS[0](db)
    MIGRATIONS[1](db)
    db.execute("PRAGMA user_version=2")
    db["runs"].insert({"goal": "old run", "lang": "en", "started": 1.0, "steps": 1, "outcome": "finished"})
    db["steps"].insert({"run_id": 1, "idx": 0, "action": json.dumps({"kind": "click", "x": 5, "y": 6}),
                        "thought": "点一下旧的开关", "executed": 1, "verdict": "allow", "timings": "{}"})
    db.conn.commit()
    db.conn.close()
    store = HistoryStore(path)
    assert store.schema_version == SCHEMA_VERSION >= 3
    columns = {c.name for c in store.db["steps"].columns}
    assert {"width", "height"} <= columns
    (old,) = store.steps(1)
    assert old.width is None and old.height is None and old.thought == "点一下旧的开关"
    thumb = make_thumbnail(Image.new("RGB", (720, 1600), (10, 200, 90)))
    new = store.record_step(1, 1, action={"kind": "click", "x": 360, "y": 800}, thought="点一下新的开关",
                            verdict="allow", thumbnail=thumb, width=720, height=1600)
    store.update_step(new, executed=True)
    assert [(s.width, s.height) for s in store.steps(1)] == [(None, None), (720, 1600)]
    # Full-text search still indexes old and new step rows after the migration.
    assert {h.row_id for h in store.search("的开关")} == {1, new}
    store.record_consent(ConsentPurpose.TRAINING_EXPORT, True)
    out = io.StringIO()
    assert store.export_training([1], out) == 2
    first, second = (json.loads(line) for line in out.getvalue().splitlines())
    # An old step's size is unknown: the line says nothing rather than a guess.
    assert not {"width", "height", "screenshot"} & set(first)
    assert (second["width"], second["height"]) == (720, 1600)
    assert base64.b64decode(second["screenshot"]) == thumb
    store.close()
    assert HistoryStore(path).schema_version == SCHEMA_VERSION  # reopening runs no migration again


def test_a_newer_schema_is_refused_untouched(tmp_path):
    path = tmp_path / "new.db"
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version={SCHEMA_VERSION + 5}")
    conn.commit()
    conn.close()
    with pytest.raises(HistoryError) as info:
        HistoryStore(path)
    assert "newer" in str(info.value) and info.value.message.zh
    assert path.exists()


def test_a_damaged_file_is_set_aside_and_the_app_starts_deny_all(tmp_path):
    path = tmp_path / "h.db"
    good = HistoryStore(path)
    SettingsStore(good).save(CaregiverSettings(allowed_apps=frozenset({"com.android.settings"})))
    good.close()
    path.write_bytes(b"this is not a database" * 500)
    clock = FakeClock()
    store = HistoryStore(path, clock=clock)
    assert store.set_aside is not None and store.set_aside.exists()
    assert store.set_aside.name.startswith("h.db.corrupt-20")
    loaded = SettingsStore(store).load()
    assert loaded.needs_setup and loaded.settings.allowed_apps == frozenset()
    assert loaded.problems and all(p.en and p.zh for p in loaded.problems)
    assert store.set_aside_message().zh


def test_trigram_search_finds_chinese_and_short_queries_fall_back(tmp_path):
    store = HistoryStore(tmp_path / "h.db")
    run = store.start_run("goal")
    store.add_message("user", "请帮我打开飞行模式", lang="zh", run_id=run)
    store.add_message("assistant", "Turning on airplane mode", run_id=run)
    store.record_step(run, 0, action={"kind": "click"}, thought="点一下蓝牙开关", verdict="allow", rule="allow.default")
    assert [h.table for h in store.search("飞行模式")] == ["conversation"]
    assert [h.table for h in store.search("蓝牙开关")] == ["steps"]
    assert [h.table for h in store.search("蓝牙")] == ["steps"]  # two characters: LIKE
    assert store.search("airplane")[0].text == "Turning on airplane mode"
    assert store.search('quote " inside') == []


def test_export_needs_consent(tmp_path):
    store = HistoryStore(tmp_path / "h.db")
    run = store.start_run("turn on wifi")
    store.record_step(run, 0, action={"kind": "click", "x": 5, "y": 6}, thought="tap", verdict="allow", rule="allow.default")
    with pytest.raises(ConsentRequiredError):
        store.export_training([run], io.StringIO())
    store.record_consent(ConsentPurpose.TRAINING_EXPORT, True)
    out = io.StringIO()
    assert store.export_training([run], out) == 1
    line = json.loads(out.getvalue())
    assert line["goal"] == "turn on wifi" and line["action"] == {"kind": "click", "x": 5, "y": 6}
    store.record_consent(ConsentPurpose.TRAINING_EXPORT, False)
    with pytest.raises(ConsentRequiredError):
        store.export_training([run], io.StringIO())


def test_thumbnails_are_small_jpegs():
    data = make_thumbnail(Image.new("RGB", (1080, 2400), (200, 30, 30)))
    assert data[:2] == b"\xff\xd8" and len(data) < 5000
    assert Image.open(io.BytesIO(data)).size[1] <= 160
    assert make_thumbnail(None) is None


def test_settings_round_trip_and_damaged_records_give_safe_defaults(tmp_path):
    store = HistoryStore(tmp_path / "h.db")
    first = SettingsStore(store).load()
    assert first.needs_setup and first.settings == SAFE_DEFAULTS and first.settings.allowed_apps == frozenset()
    chosen = CaregiverSettings(allowed_apps=frozenset({"com.android.settings"}), always_confirm=frozenset({Category.TEXT_ENTRY}),
                               step_budget=12, speech_rate=0.8, language="zh-CN")
    SettingsStore(store).save(chosen, app_labels={"com.android.settings": "设置"})
    loaded = SettingsStore(store).load()
    assert loaded.settings == chosen and not loaded.needs_setup and loaded.settings.language == "zh"
    for bad in ("{not json", "[1, 2]", json.dumps({"step_budget": -3}), json.dumps({"allowed_apps": "*"}),
                json.dumps({"always_confirm": ["everything"]})):
        store.put_setting("caregiver_settings", bad)
        result = SettingsStore(store).load()
        assert result.needs_setup and result.settings.allowed_apps == frozenset(), bad
        assert "damaged" in result.problems[-1].en and result.problems[-1].zh
    with pytest.raises(SettingsError):
        CaregiverSettings(speech_rate=9)


def test_pin_is_salted_scrypt_with_back_off(tmp_path):
    store = HistoryStore(tmp_path / "h.db")
    clock = FakeClock()
    guard = PinGuard(store, clock=clock)
    assert not guard.check("1234").ok  # no PIN yet
    guard.set_pin("2468", n=2**10)
    raw = json.loads(store.get_setting("caregiver_pin"))
    # Only the salt, the scrypt digest and its cost are kept: the digest is recomputed here from the PIN and
    # the salt (the PIN's digits may turn up inside random hex, so "'2468' not in the record" is no test).
    assert set(raw) == {"salt", "digest", "n", "r", "p"} and len(bytes.fromhex(raw["salt"])) == 16
    assert "2468" not in {str(v) for v in raw.values()}
    assert bytes.fromhex(raw["digest"]) == hashlib.scrypt(b"2468", salt=bytes.fromhex(raw["salt"]), n=raw["n"],
                                                          r=raw["r"], p=raw["p"], maxmem=2**25, dklen=32)
    assert guard.check("2468").ok
    assert not guard.check("0000").ok and not guard.check("1111").ok
    third = guard.check("2222")
    assert not third.ok and third.retry_after_s == 30
    # Locked: even the right PIN waits.
    assert not guard.check("2468").ok
    clock.t += 31
    fourth = guard.check("3333")
    assert fourth.retry_after_s == 60
    # The back-off survives a restart.
    clock.t += 10
    assert not PinGuard(store, clock=clock).check("2468").ok
    clock.t += 60
    assert PinGuard(store, clock=clock).check("2468").ok
    with pytest.raises(SettingsError):
        guard.set_pin("12")
