"""Figures behind the confirmation dialog's grace period (app.confirm_dialog.GRACE_MS), printed, never
asserted. Under Xvfb with real X key events (tests/app_xkeys.py):

1. key delivery: from an XTEST key press to Qt's keyPressEvent in a window (how late a key pressed just
   before the dialog opened can still arrive);
2. the real window on the simulated phone: from the announcement of the step that needs a yes to the
   dialog on screen (how little warning a user has that a question is coming).

A key already on its way when the dialog opens lands within (1) plus a person's reaction time to the
dialog's earcon (an auditory simple reaction is about 0.15-0.25 s, stopping a movement already started
about 0.2-0.3 s), which the grace period must exceed.

    python bench/confirm_grace.py            # needs Xvfb (scripts/dev.sh installs it)
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.app_xvfb import xcb_env, xvfb  # noqa: E402

KEY_PROBE = textwrap.dedent("""
    import json, sys, threading, time, os
    sys.path.insert(0, %r)
    from PySide6.QtWidgets import QApplication, QWidget
    from PySide6.QtCore import QTimer
    from tests.app_xkeys import XKeyboard
    app = QApplication([])
    got = []
    class W(QWidget):
        def keyPressEvent(self, e):
            got.append(time.monotonic())
    w = W(); w.resize(200, 200); w.show(); w.activateWindow()
    sent = []
    def drive():
        kb = XKeyboard(os.environ["DISPLAY"]); time.sleep(1.0)
        for _ in range(40):
            sent.append(time.monotonic()); kb.tap("y"); time.sleep(0.05)
        time.sleep(0.5); kb.close(); done.set()
    done = threading.Event()
    poll = QTimer(); poll.timeout.connect(lambda: done.is_set() and app.quit()); poll.start(50)
    threading.Thread(target=drive, daemon=True).start()
    app.exec()
    print(json.dumps([round((g - s) * 1000, 2) for s, g in zip(sent, got)]))
""")


def main() -> int:
    from app.confirm_dialog import GRACE_MS

    with xvfb() as display:
        out = subprocess.run([sys.executable, "-c", KEY_PROBE % str(ROOT)], env=xcb_env(display), cwd=ROOT,
                             capture_output=True, text=True, timeout=120)
        latencies = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"X key press -> Qt keyPressEvent: n={len(latencies)} median {statistics.median(latencies):.1f} ms, "
              f"max {max(latencies):.1f} ms")
        for lang in ("en", "zh"):
            run = subprocess.run([sys.executable, "tests/app_xvfb_confirm_driver.py", lang, "0"], env=xcb_env(display),
                                 cwd=ROOT, capture_output=True, text=True, timeout=300)
            report = json.loads(run.stdout.strip().splitlines()[-1])
            t = report["timeline"]
            print(f"{lang}: step announced {t['step_announced_s'] * 1000:.0f} ms after the request, dialog on screen "
                  f"{t['dialog_opened_s'] * 1000:.0f} ms ({(t['dialog_opened_s'] - t['step_announced_s']) * 1000:.0f} ms "
                  "after the announcement)")
    print(f"grace period in use: {GRACE_MS} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
