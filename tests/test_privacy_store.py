"""The profile store (encrypted at rest, changed only with the caregiver PIN) and the user's rights:
`phonebuddy privacy show | export | delete`, behind the PIN; delete leaves no profile or history rows."""

from __future__ import annotations

import io
import json
import sqlite3
import stat
from pathlib import Path

import pytest

from assistant_core.history import HistoryStore
from assistant_core.privacy import Kind, Profile, ProfileItem, Tier
from assistant_core.profile_store import PrivacyStore, ProfileError
from assistant_core.settings import PinGuard
from phonebuddy import privacy_cli

PIN = "2468"
PROFILE = Profile((
    ProfileItem(Kind.NAME, "Wang Fang", Tier.SHARE),
    ProfileItem(Kind.PHONE, "13812345678", Tier.ASK),
    ProfileItem(Kind.ID_NUMBER, "11010519491231002X", Tier.NEVER),
    ProfileItem(Kind.ADDRESS, "12 Lake Street, flat 3", Tier.SHARE, label="home"),
    ProfileItem(Kind.NOTES, "allergic to penicillin", Tier.NEVER),
))


@pytest.fixture
def history(tmp_path: Path) -> HistoryStore:
    h = HistoryStore(tmp_path / "history.db")
    PinGuard(h).set_pin(PIN, n=2**10)
    run = h.start_run("Call my daughter at 13812345678", lang="en")
    h.record_step(run, 0, action={"kind": "click", "x": 1, "y": 2}, thought="tap the call button")
    h.add_message("user", "Call my daughter", run_id=run)
    h.finish_run(run, outcome="finished", steps=1, summary="Called")
    return h


def test_profile_needs_the_pin_and_is_encrypted_at_rest(history, tmp_path: Path):
    store = PrivacyStore.beside(history)
    assert store is not None and store.path == tmp_path / "privacy.db"
    with pytest.raises(ProfileError) as wrong:
        store.save_profile(PROFILE, pin="0000", guard=PinGuard(history))
    assert "PIN" in wrong.value.message.en and "PIN" in wrong.value.message.zh
    assert store.load_profile() == Profile()
    store.save_profile(PROFILE, pin=PIN, guard=PinGuard(history))
    assert PrivacyStore(store.path).load_profile() == PROFILE
    raw = store.path.read_bytes() + (store.path.with_name("privacy.db-wal").read_bytes()
                                     if store.path.with_name("privacy.db-wal").exists() else b"")
    for secret in (b"13812345678", b"11010519491231002X", b"penicillin", b"Lake Street", b"Wang Fang"):
        assert secret not in raw
    # No keyring here: the key is a file only this user can read, and the store says so.
    assert store.key_storage == "file"
    assert stat.S_IMODE(store.key_path.stat().st_mode) == 0o600
    assert "no keyring" in store.key_message.en and "钥匙串" in store.key_message.zh
    store.key_path.unlink()
    with pytest.raises(ProfileError) as lost:
        PrivacyStore(store.path).load_profile()
    assert "key is missing" in lost.value.message.en


def test_no_pin_set_means_no_change(tmp_path: Path):
    h = HistoryStore(tmp_path / "h.db")
    store = PrivacyStore(tmp_path / "privacy.db")
    with pytest.raises(ProfileError) as err:
        store.save_profile(PROFILE, pin="1234", guard=PinGuard(h))
    assert "No caregiver PIN" in err.value.message.en


def run_cli(args: list[str], pin: str, monkeypatch, capsys) -> tuple[int, str, str]:
    monkeypatch.setattr("sys.stdin", io.StringIO(pin + "\n"))
    capsys.readouterr()
    rc = privacy_cli.main(args)
    out = capsys.readouterr()
    return rc, out.out, out.err


def counts(db: Path, tables: list[str]) -> dict[str, int]:
    with sqlite3.connect(db) as conn:
        return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}


def test_show_export_delete_behind_the_pin(history, tmp_path: Path, monkeypatch, capsys):
    store = PrivacyStore.beside(history)
    store.save_profile(PROFILE, pin=PIN, guard=PinGuard(history))
    store.record_remote(host="gpu-box", nbytes=52_000, masked={"shade_rows": 1})
    db = ["--db", str(history.path), "--pin-stdin"]

    rc, out, err = run_cli([*db, "show"], "9999", monkeypatch, capsys)
    assert rc == 3 and "PIN" in err and out == ""

    rc, out, _ = run_cli([*db, "show"], PIN, monkeypatch, capsys)
    assert rc == 0
    assert "1 requests" in out and "5 items" in out and "your ID number (never)" in out and "gpu-box" in out
    assert "13812345678" not in out  # values are never said
    rc, out, _ = run_cli([*db, "--lang", "zh", "show"], PIN, monkeypatch, capsys)
    assert rc == 0 and "你的身份证号（从不提供）" in out

    target = tmp_path / "export.json"
    rc, out, _ = run_cli([*db, "export", str(target)], PIN, monkeypatch, capsys)
    assert rc == 0 and str(target) in out
    data = json.loads(target.read_text(encoding="utf-8"))
    assert data["runs"][0]["goal"].startswith("Call my daughter") and data["runs"][0]["steps"][0]["thought"]
    assert data["conversation"][0]["text"] == "Call my daughter"
    assert {i["value"] for i in data["profile"]} >= {"13812345678", "allergic to penicillin"}
    assert data["remote_log"][0]["host"] == "gpu-box"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600

    rc, out, _ = run_cli([*db, "delete"], PIN, monkeypatch, capsys)
    assert rc == 0 and "Deleted: 1 requests, 1 messages" in out
    history.close()
    store.close()
    left = counts(Path(history.path), ["runs", "steps", "events", "conversation"])
    assert left == {"runs": 0, "steps": 0, "events": 0, "conversation": 0}
    assert counts(store.path, ["profile", "remote_log"]) == {"profile": 0, "remote_log": 0}
    assert not store.key_path.exists()
    raw = Path(history.path).read_bytes()
    assert b"my daughter" not in raw  # vacuumed: not left in free pages
    with sqlite3.connect(history.path) as conn:  # the audit keeps no request text, and the PIN still works
        details = " ".join(r[0] for r in conn.execute("SELECT detail FROM audit"))
    assert "daughter" not in details
    rc, out, _ = run_cli([*db, "show"], PIN, monkeypatch, capsys)
    assert rc == 0 and "0 requests" in out and "profile is empty" in out
