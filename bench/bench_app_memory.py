"""Memory of one window over many runs (printed, never asserted; tests/test_app_memory.py holds the bound).

    QT_QPA_PLATFORM=offscreen python bench/bench_app_memory.py [RUNS]

Runs "Turn on Wi-Fi" on the simulated phone RUNS times (default 50) in one MainWindow with a file-backed
history, and prints the process's resident memory and the number of live PIL pictures every 10 runs.
"""

from __future__ import annotations

import gc
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


def live_images() -> int:
    from PIL import Image

    return sum(1 for o in gc.get_objects() if isinstance(o, Image.Image))


def main() -> int:
    from PySide6.QtWidgets import QApplication

    from app.agent import AgentChoice, AgentKind
    from app.main_window import AppServices, MainWindow
    from app.phone import open_simulated
    from assistant_core.history import HistoryStore

    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    app = QApplication([])
    folder = Path(tempfile.mkdtemp())
    window = MainWindow(lang="en", services=AppServices(history=HistoryStore(folder / "h.db")),
                        phone=open_simulated("en"), agent=AgentChoice(AgentKind.DEMO))
    window.show()
    done: list[object] = []
    window.run_finished.connect(done.append)
    start = time.perf_counter()
    for i in range(1, runs + 1):
        window.submit_request("Turn on Wi-Fi")
        while len(done) < i or window.is_running():
            app.processEvents()
            time.sleep(0.002)
        if i == 1 or i % 10 == 0:
            gc.collect()
            print(f"run {i:3d}: RSS {rss_mb():6.0f} MB, live pictures {live_images():4d}, "
                  f"events kept {len(window.events_seen)}", flush=True)
    print(f"{runs} runs in {time.perf_counter() - start:.1f} s")
    window.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
