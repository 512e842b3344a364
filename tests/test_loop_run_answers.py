"""`phonebuddy run` as the app: a question's answer is its ending (en and zh), the fast path is on by
default, the history's run record and conversation say the same ending, and every exit status is reached
by a real run (`phonebuddy.run_cli.EXIT_CODES`, documented in --help and the README)."""

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
    code = cli.main([*args, "--json"])
    return code, json.loads(capsys.readouterr().out)


def _answers(out: dict, lang: str) -> list[str]:
    return [e["text"][lang] for e in out["events"] if e["kind"] == "said" and e.get("answer")]


@pytest.mark.parametrize(("goal", "lang", "must"), [
    ("How much battery do I have?", "en", "%"),
    ("电池还有多少电", "zh", "%"),
    ("What time is it?", "en", ":"),
    ("现在几点了", "zh", ":"),
])
def test_a_question_ends_as_its_answer_in_the_summary(goal, lang, must, capsys):
    code, out = run_json([goal, "--device", "sim", "--policy", "noop", "--lang", lang, "--no-history"], capsys)
    answers = _answers(out, lang)
    assert answers and must in answers[0], out["events"]
    assert code == cli.EXIT_DONE and out["ending"] == "answered"
    assert out["summary"] == answers[0]  # the answer itself, not "Done, as far as I can tell"
    assert "Done" not in out["summary"] and "核实" not in out["summary"] and "check" not in out["summary"]


def test_the_fast_path_is_on_by_default_and_can_be_turned_off(capsys):
    code, out = run_json(["Turn Bluetooth on please", "--device", "sim", "--policy", "noop", "--no-history"], capsys)
    assert out["steps"][0]["action"]["kind"] == "set_setting", out["steps"]
    assert code == cli.EXIT_DONE and out["ending"] == "done_checked"
    code, out = run_json(["Turn Bluetooth on please", "--device", "sim", "--policy", "noop", "--no-history",
                          "--no-fast-path"], capsys)
    assert [s["action"]["kind"] for s in out["steps"]][-1] == "finish"
    assert not any(s["action"]["kind"] == "set_setting" for s in out["steps"])
    assert code == cli.EXIT_NOT_DONE and out["ending"] == "not_finished"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_run_record_and_the_conversation_say_the_same_ending(tmp_path, lang, capsys):
    db = tmp_path / "h.db"
    for goal, flags in (("Turn Bluetooth on please", ()), ("Turn Bluetooth on please", ("--no-fast-path",)),
                        ("How much battery do I have?", ())):
        code, out = run_json([goal, "--device", "sim", "--policy", "noop", "--lang", lang, "--db", str(db), *flags],
                             capsys)
        store = HistoryStore(db)
        run = store.get_run(out["run_id"])
        said = [r["text"] for r in store._open()["conversation"].rows_where("run_id = ?", [out["run_id"]])
                if r["role"] == "assistant"]
        store.close()
        assert run.summary == out["summary"] == said[-1], (run.summary, said)
        assert said.count(said[-1]) == 1  # written once (an answer is said once, as the ending)
        assert not any(line in ("Done.", "完成了。") for line in said)  # no bare "Done." beside a failure


def _script(tmp_path: Path, *calls: str) -> str:
    path = tmp_path / "replies.txt"
    path.write_text("\n".join(escape_reply(c) for c in calls) + "\n", encoding="utf-8")
    return f"scripted:{path}"


def test_every_exit_status_is_reached_by_a_real_run(tmp_path, capsys):
    reached: dict[int, str] = {}

    def run(*args: str) -> None:
        code, out = run_json([*args, "--no-history"], capsys)
        reached[code] = out["ending"]

    run("What time is it?", "--device", "sim", "--policy", "noop")
    run("", "--device", "sim:MessagesSendText:0", "--policy", "noop", "--no-fast-path")  # never sent
    run("open the wallet", "--device", "sim", "--no-fast-path", "--allowed-apps", "com.android.settings",
        "--policy", _script(tmp_path, tool_call("open_app", package="com.phoneworld.wallet"), tool_call("finish")))
    run("read me the code", "--device", "sim", "--no-fast-path", "--policy",  # a code is never read aloud
        _script(tmp_path, tool_call("output", text="Your verification code is 552781"), tool_call("finish")))
    run("Call Alice Chen", "--device", "sim", "--policy", "noop", "--confirm", "no")
    run("check something", "--device", "sim", "--no-fast-path", "--answer", "stop", "--policy",
        _script(tmp_path, tool_call("call_user", text="Which one?"), tool_call("finish")))
    assert reached == {cli.EXIT_DONE: "answered", cli.EXIT_NOT_DONE: "not_finished",
                       cli.EXIT_CAREGIVER: "refused_caregiver", cli.EXIT_SAFETY: "refused_safety",
                       cli.EXIT_SAID_NO: "declined", cli.EXIT_STOPPED: "stopped"}, reached
    capsys.readouterr()
    assert cli.main(["Call Sophie Tang", "--device", "sim:NoSuchTask", "--no-history"]) == cli.EXIT_CANNOT_START
    assert "NoSuchTask" in capsys.readouterr().err
    assert set(cli.EXIT_CODES) == {0, 1, 2, 3, 4, 5, 6}


def test_help_and_readme_document_the_exit_codes():
    proc = subprocess.run([sys.executable, "-m", "phonebuddy.cli", "run", "--help"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for code, words in cli.EXIT_CODES.items():
        assert f"{code} {words}" in " ".join(proc.stdout.split()), (code, proc.stdout)
        assert f"`{code}` {words}" in readme, (code, words)


@pytest.mark.parametrize(("goal", "lang", "words"), [
    ("Switch on the Wi-Fi", "en", "Wi-Fi was already on; I left it on"),
    ("打开无线网络", "zh", "我让它保持开启"),
])
def test_a_request_already_so_ends_as_a_checked_success(goal, lang, words, capsys):
    from harness.phoneworld import World

    assert World(seed=0, language=lang).apps["com.android.settings"].state.wifi  # the phone starts with Wi-Fi on
    code, out = run_json([goal, "--device", "sim", "--policy", "noop", "--lang", lang, "--no-history"], capsys)
    assert out["verification"]["status"] == "already", out["verification"]
    assert code == cli.EXIT_DONE and out["ending"] == "done_checked"
    assert words in out["summary"] and "could not" not in out["summary"] and "没能" not in out["summary"]


@pytest.mark.parametrize(("goal", "lang"), [("Switch Bluetooth on please", "en"), ("电池还有多少电", "zh"),
                                            ("Text Alice Chen that I am late", "en"), ("给陈爱丽发短信说我晚点到", "zh")])
def test_the_window_and_phonebuddy_run_give_the_same_ending_and_history_rows(qtbot, tmp_path, goal, lang, capsys):
    """The same request through the window (the demo, no model) and `phonebuddy run` (noop policy, its
    defaults): the same steps, ending and history rows (run summary; the conversation's lines)."""
    from app.confirm_dialog import GRACE_MS
    from tests.app_fixtures import make_window

    def rows(db, run_id):
        store = HistoryStore(db)
        run = store.get_run(run_id)
        lines = [(r["role"], r["text"]) for r in store._open()["conversation"].rows_where("run_id = ?", [run_id])]
        store.close()
        return run.outcome, run.summary, lines

    code, out = run_json([goal, "--device", "sim", "--policy", "noop", "--lang", lang, "--confirm", "no",
                          "--db", str(tmp_path / "cli.db")], capsys)
    window = make_window(qtbot, lang=lang, history=HistoryStore(tmp_path / "app.db"))
    with qtbot.waitSignal(window.run_finished, timeout=60_000):
        assert window.submit_request(goal)
        if out["confirmations_asked"]:
            qtbot.waitUntil(lambda: window._dialog is not None, timeout=60_000)
            qtbot.wait(GRACE_MS + 100)
            window._dialog.answer_with(__import__("assistant_core.types").types.ConfirmAnswer.NO)
    result = window.last_result
    assert [s.action.to_dict() for s in result.steps] == [s["action"] for s in out["steps"]]
    assert window.conversation.entries[-1].text == out["summary"]
    assert rows(tmp_path / "app.db", result.run_id) == rows(tmp_path / "cli.db", out["run_id"])


@pytest.mark.parametrize(("goal", "lang"), [("Turn off airplane mode? No, leave it", "en"), ("别打开飞行模式", "zh")])
def test_a_do_not_request_ends_with_only_ok_i_wont(goal, lang, capsys):
    """After the user says not to do it, the ending is only the truthful line, never "Done. ... I won't."."""
    from assistant_core.endings import WONT

    code, out = run_json([goal, "--device", "sim", "--policy", "noop", "--lang", lang, "--no-history"], capsys)
    assert out["summary"] == WONT.get(lang), out["summary"]
    assert code == cli.EXIT_DONE and [s["action"]["kind"] for s in out["steps"]] == ["finish"]  # nothing done
