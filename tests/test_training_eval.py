"""Evaluation through the agent loop: the oracle solves every ordinary task, a no-op policy none,
and safety tasks are scored safe / unsafe / no useful action."""

from __future__ import annotations

import json

import pytest

from training.cli import main
from training.evaluate import Episode, evaluate, noop_policies, oracle_policies, select_episodes

NON_SAFETY = ("single_app", "cross_app", "mini_app")


@pytest.mark.slow
def test_cli_oracle_scores_100_on_every_non_safety_category(tmp_path, capsys):
    assert main(["eval", "--policy", "oracle", "--json", "--seeds", "0", "--output", str(tmp_path),
                 "--no-progress"]) == 0
    report = json.loads(capsys.readouterr().out)
    for category in NON_SAFETY:
        assert report["categories"][category]["success_rate"] == 1.0, (category, report["failed"])
    lines = (tmp_path.glob("eval-*/results.jsonl").__next__()).read_text().splitlines()
    assert len(lines) == report["episodes"] and all(json.loads(x)["task"] for x in lines)


@pytest.mark.slow
def test_cli_noop_scores_0_everywhere(tmp_path, capsys):
    assert main(["eval", "--policy", "noop", "--json", "--seeds", "0", "--output", str(tmp_path),
                 "--no-progress"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["success_rate"] == 0.0
    for category, score in report["categories"].items():
        assert score["success_rate"] == 0.0, category
    safety = report["categories"]["safety"]
    assert safety["no_action"] == safety["episodes"] and safety["unsafe"] == 0  # doing nothing is not "safe"


def test_report_table_and_safety_scoring():
    episodes = select_episodes(tasks=("SettingsTurnOnWifi", "MessagesSendToUnknownNumber"), seeds=(0,))
    report = evaluate(episodes, oracle_policies(), policy_name="oracle", screenshots=False)
    by = {r.task: r for r in report.results}
    assert by["SettingsTurnOnWifi"].success and by["SettingsTurnOnWifi"].steps >= 2
    # The oracle plays the naive agent on safety tasks; the gate asks, the user says no: safe.
    assert by["MessagesSendToUnknownNumber"].safety == "safe", by["MessagesSendToUnknownNumber"]
    table = report.table()
    assert "single_app" in table and "safety: safe 100.0%" in table and "mean steps" in table
    noop = evaluate([Episode(episodes[0].task, 1)], noop_policies(), policy_name="noop", screenshots=False)
    assert noop.results[0].success is False and noop.results[0].actions[0]["kind"] == "wait"


def test_unknown_task_is_a_clear_cli_error(capsys):
    assert main(["eval", "--policy", "oracle", "--tasks", "SettingsTurnOnWiffi", "--no-progress"]) == 2
    assert "did you mean SettingsTurnOnWifi" in capsys.readouterr().err


def test_cli_scripted_replays_raw_replies_per_task_and_names_a_missing_script(tmp_path, capsys):
    from assistant_core.policies import action_to_reply, escape_reply
    from harness.phoneworld.oracle import solve

    scripts = tmp_path / "scripts"
    scripts.mkdir()
    done = solve("SettingsTurnOnWifi", 0)
    assert done.success
    (scripts / "SettingsTurnOnWifi-0.txt").write_text(
        "\n".join(escape_reply(action_to_reply(a, 1080, 2400, thought=s.thought))
                  for a, s in zip(done.actions(), done.steps, strict=True)) + "\n", encoding="utf-8")
    # Seed 1 falls back to TASK.txt: a reply that is no tool call, then finishing without doing it.
    (scripts / "SettingsTurnOnWifi.txt").write_text("I am not sure what to do.\n" + escape_reply(
        '<tool_call>\n{"name": "finish", "arguments": {"text": "done"}}\n</tool_call>') + "\n", encoding="utf-8")
    args = ["eval", "--policy", "scripted", "--script", str(scripts), "--tasks", "SettingsTurnOnWifi",
            "--seeds", "0,1", "--json", "--output", str(tmp_path / "runs"), "--no-progress"]
    assert main(args) == 0
    report = json.loads(capsys.readouterr().out)
    by_seed = {json.loads(x)["seed"]: json.loads(x) for x in
               next((tmp_path / "runs").glob("eval-*/results.jsonl")).read_text().splitlines()}
    assert by_seed[0]["success"] is True and by_seed[1]["success"] is False
    assert report["success_rate"] == 0.5 and by_seed[1]["proposals"] >= 2  # the bad reply was fed back

    # A task without a script is named before any episode runs; no run folder is started.
    before = set((tmp_path / "runs").iterdir())
    assert main([*args[:6], "SettingsTurnOnBluetooth", "--seeds", "0", "--output", str(tmp_path / "runs"),
                 "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "no script for SettingsTurnOnBluetooth seed 0" in err and "Traceback" not in err
    assert set((tmp_path / "runs").iterdir()) == before
    assert main(["eval", "--policy", "scripted", "--no-progress"]) == 2
    assert "--policy scripted needs --script" in capsys.readouterr().err
