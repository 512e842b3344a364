"""SFT and GRPO steps per second on the CPU with the tiny random-weight qwen3_5 model (PhoneBuddy's
architecture). Prints figures, never asserts.

    python3 bench/bench_training.py [--sft-steps 6] [--rl-steps 2]

SFT: LoRA (r=8) on oracle examples of SettingsTurnOnWifi in the policy's exact format (64 visual tokens
per screenshot, about 1,200 prompt tokens: the PhoneBuddy system prompt dominates), batch 2.
GRPO: one task (SettingsTurnOnWifi), 4 rollouts per group, forced to scripted replies (the oracle's
steps, a half-done run, an app the gate refuses, no tool call) so rewards vary; screenshots in tool
replies at 0.1 scale. Steps/s are from the trainers' own train_runtime (model loading excluded).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

PIXELS = 64 * 32 * 32
TASK = "SettingsTurnOnWifi"


def tiny(folder: Path) -> Path:
    from assistant_core.policy.tiny import build_tiny_model

    return build_tiny_model(folder, arch="qwen3_5", max_pixels=PIXELS, min_pixels=PIXELS // 4)


def train_runtime(run: Path) -> float | None:
    lines = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines() if x]
    return next((float(m["train_runtime"]) for m in lines if "train_runtime" in m), None)


def bench_sft(model: Path, work: Path, steps: int) -> dict:
    from training.config import SftConfig
    from training.data import oracle_examples, write_dataset
    from training.sft import run_sft

    data = write_dataset(work / "ds", list(oracle_examples([TASK], (100, 101), max_pixels=PIXELS)))
    t0 = time.perf_counter()
    result = run_sft(SftConfig(base_model=str(model), dataset=str(data), output=str(work / "runs"), max_steps=steps,
                               batch_size=2, learning_rate=1e-2, lora_r=8, lora_alpha=16, save_steps=0))
    runtime = train_runtime(result.run) or result.seconds
    return {"steps": result.steps, "train_runtime_s": round(runtime, 2), "steps_per_s": round(steps / runtime, 3),
            "s_per_step": round(runtime / steps, 2), "wall_s": round(time.perf_counter() - t0, 1),
            "loss_first": round(result.losses[0], 4), "loss_last": round(result.losses[-1], 4),
            "trainable_params": result.trainable_params}


def bench_rl(model_dir: Path, work: Path, steps: int) -> dict:
    import torch
    from transformers import AutoModelForImageTextToText

    from assistant_core.policy.hf_compat import load_processor
    from assistant_core.types import Action
    from harness.phoneworld.oracle import solve
    from training.config import RlConfig
    from training.data import reply_text
    from training.forcing import ForcedReplies, force_generation
    from training.rl import EnvSettings, run_rl

    def forced(thought: str, action: Action) -> str:
        return reply_text(thought, action, 1080, 2400).removeprefix("<think>\n")

    oracle = [forced(s.thought, s.action) for s in solve(TASK, 100).steps]
    scripts = [oracle, oracle[:1] + [forced("Stop.", Action.finish())],
               [forced("Open the wallet.", Action.open_app("com.phoneworld.wallet"))], ["No idea."]]
    model = AutoModelForImageTextToText.from_pretrained(model_dir, dtype=torch.float32)
    force_generation(model, ForcedReplies(load_processor(model_dir).tokenizer, scripts))
    settings = EnvSettings(allowed_apps=("com.android.settings", "com.android.launcher3"), screenshot_scale=0.1)
    config = RlConfig(base_model=str(model_dir), output=str(work / "runs"), tasks=(TASK,), seeds=(100,),
                      num_examples=steps, batch_size=4, num_generations=4, max_steps=steps, max_turns=6,
                      max_completion_length=1536, save_steps=0, max_pixels=PIXELS, lora_r=4, lora_alpha=8)
    t0 = time.perf_counter()
    result = run_rl(config, model=model, settings=settings)
    runtime = train_runtime(result.run) or result.seconds
    return {"steps": result.steps, "train_runtime_s": round(runtime, 2), "steps_per_s": round(steps / runtime, 4),
            "s_per_step": round(runtime / steps, 2), "wall_s": round(time.perf_counter() - t0, 1),
            "mean_reward": list(result.rewards), "reward_std": list(result.reward_std), "rollouts_per_step": 4}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sft-steps", type=int, default=6)
    parser.add_argument("--rl-steps", type=int, default=2)
    args = parser.parse_args()
    import torch

    out: dict = {"cpu_threads": torch.get_num_threads(), "load_average_start": os.getloadavg()}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        model = tiny(work / "tiny")
        out["sft"] = bench_sft(model, work / "sft", args.sft_steps)
        out["grpo"] = bench_rl(model, work / "rl", args.rl_steps)
    out["load_average_end"] = os.getloadavg()
    out["note"] = "2-core shared CPU; a load average above the core count slows every figure proportionally"
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
