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


def test_the_loss_is_on_the_reply_only(tmp_path):
    """Every prompt token (system text, screenshot, instruction, history) is masked out of the loss; the
    tokens that count are exactly the reply the model must write, and its end-of-turn."""
    from trl import SFTTrainer

    from training.sft import load_base, load_sft_dataset, lora_config, sft_args

    tiny = build_tiny(tmp_path / "tiny")
    examples = list(oracle_examples(["SettingsTurnOnWifi"], (100,), max_pixels=TINY_PIXELS))
    config = SftConfig(base_model=str(tiny), dataset=str(write_dataset(tmp_path / "ds", examples)), max_steps=1)
    model, processor, _ = load_base(tiny, "none", on_cuda=False)
    data = load_sft_dataset(config.dataset)["train"]
    trainer = SFTTrainer(model=model, args=sft_args(config, tmp_path / "out", on_cuda=False), train_dataset=data,
                         processing_class=processor, peft_config=lora_config(config))
    replies = {e.key: e.reply for e in examples}
    for index in range(min(3, len(data))):
        batch = trainer.data_collator([trainer.train_dataset[index]])
        ids, labels = batch["input_ids"][0], batch["labels"][0]
        counted = labels != -100
        assert (labels[counted] == ids[counted]).all()
        first = int(counted.nonzero()[0])
        assert not counted[:first].any() and counted[first:].all()  # one span, at the end
        trained = processor.tokenizer.decode(ids[counted])
        reply = replies[data[index]["key"]]
        # Qwen3.5's generation prompt already holds "<think>\n"; the template writes "</think>\n\n".
        want = reply.removeprefix("<think>\n").replace("</think>\n", "</think>\n\n") + "<|im_end|>\n"
        assert trained == want, (trained, want)
        assert int((ids[:first] == processor.image_token_id).sum()) > 0  # the screenshot is in the masked part
