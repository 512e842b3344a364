"""Questions answered aloud, the way a blind user asks them: under a real X server, the talk key (Space)
held with real X key events while the recogniser hears "How much battery do I have?" / "What time is it?"
(电池还有多少电 / 现在几点了), then a real F3. The voice's queue shows the answer is the last thing said
(never cut off, never "Done, as far as I can tell"), said once, and F3 says it again."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from assistant_core.endings import SAY
from tests.app_xvfb import ROOT, xcb_env, xvfb

QUESTIONS = {"en": (("How much battery do I have?", "%"), ("What time is it?", ":")),
             "zh": (("电池还有多少电", "%"), ("现在几点了", ":"))}


@pytest.mark.xvfb
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_questions_are_spoken_with_their_answers_and_f3_repeats_them(lang):
    asked = [q for q, _ in QUESTIONS[lang]]
    with xvfb() as display:
        out = subprocess.run([sys.executable, str(ROOT / "tests" / "app_xvfb_answers_driver.py"), lang, *asked],
                             cwd=ROOT, env=xcb_env(display), capture_output=True, text=True, timeout=300)
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    assert lines, (out.returncode, out.stdout[-2000:], out.stderr[-3000:])
    report = json.loads(lines[-1])
    assert "error" not in report, (report, out.stderr[-3000:])
    assert len(report["runs"]) == len(asked)
    for run, (_q, mark) in zip(report["runs"], QUESTIONS[lang], strict=True):
        said = [t for k, t in run["said"] if k == "say"]
        answer = said[-1]
        assert mark in answer and answer == run["result"], run  # the last thing said is the answer
        assert said.count(answer) == 1 and run["said"][-1] == ["say", answer], run  # once, and nothing cut it
        assert not any(SAY["done_unchecked"].get(lang) in t for t in said), run
        assert [t for k, t in run["f3"] if k == "say"] == [answer], run  # F3 says it again
