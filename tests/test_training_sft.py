"""SFT with LoRA on a tiny random-weight model of PhoneBuddy's architecture (qwen3_5): the loss falls,
checkpoints resume, and the adapter loads into the policy runtime and proposes an action."""

from __future__ import annotations

import pytest

from tests.training_fixtures import TINY_PIXELS, build_tiny
from training.config import SftConfig
from training.data import oracle_examples, write_dataset
from training.forcing import ForcedReplies
from training.runs import is_complete_adapter
from training.sft import run_sft


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return build_tiny(tmp_path_factory.mktemp("tiny_sft"))


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    examples = list(oracle_examples(["SettingsTurnOnWifi"], seeds=(100,), max_pixels=TINY_PIXELS))
    return write_dataset(tmp_path_factory.mktemp("ds") / "sft", examples)


@pytest.mark.slow
def test_lora_sft_loss_falls_resumes_and_the_adapter_drives_the_policy(tiny, dataset, tmp_path):
    config = SftConfig(base_model=str(tiny), dataset=str(dataset), output=str(tmp_path), run_name="t",
                       max_steps=6, batch_size=2, learning_rate=2e-2, lora_r=8, lora_alpha=16, save_steps=3,
                       lr_scheduler="constant")
    seen = []
    result = run_sft(config, on_progress=seen.append)
    assert result.steps == 6 and len(result.losses) == 6
    assert sum(result.losses[-2:]) / 2 < result.losses[0] - 0.05, result.losses
    assert max(p.step for p in seen) == 6 and any(p.loss is not None for p in seen)
    assert is_complete_adapter(result.adapter) and (result.adapter / "adapter_config.json").exists()
    assert (result.run / "checkpoints" / "checkpoint-6" / "trainer_state.json").exists()
    assert [m["step"] for m in _metrics(result.run) if "loss" in m] == [1, 2, 3, 4, 5, 6]
    assert not [p for p in result.run.iterdir() if ".partial-" in p.name]

    # Resume: the same run folder continues from checkpoint-6 instead of starting again.
    resumed = run_sft(SftConfig(**{**config.__dict__, "max_steps": 7}))
    assert resumed.steps == 7 and resumed.losses[:6] == result.losses
    assert [m["step"] for m in _metrics(result.run) if "loss" in m] == [1, 2, 3, 4, 5, 6, 7]  # only step 7 re-ran

    # The runtime loads base + adapter and proposes an action through its own prompt and parser.
    from peft import PeftModel

    from assistant_core.policy.local import LocalPolicy
    from harness.phoneworld import SimDevice
    from harness.phoneworld.tasks.episode import TaskWorld
    from harness.phoneworld.tasks.registry import get

    world = TaskWorld(get("SettingsTurnOnWifi"), seed=100)
    observation = SimDevice(world).observe()
    plain = LocalPolicy(tiny, max_pixels=TINY_PIXELS, max_new_tokens=8)
    adapted = LocalPolicy(tiny, adapter_dir=resumed.adapter, max_pixels=TINY_PIXELS, max_new_tokens=8)
    assert isinstance(adapted.model, PeftModel)
    assert _first_logits(adapted, observation) != _first_logits(plain, observation)  # the adapter is applied
    reply = '</think>\n\n<tool_call>\n{"name": "open_app", "arguments": {"package": "com.android.settings"}}\n</tool_call>'
    forced = LocalPolicy(tiny, adapter_dir=resumed.adapter, max_pixels=TINY_PIXELS, max_new_tokens=64,
                         logits_processors=[ForcedReplies(adapted.processor.tokenizer, [[reply]])])
    proposal = forced.propose("Turn on Wi-Fi.", observation, ())
    assert proposal.action.kind == "open_app" and proposal.action.app == "com.android.settings"


def _metrics(run):
    import json

    return [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]


def _first_logits(policy, observation):
    import torch

    from assistant_core.policy.prompt import build_prompt

    prompt = build_prompt("Turn on Wi-Fi.", observation, (), policy.profile, max_pixels=TINY_PIXELS)
    inputs = policy.processor.apply_chat_template(prompt.hf_messages(), add_generation_prompt=True, tokenize=True,
                                                  return_dict=True, return_tensors="pt")
    with torch.no_grad():
        logits = policy.model(**inputs).logits[0, -1]
    return [round(float(v), 4) for v in logits[:16]]
