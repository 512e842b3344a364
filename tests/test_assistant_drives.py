"""Evaluation, the gate's measurements and `phonebuddy run` drive the one assistant (phonebuddy.assistant)
through the headless front end (phonebuddy.headless): the instruction is heard as a request, and the
simulated user's spoken answers (yes / 是 to a confirmation on an ordinary task, no / 不 on a safety task,
the scripted answer to a call_user question) are routed by `route()` and reach the loop through
Front.confirm / Front.reply. A history store given to an evaluation episode gets the same conversation rows
as `phonebuddy run` on the same task, seed and answers."""

from __future__ import annotations

import io
import json
import sys

import pytest

from assistant_core.history import HistoryStore
from assistant_core.policies import ScriptedPolicy, action_to_reply, escape_reply
from assistant_core.types import Action, ConfirmAnswer
from harness.phoneworld import SimDevice
from harness.phoneworld.simuser import DONT_KNOW
from harness.phoneworld.tasks import make_world, registry
from harness.phoneworld.tasks.episode import TaskWorld
from phonebuddy import run_cli as cli
from phonebuddy.assistant import MSG, Assistant, Route, Target
from phonebuddy.headless import HeadlessFront, SimulatedListener, spoken
from phonebuddy.safety_eval import run_scenario
from tests.core_fixtures import H, W, naive_task_actions
from training.evaluate import Episode, oracle_policies, run_one, scripted_policies, select_episodes

ASK_TASK = "HoAskWhoToCall"  # held out: "Call my daughter.": a call_user question, then the call's confirmation
CONFIRM_TASK = "CalendarDeleteEvent"  # the oracle's delete is confirmed
YES = {"en": "yes", "zh": "是"}
NO = {"en": "no", "zh": "不"}


def ask_task():
    (episode,) = select_episodes(tasks=[ASK_TASK], seeds=(0,), split="heldout")
    return episode.task


def scripted_answer(task, seed: int, lang: str) -> str:
    """What the task's simulated user says to its question, in `lang`."""
    world = TaskWorld(task, seed=seed, language=lang)
    ((_, answer),) = task.script(world.task_params)
    return answer.get(lang)


def answers(assistant: Assistant) -> list[tuple[Target | None, str, ConfirmAnswer | None]]:
    return [(t.target, t.text, t.answer) for t in assistant.turns if t.route is Route.ANSWER]


def conversation(db, run_id: int) -> list[tuple[str, str]]:
    store = HistoryStore(db)
    rows = [(r["role"], r["text"]) for r in store._open()["conversation"].rows_where(
        "run_id = ?", [run_id], order_by="id")]
    store.close()
    return rows


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_evaluation_episode_is_heard_by_the_assistant(lang):
    assistant = Assistant()
    result = run_one(Episode(ask_task(), 0), oracle_policies(), language=lang, screenshots=False,
                     assistant=assistant)
    assert result.success and result.questions == 1 and result.confirmations == 1, result
    assert assistant.lang == lang
    first = assistant.turns[0]
    assert first.route is Route.REQUEST and first.text == result.instruction  # the instruction, heard once
    # The question's scripted answer, then the spoken yes to the call, each routed once as an ANSWER.
    assert answers(assistant) == [(Target.QUESTION, scripted_answer(ask_task(), 0, lang), None),
                                  (Target.CONFIRMATION, YES[lang], ConfirmAnswer.YES)]
    assert not assistant.running and assistant.pending is None


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_safety_episode_says_no_and_the_assistant_routes_it(lang):
    safety = registry.get("MessagesSendToUnknownNumber")
    assert safety.is_safety
    world, params = make_world(safety.id, 0, lang)
    script = [action_to_reply(a, W, H) for a in naive_task_actions(safety.id, lang)]
    run = run_scenario(world, SimDevice(world, screenshots=False), ScriptedPolicy.from_replies(script), goal="x",
                       allowed=safety.apps, answer=ConfirmAnswer.NO, sensitive_kinds=safety.sensitive_kinds,
                       lang=lang, step_budget=safety.max_steps)
    assert run.harmful == () and run.questions >= 1, run
    said = [(t.target, t.text, t.answer) for t in run.turns if t.route is Route.ANSWER]
    assert said and all(s == (Target.CONFIRMATION, NO[lang], ConfirmAnswer.NO) for s in said), said
    assert len(said) == run.questions  # each question asked was answered by the assistant's route


def same_conversation(tmp_path, capsys, monkeypatch, lang: str, task_id: str, factory, cli_args: list[str],
                      console: str = "") -> list:
    """Run `task_id` seed 0 by evaluation and by `phonebuddy run --confirm ask` (`cli_args`; `console`: what
    the user answers on the console), each with its own history; the two conversations, asserted equal."""
    eval_db, run_db = tmp_path / f"eval-{lang}.db", tmp_path / f"run-{lang}.db"
    store = HistoryStore(eval_db)
    result = run_one(Episode(registry.get(task_id), 0), factory, language=lang, screenshots=False, history=store)
    assert not result.error, result.error
    (run_id,) = [row["id"] for row in store._open()["runs"].rows]
    store.close()
    capsys.readouterr()
    monkeypatch.setattr(sys, "stdin", io.StringIO(console))
    cli.main(["", "--device", f"sim:{task_id}:0", "--no-fast-path", "--no-verify", "--confirm", "ask", "--lang", lang,
              "--db", str(run_db), "--json", *cli_args])
    out = json.loads(capsys.readouterr().out)
    assert out["task"]["verifier_passed"] is result.verified, out
    rows = conversation(eval_db, run_id)
    assert rows == conversation(run_db, out["run_id"])
    assert rows[0] == ("user", result.instruction)  # the request, heard and written by the assistant
    return rows


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_evaluation_and_phonebuddy_run_write_the_same_conversation(lang, tmp_path, capsys, monkeypatch):
    # A confirmation: the oracle deletes the event; the simulated user says yes, as the user does on the console.
    rows = same_conversation(tmp_path, capsys, monkeypatch, lang, CONFIRM_TASK, oracle_policies(),
                             ["--policy", "oracle"], console=YES[lang] + "\n")
    assert [text for role, text in rows if role == "answer"] == [
        MSG.get("answer", lang, text=YES[lang])], rows  # the spoken yes, routed and written once
    # A call_user question: the scripted user's "I don't know" is the answer `--answer` gives.
    script = tmp_path / "replies.txt"
    script.write_text("\n".join(escape_reply(action_to_reply(a, W, H)) for a in (
        Action.call_user("Which one?"), Action.finish("done"))) + "\n", encoding="utf-8")
    dont_know = DONT_KNOW.get(lang)
    rows = same_conversation(tmp_path / "ask", capsys, monkeypatch, lang, CONFIRM_TASK, scripted_policies(script),
                             ["--policy", f"scripted:{script}", "--answer", dont_know])
    assert ("user", dont_know) in rows, rows


def test_an_unclear_answer_is_asked_again_and_a_stop_stops(tmp_path):
    """The bridge gives the loop only what the assistant handed on: "maybe" is not a yes (the assistant
    asks again, the loop reminds), and a spoken stop to a question ends the run."""

    class Says:
        def __init__(self, *words):
            self.words = list(words)

        def confirmation(self, request):
            return self.words.pop(0) if self.words else None

        def question(self, question):
            return self.words.pop(0) if self.words else None

    from assistant_core.confirm import Patience
    from phonebuddy.assemble import RunSpec, assemble

    def drive(listener, goal, replies):
        world, _ = make_world("MessagesSendToUnknownNumber", 0, "en")
        parts = assemble(RunSpec(device=SimDevice(world, screenshots=False), lang="en", simulated=True,
                                 allowed_override=frozenset(registry.get("MessagesSendToUnknownNumber").apps),
                                 patience=Patience(window_s=1, reminders=1), verify=False))
        said = []
        front = HeadlessFront(lambda f: parts.episode(goal, policy=ScriptedPolicy.from_replies(replies),
                                                      confirmer=f.bridge, user=f.bridge, stop=f.stop,
                                                      sleep=lambda s: None),
                              listener, say=lambda kind, text, cue: said.append(text))
        assistant = front.attach(Assistant(lang="en"))
        return front.run(goal)[1], assistant, said

    replies = [action_to_reply(a, W, H) for a in naive_task_actions("MessagesSendToUnknownNumber", "en")]
    result, assistant, said = drive(Says("maybe", "no"), "x", replies)
    routed = answers(assistant)
    assert routed[:2] == [(Target.CONFIRMATION, "maybe", None), (Target.CONFIRMATION, "no", ConfirmAnswer.NO)]
    assert any("didn't catch a yes or a no" in line for line in said), said
    assert result.confirmations >= 1
    ask = [action_to_reply(Action.call_user("Which one?"), W, H), action_to_reply(Action.finish("done"), W, H)]
    result, assistant, _ = drive(Says("stop"), "check something", ask)
    assert str(result.outcome) == "stopped" and assistant.turns[-1].route is Route.COMMAND


@pytest.mark.parametrize(("answer", "lang", "words"), [
    (ConfirmAnswer.YES, "en", "yes"), (ConfirmAnswer.NO, "en", "no"), (ConfirmAnswer.YES, "zh", "是"),
    (ConfirmAnswer.NO, "zh", "不"), (None, "zh", None)])
def test_the_simulated_user_speaks_the_answer_in_the_episode_language(answer, lang, words):
    assert spoken(answer, lang) == words
    assert SimulatedListener(answer, None, lang).confirmation(object()) == words
