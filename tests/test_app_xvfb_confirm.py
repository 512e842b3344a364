"""The confirmation a blind person can trust, under a real X server with real X key events (XTEST, as a
keyboard sends them), in English and Chinese: a spoken request on the simulated phone reaches the
confirmation; a key pressed as the dialog opens and Space held through it do not answer; Space held later
listens instead of answering; N ends as "not done because you said no"; a deliberate Y places the call;
Escape at 20 timed offsets around the confirmation stops every run with nothing sensitive done."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from app.strings import tr
from assistant_core.endings import SAY
from tests.app_xvfb import ROOT, xcb_env, xvfb

N_OFFSETS = 20


def drive(lang: str) -> dict:
    with xvfb() as display:
        out = subprocess.run([sys.executable, str(ROOT / "tests" / "app_xvfb_confirm_driver.py"), lang, str(N_OFFSETS)],
                             cwd=ROOT, env=xcb_env(display), capture_output=True, text=True, timeout=400)
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    assert lines, (out.returncode, out.stdout[-2000:], out.stderr[-3000:])
    report = json.loads(lines[-1])
    assert "error" not in report, (report.get("error"), report, out.stderr[-3000:])
    return report


@pytest.mark.xvfb
@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_confirmation_answers_only_deliberate_keys_and_escape_always_stops(lang):
    report = drive(lang)
    # A spoken request reached the confirmation.
    assert report["request_started"] and report["early_dialog_opened"], report
    # A Y landing as it opened, and Space held through its opening, did not answer it.
    assert report["early_answered"] is False and report["early_calls"] == 0, report
    # Space held after the grace period listened for an answer (and "hmm" is none): still not answered.
    assert report["space_listened"] and report["space_answered"] is False, report
    # N: nothing was done, and the ending says why in the window's language.
    early = report["early"]
    assert early and early["calls"] == 0 and not early["stopped"], report
    assert early["result_text"].startswith(SAY.get("declined", lang)), early
    assert early["last_said"] == early["result_text"]  # said, not only shown
    # A deliberate Y after the grace period: the call was placed and checked on the phone.
    yes = report["yes"]
    assert yes and yes["calls"] == 1, report
    assert yes["result_text"].startswith(SAY.get("done_short", lang)), yes
    # Escape at every offset, from before the step's announcement to after the dialog opened: stopped,
    # nothing dispatched, no dialog left, "Stopped" said.
    runs = report["esc_runs"]
    assert len(runs) == N_OFFSETS
    timeline = report["timeline"]
    assert min(r["pressed_s"] for r in runs) < timeline["step_announced_s"], (timeline, runs)
    assert max(r["pressed_s"] for r in runs) > timeline["dialog_opened_s"] + report["grace_ms"] / 1000, (timeline, runs)
    assert sum(r["dialog_before_esc"] for r in runs) >= 3, runs  # Escape with the question on screen
    assert sum(not r["dialog_before_esc"] for r in runs) >= 3, runs  # Escape while it was being prepared
    for run in runs:
        assert run["stopped"] and run["calls"] == 0 and not run["dialog_left_open"], run
        assert run["last_said"] == tr("stopped_by_user", lang), run
