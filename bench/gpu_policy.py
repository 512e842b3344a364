"""One PhoneBuddy step on a CUDA GPU with the real-size Qwen3.5-4B architecture (random weights).

Prepared for a lent GPU machine; prints one JSON object (also written to $OUT/gpu_policy.json when OUT is
set). Run from the repository root:

    python3 bench/gpu_policy.py [--tokens 128] [--skip-bf16] [--keep DIR]
    python3 bench/gpu_policy.py --cpu-dry-run     # the same steps with tiny dimensions on the CPU (a check)

What it does, self-contained (no download, no network):
1. builds the real-size `qwen3_5` 4B architecture (text: hidden 2560, 32 layers = 24 Gated DeltaNet + 8
   attention, 16/4 heads, head_dim 256, vocab 248,320, tied embeddings; vision: 24 blocks, hidden 1024)
   with random weights directly on the GPU in bf16, with the tiny-model BPE tokenizer and processor;
2. bf16 step (the model as built): prefill and decode of one full PhoneBuddy request on a 1080x2400
   screenshot capped at 1.3 MP (1,272 visual tokens), `--tokens` decode tokens forced by min_new_tokens;
3. saves it (safetensors, about 9 GB in /tmp) and reloads it through the product path
   (`LocalPolicy(..., quantization="nf4", device="cuda")`: bitsandbytes nf4, double quantization, bf16
   compute, vision tower and lm_head unquantized), then the same step in nf4;
4. reports load seconds, prefill seconds, decode ms/token, tokens/s, total for the measured tokens and for
   a typical 200-token thought, peak VRAM (allocated and reserved), against the targets (< 1 s a step,
   < 8 GB).

Needs torch with CUDA, transformers >= 5.2 (qwen3_5), bitsandbytes, pillow. Where bitsandbytes is missing
(the GPU image has none) carry its wheel: `pip download --no-deps --only-binary=:all: --python-version 3.12
--platform manylinux_2_24_x86_64 -d .whl bitsandbytes==0.50.2` here, then on the machine
`pip install --no-deps --target /tmp/site .whl/*.whl && PYTHONPATH=/tmp/site python3 bench/gpu_policy.py`.
The Gated DeltaNet layers use transformers' torch fallback unless flash-linear-attention is importable
(also a pure-Python wheel that can be carried); the JSON says which ran.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

TEXT_4B = dict(hidden_size=2560, intermediate_size=9216, num_hidden_layers=32, num_attention_heads=16,
               num_key_value_heads=4, head_dim=256, linear_conv_kernel_dim=4, linear_key_head_dim=128,
               linear_value_head_dim=128, linear_num_key_heads=16, linear_num_value_heads=32,
               max_position_embeddings=262144, vocab_size=248320, tie_word_embeddings=True,
               rope_parameters={"rope_type": "default", "rope_theta": 10_000_000.0, "partial_rotary_factor": 0.25,
                                "mrope_section": [11, 11, 10], "mrope_interleaved": True})
VISION_4B = dict(depth=24, hidden_size=1024, intermediate_size=4096, num_heads=16, out_hidden_size=2560,
                 patch_size=16, spatial_merge_size=2, temporal_patch_size=2, num_position_embeddings=2304)
TINY_TEXT = dict(TEXT_4B, hidden_size=64, intermediate_size=128, num_hidden_layers=4, num_attention_heads=4,
                 num_key_value_heads=2, head_dim=16, linear_key_head_dim=16, linear_value_head_dim=16,
                 linear_num_key_heads=2, linear_num_value_heads=4, vocab_size=2048,
                 rope_parameters={"rope_type": "default", "rope_theta": 10_000_000.0, "partial_rotary_factor": 0.5,
                                  "mrope_section": [2, 1, 1], "mrope_interleaved": True})
TINY_VISION = dict(VISION_4B, depth=2, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=64)
TYPICAL_THOUGHT_TOKENS = 200
DEVICE = "cuda"


def sync() -> None:
    import torch

    if DEVICE == "cuda":
        torch.cuda.synchronize()


def reset_peak() -> None:
    import torch

    if DEVICE == "cuda":
        torch.cuda.reset_peak_memory_stats()


def vram(kind: str) -> float:
    import torch

    if DEVICE != "cuda":
        return 0.0
    value = {"peak": torch.cuda.max_memory_allocated, "reserved": torch.cuda.max_memory_reserved,
             "now": torch.cuda.memory_allocated}[kind]()
    return round(value / 2**30, 2)


def phone_observation():
    """A settings-list-like 1080x2400 screen (the tests' fixture, inlined to keep this script standalone)."""
    from PIL import Image, ImageDraw

    from assistant_core.types import Observation

    img = Image.new("RGB", (1080, 2400), (250, 250, 250))
    draw = ImageDraw.Draw(img)
    draw.rectangle((0, 0, 1080, 80), fill=(30, 30, 30))
    for i, label in enumerate(["Wi-Fi", "Bluetooth", "Display", "Sound", "Battery", "Apps", "Privacy"]):
        top = 200 + i * 220
        draw.rectangle((40, top, 1040, top + 180), fill=(255, 255, 255), outline=(200, 200, 200))
        draw.text((80, top + 70), label, fill=(20, 20, 20))
    return Observation(width=1080, height=2400, foreground="com.android.settings", screenshot=img)


def emit(result: dict) -> None:
    text = json.dumps(result, indent=1)
    print(text, flush=True)
    out = os.environ.get("OUT")
    if out:
        Path(out, "gpu_policy.json").write_text(text)


def versions() -> dict:
    import torch
    import transformers

    info = {"python": sys.version.split()[0], "torch": torch.__version__, "transformers": transformers.__version__,
            "cuda": torch.version.cuda}
    try:
        import bitsandbytes

        info["bitsandbytes"] = bitsandbytes.__version__
    except ImportError:
        info["bitsandbytes"] = None
    try:
        from transformers.utils.import_utils import is_flash_linear_attention_available

        info["flash_linear_attention"] = bool(is_flash_linear_attention_available())
    except ImportError:
        info["flash_linear_attention"] = None
    return info


def build_folder(folder: Path, tiny: bool = False) -> tuple[object, object]:
    """The 4B architecture on the GPU in bf16 (random), plus the tiny BPE tokenizer/processor in `folder`."""
    import torch
    from transformers import Qwen3_5Config, Qwen3_5ForConditionalGeneration

    from assistant_core.policy.hf_compat import image_only_processor_class, load_processor
    from assistant_core.policy.tiny import _bpe_tokenizer, _ids, _image_processor, chat_template

    tok = _bpe_tokenizer("qwen3_5")
    template = chat_template("qwen3_5")
    tok.chat_template = template
    ids = _ids(tok)
    text = dict(TINY_TEXT if tiny else TEXT_4B, pad_token_id=ids["<|endoftext|>"], eos_token_id=ids["<|im_end|>"])
    config = Qwen3_5Config(text_config=text, vision_config=TINY_VISION if tiny else VISION_4B, tie_word_embeddings=True,
                           image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
                           vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"])
    torch.manual_seed(0)
    with torch.device(DEVICE):
        model = Qwen3_5ForConditionalGeneration(config).to(torch.bfloat16)
    model.eval()
    model.generation_config.eos_token_id = [ids["<|im_end|>"]]
    model.generation_config.pad_token_id = ids["<|endoftext|>"]
    processor = image_only_processor_class()(image_processor=_image_processor(65536, 1280 * 32 * 32),
                                             tokenizer=tok, chat_template=template)
    processor.save_pretrained(folder)
    (folder / "chat_template.jinja").write_text(template, encoding="utf-8")
    return model, load_processor(folder)  # as the product loads it


def step(model, processor, prompt, tokens: int) -> dict:
    """One greedy generation with exactly `tokens` new tokens; prefill = time to the first token."""
    import torch
    from transformers.generation.streamers import BaseStreamer

    class FirstToken(BaseStreamer):
        def __init__(self):
            self.calls, self.first = 0, None

        def put(self, value):
            self.calls += 1
            if self.calls == 2:
                sync()
                self.first = time.perf_counter()

        def end(self):
            pass

    inputs = processor.apply_chat_template(prompt.hf_messages(), add_generation_prompt=True, tokenize=True,
                                           return_dict=True, return_tensors="pt").to(DEVICE)
    prompt_tokens = int(inputs["input_ids"].shape[1])
    visual = int((inputs["input_ids"] == processor.image_token_id).sum())
    with torch.inference_mode():  # warm-up: kernels, allocator
        model.generate(**inputs, max_new_tokens=2, min_new_tokens=2, do_sample=False)
    sync()
    reset_peak()
    streamer = FirstToken()
    start = time.perf_counter()
    with torch.inference_mode():
        out = model.generate(**inputs, max_new_tokens=tokens, min_new_tokens=tokens, do_sample=False,
                             streamer=streamer)
    sync()
    end = time.perf_counter()
    n = int(out.shape[1]) - prompt_tokens
    prefill = (streamer.first or end) - start
    per_token = (end - (streamer.first or end)) / max(1, n - 1)
    return {"prompt_tokens": prompt_tokens, "visual_tokens": visual, "decode_tokens": n,
            "prefill_s": round(prefill, 4), "decode_ms_per_token": round(per_token * 1000, 2),
            "decode_tokens_per_s": round(1 / per_token, 1) if per_token > 0 else None,
            "total_s": round(end - start, 3),
            "typical_step_s": round(prefill + per_token * (TYPICAL_THOUGHT_TOKENS - 1), 3),
            "peak_vram_allocated_gb": vram("peak"), "peak_vram_reserved_gb": vram("reserved")}


def main() -> int:
    parser = argparse.ArgumentParser(description="PhoneBuddy-4B architecture, one step on a CUDA GPU")
    parser.add_argument("--tokens", type=int, default=128, help="decode tokens to time")
    parser.add_argument("--skip-bf16", action="store_true")
    parser.add_argument("--keep", default=None, help="keep the saved checkpoint in this folder")
    parser.add_argument("--cpu-dry-run", action="store_true", help="tiny dimensions on the CPU: checks the script")
    args = parser.parse_args()
    global DEVICE
    if args.cpu_dry_run:
        DEVICE = "cpu"
    t_start = time.perf_counter()
    result: dict = {"script": "bench/gpu_policy.py", "targets": {"step_s": 1.0, "vram_gb": 8.0}}
    try:
        import torch
    except ImportError as error:
        emit({**result, "error": f"torch missing: {error}"})
        return 1
    if DEVICE == "cuda" and not torch.cuda.is_available():
        emit({**result, "error": "no CUDA device"})
        return 1
    result["versions"] = versions()
    result["gpu"] = torch.cuda.get_device_name(0) if DEVICE == "cuda" else "cpu (dry run, tiny dimensions)"
    try:
        from transformers import Qwen3_5Config  # noqa: F401
    except ImportError as error:
        emit({**result, "error": f"this transformers has no qwen3_5: {error}"})
        return 1
    from assistant_core.policy.profiles import get_profile
    from assistant_core.policy.prompt import build_prompt

    profile = get_profile("phonebuddy-4b")
    prompt = build_prompt("Turn on Wi-Fi, then tell me the network name.", phone_observation(), (), profile)
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="pb4b_"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        t0 = time.perf_counter()
        model, processor = build_folder(folder, tiny=args.cpu_dry_run)
        sync()
        result["build_s"] = round(time.perf_counter() - t0, 1)
        result["parameters_b"] = round(sum(p.numel() for p in model.parameters()) / 1e9, 3)
        layer_types = model.config.text_config.layer_types
        result["layers"] = {t: layer_types.count(t) for t in sorted(set(layer_types))}
        if not args.skip_bf16:
            result["bf16"] = step(model, processor, prompt, args.tokens)
            print(json.dumps({"bf16": result["bf16"]}), file=sys.stderr, flush=True)
        t0 = time.perf_counter()
        model.save_pretrained(folder, max_shard_size="4GB")
        result["save_s"] = round(time.perf_counter() - t0, 1)
        del model
        gc.collect()
        if DEVICE == "cuda":
            torch.cuda.empty_cache()

        from assistant_core.policy.local import LocalPolicy

        t0 = time.perf_counter()
        policy = LocalPolicy(folder, profile=profile, quantization="nf4", device=DEVICE)
        reset_peak()
        policy.load()
        sync()
        result["nf4_load_s"] = round(time.perf_counter() - t0, 1)
        result["nf4_weights_vram_gb"] = vram("now")
        result["nf4"] = step(policy.model, policy.processor, prompt, args.tokens)
        nf4 = result["nf4"]
        result["meets_targets_nf4"] = {"step_under_1s_at_200_tokens": nf4["typical_step_s"] < 1.0,
                                       "vram_under_8gb": nf4["peak_vram_reserved_gb"] < 8.0}
    except Exception as error:  # report whatever broke as JSON, with the figures gathered so far
        import traceback

        result["error"] = f"{type(error).__name__}: {error}"[:2000]
        result["traceback"] = traceback.format_exc()[-4000:]
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
    result["wall_s"] = round(time.perf_counter() - t_start, 1)
    emit(result)
    return 0 if "error" not in result else 1


if __name__ == "__main__":
    sys.exit(main())
