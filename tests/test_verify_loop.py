"""The outcome check wired into the agent loop and the command lines: `phonebuddy run --json` carries
`verification` with evidence, the spoken summary and the history record say which outcome, the loop
reads the phone before step one (through the real adb server too), and `phonebuddy verify` judges a
task done by hand between its `before` and `after` readings."""

from __future__ import annotations

import json

from assistant_core.confirm import FixedConfirmer
from assistant_core.events import Said, SayPurpose, VerificationStatus
from assistant_core.history import HistoryStore
from assistant_core.loop import run_episode
from assistant_core.policies import NoopPolicy
from assistant_core.safety import GateContext
from assistant_core.types import ConfirmAnswer
from harness.adb import AdbDevice
from harness.phoneworld.oracle import OraclePolicy, solve
from harness.phoneworld.tasks import make_world, registry
from harness.verify import KindRegistry, OutcomeVerifier
from harness.verify import cli as verify_cli
from phonebuddy import run_cli

pytest_plugins = ("tests.adb_fixtures",)


def run_json(args, capsys) -> tuple[int, dict]:
    capsys.readouterr()
    code = run_cli.main(args)
    return code, json.loads(capsys.readouterr().out)


def test_run_json_carries_a_verified_check_with_evidence_and_the_history_says_so(tmp_path, capsys):
    db = tmp_path / "h.db"
    code, out = run_json(["", "--device", "sim:ClockSetAlarm:1", "--policy", "oracle", "--lang", "zh",
                          "--db", str(db), "--json"], capsys)
    assert code == 0 and out["task"]["verifier_passed"] is True
    v = out["verification"]
    assert v["status"] == "verified" and v["kind"] == "set_alarm"
    assert "clock alarms before" in v["evidence"] and v["said"].startswith("我在手机上核实过了")
    assert v["said_en"].startswith("I checked on the phone: an alarm is set for")
    assert v["said"] in out["summary"]
    spoken = [e for e in out["events"] if e["kind"] == "said"]
    assert any("核实" in json.dumps(e, ensure_ascii=False) for e in spoken)
    store = HistoryStore(db)
    run = store.get_run(out["run_id"])
    assert run.verification == "verified" and "dumpsys" not in (run.summary or "")
    assert v["said"] in (run.summary or "")  # the record says what the user heard, in the run's language (zh)
    assert store.search("核实")  # the spoken check is in the conversation


def test_the_noop_baseline_is_not_verified(capsys):
    code, out = run_json(["", "--device", "sim:MessagesSendText:0", "--policy", "noop", "--no-history", "--no-fast-path",
                         "--json"],
                         capsys)
    assert code == 1 and out["outcome"] == "finished" and out["task"]["verifier_passed"] is False
    assert out["verification"]["status"] == "not_verified"
    assert out["verification"]["said"] == "I could not confirm it on the phone: no new text was sent."


def test_an_unknown_kind_is_said_plainly(capsys):
    code, out = run_json(["Sing me a song", "--device", "sim", "--policy", "noop", "--no-history", "--json"], capsys)
    assert out["verification"]["status"] == "cannot_verify"
    assert out["verification"]["said"] == "I can't check this kind of task, so I can't confirm it was done."


def test_an_extra_kinds_folder_from_the_command_line(tmp_path, capsys):
    (tmp_path / "nap.json").write_text(json.dumps({
        "kind": "nap_alarm", "check": "alarm_set", "describe": ["a nap alarm", "午睡闹钟"], "priority": 50,
        "params": {"time": "06:00"}, "patterns": {"en": ["\\bnap\\b"]}}), encoding="utf-8")
    (tmp_path / "broken.json").write_text("{not json", encoding="utf-8")
    code, out = run_json(["Wake me from my nap", "--device", "sim", "--policy", "noop", "--no-history",
                          "--kinds", str(tmp_path), "--json"], capsys)
    assert out["verification"]["kind"] == "nap_alarm" and out["verification"]["status"] == "not_verified"
    assert any("broken.json" in n for n in out["notes"])


def _loop(goal, device, world, task_id, seed, verifier):
    policy = OraclePolicy(task_id, seed, world, language="en")
    task = registry.get(task_id)
    context = GateContext(allowed_apps=frozenset(task.apps), app_labels=dict(device.installed_apps()))
    gen = run_episode(goal, device=device, policy=policy, confirmer=FixedConfirmer(ConfirmAnswer.YES),
                      context=context, sleep=lambda s: None, outcome_check=verifier)
    events = []
    while True:
        try:
            events.append(next(gen))
        except StopIteration as done:
            return done.value, events


def test_the_loop_checks_through_the_adb_server_before_and_after(adb_server, attach):
    world, params = make_world("CalendarAddEvent", 2, "en")
    goal = registry.get("CalendarAddEvent").instruction(params).en
    with attach(world) as phone:
        device = AdbDevice(adb_server.client(), phone.address, reconnect_grace_s=3.0)
        result, events = _loop(goal, device, world, "CalendarAddEvent", 2, OutcomeVerifier(KindRegistry.load()))
    assert result.verification.status is VerificationStatus.VERIFIED, result.verification.evidence
    summaries = [e for e in events if isinstance(e, Said) and e.purpose is SayPurpose.SUMMARY]
    assert summaries[-1].text == result.verification.summary
    assert result.summary.en.endswith(result.verification.summary.en)


def test_through_adb_an_already_done_task_run_again_is_not_counted(adb_server, attach):
    world, params = make_world("ContactsAddContact", 1, "en")
    solve("ContactsAddContact", 1, "en", world=world, params=params)  # already there before the run
    goal = registry.get("ContactsAddContact").instruction(params).en
    with attach(world) as phone:
        device = AdbDevice(adb_server.client(), phone.address, reconnect_grace_s=3.0)
        # The agent does nothing new: the noop baseline.
        context = GateContext(allowed_apps=frozenset({"com.android.dialer"}), app_labels={})
        gen = run_episode(goal, device=device, policy=NoopPolicy(), confirmer=FixedConfirmer(ConfirmAnswer.NO),
                          context=context, sleep=lambda s: None, outcome_check=OutcomeVerifier(KindRegistry.load()))
        while True:
            try:
                next(gen)
            except StopIteration as done:
                result = done.value
                break
    assert registry.get("ContactsAddContact").is_successful(world, params)  # the world says the state holds
    assert result.verification.status is VerificationStatus.NOT_VERIFIED
    assert "already" in result.verification.summary.en


def test_verify_before_and_after_on_the_command_line(adb_server, attach, tmp_path, capsys):
    world, params = make_world("SettingsSetBrightness", 0, "zh")
    goal = registry.get("SettingsSetBrightness").instruction(params).zh
    saved = tmp_path / "before.json"
    with attach(world) as phone:
        port = ["--serial", phone.address, "--adb-port", str(adb_server.port)]
        assert verify_cli.main(["before", goal, "--save", str(saved), *port]) == 0
        assert json.loads(saved.read_text(encoding="utf-8"))
        capsys.readouterr()
        assert verify_cli.main(["after", goal, "--before", str(saved), "--json", "--lang", "zh", *port]) == 1
        assert json.loads(capsys.readouterr().out)["status"] == "not_verified"
        solve("SettingsSetBrightness", 0, "zh", world=world, params=params)  # the user does it by hand
        assert verify_cli.main(["after", goal, "--before", str(saved), "--json", "--lang", "zh", *port]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["status"] == "verified" and out["said"].startswith("我在手机上核实过了")
        saved.write_text("[[garbage", encoding="utf-8")
        assert verify_cli.main(["after", goal, "--before", str(saved), *port]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_verify_kinds_and_match_listings(capsys):
    assert verify_cli.main(["kinds", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert {"send_message", "set_alarm", "create_event", "wifi_on", "add_contact", "save_note"} <= {
        k["kind"] for k in listing["kinds"]} and listing["problems"] == []
    assert verify_cli.main(["match", 'Text Nina Song: "I will be there at six"', "--json"]) == 0
    match = json.loads(capsys.readouterr().out)
    assert match["kind"] == "send_message" and match["params"] == {"recipient": "Nina Song", "text": "I will be there at six"}
    assert any(r.startswith("content query --uri content://sms/sent") for r in match["reads"])
    assert verify_cli.main(["match", "Set an alarm for that time.", "--json", "--lang", "zh"]) == 0
    assert "时间" in json.loads(capsys.readouterr().out)["why_not"]
    assert verify_cli.main(["after", "Sing a song", "--before", "x.json"]) == 1
