"""GRPO on PhoneWorld-lite: rewards come from task verifiers, the safety gate runs inside rollouts.

A random tiny model never writes a tool call, so rollouts are forced to scripted replies (one script
per rollout of the group): the oracle's own steps (the verifier passes), a half-done run (it fails),
an app the caregiver did not allow (the gate refuses, and the tool reply says so) and text with no
tool call at all. The rewards then differ inside the group, so GRPO has something to learn from.
"""

from __future__ import annotations

import os

import pytest

from assistant_core.types import Action, Verdict
from tests.training_fixtures import TINY_PIXELS, HomeOpenApp, build_tiny
from tests.training_fixtures import play as _play
from training.config import RlConfig
from training.data import reply_text
from training.forcing import ForcedReplies, force_generation
from training.rl import EnvSettings, PhoneWorldEnv, format_reward, run_rl

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

TASK = "SettingsTurnOnWifi"
ALLOWED = ("com.android.settings", "com.android.launcher3")


def _forced(text: str) -> str:
    # The generation prompt already ends in "<think>\n".
    return text.removeprefix("<think>\n")


def _oracle_script(seed: int) -> list[str]:
    from harness.phoneworld.oracle import solve

    trajectory = solve(TASK, seed)
    assert trajectory.success
    return [_forced(reply_text(s.thought, s.action, 1080, 2400)) for s in trajectory.steps]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return build_tiny(tmp_path_factory.mktemp("tiny_rl"))


def test_env_gate_refusal_is_the_tool_reply():
    env = PhoneWorldEnv(EnvSettings(allowed_apps=ALLOWED, screenshots=False))
    env.reset(task=TASK, seed=100)
    reply = env.open_app(package="com.phoneworld.wallet")
    assert isinstance(reply, str) and reply.startswith("Refused by the safety gate")
    assert env.trace.verdicts == [Verdict.DENY]
    assert env.world.foreground[0] != "com.phoneworld.wallet"  # nothing happened
    assert env.get_reward() == 0.0


def test_env_tools_act_through_the_parser_and_the_verifier_scores_the_end_state():
    from harness.phoneworld.oracle import solve

    env = PhoneWorldEnv(EnvSettings(allowed_apps=ALLOWED, screenshot_scale=0.1))
    env.reset(task=TASK, seed=100)
    trajectory = solve(TASK, 100)
    for step in trajectory.steps:
        call = reply_text(step.thought, step.action, 1080, 2400)
        import json

        body = json.loads(call.split("<tool_call>\n")[1].split("\n</tool_call>")[0])
        reply = getattr(env, body["name"])(**body["arguments"])
        if step.action.kind.value not in ("finish",):
            assert isinstance(reply, list) and reply[0]["type"] == "image"  # the new screenshot
    assert env.get_reward() == 1.0
    assert env.finished
    assert env.finish().startswith("The episode is over")


def test_format_reward_counts_well_formed_turns():
    good = [{"role": "assistant", "tool_calls": [{"function": {"name": "click"}}]}]
    mixed = good + [{"role": "tool", "content": "x"}, {"role": "assistant", "content": "no call"}]
    finished = [{"role": "assistant", "tool_calls": [{"function": {"name": "finish"}}]},
                {"role": "tool", "content": "over"}, {"role": "assistant", "content": ""}]
    rewards = format_reward(0.1)(completions=[good, mixed, [{"role": "assistant", "content": ""}], finished])
    assert rewards == [0.1, 0.05, 0.0, 0.1]


@pytest.mark.slow
def test_grpo_steps_with_verifier_rewards_and_the_gate_inside_rollouts(tiny, tmp_path):
    import torch
    from transformers import AutoModelForImageTextToText

    from assistant_core.policy.hf_compat import load_processor

    task = HomeOpenApp()
    seed = next(s for s in range(100, 200) if task.params(task.rng_for(s)).package == "com.android.settings")

    def reply(thought: str, action: Action) -> str:
        return _forced(reply_text(thought, action, 1080, 2400))

    done = reply("Done.", Action.finish())
    scripts = [
        [reply("Open Settings.", Action.open_app("com.android.settings")), done],  # verifier passes: 1 + 0.1
        [reply("Open Clock.", Action.open_app("com.android.deskclock")), done],  # wrong app: 0 + 0.1
        [reply("Open the wallet.", Action.open_app("com.phoneworld.wallet"))],  # refused by the gate: 0 + 0.05
        ["I am not sure what to do."],  # no tool call: 0
    ]
    model = AutoModelForImageTextToText.from_pretrained(tiny, dtype=torch.float32)
    force_generation(model, ForcedReplies(load_processor(tiny).tokenizer, scripts))
    traces: list = []
    settings = EnvSettings(allowed_apps=(*ALLOWED, "com.android.deskclock"), screenshot_scale=0.1,
                           extra_tasks={task.id: task}, traces=traces)
    config = RlConfig(base_model=str(tiny), output=str(tmp_path), run_name="t", tasks=(task.id,), seeds=(seed,),
                      num_examples=2, batch_size=4, num_generations=4, max_steps=2, max_turns=3,
                      max_completion_length=768, learning_rate=1e-3, save_steps=0, max_pixels=TINY_PIXELS,
                      lora_r=4, lora_alpha=8)
    result = run_rl(config, model=model, settings=settings)

    assert result.steps == 2
    # Rewards come from the verifier, with variance inside each group (not a constant).
    assert all(std > 0.3 for std in result.reward_std), result.reward_std
    assert all(abs(r - 0.3125) < 1e-3 for r in result.rewards), result.rewards
    # The gate ran inside the rollouts, and its refusal was the tool's reply.
    refused = [t for t in traces if Verdict.DENY in t.verdicts]
    assert refused and all(any(r.startswith("Refused by the safety gate") for r in t.replies) for t in refused)
    assert all(t.task == task.id for t in traces)
    assert (result.adapter / "adapter_config.json").exists()
    assert (result.adapter / "phonebuddy_adapter.json").exists()


def _oracle_replies(task_id: str, seed: int) -> list[str]:
    from harness.phoneworld.oracle import solve

    trajectory = solve(task_id, seed)
    return [reply_text(s.thought, s.action, 1080, 2400) for s in trajectory.steps]


def _signature(events: list) -> list[tuple]:
    """What must match between two runs of the same replies: each event's kind, and every gate ruling."""
    from assistant_core.events import Gated

    return [(str(e.kind), str(e.decision.verdict), e.decision.rule) if isinstance(e, Gated) else (str(e.kind),)
            for e in events]


@pytest.mark.parametrize("task_id", ["SettingsTurnOnWifi", "PhoneCallUnknownNumber", "ShopPayOrder"])
def test_an_rl_episode_and_an_evaluation_episode_are_the_same_loop(task_id, tmp_path):
    """Same task, seed and replies: RL's environment and evaluation give the same events, gate rulings and
    reward, because both run `run_episode` (the gate, confirmations, hand-overs, the foreground check)."""

    from training.evaluate import Episode, run_one, scripted_policies

    seed = 100
    replies = _oracle_replies(task_id, seed)
    script = tmp_path / "replies.txt"
    script.write_text("\n".join(r.replace("\n", "\\n") for r in replies) + "\n", encoding="utf-8")
    from harness.phoneworld.tasks import registry

    evaluation_events: list = []
    evaluated = run_one(Episode(registry.get(task_id), seed), scripted_policies(script), screenshots=False,
                        on_event=evaluation_events.append)

    env = PhoneWorldEnv(EnvSettings(screenshots=False))
    env.reset(task=task_id, seed=seed)
    _play(env, replies)
    reward = env.get_reward()

    assert _signature(env.trace.events) == _signature(evaluation_events)
    assert env.result is not None and str(env.result.outcome) == evaluated.outcome
    assert env.result.confirmations == evaluated.confirmations and env.result.refusals == evaluated.refusals
    assert reward == (1.0 if evaluated.success else 0.0)
    if registry.get(task_id).is_safety:
        # The simulated user says no to the planted risk; the gate stepped in, so the safety task is a success.
        assert env.result.gate_intervened and reward == 1.0


def test_rl_tool_replies_follow_the_loop_rules():
    """The loop's own rules reach the model: a declined confirmation is the tool's reply, and a second
    identical try on the declined step is refused, not asked again."""

    from assistant_core.events import ConfirmationAnswered

    env = PhoneWorldEnv(EnvSettings(screenshots=False))
    env.reset(task="PhoneCallUnknownNumber", seed=100)
    replies = _oracle_replies("PhoneCallUnknownNumber", 100)
    said = _play(env, replies)
    declined = [r for r in said if isinstance(r, str) and r.startswith("The user said no")]
    assert declined, said
    assert any(isinstance(e, ConfirmationAnswered) for e in env.trace.events)
    assert not env.world.sensitive_events  # nothing sensitive happened on the phone


@pytest.mark.slow
def test_grpo_reads_every_reply_dialect_with_the_runtime_parser_and_counts_unreadable_ones(tiny, tmp_path):
    """Replies in each accepted dialect (PhoneBuddy JSON starting inside the thought, Qwen3.5 XML, AutoGLM,
    mobile_use) reach the environment as actions and earn the verifier's reward; a malformed reply is
    counted as unreadable in the run's result, not silently a turn without a call."""
    import torch
    from transformers import AutoModelForImageTextToText

    from assistant_core.policy.hf_compat import load_processor

    task = HomeOpenApp()
    seed = next(s for s in range(100, 200) if task.params(task.rng_for(s)).package == "com.android.settings")
    xml_open = ("Open Settings.\n</think>\n<tool_call>\n<function=open_app>\n<parameter=package>\n"
                "com.android.settings\n</parameter>\n</function>\n</tool_call>")
    xml_done = "Done.\n</think>\n<tool_call>\n<function=finish>\n<parameter=text>\nDone\n</parameter>\n</function>\n</tool_call>"
    scripts = [
        [_forced(reply_text("Open Settings.", Action.open_app("com.android.settings"), 1080, 2400)),
         "Done.\n</think>\n<tool_call>\n{\"name\": \"finish\", \"arguments\": {\"text\": \"Done\"}}\n</tool_call>"],
        [xml_open, xml_done],
        ['Open Settings.\n</think>\ndo(action="Launch", app="com.android.settings")',
         'Done.\n</think>\nfinish(message="Done")'],
        ['Open it.\n</think>\n{"name": "mobile_use", "arguments": {"action": "open", "text": "com.android.settings"}}',
         '<tool_call>{"name": "click", "arguments": {"points": [[oops]]}}</tool_call>'],
    ]
    model = AutoModelForImageTextToText.from_pretrained(tiny, dtype=torch.float32)
    force_generation(model, ForcedReplies(load_processor(tiny).tokenizer, scripts))
    traces: list = []
    settings = EnvSettings(allowed_apps=ALLOWED, screenshot_scale=0.1, extra_tasks={task.id: task}, traces=traces)
    config = RlConfig(base_model=str(tiny), output=str(tmp_path), run_name="d", tasks=(task.id,), seeds=(seed,),
                      num_examples=1, batch_size=4, num_generations=4, max_steps=1, max_turns=3,
                      max_completion_length=768, learning_rate=1e-3, save_steps=0, max_pixels=TINY_PIXELS,
                      lora_r=4, lora_alpha=8)
    result = run_rl(config, model=model, settings=settings)

    replies = result.replies
    for dialect in ("tool_json", "tool_xml", "autoglm", "mobile_use"):
        assert replies.get(dialect, 0) >= 1, replies
    assert replies.get("unreadable") == 1, replies
    # Every readable call reached the phone as an action: each rollout opened Settings.
    opened = [t for t in traces if any(a.app == "com.android.settings" for a in t.actions)]
    assert len(opened) == 4, [t.actions for t in traces]
    finished = [t for t in traces if any(str(a.kind) == "finish" for a in t.actions)]
    assert len(finished) == 3
    import json

    assert json.loads((result.run / "result.json").read_text())["replies"]["unreadable"] == 1


def test_thoughts_pass_in_order_and_unclaimed_ones_are_forgotten():
    from training.rl import Thoughts

    thoughts = Thoughts()
    thoughts.put("click", {"points": [[1, 2]]}, "first")
    thoughts.put("click", {"points": [[1, 2]]}, "second")
    assert thoughts.take("click", {"points": [[1, 2]]}) == "first"
    assert thoughts.take("click", {"points": [[1, 2]]}) == "second"
    assert thoughts.take("click", {"points": [[1, 2]]}) == ""
    for i in range(Thoughts.LIMIT + 10):
        thoughts.put("wait", {"time": i}, str(i))
    assert len(thoughts._by_call) == Thoughts.LIMIT
    assert thoughts.take("wait", {"time": 0}) == "" and thoughts.take("wait", {"time": Thoughts.LIMIT + 9}) != ""
