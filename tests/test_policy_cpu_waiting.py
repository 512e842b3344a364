"""The "still thinking" cue's timing (assistant_core/policy/waiting.py) on an injected clock, and the words
`hardware.recommend` says about the wait, from the measured file, in both languages (issue 25)."""

from __future__ import annotations

import json

import pytest

from assistant_core.policy.hardware import Hardware, measured_cpu_step, recommend
from assistant_core.policy.waiting import STILL_THINKING, ThinkingCue


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def run(cue: ThinkingCue, clock: Clock, seconds: float, step: float = 0.5) -> list[float]:
    """Tick every `step` seconds for `seconds`; the times (since start) at which the cue played."""
    start, played = clock.now, []
    while clock.now - start < seconds:
        clock.now += step
        if cue.tick():
            played.append(round(clock.now - start, 2))
    return played


def test_first_cue_after_three_seconds_then_at_most_every_five():
    clock, heard = Clock(), []
    cue = ThinkingCue(heard.append, clock=clock)
    assert run(cue, clock, 10) == []  # not started: never
    cue.start()
    played = run(cue, clock, 20)
    assert played[0] == 3.0
    assert all(b - a >= 5.0 for a, b in zip(played, played[1:], strict=False))
    assert played == [3.0, 8.0, 13.0, 18.0]
    assert heard == [STILL_THINKING] * 4 and STILL_THINKING.zh == "还在想。"


def test_a_short_step_hears_nothing_and_stop_silences():
    clock, heard = Clock(), []
    cue = ThinkingCue(heard.append, clock=clock)
    cue.start()
    run(cue, clock, 2.5)
    cue.stop()
    assert run(cue, clock, 30) == [] and heard == []
    cue.start()  # a new step: the delay counts again from its start
    assert run(cue, clock, 4) == [3.0]


def test_never_over_an_open_question():
    clock, heard = Clock(), []
    question = {"open": False}
    cue = ThinkingCue(heard.append, clock=clock, question_open=lambda: question["open"])
    cue.start()
    assert run(cue, clock, 4) == [3.0]
    question["open"] = True
    assert run(cue, clock, 20) == []  # skipped while the question is open, not queued for later
    question["open"] = False
    assert run(cue, clock, 1) == [0.5]  # due at the first tick after the question closes (the last cue was long ago)


def test_a_failing_question_probe_keeps_it_quiet():
    clock, heard = Clock(), []

    def broken() -> bool:
        raise RuntimeError("no window")

    cue = ThinkingCue(heard.append, clock=clock, question_open=broken)
    cue.start()
    assert run(cue, clock, 10) == [] and heard == []
    with pytest.raises(ValueError):
        ThinkingCue(heard.append, period_s=0)


def test_recommendation_says_the_measured_wait_in_words(tmp_path):
    measured = tmp_path / "cpu.json"
    entry = {"runtimes": {"bf16": {"step_s": 20.0, "peak_rss_gb": 2.2,
                                   "machine_plan": {"step_s": 12.4, "max_pixels": 458752, "think_budget": 64}},
                          "fp32": {"step_s": 40.0, "peak_rss_gb": 4.1,
                                   "machine_plan": {"step_s": 33.0, "max_pixels": 458752, "think_budget": 64}}}}
    measured.write_text(json.dumps({"runs": {"0.8b/2": entry, "0.8b/1": entry}}))
    got = measured_cpu_step("0.8b", 2, "bf16", measured)
    assert got["step_s"] == 12.4 and got["threads"] == 2
    assert measured_cpu_step("0.8b", 8, "fp32", measured)["step_s"] == pytest.approx(33.0 * 2 / 8)
    assert measured_cpu_step("4b", 2, "bf16", measured) is None
    assert measured_cpu_step("0.8b", 2, "bf16", tmp_path / "missing.json") is None


def test_recommend_on_a_cpu_uses_the_fast_runtime_and_says_the_wait(monkeypatch, tmp_path):
    measured = tmp_path / "cpu.json"
    entry = {"runtimes": {"fp32": {"step_s": 40.0, "peak_rss_gb": 4.1,
                                   "machine_plan": {"step_s": 33.0, "max_pixels": 458752, "think_budget": 64}}}}
    measured.write_text(json.dumps({"runs": {"0.8b/2": entry}}))
    monkeypatch.setattr("assistant_core.policy.hardware.MEASURED_FILE", measured)
    rec = recommend(Hardware(cuda=False, cpu_cores=2, ram_gb=16, bf16_units=False))
    assert (rec.profile, rec.device, rec.runtime, rec.quantization) == ("phonebuddy-0.8b", "cpu", "cpu", "fp32")
    assert rec.seconds_per_step == 33.0 and rec.max_pixels and rec.think_budget
    text = rec.describe()
    assert "33 seconds" in text.en and "33 秒" in text.zh
    assert "sound" in text.en and "提示音" in text.zh


def test_the_measured_figures_travel_with_the_installed_app(tmp_path):
    """An installed app has assistant_core/ but no bench/ beside it: the wait must still come from the
    measured figures shipped as package data (pyproject's package-data takes every *.json)."""
    import shutil
    import subprocess
    import sys
    import tomllib
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    patterns = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["*"]
    assert "*.json" in patterns
    site = tmp_path / "site-packages"  # the installed layout: the packages, nothing of the source tree
    shutil.copytree(root / "assistant_core", site / "assistant_core",
                    ignore=shutil.ignore_patterns("__pycache__"))
    assert not (site / "bench").exists()
    code = ("from assistant_core.policy.hardware import MEASURED_FILE, measured_cpu_step;"
            "print(MEASURED_FILE); print(measured_cpu_step('0.8b', 2, 'bf16'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                         env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(site)})
    assert out.returncode == 0, out.stderr[-2000:]
    path, figures = out.stdout.strip().splitlines()
    assert path.startswith(str(site))
    assert "'step_s':" in figures and figures != "None"


def test_a_missing_measured_file_falls_back_to_a_stated_estimate(monkeypatch, tmp_path, caplog):
    from assistant_core.policy.hardware import expected_wait_text

    monkeypatch.setattr("assistant_core.policy.hardware.MEASURED_FILE", tmp_path / "gone.json")
    with caplog.at_level("WARNING"):
        rec = recommend(Hardware(cuda=False, cpu_cores=2, ram_gb=16, bf16_units=True))
    assert "estimate" in caplog.text
    assert rec.seconds_per_step == 120.0  # the stated estimate: 120 s on 2 cores
    text = rec.describe()
    assert "2 minutes" in text.en and "estimate" in text.en and "估计" in text.zh
    wait = expected_wait_text(2)
    assert "estimate" in wait.en and "估计" in wait.zh


def _runtime(step: float, plan_step: float, rss: float = 2.5) -> dict:
    return {"step_s": step, "peak_rss_gb": rss,
            "machine_plan": {"step_s": plan_step, "max_pixels": 458752, "think_budget": 64}}


def test_the_wait_comes_from_this_class_of_processor(monkeypatch, tmp_path):
    """A laptop without bf16 units is not told the wait measured on a server CPU with AMX: the figures are
    keyed by the class of processor, and another class's figure is said to be an estimate."""
    from assistant_core.policy.hardware import expected_wait_text

    measured = tmp_path / "cpu.json"
    runs = {"bf16-units:0.8b/2": {"runtimes": {"bf16": _runtime(15.0, 11.0), "fp32": _runtime(26.0, 19.0, 5.2)}},
            "avx2:0.8b/2": {"runtimes": {"fp16w": _runtime(30.0, 21.0), "fp32": _runtime(60.0, 44.0, 5.2)}}}
    measured.write_text(json.dumps({"runs": runs}))
    got = measured_cpu_step("0.8b", 2, "fp32", measured, cpu_class="avx2")
    assert (got["step_s"], got["cpu_class"], got["other_class"]) == (44.0, "avx2", False)
    assert measured_cpu_step("0.8b", 2, "fp32", measured, cpu_class="bf16-units")["step_s"] == 19.0
    assert measured_cpu_step("0.8b", 2, "bf16", measured, cpu_class="avx2")["other_class"] is True

    monkeypatch.setattr("assistant_core.policy.hardware.MEASURED_FILE", measured)
    laptop = Hardware(cuda=False, cpu_cores=2, ram_gb=16, fp16_weights=True)
    assert (laptop.cpu_class, laptop.cpu_compute) == ("avx2", "fp16w")
    rec = recommend(laptop)
    assert (rec.quantization, rec.seconds_per_step, rec.extra) == ("fp16w", 21.0, None)
    text = rec.describe()
    assert "16-bit weights" in text.en and "16 位权重" in text.zh and "21 seconds" in text.en
    assert "21 seconds" in expected_wait_text(2, measured).en

    # a CPU with AMX and fbgemm's fp16 GEMM runs fp16 weights too (cpu_runtime.choose_compute), timed from
    # its own class's figures: the fp16w one once measured there, fp32 (the slower bound) before that
    server = Hardware(cuda=False, cpu_cores=2, ram_gb=16, bf16_units=True, fp16_weights=True)
    assert (server.cpu_class, server.cpu_compute) == ("bf16-units", "fp16w")
    assert (recommend(server).quantization, recommend(server).seconds_per_step) == ("fp16w", 19.0)
    runs["bf16-units:0.8b/2"]["runtimes"]["fp16w"] = _runtime(24.8, 16.6, 3.0)
    measured.write_text(json.dumps({"runs": runs}))
    assert (recommend(server).seconds_per_step, recommend(server).extra) == (16.6, None)
    assert Hardware(cuda=False, cpu_cores=2, ram_gb=16, bf16_units=True).cpu_compute == "bf16"  # no fp16 GEMM

    runs.pop("avx2:0.8b/2")  # only a server CPU measured: its figure, said to be an estimate
    measured.write_text(json.dumps({"runs": runs}))
    rec = recommend(laptop)
    assert rec.seconds_per_step == 16.6 and rec.extra is not None  # its fp16w figure: the same runtime
    assert "different kind of processor" in rec.describe().en and "另一类处理器" in rec.describe().zh
    wait = expected_wait_text(2, measured)
    assert "different kind of processor" in wait.en and "另一类处理器" in wait.zh


def test_older_measured_files_without_a_class_still_read(tmp_path):
    measured = tmp_path / "cpu.json"
    measured.write_text(json.dumps({"runs": {"0.8b/2": {"runtimes": {"fp32": _runtime(40.0, 33.0)}}}}))
    got = measured_cpu_step("0.8b", 2, "fp32", measured, cpu_class="avx2")
    assert got["step_s"] == 33.0 and got["other_class"] is True  # no class: not known to be this one
    assert measured_cpu_step("0.8b", 2, "fp32", measured)["other_class"] is False  # any class asked for
