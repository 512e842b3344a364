"""Desktop app start-up and responsiveness figures (printed, never asserted).

    .venv/bin/python bench/bench_app.py [--runs 3]

Start-up: a fresh process per run (QT_QPA_PLATFORM=offscreen unless set) that imports the app, builds
the window for `phonebuddy --demo`, shows it, and waits for the first simulated-phone frame; it reports
seconds from process start to: imports done, window shown, first phone frame.
Responsiveness: one scripted-demonstration run ("Call Sophie Tang", answered yes) in this process, with a
20 ms QTimer counting ticks: the longest gap between ticks is how long the window could not react.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import time
t0 = time.perf_counter()
import json, sys, tempfile
from PySide6.QtWidgets import QApplication
app = QApplication([])
from app.main import build_parser, build_window
t_import = time.perf_counter() - t0
args = build_parser().parse_args(["--demo", "--no-speech", "--db", tempfile.mktemp(suffix=".db")])
w = build_window(args)
w.show()
app.processEvents()
t_shown = time.perf_counter() - t0
while w.mirror.frames_shown == 0:
    app.processEvents()
    time.sleep(0.002)
t_frame = time.perf_counter() - t0
print(json.dumps({"imports_s": t_import, "shown_s": t_shown, "first_frame_s": t_frame}))
w.shutdown()
"""


def startup(runs: int) -> dict[str, list[float]]:
    env = dict(os.environ)
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    out: dict[str, list[float]] = {}
    for _ in range(runs):
        started = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", CHILD], cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=300)
        wall = time.perf_counter() - started
        if proc.returncode != 0:
            raise SystemExit(proc.stderr[-2000:])
        figures = json.loads(proc.stdout.strip().splitlines()[-1])
        figures["process_wall_s"] = wall
        for k, v in figures.items():
            out.setdefault(k, []).append(v)
    return out


def responsiveness() -> dict[str, float]:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    sys.path.insert(0, str(ROOT))
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    from app.agent import AgentChoice, AgentKind
    from app.main_window import AppServices, MainWindow
    from app.phone import open_simulated
    from assistant_core.history import HistoryStore
    from assistant_core.types import ConfirmAnswer

    window = MainWindow(services=AppServices(history=HistoryStore.in_memory()), phone=open_simulated("en"),
                        agent=AgentChoice(AgentKind.DEMO))
    window.show()
    gaps: list[float] = []
    last = [time.perf_counter()]

    def tick() -> None:
        now = time.perf_counter()
        gaps.append(now - last[0])
        last[0] = now

    timer = QTimer()
    timer.setInterval(20)
    timer.timeout.connect(tick)
    timer.start()
    started = time.perf_counter()
    window.submit_request("Call Sophie Tang")
    answered = False
    while window.is_running() or window.state != "state_idle":
        app.processEvents()
        if not answered and window._dialog is not None:
            t_dialog = time.perf_counter() - started
            window._dialog.answer_with(ConfirmAnswer.YES)
            answered = True
        time.sleep(0.001)
    total = time.perf_counter() - started
    timer.stop()
    window.shutdown()
    return {"run_s": total, "to_dialog_s": t_dialog if answered else float("nan"), "ticks": len(gaps),
            "max_gap_ms": 1000 * max(gaps), "p95_gap_ms": 1000 * sorted(gaps)[int(0.95 * (len(gaps) - 1))]}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    figures = startup(args.runs)
    print(f"start-up over {args.runs} fresh processes (median, min-max), platform {os.environ.get('QT_QPA_PLATFORM', 'offscreen')}:")
    for key, values in figures.items():
        print(f"  {key:<16} {statistics.median(values):6.2f} s   ({min(values):.2f}-{max(values):.2f})")
    r = responsiveness()
    print("responsiveness during one scripted-demonstration run (20 ms timer on the GUI thread):")
    print(f"  run {r['run_s']:.2f} s, dialog after {r['to_dialog_s']:.2f} s, {r['ticks']} ticks, "
          f"longest gap {r['max_gap_ms']:.0f} ms, p95 gap {r['p95_gap_ms']:.0f} ms "
          f"(ratio longest/interval {r['max_gap_ms'] / 20:.1f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
