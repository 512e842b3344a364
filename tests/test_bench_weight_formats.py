"""bench/bench_weight_formats.py, the measurement issue 25's remaining goals wait on: what each 8-bit weight format
rounds, and the whole script on a tiny checkpoint (the real-size figures are in bench/results/weight_formats.json)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from bench_weight_formats import FORMATS, rounded  # noqa: E402


def test_each_format_rounds_within_half_a_step_and_finer_groups_round_less():
    g = torch.Generator().manual_seed(0)
    w = torch.randn(64, 256, generator=g) * 0.02
    w[3, 7] = 0.5  # one large weight: a coarse step for its whole row, less so for its group
    w = w.bfloat16().float()  # as the checkpoint holds it
    assert torch.equal(rounded(w, "fp16"), w)  # bf16 values of this size are fp16 values: the exact plan
    errors = {}
    for fmt, group in (("int8-row", 256), ("int8-g128", 128), ("int8-g32", 32)):
        got = rounded(w, fmt)
        parts, err = w.reshape(64, -1, group), (got - w).reshape(64, -1, group)
        step = parts.abs().amax(-1, keepdim=True) / 127
        assert bool((err.abs() <= step / 2 * (1 + 1e-5)).all()), fmt  # to fp32 rounding of a tie
        assert len(torch.unique(got.reshape(64, -1, group)[3, 0])) <= 255  # 8 bits a weight
        errors[fmt] = float(err[3].abs().mean())
    assert errors["int8-g32"] < errors["int8-g128"] < errors["int8-row"]


def test_the_script_reports_every_format_on_a_checkpoint(tmp_path):
    from assistant_core.policy.tiny import build_tiny_model

    folder = build_tiny_model(tmp_path / "tiny", "qwen3_5", "bpe", max_pixels=200_000)
    out = tmp_path / "formats.json"
    run = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_weight_formats.py"), "--folder", str(folder),
                          "--observations", "2", "--tokens", "6", "--kernels", "--repeats", "3", "--json", str(out)],
                         capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads(out.read_text())
    accuracy = report["accuracy"]
    assert set(FORMATS) <= set(accuracy)
    assert accuracy["fp16"]["logits_max_diff_pct"] < 0.1 and accuracy["fp16"]["tokens_agreeing"] == "12/12"
    assert accuracy["int8-row"]["logits_max_diff_pct"] > accuracy["fp16"]["logits_max_diff_pct"]
    kernels = report["kernels"]
    assert kernels["linears"] > 0 and {"fp16", "int8 (2-row grid)", "int8 (3-row grid)"} <= set(kernels["ms_per_token"])
    # onnxruntime comes with faster-whisper; the graph needs the onnx package, which CI does not install
    assert "onnxruntime MatMulNBits 8-bit g32" in kernels["ms_per_token"] or "is not installed" in kernels["onnxruntime"]
    assert "int8-g32" in run.stdout and "same action" in run.stdout

    missing = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_weight_formats.py"), "--folder",
                              str(tmp_path / "nowhere")], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert missing.returncode == 2 and "no checkpoint at" in missing.stderr
