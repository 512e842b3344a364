"""GRPO's rollouts are heard by the assistant (phonebuddy.assistant), as evaluation's episodes are: the task's
instruction is the request it hears, and the simulated phone owner's answers (yes / 是 to a confirmation on an
ordinary task, no / 不 on a safety task, the scripted user's words to a call_user question) are routed by
`route()` as ANSWERs and reach the loop through the headless front end's bridge, while trl steps the episode
one tool call at a time."""

from __future__ import annotations

import pytest

from assistant_core.events import ConfirmationAnswered, Resumed
from assistant_core.types import Action, ConfirmAnswer
from harness.phoneworld.oracle import solve
from harness.phoneworld.simuser import DONT_KNOW
from phonebuddy.assistant import Route, Target
from tests.training_fixtures import play
from training.data import reply_text
from training.rl import EnvSettings, PhoneWorldEnv

SEED = 100
YES = {"en": "yes", "zh": "是"}
NO = {"en": "no", "zh": "不"}


def _rollout(task_id: str, lang: str, *, ask_first: bool) -> PhoneWorldEnv:
    env = PhoneWorldEnv(EnvSettings(screenshots=False))
    env.reset(task=task_id, seed=SEED, language=lang)
    replies = [reply_text("Ask first.", Action.call_user("Which one?"), 1080, 2400)] if ask_first else []
    replies += [reply_text(s.thought, s.action, 1080, 2400) for s in solve(task_id, SEED, lang).steps]
    play(env, replies)
    return env


def _answers(env: PhoneWorldEnv) -> list[tuple]:
    return [(t.target, t.text, t.answer) for t in env.front.assistant.turns if t.route is Route.ANSWER]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_rollouts_question_and_confirmation_are_answered_through_the_assistant(lang):
    # The model asks first (call_user), then deletes the event, which the gate confirms.
    env = _rollout("CalendarDeleteEvent", lang, ask_first=True)
    assert env.get_reward() == 1.0 and env.result.confirmations == 1
    assistant = env.front.assistant
    first = assistant.turns[0]
    assert first.route is Route.REQUEST and first.text == env.task.instruction(env.world.task_params).get(lang)
    # The scripted user's "I don't know", then the spoken yes, each routed once as an ANSWER ...
    assert _answers(env) == [(Target.QUESTION, DONT_KNOW.get(lang), None),
                             (Target.CONFIRMATION, YES[lang], ConfirmAnswer.YES)]
    # ... and what the assistant handed on is what the loop got.
    (resumed,) = [e for e in env.trace.events if isinstance(e, Resumed)]
    assert resumed.answer == DONT_KNOW.get(lang)
    (answered,) = [e for e in env.trace.events if isinstance(e, ConfirmationAnswered)]
    assert answered.answer is ConfirmAnswer.YES
    assert assistant.lang == lang and not assistant.running and assistant.pending is None


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_safety_rollout_says_no_and_the_assistant_routes_it(lang):
    env = _rollout("MessagesSendToUnknownNumber", lang, ask_first=False)
    assert env.task.is_safety and env.get_reward() == 1.0  # the gate stepped in, nothing was sent
    said = _answers(env)
    assert len(said) == env.result.confirmations == 2
    assert all(s == (Target.CONFIRMATION, NO[lang], ConfirmAnswer.NO) for s in said), said
    assert [e.answer for e in env.trace.events if isinstance(e, ConfirmationAnswered)] == [ConfirmAnswer.NO] * 2


def test_a_rollout_cut_short_or_restarted_ends_the_assistants_run():
    env = PhoneWorldEnv(EnvSettings(screenshots=False))
    env.reset(task="SettingsTurnOnWifi", seed=SEED)
    first = env.front.assistant
    assert first.running and first.state == "running"
    env.reset(task="SettingsTurnOnWifi", seed=SEED + 1)  # trl reuses the environment for the next rollout
    assert not first.running and env.front.assistant is not first and env.front.assistant.running
    assert env.get_reward() == 0.0
    # trl ran out of turns before anything was done: the episode is stopped, as the app's Esc would
    assert str(env._ended().outcome) == "stopped" and not env.front.assistant.running
