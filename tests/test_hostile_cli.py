"""Every `phonebuddy` command on malformed arguments and damaged files (issue 20): a clear message and a
non-zero exit, never a Python traceback; and `--allowed-apps` that replaces the caregiver's list is said
and written to the audit log."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from assistant_core.history import HistoryStore
from assistant_core.policies import escape_reply
from assistant_core.settings import CaregiverSettings, SettingsStore
from phonebuddy import cli as app_cli
from tests.core_fixtures import tool_call

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def files(tmp_path):
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(bytes(range(256)) * 64)
    huge_int = tmp_path / "huge.txt"
    huge_int.write_text('<tool_call>{"name": "click", "arguments": {"points": [[' + "9" * 5000 + ", 1]]}}</tool_call>")
    overflow = tmp_path / "overflow.txt"
    overflow.write_text('<tool_call>{"name": "click", "arguments": {"points": [[1e308, 1e308]]}}</tool_call>')
    bad_json = tmp_path / "bad.json"
    bad_json.write_text("{not json", encoding="utf-8")
    not_wav = tmp_path / "not.wav"
    not_wav.write_bytes(b"RIFF" + struct.pack("<I", 2**31) + b"WAVEjunk" * 10)
    bad_db = tmp_path / "bad.db"
    bad_db.write_bytes(b"SQLite format 3\0" + os.urandom(4096))
    actions = tmp_path / "actions.jsonl"
    actions.write_text('{"kind": "teleport"}\n[1, 2]\n\x00\x01\n', encoding="utf-8")
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "keep.txt").write_text("mine", encoding="utf-8")
    history = tmp_path / "history.jsonl"
    history.write_text('{"run_id": 1, "step": 0, "goal": "g", "outcome": "finished", "executed": true, '
                       '"verdict": "allow", "width": 1e6, "height": 1e6, "action": {"kind": "wait"}}\n',
                       encoding="utf-8")
    return {"garbage": garbage, "huge": huge_int, "overflow": overflow, "bad_json": bad_json, "not_wav": not_wav,
            "bad_db": bad_db, "actions": actions, "occupied": occupied, "history": history, "tmp": tmp_path}


CASES = [
    ["nosuchgroup"],
    ["run"],
    ["run", "x", "--device", "sim", "--policy", "scripted:{garbage}", "--no-history"],
    ["run", "x", "--device", "sim", "--policy", "scripted:{garbage}", "--db", "{bad_db}"],
    ["run", "x", "--device", "sim", "--policy", "scripted:{huge}", "--no-history", "--max-steps", "2"],
    ["run", "x", "--device", "sim", "--policy", "scripted:{overflow}", "--no-history", "--max-steps", "2"],
    ["run", "x", "--device", "sim", "--policy", "noop", "--db", "{tmp}"],
    ["run", "x", "--device", "sim", "--max-steps", "-5", "--no-history"],
    ["run", "x", "--device", "sim", "--kinds", "{bad_json}", "--no-history", "--policy", "noop"],
    ["run", "x", "--device", "sim:SettingsTurnOnWifi:99999999999999999999999", "--no-history"],
    ["policy", "parse", "--width", "1080", "--height", "2400", "--file", "{huge}"],
    ["policy", "parse", "--width", "1080", "--height", "2400", "--file", "{overflow}"],
    ["policy", "parse", "--width", "1080", "--height", "2400", "--file", "{garbage}"],
    ["policy", "parse", "--width", "0", "--height", "-1", "--file", "{overflow}"],
    ["policy", "parse", "--width", "1080", "--height", "2400", "--file", "{tmp}/missing.txt"],
    ["policy", "prompt", "x", "--width", "-3"],
    ["policy", "prompt", "x", "--profile", "nosuchprofile"],
    ["world", "solve", "NoSuchTask"],
    ["world", "check", "SettingsTurnOnWifi", "--actions", "{actions}"],
    ["world", "check", "SettingsTurnOnWifi", "--actions", "{tmp}/missing.jsonl"],
    ["world", "render", "SettingsTurnOnWifi", "--out", "{garbage}"],
    ["train", "data", "--categories", "", "--out", "{occupied}", "--history", "{history}"],
    ["train", "data", "--categories", "", "--out", "{tmp}/ds", "--history", "{history}"],
    ["train", "data", "--categories", "", "--out", "{tmp}/ds", "--history", "{garbage}"],
    ["train", "data", "--out", "{tmp}/ds", "--seeds", "z-y"],
    ["train", "sft", "{bad_json}"],
    ["train", "sft", "{garbage}"],
    ["train", "eval", "--policy", "noop", "--seeds", "1-", "--output", "{tmp}/runs"],
    ["verify", "match", ""],
    ["verify", "kinds", "--kinds", "{garbage}"],
    ["speech", "transcribe", "{not_wav}"],
    ["speech", "transcribe", "{tmp}/missing.wav"],
    ["models", "locate", "nosuchprofile"],
]


@pytest.mark.parametrize("argv", CASES, ids=[" ".join(c)[:60] for c in CASES])
def test_malformed_arguments_and_files_get_a_message_not_a_traceback(argv, files, capsys):
    args = [a.format(**files) for a in argv]
    try:
        code = app_cli.main(args)
    except SystemExit as exit_:  # argparse's own usage error
        code = exit_.code
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out
    assert isinstance(code, int)  # returned (or argparse's usage exit), no exception escaped
    assert captured.err.strip() or captured.out.strip()  # something is said
    assert (files["occupied"] / "keep.txt").exists()


def test_the_entry_point_in_a_subprocess_says_no_traceback(files):
    proc = subprocess.run([sys.executable, "-m", "phonebuddy.cli", "policy", "parse", "--width", "1080", "--height", "2400",
                           "--file", str(files["overflow"])], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr and proc.stderr.strip()


def test_allowed_apps_on_the_command_line_replacing_the_caregivers_list_is_said_and_recorded(tmp_path, capsys):
    db = tmp_path / "h.db"
    store = HistoryStore(db)
    SettingsStore(store).save(CaregiverSettings(allowed_apps=frozenset({"com.android.settings"})))
    store.close()
    script = tmp_path / "replies.txt"
    script.write_text(escape_reply(tool_call("finish", text="ok")) + "\n", encoding="utf-8")
    capsys.readouterr()
    code = app_cli.main(["run", "open the wallet", "--device", "sim", "--policy", f"scripted:{script}",
                         "--allowed-apps", "com.phoneworld.wallet", "--db", str(db), "--json"])
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert code == 0 and out["allowed_apps"] == ["com.phoneworld.wallet"]
    assert "replaces the caregiver's allowed apps" in captured.err and "com.android.settings" in captured.err
    assert any("replaces the caregiver's allowed apps" in note for note in out["notes"])
    rows = HistoryStore(db).audit_rows("allowed_apps_override")
    assert rows and rows[-1][3]["allowed"] == ["com.phoneworld.wallet"]
    assert rows[-1][3]["caregiver"] == ["com.android.settings"]
