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
