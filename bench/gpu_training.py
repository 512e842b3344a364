"""QLoRA SFT and GRPO steps on the real-size PhoneBuddy architecture (Qwen3.5-4B, random weights) on one
CUDA GPU: step time and peak VRAM. Prepared for a lent GPU machine; prints one JSON object (also written
to $OUT/gpu_training.json when OUT is set). Run from the repository root:

    python3 bench/gpu_training.py [--sft-steps 4] [--rl-steps 2] [--keep DIR]
    python3 bench/gpu_training.py --cpu-dry-run     # tiny dimensions on the CPU: checks the script end to end

Self-contained: no download, no network. What it does:
1. builds the 4B `qwen3_5` architecture with random weights in bf16 on the GPU (the same dimensions as
   bench/gpu_policy.py: text hidden 2560, 32 layers = 24 Gated DeltaNet + 8 attention, vocab 248,320,
   tied embeddings; vision 24 blocks) with the tiny BPE tokenizer/processor, and saves it to a folder;
2. QLoRA SFT through the product path (`training.sft.run_sft`, quantization nf4: bitsandbytes nf4 with
   double quantization, bf16 compute, vision tower and lm_head unquantized; LoRA r=16 on the language
   model's projections), on PhoneWorld-lite oracle examples with full-size screenshots capped at the
   profile's 1.3 MP (about 1,270 visual tokens per example), batch 1;
3. GRPO through `training.rl.run_rl` on the same nf4 base + LoRA, 4 rollouts per group of
   SettingsTurnOnWifi, forced to scripted replies (a random model writes no tool calls; see
   training/forcing.py) with tool-reply screenshots at 0.35 scale; transformers generation (vLLM when
   it is installed);
4. reports seconds per step (the trainers' train_runtime / steps, model loading excluded), peak VRAM
   allocated and reserved for each stage, visual tokens, versions.

Needs torch with CUDA, transformers >= 5.2, trl >= 1.16, peft, accelerate, datasets, bitsandbytes, pillow,
PyYAML. Missing pure-Python wheels can be carried (`pip download --no-deps ... -d .whl` here, then
`pip install --no-deps --target /tmp/site .whl/*.whl` and `PYTHONPATH=/tmp/site` there).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

TASK = "SettingsTurnOnWifi"


def _gpu_policy():
    """The 4B dimensions and folder builder of bench/gpu_policy.py (one definition of the architecture)."""
    spec = importlib.util.spec_from_file_location("gpu_policy", ROOT / "bench" / "gpu_policy.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build_model_folder(folder: Path, *, tiny: bool, device: str) -> dict:
    """Random-weight model (4B or tiny) saved with its processor in `folder`."""
    import torch

    gp = _gpu_policy()
    gp.DEVICE = device
    t0 = time.perf_counter()
    model, _ = gp.build_folder(folder, tiny=tiny)
    model.save_pretrained(folder)
    params = sum(p.numel() for p in model.parameters())
    del model
    if device == "cuda":
        torch.cuda.empty_cache()
    return {"parameters": params, "build_and_save_s": round(time.perf_counter() - t0, 1)}


def peak(device: str) -> dict:
    import torch

    if device != "cuda":
        return {}
    return {"peak_vram_allocated_gb": round(torch.cuda.max_memory_allocated() / 2**30, 2),
            "peak_vram_reserved_gb": round(torch.cuda.max_memory_reserved() / 2**30, 2)}


def reset_peak(device: str) -> None:
    import torch

    if device == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()


def runtime(run: Path, steps: int, fallback: float) -> float:
    for line in (run / "metrics.jsonl").read_text().splitlines():
        record = json.loads(line)
        if "train_runtime" in record:
            return float(record["train_runtime"])
    return fallback


def sft_stage(folder: Path, work: Path, steps: int, quant: str, max_pixels: int | None, device: str) -> dict:
    from training.config import SftConfig
    from training.data import oracle_examples, write_dataset
    from training.sft import run_sft

    examples = list(oracle_examples([TASK], (100, 101), max_pixels=max_pixels))
    data = write_dataset(work / "ds", examples)
    reset_peak(device)
    result = run_sft(SftConfig(base_model=str(folder), dataset=str(data), output=str(work / "runs"),
                               quantization=quant, max_steps=steps, batch_size=1, learning_rate=2e-4,
                               lora_r=16, lora_alpha=32, save_steps=0))
    seconds = runtime(result.run, steps, result.seconds)
    return {"steps": result.steps, "s_per_step": round(seconds / steps, 3), "examples": len(examples),
            "image_size": list(examples[0].image.size), "trainable_params": result.trainable_params,
            "quantization": result.quantization, "loss_first": result.losses[0], "loss_last": result.losses[-1],
            **peak(device)}


def rl_stage(folder: Path, work: Path, steps: int, quant: str, max_pixels: int | None, device: str) -> dict:
    from assistant_core.policy.hf_compat import load_processor
    from assistant_core.types import Action
    from harness.phoneworld.oracle import solve
    from training.config import RlConfig
    from training.data import reply_text
    from training.forcing import ForcedReplies, force_generation
    from training.rl import EnvSettings, run_rl
    from training.sft import load_base

    def forced(thought: str, action: Action) -> str:
        return reply_text(thought, action, 1080, 2400).removeprefix("<think>\n")

    oracle = [forced(s.thought, s.action) for s in solve(TASK, 100).steps]
    scripts = [oracle, oracle[:1] + [forced("Stop.", Action.finish())],
               [forced("Open the wallet.", Action.open_app("com.phoneworld.wallet"))], ["No idea."]]
    reset_peak(device)
    model, _, _ = load_base(folder, quant, on_cuda=device == "cuda")
    force_generation(model, ForcedReplies(load_processor(folder).tokenizer, scripts))
    settings = EnvSettings(allowed_apps=("com.android.settings", "com.android.launcher3"), screenshot_scale=0.35)
    result = run_rl(RlConfig(base_model=str(folder), output=str(work / "runs"), tasks=(TASK,), seeds=(100,),
                             num_examples=steps, batch_size=4, num_generations=4, max_steps=steps, max_turns=6,
                             max_completion_length=8192, save_steps=0, quantization=quant,
                             max_pixels=max_pixels or 0, learning_rate=1e-5),
                    model=model, settings=settings)
    seconds = runtime(result.run, steps, result.seconds)
    return {"steps": result.steps, "s_per_step": round(seconds / steps, 3), "rollouts_per_step": 4,
            "mean_reward": list(result.rewards), "reward_std": list(result.reward_std), "vllm": result.vllm,
            **peak(device)}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sft-steps", type=int, default=4)
    parser.add_argument("--rl-steps", type=int, default=2)
    parser.add_argument("--cpu-dry-run", action="store_true", help="tiny dimensions on the CPU")
    parser.add_argument("--keep", help="keep the model folder here")
    args = parser.parse_args()
    import torch

    device = "cpu" if args.cpu_dry_run else "cuda"
    out: dict = {"device": device, "tiny": args.cpu_dry_run}
    if device == "cuda" and not torch.cuda.is_available():
        out["error"] = "no CUDA GPU visible"
        emit(out)
        return 1
    if device == "cuda":
        out["gpu"] = torch.cuda.get_device_name(0)
    out["versions"] = _gpu_policy().versions()
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="pb-train-"))
    folder = work / "model"
    folder.mkdir(parents=True, exist_ok=True)
    quant = "none" if args.cpu_dry_run else "nf4"
    max_pixels = 64 * 32 * 32 if args.cpu_dry_run else None
    try:
        out["model"] = build_model_folder(folder, tiny=args.cpu_dry_run, device=device)
        for name, stage, steps in (("qlora_sft", sft_stage, args.sft_steps), ("grpo", rl_stage, args.rl_steps)):
            try:
                out[name] = stage(folder, work / name, steps, quant, max_pixels, device)
            except Exception as exc:  # report the failure of one stage and go on with the next
                out[name] = {"error": f"{type(exc).__name__}: {exc}", "trace": traceback.format_exc()[-2000:]}
            emit(out)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    emit(out)
    return 0 if all("error" not in out.get(k, {}) for k in ("qlora_sft", "grpo")) else 1


def emit(result: dict) -> None:
    text = json.dumps(result, indent=1, default=str)
    print(text, flush=True)
    if os.environ.get("OUT"):
        Path(os.environ["OUT"], "gpu_training.json").write_text(text)


if __name__ == "__main__":
    sys.exit(main())
