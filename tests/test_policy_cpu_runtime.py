"""The fast CPU runtime (assistant_core/policy/cpu_runtime.py) on a tiny Qwen3.5 checkpoint, against transformers.

Numerical agreement (issue 25, item 3), stated tolerances: on the same weights, the next-token logits of
the runtime differ from transformers' fp32 forward by at most LOGIT_TOLERANCE x max|logit| (int8: 10 %,
bf16: 5 %, fp32: 0.01 %), and greedy replies from both parse to the same action on at least 95 % of a
fixed set of 20 observations for the runtimes chosen by themselves (fp32, and the mixed bf16 plan);
the all-bf16 model and int8 are held to 85 % (see SAME_ACTION). A random tiny model writes no tool calls and its logits are nearly flat (any rounding flips
its argmax), so the agreement check uses a tiny model first taught here, in a few seconds of training,
to answer each goal with one tool call: like a trained checkpoint, it is confident, and its replies parse.

Also: prefix reuse gives the same reply as a cold run; the converted model is cached, checksummed and
rebuilt when the cache is damaged; the thinking budget closes a thought; LocalPolicy(runtime="cpu")
streams the same text it returns.
"""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")

from assistant_core.errors import PolicyOutputError  # noqa: E402
from assistant_core.policy.cpu_runtime import CpuRuntime, choose_compute, machine_plan  # noqa: E402
from assistant_core.policy.local import LocalPolicy  # noqa: E402
from assistant_core.policy.parsing import parse_reply  # noqa: E402
from assistant_core.policy.prompt import build_prompt  # noqa: E402
from assistant_core.policy.tiny import build_tiny_model  # noqa: E402
from assistant_core.types import Action, ActionKind, Observation, Step  # noqa: E402

LOGIT_TOLERANCE = {"fp32": 1e-4, "fp16w": 3e-3, "bf16": 0.05, "bf16-all": 0.05, "int8": 0.10}
# "bf16" is the runtime's chosen plan on bf16-capable CPUs (bf16 weights and matmuls, fp32 activations, norms,
# states and logits: cpu_bf16_modules.py) and is held to the 95 %. Measured on this taught tiny model
# (hidden size 64, where rounding matters most; its fp32 weights are rounded to bf16 too, which the
# published bf16 checkpoints are not), the worst logit difference was 0.3 % of the largest logit for it
# against 0.4 % for the all-bf16 model and 4 % for int8, and it agreed on 20/20; the all-bf16 model and
# int8 (never chosen by themselves) agreed on 17-20/20 across runs and are held to 85 %.
# "fp16w" (x86 without bf16 units: fp16 weights, fp32 arithmetic; cpu_fp16w_modules.py) rounds only this
# tiny model's fp32 weights to fp16 (a bf16 checkpoint's are held exactly, and computed as the fp32 plan
# computes them within 0.01 %: test_fp16_weights_hold_a_bf16_checkpoint_exactly...). That rounding (2^-11 of
# each weight) moved the taught model's logits by 0.08-0.18 % of the largest across machines (the taught
# weights differ between AVX2 and AVX-512 training runs), so it is held to 0.3 %.
SAME_ACTION = {"fp32": 0.95, "fp16w": 0.95, "bf16": 0.95, "bf16-all": 0.85, "int8": 0.85}
PROFILE = "phonebuddy-0.8b"
GOALS = ["Turn on Wi-Fi.", "Open the camera.", "Call Mum.", "打开蓝牙。", "What is the battery level?"]


def screen(seed: int) -> Observation:
    from PIL import Image, ImageDraw

    img = Image.new("RGB", (540, 1200), (250 - seed * 7, 250, 245))
    draw = ImageDraw.Draw(img)
    for i in range(4 + seed % 3):
        top = 100 + i * 150 + seed * 5
        draw.rectangle((20, top, 520, top + 110), fill=(255, 255, 255), outline=(200, 200, 200))
        draw.text((40, top + 40), f"Item {i + seed}", fill=(20, 20, 20))
    return Observation(width=540, height=1200, foreground="com.android.settings", screenshot=img)


def observations() -> list[tuple[str, Observation, list[Step]]]:
    out = []
    for n in range(20):
        history = [Step(index=i + 1, action=Action(ActionKind.CLICK, x=100 + 10 * i, y=300), thought=f"step {i}")
                   for i in range(n % 4)]
        out.append((GOALS[n % len(GOALS)], screen(n), history))
    return out


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return build_tiny_model(tmp_path_factory.mktemp("tiny35"), "qwen3_5", "bpe", max_pixels=200_000)


TARGETS = {
    GOALS[0]: '{"name": "click", "arguments": {"points": [[500, 120]]}}',
    GOALS[1]: '{"name": "open_app", "arguments": {"app": "Camera"}}',
    GOALS[2]: '{"name": "type", "arguments": {"text": "Mum"}}',
    GOALS[3]: '{"name": "click", "arguments": {"points": [[250, 640]]}}',
    GOALS[4]: '{"name": "scroll", "arguments": {"points": [[500, 800], [500, 200]]}}',
}


@pytest.fixture(scope="module")
def taught(tiny, tmp_path_factory):
    """The tiny model taught by teacher forcing on 'goal -> short thought + one tool call' until every
    taught reply's loss is under 0.01 (at most 600 steps)."""
    import shutil

    from transformers import AutoModelForImageTextToText

    from assistant_core.policy.hf_compat import load_processor

    processor = load_processor(tiny)
    model = AutoModelForImageTextToText.from_pretrained(str(tiny), dtype=torch.float32)
    model.train()
    # Only the reply is taught: the vision tower stays as built (its gradients were a fifth of each step).
    model.model.visual.requires_grad_(False)
    torch.manual_seed(0)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    batches = []
    for goal, obs, history in observations()[:10]:
        messages = build_prompt(goal, obs, history, PROFILE).hf_messages()
        prompt = processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=True,
                                               return_dict=True, return_tensors="pt")
        reply = f"I will do it.\n</think>\n\n<tool_call>\n{TARGETS[goal]}\n</tool_call><|im_end|>"
        target = processor.tokenizer(reply, add_special_tokens=False, return_tensors="pt")["input_ids"]
        ids = torch.cat([prompt["input_ids"], target], dim=1)
        labels = ids.clone()
        labels[:, :prompt["input_ids"].shape[1]] = -100
        batches.append(dict(prompt, input_ids=ids, attention_mask=torch.ones_like(ids), labels=labels,
                            mm_token_type_ids=torch.cat([prompt["mm_token_type_ids"],
                                                         torch.zeros_like(target)], dim=1)))
    # Until the replies are learnt, not a fixed step count: the same seed takes a different path on another
    # processor (AVX2 and AVX512 sum in different orders), and 200 fixed steps left one machine's model
    # writing '{"name": "click", "arguments": "Mum"}}'. The learning rate decays so the loss settles.
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: max(0.1, 1 - step / 600))
    recent: list[float] = []
    for step in range(600):
        loss = model(**batches[step % len(batches)]).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        schedule.step()
        recent = (recent + [loss.item()])[-len(batches):]
        if step >= 150 and max(recent) < 0.01:  # every taught reply, near certain
            break
    out = tmp_path_factory.mktemp("taught35")
    model.eval()
    model.save_pretrained(out)
    for name in tiny.iterdir():
        if name.suffix != ".safetensors" and name.name not in ("config.json", "generation_config.json"):
            shutil.copy(name, out / name.name)
    return out


@pytest.fixture(scope="module")
def reference(taught):
    policy = LocalPolicy(taught, profile=PROFILE, device="cpu", quantization="fp32")
    policy.load()
    return policy


def reference_reply(policy, prompt, tokens=16):
    inputs = policy.processor.apply_chat_template(prompt.hf_messages(), add_generation_prompt=True, tokenize=True,
                                                  return_dict=True, return_tensors="pt")
    with torch.inference_mode():
        logits = policy.model(**inputs, logits_to_keep=1).logits[0, -1].float()
        out = policy.model.generate(**inputs, max_new_tokens=tokens, do_sample=False)
    return logits, out[0, inputs["input_ids"].shape[1]:].tolist()


def outcome(text: str):
    try:
        return parse_reply(text, 540, 1200, PROFILE).action
    except PolicyOutputError as error:
        return f"refused: {error}"


@pytest.mark.parametrize("compute", ["fp32", "fp16w", "bf16", "bf16-all", "int8"])
def test_logits_and_greedy_replies_agree_with_transformers(taught, reference, tmp_path, compute):
    runtime = CpuRuntime(taught, cache_dir=tmp_path, compute=compute)
    tokenizer = reference.processor.tokenizer
    same = parsed = 0
    worst = 0.0
    cases = observations()
    for goal, obs, history in cases:
        prompt = build_prompt(goal, obs, history, PROFILE)
        ref_logits, ref_ids = reference_reply(reference, prompt, tokens=48)
        gen = runtime.generate(prompt, max_new_tokens=48, keep_first_logits=True)
        worst = max(worst, float((gen.first_logits - ref_logits).abs().max() / ref_logits.abs().max()))
        mine, theirs = outcome(gen.text), outcome(tokenizer.decode(ref_ids, skip_special_tokens=True))
        same += mine == theirs
        parsed += not isinstance(theirs, str)
    assert worst <= LOGIT_TOLERANCE[compute], f"{compute}: logits differ by {worst:.3f} of the largest logit"
    assert parsed >= 0.75 * len(cases), f"the taught model wrote a usable call on {parsed}/{len(cases)}"
    assert same >= SAME_ACTION[compute] * len(cases), f"{compute}: the same action on {same}/{len(cases)}"


def test_prefix_reuse_gives_the_cold_reply(tiny, tmp_path):
    # fp32: the reuse itself must be exact (int8 quantizes activations per call, so a shorter call differs)
    warm = CpuRuntime(tiny, cache_dir=tmp_path, compute="fp32")
    cold = CpuRuntime(tiny, cache_dir=tmp_path, compute="fp32", reuse_prefix=False)
    first = warm.generate(build_prompt(GOALS[0], screen(1), [], PROFILE), max_new_tokens=8)
    assert first.reused_tokens > 100  # the system prompt before the screenshot: filled now, kept for later
    for seed in (2, 3):
        prompt = build_prompt(GOALS[0], screen(seed), observations()[seed][2], PROFILE)
        a = warm.generate(prompt, max_new_tokens=12, min_new_tokens=12, keep_first_logits=True)
        b = cold.generate(prompt, max_new_tokens=12, min_new_tokens=12, keep_first_logits=True)
        assert a.reused_tokens == first.reused_tokens and b.reused_tokens == 0
        assert a.token_ids == b.token_ids
        assert float((a.first_logits - b.first_logits).abs().max()) <= 1e-4 * float(b.first_logits.abs().max())


def test_conversion_is_cached_checksummed_and_rebuilt_when_damaged(tiny, tmp_path):
    reports = []
    first = CpuRuntime(tiny, cache_dir=tmp_path, compute="int8", on_progress=reports.append)
    first.load()
    assert first.load_info["converted"] is True
    stages = [r.stage for r in reports]
    assert "convert" in stages and stages[-1] == "ready"
    assert any("%" in r.message.en and "%" in r.message.zh for r in reports)
    cache = first.cache_file(first.load_info["source_sha256"])
    manifest = json.loads(cache.with_suffix(".json").read_text())
    assert manifest["source_sha256"] == first.load_info["source_sha256"] and len(manifest["cache_sha256"]) == 64

    second = CpuRuntime(tiny, cache_dir=tmp_path, compute="int8")
    second.load()
    assert second.load_info["converted"] is False

    data = bytearray(cache.read_bytes())
    data[len(data) // 2] ^= 0xFF
    cache.write_bytes(bytes(data))
    third = CpuRuntime(tiny, cache_dir=tmp_path, compute="int8")
    third.load()  # no error: the damaged file fails its checksum and is converted again
    assert third.load_info["converted"] is True
    prompt = build_prompt(GOALS[1], screen(4), [], PROFILE)
    assert third.generate(prompt, max_new_tokens=6).token_ids == second.generate(prompt, max_new_tokens=6).token_ids


def test_thinking_budget_closes_the_thought(tiny, tmp_path):
    runtime = CpuRuntime(tiny, cache_dir=tmp_path, compute="int8")
    runtime.load()
    close = runtime.processor.tokenizer.convert_tokens_to_ids("</think>")
    messages = build_prompt(GOALS[0], screen(5), [], PROFILE).hf_messages()
    text = runtime.processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    assert text.rstrip().endswith("<think>")  # the Qwen3.5 thinking template: the reply starts mid-thought
    free = runtime.generate(messages, max_new_tokens=12)
    assert close not in free.token_ids[:5] and not free.think_forced
    gen = runtime.generate(messages, max_new_tokens=12, think_budget=5)
    assert gen.think_forced and gen.token_ids[5] == close
    assert gen.token_ids[:5] == free.token_ids[:5]


def test_local_policy_on_the_cpu_runtime_streams_what_it_returns(tiny):
    chunks: list[str] = []
    policy = LocalPolicy(tiny, profile=PROFILE, device="cpu", runtime="cpu", on_thought=chunks.append,
                         max_new_tokens=12)
    prompt = build_prompt(GOALS[3], screen(6), [], PROFILE)
    gen = policy.generate(prompt, on_text=chunks.append)
    assert policy.uses_cpu_runtime() and gen.decode_tokens == 12 or gen.finish_reason == "stop"
    assert "".join(chunks) == gen.text
    assert LocalPolicy(tiny, profile=PROFILE, device="cpu").uses_cpu_runtime() is False  # opt-in
    assert LocalPolicy(tiny, profile=PROFILE, device="cpu", runtime="auto").uses_cpu_runtime() is True


def test_machine_plan_and_compute_choice():
    small = machine_plan(PROFILE, 2)
    big = machine_plan(PROFILE, 16)
    assert small.max_pixels < big.max_pixels and small.think_budget < big.think_budget
    assert choose_compute({"amx": True}, fp16_gemm=False) == "bf16"
    assert choose_compute({"avx512_bf16": True}, fp16_gemm=False) == "bf16"
    # x86 without bf16 units: fp16 weights in fbgemm's GEMM; without that GEMM (ARM) or AVX2: fp32.
    assert choose_compute({"avx2": True, "vnni": True}, fp16_gemm=True) == "fp16w"  # int8 is opt-in only
    assert choose_compute({"avx2": True}, fp16_gemm=False) == "fp32" and choose_compute({}, fp16_gemm=True) == "fp32"
    # bf16 units do not change the choice: fp16w was faster and exact beside the mixed bf16 plan on AMX
    assert choose_compute({"amx": True, "avx2": True}, fp16_gemm=True) == "fp16w"


def bf16_copy(tiny, folder, tied: bool = False):
    """The tiny checkpoint saved in bf16, as the published checkpoints are, with its processor files;
    `tied`: with the output head tied to the token embedding, as Qwen3.5-0.8B's is (no lm_head.weight saved)."""
    model = __import__("transformers").AutoModelForImageTextToText.from_pretrained(str(tiny), dtype=torch.bfloat16)
    if tied:
        model.config.tie_word_embeddings = True
        model.config.get_text_config().tie_word_embeddings = True
        model.tie_weights()
    model.save_pretrained(folder)
    for name in ("tokenizer.json", "tokenizer_config.json", "preprocessor_config.json", "chat_template.jinja",
                 "processor_config.json", "video_preprocessor_config.json", "special_tokens_map.json"):
        if (tiny / name).exists():
            (folder / name).write_bytes((tiny / name).read_bytes())
    return folder


def _checkpoint_members(name: str) -> list[str]:
    """The checkpoint linears a packed module holds (a fused one stacks several), by module name."""
    from assistant_core.policy.cpu_fp16w_modules import ATTENTION_PARTS, GDN_PARTS, MLP_PARTS

    if name.endswith(".mlp.gate_up"):
        return [name.removesuffix("gate_up") + p for p in MLP_PARTS]
    if name.endswith(".linear_attn.in_proj_fused.linear"):
        return [name.removesuffix("in_proj_fused.linear") + p for p in GDN_PARTS]
    if name.endswith(".self_attn.in_proj_fused.linear"):
        return [name.removesuffix("in_proj_fused.linear") + p for p in ATTENTION_PARTS]
    return [name]


def test_fp16_weights_hold_a_bf16_checkpoint_exactly_and_say_their_progress(tiny, tmp_path):
    from safetensors.torch import load_file

    from assistant_core.policy.cpu_fp16w_modules import Fp16WeightLinear

    bf16_dir = bf16_copy(tiny, tmp_path / "bf16")
    saved = {}
    for f in bf16_dir.glob("*.safetensors"):
        saved.update(load_file(f))
    reports = []
    runtime = CpuRuntime(bf16_dir, cache_dir=tmp_path / "cache", compute="fp16w", on_progress=reports.append)
    runtime.load()
    packed = {n: m for n, m in runtime.model.named_modules() if isinstance(m, Fp16WeightLinear)}
    assert len(packed) >= 10
    for name, module in packed.items():
        weight, _bias = torch.ops.quantized.linear_unpack_fp16(module._packed)
        if name.startswith("lm_head."):  # the head's row blocks: the (tied) embedding matrix's rows
            rows = saved.get("lm_head.weight", saved["model.language_model.embed_tokens.weight"])
            index = int(name.rsplit(".", 1)[-1])
            want = rows[index * 32768:(index + 1) * 32768].float()
        else:
            want = torch.cat([saved[next(k for k in saved if k.endswith(member + ".weight"))].float()
                              for member in _checkpoint_members(name.split("model.", 1)[-1])])
        normal = want.abs() >= 2.0 ** -14  # fp16's normal range: every bf16 weight there, exactly
        assert torch.equal(weight[normal], want[normal]), name
        assert float((weight - want).abs().max()) <= 2.0 ** -25, name  # below it, within half a subnormal step
    fractions = [r.fraction for r in reports if r.stage == "convert"]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    assert all("%" in r.message.en and "%" in r.message.zh and r.message.en != r.message.zh
               for r in reports if r.stage == "convert")
    assert runtime.load_info["converted"] is False  # packed at load from the checkpoint: nothing cached
    assert runtime.load_info["streamed"] is True  # read one tensor at a time, not through from_pretrained
    # the same weights in fp32 arithmetic: what the fp32 plan computes from this checkpoint, up to sum order
    wide = CpuRuntime(bf16_dir, cache_dir=tmp_path / "cache", compute="fp32")
    prompt = build_prompt(GOALS[2], screen(3), observations()[3][2], PROFILE)
    a = runtime.generate(prompt, max_new_tokens=6, min_new_tokens=6, keep_first_logits=True)
    b = wide.generate(prompt, max_new_tokens=6, min_new_tokens=6, keep_first_logits=True)
    assert float((a.first_logits - b.first_logits).abs().max()) <= 1e-4 * float(b.first_logits.abs().max())
    assert a.token_ids == b.token_ids


def _unpacked(model) -> dict:
    from assistant_core.policy.cpu_fp16w_modules import Fp16WeightLinear

    out = {n: t for n, t in list(model.named_parameters()) + list(model.named_buffers())}
    for name, module in model.named_modules():
        if isinstance(module, Fp16WeightLinear):
            weight, bias = torch.ops.quantized.linear_unpack_fp16(module._packed)
            out[name + ".packed_weight"], out[name + ".packed_bias"] = weight, bias
    return out


@pytest.mark.parametrize("source", ["bf16", "bf16-tied", "fp32"])
def test_the_streamed_load_is_the_transformers_load_bit_for_bit(tiny, tmp_path, source):
    """Reading and packing one tensor at a time (cpu_stream.py, for the peak memory) builds the same model as
    from_pretrained followed by packing: every tensor and the first reply's logits equal, not close."""
    folder = tiny if source == "fp32" else bf16_copy(tiny, tmp_path / "bf16", tied=source.endswith("tied"))
    if source.endswith("tied"):
        from safetensors import safe_open

        with safe_open(next(folder.glob("*.safetensors")), "pt") as f:
            assert "lm_head.weight" not in f.keys()  # noqa: SIM118 (safe_open is no dict)  the head is the embedding, as at 0.8B
    streamed = CpuRuntime(folder, cache_dir=tmp_path / "c", compute="fp16w")
    loaded = CpuRuntime(folder, cache_dir=tmp_path / "c", compute="fp16w", stream=False)
    streamed.load()
    loaded.load()
    assert streamed.load_info["streamed"] is True and "streamed" not in loaded.load_info
    assert streamed.load_info["fused_groups"] == loaded.load_info["fused_groups"] > 0  # both pack their groups
    mine, theirs = _unpacked(streamed.model), _unpacked(loaded.model)
    assert sorted(mine) == sorted(theirs)
    for name, tensor in theirs.items():
        other = mine[name]
        assert (other is None) == (tensor is None), name
        if tensor is not None:
            assert other.dtype == tensor.dtype and torch.equal(other, tensor), name
    assert streamed.model.generation_config.to_dict() == loaded.model.generation_config.to_dict()
    prompt = build_prompt(GOALS[3], screen(2), observations()[2][2], PROFILE)
    a = streamed.generate(prompt, max_new_tokens=8, min_new_tokens=8, keep_first_logits=True)
    b = loaded.generate(prompt, max_new_tokens=8, min_new_tokens=8, keep_first_logits=True)
    assert torch.equal(a.first_logits, b.first_logits) and a.token_ids == b.token_ids


def test_a_damaged_or_renamed_checkpoint_is_said_or_loaded_the_long_way(tiny, tmp_path):
    import json
    import struct

    from assistant_core.policy.cpu_stream import CheckpointError

    folder = bf16_copy(tiny, tmp_path / "bf16")
    weights = next(folder.glob("*.safetensors"))
    data = weights.read_bytes()
    weights.write_bytes(data[: len(data) - 1000])  # a download cut short
    with pytest.raises(CheckpointError, match="outside the file"):
        CpuRuntime(folder, cache_dir=tmp_path / "c", compute="fp16w").load()
    # a layout transformers renames while loading: names the model does not have are not guessed at
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + length])
    renamed = {("old." + k if k.startswith("model.visual.") else k): v for k, v in header.items()}
    raw = json.dumps(renamed).encode()
    raw += b" " * (-len(raw) % 8)
    weights.write_bytes(struct.pack("<Q", len(raw)) + raw + data[8 + length:])
    runtime = CpuRuntime(folder, cache_dir=tmp_path / "c", compute="fp16w")
    runtime.load()  # through from_pretrained, which knows the layouts it renames (and reports the rest)
    assert runtime.load_info["streamed"] is False and runtime.load_info["compute"] == "fp16w"


def test_parse_rate_under_the_small_machine_plan(taught, tmp_path, capsys):
    """The plan for a 2-core machine (smaller screenshot, thinking budget) on the taught tiny model: the
    share of replies that still parse to an action. On the real checkpoint the effect on accuracy is
    unknown until measured; this only shows the runtime's budgets leave a well-formed call."""
    plan = machine_plan(PROFILE, 2)
    runtime = CpuRuntime(taught, cache_dir=tmp_path, compute="fp32")
    rates = {}
    small = 540 * 1200 * plan.max_pixels // (1080 * 2400)  # the plan's share of a 1080x2400 screen, here
    for label, pixels, budget in (("profile", None, None), ("plan", small, plan.think_budget),
                                  ("plan_short_think", small, 2)):
        ok = 0
        for goal, obs, history in observations()[:10]:
            prompt = build_prompt(goal, obs, history, PROFILE, max_pixels=pixels)
            gen = runtime.generate(prompt, max_new_tokens=48, think_budget=budget)
            ok += not isinstance(outcome(gen.text), str)
        rates[label] = ok / 10
    with capsys.disabled():
        print(f"\nparse rate on the taught tiny model (10 observations): {rates}")
    assert rates["profile"] >= 0.75 and rates["plan"] >= 0.75
    assert 0.0 <= rates["plan_short_think"] <= 1.0


def test_an_unchanged_screen_reuses_its_vision_features(tiny, tmp_path):
    runtime = CpuRuntime(tiny, cache_dir=tmp_path, compute="fp32")
    cold = CpuRuntime(tiny, cache_dir=tmp_path, compute="fp32", reuse_prefix=False)
    first = runtime.generate(build_prompt(GOALS[0], screen(7), [], PROFILE), max_new_tokens=6)
    assert not first.image_reused
    history = observations()[1][2]
    again = build_prompt(GOALS[0], screen(7), history, PROFILE)  # the same screen one step later
    same = runtime.generate(again, max_new_tokens=6, min_new_tokens=6, keep_first_logits=True)
    ref = cold.generate(again, max_new_tokens=6, min_new_tokens=6, keep_first_logits=True)
    assert same.image_reused and not ref.image_reused
    assert same.token_ids == ref.token_ids
    assert float((same.first_logits - ref.first_logits).abs().max()) <= 1e-4 * float(ref.first_logits.abs().max())
    changed = runtime.generate(build_prompt(GOALS[0], screen(8), history, PROFILE), max_new_tokens=2)
    assert not changed.image_reused


def test_a_prompt_in_chunks_is_the_prompt_in_one_call(tiny, tmp_path):
    """The prefill runs `prefill_chunk` tokens at a time; chunk borders inside the screenshot's placeholder
    tokens and inside the reused prefix give the same logits and reply as one call."""
    whole = CpuRuntime(tiny, cache_dir=tmp_path, compute="fp32", prefill_chunk=0, reuse_prefix=False)
    history = observations()[2][2]
    for reuse in (False, True):
        chunked = CpuRuntime(tiny, cache_dir=tmp_path, compute="fp32", prefill_chunk=37, reuse_prefix=reuse)
        for seed in (4, 5):
            prompt = build_prompt(GOALS[1], screen(seed), history, PROFILE)
            a = chunked.generate(prompt, max_new_tokens=10, min_new_tokens=10, keep_first_logits=True)
            b = whole.generate(prompt, max_new_tokens=10, min_new_tokens=10, keep_first_logits=True)
            assert a.prompt_tokens > 3 * 37 and a.visual_tokens > 37  # several chunks, one inside the image
            assert a.token_ids == b.token_ids
            assert float((a.first_logits - b.first_logits).abs().max()) <= 1e-4 * float(b.first_logits.abs().max())
            assert (a.reused_tokens > 0) == reuse  # the prefix: filled in chunks, then continued from


def forced_tokens(runtime, prompt, tokens):
    """The next-token logits after each of `tokens`, fed one at a time after the whole prompt (one prefill,
    no prefix reuse), the cache after the last, and the prompt's length."""
    inputs = runtime._inputs(prompt)
    ids, model = inputs["input_ids"], runtime.model
    with torch.inference_mode():
        position_ids, _ = model.model.get_rope_index(ids, mm_token_type_ids=inputs["mm_token_type_ids"],
                                                     image_grid_thw=inputs.get("image_grid_thw"),
                                                     attention_mask=inputs.get("attention_mask"))
        features = model.model.get_image_features(inputs["pixel_values"], inputs["image_grid_thw"], return_dict=True)
        out = runtime._prefill(model, ids, position_ids, None, {"image": features})
        cache, pos, rows = out.past_key_values, int(position_ids.max()) + 1, []
        for token in tokens:
            out = model(input_ids=torch.tensor([[token]]), position_ids=torch.full((3, 1, 1), pos), cache=cache,
                        use_cache=True, logits_to_keep=1)
            cache, pos = out.past_key_values, pos + 1
            rows.append(out.logits[0, -1].float())
    return torch.stack(rows), cache, ids.shape[1]


@pytest.mark.parametrize("compute", ["fp32", "fp16w"])
def test_the_cpu_gated_deltanet_step_is_transformers_step(taught, tmp_path, compute):
    """One-token decoding through the Gated DeltaNet layers' CPU step (cpu_gdn_step.py) against the same
    model on transformers' own step: the same greedy tokens on 20 observations (with a thinking budget on
    some), the next-token logits after each of the first 12 tokens within 1e-5 of the largest, and the step
    really ran (its layers counted)."""
    from assistant_core.policy import cpu_gdn_step

    ours = CpuRuntime(taught, cache_dir=tmp_path, compute=compute)
    theirs = CpuRuntime(taught, cache_dir=tmp_path, compute=compute, gdn_step=False)
    ours.load()
    linear = sum(t == "linear_attention" for t in ours.model.config.text_config.layer_types)
    assert ours.load_info["gdn_step_layers"] == linear > 0
    calls = []
    real_step = cpu_gdn_step.step
    cpu_gdn_step.step = lambda *a: calls.append(1) or real_step(*a)
    try:
        same = 0
        cases = observations()
        for i, (goal, obs, history) in enumerate(cases):
            prompt = build_prompt(goal, obs, history, PROFILE)
            budget = 3 if i % 4 == 0 else None
            a = ours.generate(prompt, max_new_tokens=48, think_budget=budget)
            b = theirs.generate(prompt, max_new_tokens=48, think_budget=budget)
            same += a.token_ids == b.token_ids
    finally:
        cpu_gdn_step.step = real_step
    assert len(calls) > linear * 20  # every one-token step of every linear layer went through it
    assert same == len(cases), f"{compute}: the CPU step changed {len(cases) - same}/{len(cases)} replies"

    # logits after each forced token (the same token fed to both)
    prompt = build_prompt(*observations()[3][:2], observations()[3][2], PROFILE)
    for runtime in (ours, theirs):
        runtime.generate(prompt, max_new_tokens=1)  # fill the prefix state
    seen = [forced_tokens(runtime, prompt, range(1000, 1012))[0] for runtime in (ours, theirs)]
    scale = float(seen[1].abs().max())
    assert float((seen[0] - seen[1]).abs().max()) <= 1e-5 * scale


def test_the_runtime_computes_on_its_own_thread_with_subnormals_flushed(tiny, tmp_path):
    """load() and generate() run on the runtime's compute thread, where flush-to-zero reaches every OpenMP
    thread it starts (a subnormal product over a tensor both threads share comes out all zeros); the caller's
    thread is left as it was (the same product stays subnormal there); the reply and logits computed there
    are those computed on the caller's thread; the thread is a daemon and ends with its runtime."""
    import gc
    import threading

    threads_before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        runtime = CpuRuntime(tiny, cache_dir=tmp_path, compute="fp32", reuse_prefix=False)
        runtime.load()
        assert runtime.load_info["flush_denormal"] is True  # x86 with SSE3: CI and every supported laptop
        tiny_values = torch.full((1 << 22,), 1e-39)  # subnormal in fp32; 4M elements: both threads take a part
        assert int((tiny_values * 3).count_nonzero()) == tiny_values.numel()  # here: kept, as before
        assert runtime._on_compute_thread(lambda: int((tiny_values * 3).count_nonzero())) == 0  # there: flushed
        names: list[str] = []
        prompt = build_prompt(GOALS[2], screen(3), observations()[3][2], PROFILE)
        there = runtime.generate(prompt, max_new_tokens=12, min_new_tokens=12, keep_first_logits=True,
                                 on_text=lambda _t: names.append(threading.current_thread().name))
        assert names and all(n.startswith("phonebuddy-cpu-policy") for n in names)
        here = runtime._generate(prompt, max_new_tokens=12, min_new_tokens=12, think_budget=None, on_text=None,
                                 keep_first_logits=True, eos_ids=None)  # the same work on this thread
        assert there.token_ids == here.token_ids
        assert float((there.first_logits - here.first_logits).abs().max()) <= 1e-5 * float(
            here.first_logits.abs().max())
        with pytest.raises(ValueError):  # an error on the compute thread reaches the caller
            runtime._on_compute_thread(lambda: int("not a number"))
        worker = runtime._on_compute_thread(threading.current_thread)
        assert worker.daemon and worker is not threading.current_thread()  # closing the app never waits on it
        del runtime
        gc.collect()
        worker.join(timeout=30)
        assert not worker.is_alive()  # the thread ends with its runtime
    finally:
        torch.set_num_threads(threads_before)


def test_fused_projections_are_the_separate_linears_to_rounding(taught, tmp_path):
    """fp16w packs each gated MLP's gate and up, each Gated DeltaNet layer's four input projections and each
    attention layer's q, k and v as one matrix (one pass over the weights a token): the same replies as the
    separate linears and logits equal to fp32 rounding, prompt and one-token steps alike (the load through
    from_pretrained builds the same fused model bit for bit: test_the_streamed_load_is_the_transformers_load_...)."""
    from assistant_core.policy.cpu_fp16w_modules import (
        Fp16FusedProjections,
        Fp16GateUpMlp,
        Fp16ProjectionPart,
    )

    fused = CpuRuntime(taught, cache_dir=tmp_path, compute="fp16w")
    apart = CpuRuntime(taught, cache_dir=tmp_path, compute="fp16w", fuse=False)
    fused.load()
    apart.load()
    config = fused.model.config.text_config
    linear = sum(t == "linear_attention" for t in config.layer_types)
    attention = config.num_hidden_layers - linear
    assert fused.load_info["fused_groups"] == config.num_hidden_layers + linear + attention > 0
    assert apart.load_info["fused_groups"] == 0
    mlps = [m for m in fused.model.modules() if isinstance(m, Fp16GateUpMlp)]
    parts = [m for m in fused.model.modules() if isinstance(m, Fp16ProjectionPart)]
    assert len(mlps) == config.num_hidden_layers and len(parts) == 4 * linear + 3 * attention
    worst = 0.0
    for i, (goal, obs, history) in enumerate(observations()[:6]):
        prompt = build_prompt(goal, obs, history, PROFILE)
        a = fused.generate(prompt, max_new_tokens=24, keep_first_logits=True, think_budget=3 if i % 2 else None)
        b = apart.generate(prompt, max_new_tokens=24, keep_first_logits=True, think_budget=3 if i % 2 else None)
        worst = max(worst, float((a.first_logits - b.first_logits).abs().max() / b.first_logits.abs().max()))
        assert a.token_ids == b.token_ids, goal
    print(f"fused vs separate: logits within {worst:.1e} of the largest")
    assert worst <= 1e-6  # fp32 rounding (the kernel blocks a wider matrix differently), nothing more
    # nothing is held after a forward: each part took its share of the prompt chunk's result
    assert all(m._held is None for m in fused.model.modules() if isinstance(m, Fp16FusedProjections))


def test_the_int8_scored_head_writes_the_fp16_heads_replies(taught, tmp_path):
    """A tied head (as Qwen3.5-0.8B's) scores in int8 with the candidates exact (cpu_head.py): the same greedy
    replies as the fp16 head, end-of-text masked or not, and the first logits are the full exact product."""
    folder = bf16_copy(taught, tmp_path / "tied", tied=True)
    int8 = CpuRuntime(folder, cache_dir=tmp_path / "c", compute="fp16w")
    fp16 = CpuRuntime(folder, cache_dir=tmp_path / "c", compute="fp16w", candidate_head=False)
    int8.load()
    fp16.load()
    assert int8.load_info["head"] == "Int8CandidateHead" and fp16.load_info["head"] == "BlockedFp16Head"
    head = int8.model.lm_head
    embedding = int8.model.model.language_model.embed_tokens.weight
    assert head.rows.data_ptr() == embedding.data_ptr()  # the exact rows: the embedding's, not a copy
    for i, (goal, obs, history) in enumerate(observations()[:6]):
        prompt = build_prompt(goal, obs, history, PROFILE)
        least = 24 if i % 2 else 0  # end-of-text masked for the whole reply on every other prompt
        a = int8.generate(prompt, max_new_tokens=24, min_new_tokens=least, keep_first_logits=True)
        b = fp16.generate(prompt, max_new_tokens=24, min_new_tokens=least, keep_first_logits=True)
        assert a.token_ids == b.token_ids, goal
        assert float((a.first_logits - b.first_logits).abs().max()) <= 1e-5 * float(b.first_logits.abs().max())
    stats = head.stats()
    assert stats["calls"] >= 5 * 23 and not stats["broken"]  # the int8 path decoded (the first token: exact)
    assert stats["mean_candidates"] < 0.01 * head.out_features, stats


def test_the_cpu_attention_step_is_transformers_step(taught, tmp_path, monkeypatch):
    """One-token decoding through the attention layers' CPU step (cpu_attn_step.py: the KV cache grown in a
    buffer, the rotary embedding without concatenations, grouped attention by matrix products) against the
    same model on transformers' own forward: the same greedy tokens on 12 observations, then 40 forced tokens
    with the buffer grown every 4 positions: logits and the cached keys and values within fp32 rounding."""
    from assistant_core.policy import cpu_attn_step

    monkeypatch.setattr(cpu_attn_step, "SPARE", 4)  # the buffer fills and is replaced many times below
    ours = CpuRuntime(taught, cache_dir=tmp_path, compute="fp16w")
    theirs = CpuRuntime(taught, cache_dir=tmp_path, compute="fp16w", attn_step=False)
    ours.load()
    theirs.load()
    attention = sum(t == "full_attention" for t in ours.model.config.text_config.layer_types)
    assert ours.load_info["attn_step_layers"] == attention > 0 and "attn_step_layers" not in theirs.load_info
    calls = []
    real_step = cpu_attn_step.step
    monkeypatch.setattr(cpu_attn_step, "step", lambda *a: calls.append(1) or real_step(*a))
    cases = observations()[:12]
    for i, (goal, obs, history) in enumerate(cases):
        prompt = build_prompt(goal, obs, history, PROFILE)
        budget = 3 if i % 4 == 0 else None
        a = ours.generate(prompt, max_new_tokens=32, think_budget=budget)
        b = theirs.generate(prompt, max_new_tokens=32, think_budget=budget)
        assert a.token_ids == b.token_ids, goal
    assert len(calls) >= attention * 12 * 5  # the one-token steps of every attention layer went through it

    prompt = build_prompt(*observations()[5][:2], observations()[5][2], PROFILE)
    (logits, cache, length), (ref_logits, ref_cache, _) = (forced_tokens(r, prompt, range(500, 540))
                                                           for r in (ours, theirs))
    assert float((logits - ref_logits).abs().max()) <= 1e-5 * float(ref_logits.abs().max())
    for i, kind in enumerate(ours.model.config.text_config.layer_types):
        if kind != "full_attention":
            continue
        mine, ref = cache.layers[i], ref_cache.layers[i]
        assert mine.keys.shape == ref.keys.shape == (1, ref.keys.shape[1], length + 40, ref.keys.shape[3])
        for a, b in ((mine.keys, ref.keys), (mine.values, ref.values)):
            assert float((a - b).abs().max()) <= 1e-5 * float(b.abs().max())
        assert mine.keys.data_ptr() == mine._pb_room[0].data_ptr()  # a view of the grown buffer


def test_the_attention_step_takes_only_the_gated_qwen35_layers(tmp_path):
    """Qwen3-VL's text attention has no output gate in q_proj: it keeps transformers' forward."""
    from transformers import AutoModelForImageTextToText

    from assistant_core.policy import cpu_attn_step
    from assistant_core.policy.tiny import _config, _ids, _qwen_tokenizer

    tok = _qwen_tokenizer()
    for arch, gated in (("qwen3_vl", False), ("qwen3_5", True)):
        model = AutoModelForImageTextToText.from_config(_config(arch, len(tok), _ids(tok), True))
        attention = [m for m in model.modules() if type(m).__name__.endswith("TextAttention")
                     or type(m).__name__ == "Qwen3_5Attention"]
        assert attention
        assert cpu_attn_step.install(model) == (len(attention) if gated else 0), arch
