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
