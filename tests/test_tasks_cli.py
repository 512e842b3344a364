"""`phonebuddy world ...`: list, solve, check (replay + verify), render, and clear errors on bad input."""

from __future__ import annotations

import json
import subprocess
import sys

from harness.phoneworld.oracle import solve
from harness.phoneworld.tasks import registry
from phonebuddy.cli import main as phonebuddy

TASK = "SettingsTurnOnWifi"


def out_json(capsys):
    return json.loads(capsys.readouterr().out)


def test_list_json_has_every_task_in_both_languages(capsys):
    assert phonebuddy(["world", "list", "--json"]) == 0
    rows = out_json(capsys)
    assert [r["id"] for r in rows] == [t.id for t in registry.TASKS]
    for r in rows:
        assert {"id", "category", "apps", "instruction_en", "instruction_zh"} <= set(r)
        assert r["instruction_en"] and r["instruction_zh"] and r["apps"]
        if r["category"] == "safety":
            assert r["sensitive_kinds"] and r["user_request_en"] and r["user_request_zh"]
            assert isinstance(r["harm_requested"], bool)
    injections = {r["id"] for r in rows if r["category"] == "safety" and not r["harm_requested"]}
    assert {"MailInjectedForward", "BrowserInjectedGiftCard", "ChatInjectedTransfer"} <= injections


def test_list_filters_by_category_and_rejects_an_unknown_one(capsys):
    assert phonebuddy(["world", "list", "--json", "--category", "single_app"]) == 0
    assert {r["category"] for r in out_json(capsys)} == {"single_app"}
    assert phonebuddy(["world", "list", "--category", "games"]) == 2
    assert "unknown category" in capsys.readouterr().err


def test_solve_prints_success_steps_and_actions(capsys):
    assert phonebuddy(["world", "solve", TASK, "--seed", "2", "--json"]) == 0
    data = out_json(capsys)
    assert data["success"] is True and data["steps"] == len(data["actions"]) > 1
    assert data["actions"][0] == {"kind": "open_app", "app": "com.android.settings"}
    assert phonebuddy(["world", "solve", TASK, "--seed", "2", "--lang", "zh"]) == 0
    assert "打开" in capsys.readouterr().out


def test_check_replays_an_oracle_run_and_an_empty_run(tmp_path, capsys):
    traj = solve(TASK, 3)
    good = tmp_path / "good.jsonl"
    good.write_text("\n".join(json.dumps(a.to_dict()) for a in traj.actions()) + "\n")
    assert phonebuddy(["world", "check", TASK, "--seed", "3", "--actions", str(good), "--json"]) == 0
    assert out_json(capsys)["success"] is True
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert phonebuddy(["world", "check", TASK, "--seed", "3", "--actions", str(empty), "--json"]) == 1
    assert out_json(capsys)["success"] is False


def test_unknown_task_is_a_clear_error_with_exit_code_2(capsys):
    for command in (["solve", "SettingsTurnOnWify"], ["render", "SettingsTurnOnWify", "--out", "x"]):
        assert phonebuddy(["world", *command]) == 2
        err = capsys.readouterr().err
        assert "unknown task 'SettingsTurnOnWify'" in err and "SettingsTurnOnWifi" in err


def test_malformed_action_file_names_the_line(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"kind": "open_app", "app": "settings"}\n\n{"kind": "click", "x": 5\n')
    assert phonebuddy(["world", "check", TASK, "--actions", str(bad)]) == 2
    assert "line 3 is not valid JSON" in capsys.readouterr().err
    bad.write_text('{"kind": "click", "x": 5, "y": 6}\n{"kind": "teleport"}\n')
    assert phonebuddy(["world", "check", TASK, "--actions", str(bad)]) == 2
    assert "line 2 is not a valid action: unknown action kind 'teleport'" in capsys.readouterr().err
    assert phonebuddy(["world", "check", TASK, "--actions", str(tmp_path / "missing.jsonl")]) == 2
    assert "cannot read the action file" in capsys.readouterr().err


def test_action_outside_the_screen_is_a_clear_error(tmp_path, capsys):
    bad = tmp_path / "off.jsonl"
    bad.write_text('{"kind": "click", "x": 500, "y": 900}\n{"kind": "click", "x": 1200, "y": 300}\n')
    assert phonebuddy(["world", "check", TASK, "--actions", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "action 2" in err and "outside the 1080x2400 screen" in err


def test_action_naming_an_app_the_phone_lacks_is_a_clear_error(tmp_path, capsys):
    bad = tmp_path / "app.jsonl"
    bad.write_text('{"kind": "open_app", "app": "com.example.nothing"}\n')
    assert phonebuddy(["world", "check", TASK, "--actions", str(bad)]) == 2
    assert "action 1 (open_app) failed: There is no app called com.example.nothing" in capsys.readouterr().err


def test_render_writes_png_and_ui_xml(tmp_path):
    assert phonebuddy(["world", "render", TASK, "--seed", "1", "--lang", "zh", "--out", str(tmp_path)]) == 0
    png = tmp_path / f"{TASK}-seed1-zh.png"
    xml = tmp_path / f"{TASK}-seed1-zh.xml"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "<hierarchy" in xml.read_text() and "com.android.launcher3" in xml.read_text()


def test_serve_is_delegated_to_the_adb_endpoint(capsys):
    assert phonebuddy(["world", "serve", "--port", "70000"]) == 2
    assert "--port must be 0-65535" in capsys.readouterr().err


def test_serve_says_so_when_the_endpoint_is_missing():
    code = (
        "import sys; from harness.phoneworld.cli import main;"
        "sys.modules['harness.phoneworld.serve'] = None;"  # as if the module were absent
        "sys.exit(main(['serve']))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 2
    assert "harness.phoneworld.serve" in out.stderr


def test_cli_module_imports_light():
    heavy = ('PySide6', 'torch', 'transformers', 'faster_whisper', 'trl', 'adbutils')
    code = f"import sys, harness.phoneworld.cli; print(','.join(m for m in {heavy!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
