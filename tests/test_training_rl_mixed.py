"""Real+Mock RL: GRPO mixes mock episodes (PhoneWorld-lite in-process, rewarded by the task verifiers) with
episodes on phones over adb (here the simulated phone served over a real adb server stands in for a test
phone), rewarded only by the device-level outcome check, with every confirmation answered no."""

from __future__ import annotations

import json
import os

import pytest

from assistant_core.events import VerificationStatus
from assistant_core.types import Action, ConfirmAnswer
from harness.phoneworld.world import World
from phonebuddy.assistant import Route, Target
from tests.training_fixtures import TINY_PIXELS, build_tiny
from tests.training_fixtures import play as _play
from training.config import RlConfig
from training.data import reply_text
from training.errors import ConfigError
from training.forcing import ForcedReplies, force_generation
from training.rl import EnvSettings, PhoneEnv, PhoneSettings, PhoneWorldEnv, choose_rows, run_rl

pytest_plugins = ("tests.adb_fixtures",)
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

TASK = "SettingsTurnOnWifi"


def _oracle_replies(seed: int = 100) -> list[str]:
    from harness.phoneworld.oracle import solve

    trajectory = solve(TASK, seed)
    assert trajectory.success
    return [reply_text(s.thought, s.action, 1080, 2400) for s in trajectory.steps]


def _tap(world: World, text: str) -> str:
    """A model's click on the element labelled `text`, on the 0-1000 grid."""
    x, y = world.find(text).center
    return reply_text("Tap it.", Action.click(x, y), 1080, 2400)


def test_phone_episode_reward_is_the_outcome_check_and_every_confirmation_is_no(attach, adb_server):
    world = World(seed=0)
    with attach(world) as phone:
        traces: list = []
        phones = PhoneSettings((phone.address,), client=adb_server.client(), traces=traces)
        env = PhoneEnv(EnvSettings(screenshot_scale=0.1), phones)
        # 1. The oracle's steps: the phone's Wi-Fi really comes on; the outcome check over adb says so.
        env.reset(task="phone:wifi_on")
        assert env.world is None  # the environment has no world: only adb
        with phone.lock:
            assert world.settings.wifi is False  # the goal's setup ran over adb (svc wifi disable)
        said = _play(env, _oracle_replies())
        assert isinstance(said[1], list) and said[1][0]["type"] == "image"  # the phone's new screen
        assert env.get_reward() == 1.0
        assert env.result.verification.status is VerificationStatus.VERIFIED
        # 2. Finishing without doing it: the check reads Wi-Fi still off, no reward.
        env.reset(task="phone:wifi_on")
        _play(env, [reply_text("Done.", Action.finish(), 1080, 2400)])
        assert env.get_reward() == 0.0
        # 3. A step the gate confirms is answered no: nothing happens on the phone.
        env.reset(task="phone:wifi_on")
        replies = [reply_text("Open Settings.", Action.open_app("com.android.settings"), 1080, 2400)]
        _play(env, replies)
        with phone.lock:
            security = _tap(world, "Security")
        _play(env, [security])
        with phone.lock:
            location = _tap(world, "Use location")  # the gate asks first
            lock_switch = _tap(world, "Screen lock")  # the gate refuses
            assert world.settings.location is True
        said = _play(env, [location, lock_switch, reply_text("Done.", Action.finish(), 1080, 2400)])
        assert said[0].startswith("The user said no") and said[1].startswith("Refused by the safety gate")
        # the one confirmation was answered no, spoken and routed by the assistant as the answer
        answers = [(t.target, t.text, t.answer) for t in env.front.assistant.turns if t.route is Route.ANSWER]
        assert answers == [(Target.CONFIRMATION, "no", ConfirmAnswer.NO)]
        assert env.get_reward() == 0.0
        with phone.lock:
            assert world.settings.location is True and world.settings.screen_lock is True
            assert world.sensitive_events == []
        assert len(traces) == 3 and all(t.task == "phone:wifi_on" for t in traces)


def test_phone_share_needs_a_phone_per_rollout():
    with pytest.raises(ConfigError, match="phone per rollout"):
        RlConfig(base_model="x", phone_share=0.5, phones=("a",), batch_size=2, num_generations=2)
    with pytest.raises(ConfigError, match="phone_share"):
        RlConfig(base_model="x", phone_share=1.5)
    config = RlConfig(base_model="x", tasks=(TASK,), phone_share=0.5, phones=("a", "b"), batch_size=2,
                      num_generations=2, num_examples=40, seed=3)
    rows = choose_rows(config)
    phone_rows = [r for r in rows if r[0].startswith("phone:")]
    assert 10 <= len(phone_rows) <= 30 and {r[0] for r in rows} - {r[0] for r in phone_rows} == {TASK}
    assert not [r for r in choose_rows(RlConfig(base_model="x", tasks=(TASK,))) if r[0].startswith("phone:")]
    from pathlib import Path

    from training.config import load_config

    shipped = load_config(Path(__file__).resolve().parent.parent / "training/configs/rl_real_phones.yaml", RlConfig)
    assert shipped.phone_share > 0 and len(shipped.phones) >= shipped.batch_size


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return build_tiny(tmp_path_factory.mktemp("tiny_mixed"))


@pytest.mark.slow
def test_mixed_grpo_logs_both_reward_sources(tiny, attach, adb_server, tmp_path):
    import torch
    from transformers import AutoModelForImageTextToText

    from assistant_core.policy.hf_compat import load_processor

    def forced(text: str) -> str:
        return text.removeprefix("<think>\n")  # the generation prompt already ends in "<think>\n"

    # One group = two rollouts: the oracle's steps (the goal is met) and a reply with no tool call.
    scripts = [[forced(r) for r in _oracle_replies()], ["I am not sure what to do."]]
    model = AutoModelForImageTextToText.from_pretrained(tiny, dtype=torch.float32)
    force_generation(model, ForcedReplies(load_processor(tiny).tokenizer, scripts))
    worlds = [World(seed=0), World(seed=0)]
    with attach(worlds[0]) as first, attach(worlds[1]) as second:
        config = RlConfig(base_model=str(tiny), output=str(tmp_path), run_name="mixed", tasks=(TASK,), seeds=(100,),
                          num_examples=2, batch_size=2, num_generations=2, max_steps=2, max_turns=4,
                          max_completion_length=1024, learning_rate=1e-3, save_steps=0, max_pixels=TINY_PIXELS,
                          lora_r=4, lora_alpha=8, phone_share=0.5, phones=(first.address, second.address),
                          phone_goals=("wifi_on",), seed=2, allowed_apps=("com.android.settings",))
        rows = choose_rows(config)
        assert sorted(r[0] for r in rows) == sorted([TASK, "phone:wifi_on"]), rows  # one step each (one epoch)
        traces: list = []
        phone_traces: list = []
        settings = EnvSettings(allowed_apps=("com.android.settings", "com.android.launcher3"), screenshot_scale=0.1,
                               traces=traces)
        phones = PhoneSettings(config.phones, client=adb_server.client(), traces=phone_traces)
        result = run_rl(config, model=model, settings=settings, phones=phones)
        for w in worlds:
            assert w.sensitive_events == []
    assert result.steps == 2
    # Both reward sources are logged apart: the mock verifier's and the phone's outcome check.
    mock, real = result.rewards_by_source["PhoneWorldEnv"], result.rewards_by_source["PhoneEnv"]
    assert len(mock) == len(real) == 1, result.rewards_by_source
    # In each group one rollout met the goal and one did nothing: the mean of each source is 0.5.
    assert all(abs(r - 0.5) < 1e-6 for r in mock + real), result.rewards_by_source
    assert phone_traces and all(t.task == "phone:wifi_on" for t in phone_traces)
    assert all(not t.task.startswith("phone:") for t in traces if t not in phone_traces)
    saved = json.loads((result.run / "result.json").read_text(encoding="utf-8"))
    assert set(saved["rewards_by_source"]) >= {"PhoneWorldEnv", "PhoneEnv"}


def test_mock_env_is_unchanged_by_the_phone_side():
    env = PhoneWorldEnv(EnvSettings(allowed_apps=("com.android.settings", "com.android.launcher3"),
                                    screenshots=False))
    assert env.finish().startswith("That call could not be used")
    env.reset(task=TASK, seed=100)
    _play(env, _oracle_replies())
    assert env.get_reward() == 1.0


def test_phones_behind_another_adb_server_and_per_process_shares(attach, adb_server):
    from training.errors import TrainingError
    from training.rl import phones_for_process

    # A phone plugged into another machine: HOST:PORT/SERIAL names the adb server there (here: the test's).
    with attach(World(seed=0)) as phone:
        phones = PhoneSettings((f"127.0.0.1:{adb_server.port}/{phone.address}",))
        env = PhoneEnv(EnvSettings(screenshots=False), phones)
        env.reset(task="phone:bluetooth_on")
        assert env.device.serial == phone.address and env.device.client.port == adb_server.port
        _play(env, [reply_text("Done.", Action.finish(), 1080, 2400)])
        assert env.get_reward() == 0.0 and env.result.verification.kind == "bluetooth_on"
    with pytest.raises(TrainingError, match="HOST:PORT/SERIAL"):
        PhoneSettings(("nohost/abc",)).device("nohost/abc")
    # `accelerate launch` with 2 processes: each drives its own phones.
    serials = ("a", "b", "c", "d")
    assert phones_for_process(serials, 0, 2) == ("a", "c") and phones_for_process(serials, 1, 2) == ("b", "d")
    assert phones_for_process(serials, 0, 1) == serials
    with pytest.raises(ConfigError, match="vllm_mode"):
        RlConfig(base_model="x", vllm_mode="remote")
