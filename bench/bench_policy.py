"""Policy speed on the CPU with the tiny models: prefill and decode, fp32 vs nf4 vs bf16, peak memory.

    .venv/bin/python bench/bench_policy.py [--repeats 2] [--tokens 96] [--quick] [--json out.json]

For each architecture (qwen3_5 = PhoneBuddy, qwen3_vl) and precision, one full propose() on a 1080x2400
screenshot at two screenshot budgets (the profile's 1.3 MP cap, about 1,272 visual tokens, and 0.3 MP),
with the reply forced to a fixed length so decode is comparable. Every row records visual tokens, prompt
tokens, thought length, prefill seconds, decode ms/token, decode tokens/s and the process's peak RSS
during the step. Figures and ratios are printed (never asserted); tiny-model ratios are dominated by
overhead, see bench/gpu_policy.py for the real-size architecture on a GPU.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


class PeakRss:
    """Samples this process's RSS every 10 ms while active."""

    def __init__(self) -> None:
        import psutil

        self.process = psutil.Process()
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self.process.memory_info().rss)
            time.sleep(0.01)

    def __enter__(self) -> PeakRss:
        self.peak = self.process.memory_info().rss
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def thought_reply(arch: str, tokens_hint: int) -> str:
    words = " ".join(["the", "Wi-Fi", "row", "is", "near", "the", "top", "so", "I", "tap", "it"] * (tokens_hint // 11 + 1))
    words = " ".join(words.split()[:tokens_hint])
    call = '<tool_call>\n{"name": "click", "arguments": {"points": [[500, 125]]}}\n</tool_call>'
    if arch == "qwen3_5":
        return f"{words}\n</think>\n\n{call}"
    return f"<think>\n{words}\n</think>\n\n{call}"


def run(args: argparse.Namespace) -> list[dict]:
    from policy_fixtures import ForcedReply, phone_observation

    from assistant_core.policy.hf_compat import load_processor
    from assistant_core.policy.local import LocalPolicy
    from assistant_core.policy.tiny import build_tiny_model

    archs = {"qwen3_5": "phonebuddy-4b", "qwen3_vl": "qwen3-vl-4b"}
    quants = ["fp32", "nf4"] if args.quick else ["fp32", "nf4", "bf16"]
    budgets = {"1.3MP": 1280 * 32 * 32, "0.3MP": 300 * 32 * 32}
    if args.quick:
        budgets = {"0.3MP": 300 * 32 * 32}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for arch, profile in archs.items():
            folder = build_tiny_model(Path(tmp) / arch, arch=arch)
            tok = load_processor(folder).tokenizer
            reply = thought_reply(arch, args.tokens)
            obs = phone_observation()
            for quant in quants:
                t0 = time.perf_counter()
                policy = LocalPolicy(folder, profile=profile, quantization=quant, max_new_tokens=4 * args.tokens + 64,
                                     logits_processors=[ForcedReply(tok, reply)])
                policy.load()
                load_s = time.perf_counter() - t0
                for budget_name, budget in budgets.items():
                    policy.max_pixels = budget
                    policy.propose("Turn on Wi-Fi", obs, [])  # warm-up
                    samples = []
                    for _ in range(args.repeats):
                        with PeakRss() as rss:
                            p = policy.propose("Turn on Wi-Fi", obs, [])
                        samples.append((p, rss.peak))
                    prefill = statistics.median(s[0].timings["prefill"] for s in samples)
                    decode = statistics.median(s[0].timings["decode"] for s in samples)
                    p0 = samples[0][0]
                    n = int(p0.stats["decode_tokens"])
                    row = {"arch": arch, "quant": quant, "screenshot": budget_name, "load_s": round(load_s, 3),
                           "visual_tokens": int(p0.stats["visual_tokens"]), "prompt_tokens": int(p0.stats["prompt_tokens"]),
                           "thought_chars": int(p0.stats["thought_chars"]), "decode_tokens": n,
                           "prefill_s": round(prefill, 3), "decode_ms_per_token": round(1000 * decode / max(1, n - 1), 2),
                           "decode_tokens_per_s": round((n - 1) / decode, 1) if decode > 0 else 0.0,
                           "total_s": round(statistics.median(s[0].timings["total"] for s in samples), 3),
                           "peak_rss_mb": round(max(s[1] for s in samples) / 2**20)}
                    rows.append(row)
                    print(json.dumps(row), flush=True)
                policy.close()
    return rows


def report(rows: list[dict]) -> None:
    print()
    print(f"{'arch':<9} {'quant':<5} {'shot':<6} {'vis':>5} {'prompt':>6} {'prefill s':>9} {'x fp32':>6} "
          f"{'ms/tok':>7} {'x fp32':>6} {'tok/s':>6} {'RSS MB':>7}")
    base = {(r["arch"], r["screenshot"]): r for r in rows if r["quant"] == "fp32"}
    for r in rows:
        b = base[(r["arch"], r["screenshot"])]
        print(f"{r['arch']:<9} {r['quant']:<5} {r['screenshot']:<6} {r['visual_tokens']:>5} {r['prompt_tokens']:>6} "
              f"{r['prefill_s']:>9.3f} {r['prefill_s'] / b['prefill_s']:>6.2f} {r['decode_ms_per_token']:>7.1f} "
              f"{r['decode_ms_per_token'] / b['decode_ms_per_token']:>6.2f} {r['decode_tokens_per_s']:>6.1f} "
              f"{r['peak_rss_mb']:>7}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--tokens", type=int, default=96, help="forced thought length in words (about tokens)")
    parser.add_argument("--quick", action="store_true", help="fp32 and nf4 at 0.3 MP only")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--json", default=None, help="also write the rows to this file")
    args = parser.parse_args()
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    import logging

    logging.basicConfig(level=logging.ERROR)
    rows = run(args)
    report(rows)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
