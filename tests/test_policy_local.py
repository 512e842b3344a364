"""The local backend on tiny random-weight models of the real architectures (qwen3_5 = PhoneBuddy,
qwen3_vl), loaded through the real path (AutoModelForImageTextToText + the image-only processor) in fp32
and nf4 (bitsandbytes on the CPU), one full propose() on a 1080x2400 screenshot each; plus loading
behaviour, adapters, and a fidelity check with the real Qwen tokenizer files."""

from __future__ import annotations

import json
import threading

import pytest
from policy_fixtures import TEST_MAX_PIXELS, ForcedReply, phone_observation, tiny_model_dir

from assistant_core.errors import PolicyOutputError, PolicyUnavailableError
from assistant_core.policy.errors import PolicyUnavailable
from assistant_core.policy.hf_compat import load_processor
from assistant_core.policy.local import LocalPolicy
from assistant_core.policy.prompt import build_prompt
from assistant_core.types import Action, Proposal, Step

# What the model is made to write: generation prompts of Qwen3.5 end in "<think>\n", Qwen3-VL's do not.
PB_REPLY = ("The Wi-Fi row is near the top.\n</think>\n\n<tool_call>\n"
            '{"name": "click", "arguments": {"points": [[500, 125]]}}\n</tool_call>')
MU_REPLY = ('Thought: tap Wi-Fi\n<tool_call>\n{"name": "mobile_use", "arguments": {"action": "click", '
            '"coordinate": [499, 125]}}\n</tool_call>')
CASES = {"qwen3_5": ("phonebuddy-4b", PB_REPLY, Action.click(540, 300), "The Wi-Fi row is near the top."),
         "qwen3_vl": ("qwen3-vl-4b", MU_REPLY, Action.click(539, 300), "tap Wi-Fi")}

pytest_plugins = ("policy_fixtures",)  # the shared tiny-model fixtures


def make_policy(folder, arch, quantization, **kwargs) -> LocalPolicy:
    profile, reply, _, _ = CASES[arch]
    forced = ForcedReply(load_processor(folder).tokenizer, reply)
    return LocalPolicy(folder, profile=profile, quantization=quantization, max_new_tokens=96,
                       max_pixels=TEST_MAX_PIXELS, logits_processors=[forced], **kwargs)


@pytest.mark.parametrize("quantization", ["fp32", "nf4"])
@pytest.mark.parametrize("arch", ["qwen3_5", "qwen3_vl"])
def test_full_propose_on_a_phone_screenshot(arch, quantization, request):
    folder = request.getfixturevalue(f"tiny_{arch}")
    chunks: list[str] = []
    policy = make_policy(folder, arch, quantization, on_thought=chunks.append)
    history = [Step(index=0, action=Action.press("home"), thought="Start from home.")]
    proposal = policy.propose("Turn on Wi-Fi", phone_observation(), history)

    _, _, expected, thought = CASES[arch]
    assert isinstance(proposal, Proposal)
    assert proposal.action == expected
    assert proposal.thought == thought
    assert "<tool_call>" in proposal.raw_text
    assert "".join(chunks).strip() == proposal.raw_text.strip()  # the reply was streamed as it was written
    assert {"prefill", "decode", "total", "preprocess", "parse"} <= set(proposal.timings)
    assert all(v >= 0 for v in proposal.timings.values())
    assert proposal.timings["total"] >= proposal.timings["prefill"]
    stats = proposal.stats
    assert 0 < stats["visual_tokens"] <= TEST_MAX_PIXELS // (32 * 32)
    assert stats["prompt_tokens"] > stats["visual_tokens"]
    assert stats["decode_tokens"] > 5 and stats["decode_tokens_per_s"] > 0
    assert stats["thought_chars"] == len(thought)

    import bitsandbytes as bnb
    import torch

    model = policy.model
    assert type(model).__name__ == {"qwen3_5": "Qwen3_5ForConditionalGeneration",
                                    "qwen3_vl": "Qwen3VLForConditionalGeneration"}[arch]
    quantized = [m for m in model.modules() if isinstance(m, bnb.nn.Linear4bit)]
    assert bool(quantized) == (quantization == "nf4")
    if quantization == "nf4":  # the vision tower and the output head stay in full precision
        names = [n for n, m in model.named_modules() if isinstance(m, bnb.nn.Linear4bit)]
        assert not any("visual" in n or "lm_head" in n for n in names)
        assert all(m.compute_dtype.is_floating_point and str(m.compute_dtype) == "torch.float32" for m in quantized)
        # Layers too narrow for bitsandbytes' packed CPU kernel (a multiple of 32 rows) stay full precision;
        # on an AVX512-BF16 CPU quantizing them crashed the first forward pass.
        assert all(m.out_features % 32 == 0 for m in quantized)
        if arch == "qwen3_5":
            kept = {n.rsplit(".", 1)[-1] for n, m in model.named_modules()
                    if type(m) is torch.nn.Linear and "language_model" in n}
            assert {"in_proj_a", "in_proj_b"} <= kept


def test_cpu_unpackable_linears_names_only_the_narrow_layers(tiny_qwen3_5):
    from assistant_core.policy.local import cpu_unpackable_linears

    names = cpu_unpackable_linears(tiny_qwen3_5)
    assert names and all(n.endswith(("in_proj_a", "in_proj_b")) or "visual" in n or "lm_head" in n for n in names)
    assert not any(n.endswith(("q_proj", "o_proj", "down_proj")) and "language_model" in n for n in names)


def test_the_hybrid_architecture_is_really_there(tiny_qwen3_5):
    config = json.loads((tiny_qwen3_5 / "config.json").read_text())
    assert config["model_type"] == "qwen3_5"
    assert config["text_config"]["layer_types"] == ["linear_attention", "full_attention"]
    meta = json.loads((tiny_qwen3_5 / "tiny_model.json").read_text())
    assert meta["parameters"] < 1_000_000
    policy = LocalPolicy(tiny_qwen3_5, max_pixels=TEST_MAX_PIXELS)
    layers = policy.model.model.language_model.layers
    assert type(layers[0].linear_attn).__name__ == "Qwen3_5GatedDeltaNet"
    assert type(layers[1].self_attn).__name__ == "Qwen3_5Attention"


def test_the_ci_models_stay_well_under_a_million_parameters(tiny_qwen3_5, tiny_qwen3_vl):
    for folder, model_type in ((tiny_qwen3_5, "qwen3_5"), (tiny_qwen3_vl, "qwen3_vl")):
        assert json.loads((folder / "config.json").read_text())["model_type"] == model_type
        counted = sum(p.numel() for p in LocalPolicy(folder, max_pixels=TEST_MAX_PIXELS).model.parameters())
        assert counted == json.loads((folder / "tiny_model.json").read_text())["parameters"] < 1_000_000


def test_a_random_reply_is_a_policy_output_error_with_the_raw_text(tiny_qwen3_vl):
    policy = LocalPolicy(tiny_qwen3_vl, profile="qwen3-vl-4b", max_new_tokens=6, max_pixels=TEST_MAX_PIXELS)
    with pytest.raises(PolicyOutputError) as info:
        policy.propose("Open the clock", phone_observation(), [])
    assert info.value.raw_text
    assert "cut off after 6 tokens" in str(info.value)


def test_loads_once_in_the_background_with_progress(tiny_qwen3_vl):
    events = []
    policy = LocalPolicy(tiny_qwen3_vl, profile="qwen3-vl-4b", max_pixels=TEST_MAX_PIXELS)
    assert not policy.loaded
    task = policy.load_in_background(on_progress=events.append)
    results = []
    waiter = threading.Thread(target=lambda: results.append(policy.model))  # waits for the same load
    waiter.start()
    assert task.wait(120) and task.error is None
    waiter.join(60)
    assert policy.loaded and results and results[0] is policy.model
    stages = [e.stage for e in events]
    assert stages == ["start", "processor", "weights", "ready"]
    fractions = [e.fraction for e in events]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    assert all(e.message.en and e.message.zh for e in events)
    first = policy.model
    policy.load()
    assert policy.model is first


def test_missing_or_broken_folders_are_clear_unavailable_errors(tmp_path):
    missing = LocalPolicy(tmp_path / "nope")
    with pytest.raises(PolicyUnavailable) as info:
        missing.load()
    assert isinstance(info.value, PolicyUnavailableError)
    assert "phonebuddy models download phonebuddy-4b" in info.value.message.en
    assert "phonebuddy models download phonebuddy-4b" in info.value.message.zh
    (tmp_path / "empty").mkdir()
    task = LocalPolicy(tmp_path / "empty").load_in_background()
    assert task.wait(30)
    assert isinstance(task.error, PolicyUnavailable) and "config.json" in str(task.error)


def test_cuda_settings_without_cuda_are_refused(tiny_qwen3_vl):
    policy = LocalPolicy(tiny_qwen3_vl, profile="qwen3-vl-4b", device="cuda")
    with pytest.raises(PolicyUnavailable) as info:
        policy.load()
    assert "CUDA" in info.value.message.en and "CUDA" in info.value.message.zh


def test_a_lora_adapter_is_applied(tiny_qwen3_5, tmp_path):
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForImageTextToText

    base = AutoModelForImageTextToText.from_pretrained(str(tiny_qwen3_5), dtype=torch.float32)
    config = LoraConfig(r=4, lora_alpha=8, init_lora_weights=False,
                        target_modules=r".*language_model.*\.(q_proj|v_proj|gate_proj|up_proj)")
    get_peft_model(base, config).save_pretrained(tmp_path / "adapter")

    plain = make_policy(tiny_qwen3_5, "qwen3_5", "fp32")
    adapted = make_policy(tiny_qwen3_5, "qwen3_5", "fp32", adapter_dir=tmp_path / "adapter")
    assert type(adapted.model).__name__ == "PeftModel"
    prompt = build_prompt("Turn on Wi-Fi", phone_observation(), [], "phonebuddy-4b", max_pixels=TEST_MAX_PIXELS)
    inputs = plain.processor.apply_chat_template(prompt.hf_messages(), add_generation_prompt=True, tokenize=True,
                                                 return_dict=True, return_tensors="pt")
    with torch.inference_mode():
        a = plain.model(**inputs).logits[0, -1]
        b = adapted.model(**inputs).logits[0, -1]
    assert not torch.allclose(a, b)  # the adapter changes what the model computes
    assert adapted.propose("Turn on Wi-Fi", phone_observation(), []).action == Action.click(540, 300)
    with pytest.raises(PolicyUnavailable, match="adapter_config.json"):
        LocalPolicy(tiny_qwen3_5, adapter_dir=tmp_path).load()


def test_fidelity_with_the_real_qwen_tokenizer(tmp_path_factory):
    """The real Qwen tokenizer files: special-token ids, the chat template's rendering of our request, and
    one propose through a tiny qwen3_vl model that uses them."""
    folder = tiny_model_dir(tmp_path_factory, "qwen3_vl", "qwen")
    processor = load_processor(folder)
    tok = processor.tokenizer
    assert len(tok) == 151669
    ids = {t: tok.convert_tokens_to_ids(t) for t in ("<|im_start|>", "<|im_end|>", "<|vision_start|>",
                                                      "<|vision_end|>", "<|image_pad|>", "<tool_call>",
                                                      "</tool_call>", "<think>", "</think>")}
    assert ids == {"<|im_start|>": 151644, "<|im_end|>": 151645, "<|vision_start|>": 151652,
                   "<|vision_end|>": 151653, "<|image_pad|>": 151655, "<tool_call>": 151657,
                   "</tool_call>": 151658, "<think>": 151667, "</think>": 151668}
    config = json.loads((folder / "config.json").read_text())
    assert config["image_token_id"] == 151655 and config["vision_start_token_id"] == 151652

    prompt = build_prompt("打开无线网络", phone_observation(), [Step(0, Action.click(540, 1200), thought="点击")],
                          "phonebuddy-4b", max_pixels=TEST_MAX_PIXELS)
    inputs = processor.apply_chat_template(prompt.hf_messages(), add_generation_prompt=True, tokenize=True,
                                           return_dict=True, return_tensors="pt")
    text = tok.decode(inputs["input_ids"][0])
    assert text.startswith("<|im_start|>system\n<|im_end|>\n<|im_start|>user\nYou are a GUI Agent.")
    assert "</tools>" in text and "<|vision_start|><|image_pad|>" in text
    n_pads = int((inputs["input_ids"] == 151655).sum())
    grid = inputs["image_grid_thw"][0]
    assert n_pads == int(grid.prod()) // 4
    assert text.endswith("<|vision_end|># Instruction\n打开无线网络\n\n# History of Previous Actions\n- Step 1:\n"
                         "Thought: 点击\nAction: click({\"points\": [[500, 500]]})<|im_end|>\n"
                         "<|im_start|>assistant\n")
    reply = '<think>\n看到了\n</think>\n\n<tool_call>\n{"name": "type", "arguments": {"text": "家"}}\n</tool_call>'
    ids_reply = tok(reply, add_special_tokens=False)["input_ids"]
    assert ids_reply[0] == 151667 and 151657 in ids_reply and tok.decode(ids_reply) == reply
    policy = LocalPolicy(folder, profile="phonebuddy-4b", max_new_tokens=64, max_pixels=TEST_MAX_PIXELS,
                         logits_processors=[ForcedReply(tok, reply)])
    proposal = policy.propose("打开无线网络", phone_observation(), [])
    assert proposal.action == Action.type_text("家") and proposal.thought == "看到了"


def test_qwen3_5_generation_prompt_opens_the_think_block(tiny_qwen3_5):
    processor = load_processor(tiny_qwen3_5)
    prompt = build_prompt("x", phone_observation(), [], "phonebuddy-4b", max_pixels=TEST_MAX_PIXELS)
    text = processor.apply_chat_template(prompt.hf_messages(), add_generation_prompt=True, tokenize=False)
    assert text.startswith("<|im_start|>system\n<|im_end|>\n<|im_start|>user\nYou are a GUI Agent.")
    assert text.endswith("# Instruction\nx<|im_end|>\n<|im_start|>assistant\n<think>\n")


def test_the_loaded_checkpoint_says_what_its_chat_template_does(tiny_qwen3_5, tiny_qwen3_vl, caplog):
    """Qwen3.5 (4B and larger) ends the prompt with <think> and writes XML tool calls; Qwen3-VL writes JSON.
    The loaded policy records and logs which, so a reply format mismatch can be seen in the log."""
    import logging

    caplog.set_level(logging.INFO, logger="assistant_core.policy.local")
    qwen35 = LocalPolicy(tiny_qwen3_5, max_pixels=TEST_MAX_PIXELS)
    qwen35.load()
    assert qwen35.template == {"has_template": True, "thinking_prefill": True, "tool_format": "xml"}
    assert "thinking_prefill': True" in caplog.text
    vl = LocalPolicy(tiny_qwen3_vl, max_pixels=TEST_MAX_PIXELS)
    vl.load()
    assert vl.template["tool_format"] == "json" and vl.template["thinking_prefill"] is False
