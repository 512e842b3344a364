"""`phonebuddy run`: a task solved through the gate with its verifier reported, the run recorded in the
history database, clear errors for bad arguments, and the real entry point in a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from assistant_core.history import HistoryStore
from assistant_core.policies import escape_reply
from phonebuddy import run_cli as cli
from tests.core_fixtures import tool_call

ROOT = Path(__file__).resolve().parents[1]


def run_json(args, capsys) -> tuple[int, dict]:
    capsys.readouterr()
    code = cli.main(args)
    return code, json.loads(capsys.readouterr().out)


def test_the_oracle_solves_a_task_through_the_gate_and_the_verifier_is_reported(tmp_path, capsys):
    db = tmp_path / "h.db"
    code, out = run_json(["", "--device", "sim:SettingsTurnOnWifi:2", "--policy", "oracle", "--lang", "zh",
                          "--db", str(db), "--json"], capsys)
    assert code == 0
    assert out["outcome"] == "finished" and out["task"]["verifier_passed"] is True
    assert out["verification"]["status"] == "verified"
    assert out["goal"] and all("\u4e00" <= ch <= "\u9fff" or not ch.isalpha() for ch in out["goal"][:2])
    assert out["allowed_apps"] == ["com.android.settings"] and out["allowed_apps_from"].startswith("task")
    assert all(s["verdict"] for s in out["steps"])
    store = HistoryStore(db)
    run = store.get_run(out["run_id"])
    assert run.outcome == "finished" and run.verification == "verified" and run.policy == "oracle"
    steps = store.steps(run.id)
    assert len(steps) == len(out["steps"])
    for step in steps:  # each step keeps what it looked at, its size and its timings
        assert step.thumbnail and step.thumbnail[:3] == b"\xff\xd8\xff"  # a JPEG
        assert (step.width, step.height) == (1080, 2400)
        assert {"observe_s", "propose_s", "gate_s"} <= set(step.timings) and min(step.timings.values()) >= 0
    assert store.search("完成")  # the spoken summary is in the conversation, searchable in Chinese


def test_a_scripted_file_is_parsed_by_the_real_parser_and_refusals_are_reported(tmp_path, capsys):
    script = tmp_path / "replies.txt"
    lines = ["# a comment", escape_reply(tool_call("open_app", package="com.phoneworld.wallet")),
             "this is not a tool call", escape_reply(tool_call("finish", text="ok"))]
    script.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out = run_json(["open the wallet", "--device", "sim", "--policy", f"scripted:{script}",
                          "--allowed-apps", "com.android.settings", "--no-history", "--no-fast-path", "--json"], capsys)
    assert code == 3 and out["outcome"] == "finished" and out["ending"] == "refused_caregiver"  # refused, not done
    assert out["steps"][0]["rule"] == "deny.app_not_allowed" and not out["steps"][0]["executed"]
    assert out["steps"][1]["error"].startswith("Your reply could not be used")
    assert out["refusals"] == 1 and out["task"] is None


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["x", "--device", "sim:NoSuchTask"], "unknown task"),
        (["x", "--device", "sim:SettingsTurnOnWifi:abc"], "seed"),
        (["x", "--policy", "oracle"], "needs --device sim:TASK"),
        (["x", "--policy", "scripted:/does/not/exist.txt"], "cannot read the script"),
        (["x", "--policy", "magic"], "not a policy; expected"),
        (["", "--device", "sim"], "goal is empty"),
        (["x", "--device", "emulator-5554", "--adb-port", "1"], "adb server"),
    ],
)
def test_bad_arguments_get_a_clear_message(args, message, capsys):
    assert cli.main([*args, "--no-history"]) == 2
    assert message in capsys.readouterr().err


def test_the_phonebuddy_entry_point_runs_a_task_in_a_subprocess(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "phonebuddy.cli", "run", "", "--device", "sim:SettingsTurnOnBluetooth:0",
                           "--policy", "oracle", "--db", str(tmp_path / "h.db"), "--json"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["task"]["verifier_passed"] is True


def test_confirm_ask_reads_the_answer_from_the_console(tmp_path):
    script = tmp_path / "replies.txt"
    lines = [tool_call("open_app", package="com.android.settings"), tool_call("click", points=[[500, 454]]),
             tool_call("click", points=[[500, 204]]), tool_call("finish", text="done")]
    script.write_text("\n".join(escape_reply(x) for x in lines) + "\n", encoding="utf-8")
    args = [sys.executable, "-m", "phonebuddy.cli", "run", "turn off location", "--device", "sim", "--policy",
            f"scripted:{script}", "--allowed-apps", "com.android.settings", "--confirm", "ask", "--lang", "zh",
            "--no-history", "--no-fast-path", "--json"]
    for answer, executed in (("再说一遍\n确认\n", True), ("取消\n", False), ("", False)):
        proc = subprocess.run(args, cwd=ROOT, input=answer, capture_output=True, text=True, timeout=120)
        out = json.loads(proc.stdout)
        toggle = out["steps"][2]
        assert toggle["verdict"] == "confirm" and toggle["executed"] is executed, (answer, toggle)
        assert "安全设置" in proc.stderr  # the question, read in the chosen language


@pytest.mark.parametrize(("lang", "said_no"), [("en", "Not done, because you said no."), ("zh", "没有执行，因为您说了不。")])
def test_a_run_the_user_said_no_to_is_recorded_and_reported_as_not_done(lang, said_no, tmp_path, capsys):
    """The model finishes after the user said no to the call: the command line's summary and the history's
    run record say it was not done, in the run's language (both used to begin "Done")."""
    db = tmp_path / "h.db"
    code, out = run_json(["", "--device", "sim:PhoneCallUnknownNumber:0", "--policy", "oracle", "--confirm", "no",
                          "--lang", lang, "--db", str(db), "--json"], capsys)
    assert out["confirmations_asked"] and out["ending"] == "declined", out["summary"]
    assert out["summary"].startswith(said_no)
    run = HistoryStore(db).get_run(out["run_id"])
    assert run.summary.startswith(said_no) and "Done" not in run.summary
    capsys.readouterr()
    cli.main(["", "--device", "sim:PhoneCallUnknownNumber:0", "--policy", "oracle", "--confirm", "no", "--lang", lang,
              "--no-history"])
    printed = capsys.readouterr().out
    assert said_no in printed and "Done:" not in printed and "完成：" not in printed
