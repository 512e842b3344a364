"""Run inside Xvfb (QT_QPA_PLATFORM=xcb), on an AT-SPI bus whose ScreenReaderEnabled flag is on (as Orca
sets it), by tests/test_app_xvfb_wizard.py: the first start of the app as a screen-reader user meets it.
The real main window on the simulated phone, the real first-run start (app.first_run.start, as an installed
bundle opens the wizard), our own voice a real speech.Speaker (espeak-ng) writing into a real-time
MemorySink (there is no sound card here: the sink is the edge, and its arrival times say when our voice
spoke). Driven ONLY by real X key events (tests/app_xkeys.py) from a second thread: V (or S) answers
"Which voice?", then Enter on every page of the wizard. Prints one JSON report line.

argv: LANG FOLDER (the first-run marker's folder) HEARD (the screen reader listener's file: the window opens
once the listener, which finds the app by a window named PhoneBuddy, is registered, so it hears everything
from the first announcement on) KEY (v or s)."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QApplication, QWidget

from app.agent import AgentChoice, AgentKind
from app.first_run import FirstRun, start
from app.main_window import AppServices, MainWindow
from app.phone import open_simulated
from assistant_core.history import HistoryStore
from speech.audio import MemorySink
from speech.tts import EspeakEngine, Speaker, VoiceRouter
from tests.app_xkeys import XKeyboard


def _name(widget: QWidget | None) -> str:
    if widget is None:
        return ""
    return widget.objectName() or type(widget).__name__


class Quitter(QObject):
    go = Signal()


class Snapshot:
    """What the GUI thread sees every 10 ms, read by the key thread."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.value: dict = {}

    def set(self, value: dict) -> None:
        with self.lock:
            self.value = value

    def get(self) -> dict:
        with self.lock:
            return dict(self.value)


def main() -> int:
    lang, folder, heard, answer = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4]
    app = QApplication(sys.argv[:1])
    placeholder = QWidget()
    placeholder.setWindowTitle("PhoneBuddy (starting)")
    placeholder.show()
    end = time.monotonic() + 60
    while time.monotonic() < end and not (heard.exists() and '"ready"' in heard.read_text(encoding="utf-8")):
        app.processEvents()
        time.sleep(0.05)
    placeholder.close()
    sink = MemorySink(22_050, realtime=True)
    espeak = EspeakEngine()
    speaker = Speaker(VoiceRouter(espeak, fallback=espeak), sink)
    history = HistoryStore.in_memory()
    services = AppServices(speaker=speaker, history=history, simulated_phone=lambda lg: open_simulated(lg))
    window = MainWindow(lang=lang, services=services, phone=open_simulated(lang), agent=AgentChoice(AgentKind.DEMO))
    said: list[tuple[float, str]] = []
    window.announcer.announced.connect(lambda text, _cue: said.append((time.monotonic(), text)))
    window.show()
    t0 = time.monotonic()
    start(window, first_run=FirstRun(folder), env={"PHONEBUDDY_FIRST_RUN": "1"})
    snap = Snapshot()
    results: list[int] = []

    def look() -> None:
        wizard = getattr(window, "setup_wizard", None)
        dialog = window.channel_dialog
        if wizard is not None and not getattr(wizard, "_driver_hooked", False):
            wizard._driver_hooked = True
            wizard.finished.connect(results.append)
        focus = QApplication.focusWidget()
        snap.set({
            "t": time.monotonic(),
            "active": _name(QApplication.activeWindow()),
            "focus": _name(focus),
            "focus_window": _name(focus.window()) if focus is not None else "",
            "focus_text": getattr(focus, "text", lambda: "")() if focus is not None else "",
            "dialog": bool(dialog is not None and dialog.isVisible()),
            "wizard": bool(wizard is not None and wizard.isVisible()),
            "page": wizard.currentId() if wizard is not None else -1,
            "last_page": bool(wizard is not None and wizard.nextId() == -1),
        })

    poller = QTimer()
    poller.setInterval(10)
    poller.timeout.connect(look)
    poller.start()
    report: dict = {"lang": lang, "steps": []}

    def wait(pred, timeout: float) -> dict | None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            s = snap.get()
            if s and pred(s):
                return s
            time.sleep(0.02)
        return None

    def keys() -> None:
        kb = XKeyboard(os.environ["DISPLAY"])
        try:
            asked = wait(lambda s: s["dialog"] and s["active"] == "channelDialog", 30)
            report["asked"] = asked
            time.sleep(2.0)  # what would speak over the question, or open behind it, does so now
            report["before_v"] = snap.get()
            report["t_v"] = time.monotonic()
            kb.tap(answer)
            opened = wait(lambda s: s["wizard"] and s["active"] == "setupWizard" and not s["dialog"], 15)
            report["wizard_opened"] = opened
            if opened is None:
                return
            time.sleep(0.5)
            for _ in range(8):
                before = wait(lambda s: True, 1)
                assert before is not None
                if not before["wizard"]:
                    break
                time.sleep(0.4)
                before = snap.get()
                kb.tap("Return")
                after = wait(lambda s, b=before: not s["wizard"] or s["page"] != b["page"], 6)
                report["steps"].append({"before": before, "after": after})
                if after is None or not after["wizard"]:
                    break
                time.sleep(0.3)
        finally:
            kb.close()
            time.sleep(0.5)
            report["end"] = snap.get()
            quitter.go.emit()  # queued onto the GUI thread

    quitter = Quitter()
    quitter.go.connect(app.quit)
    QTimer.singleShot(300, lambda: threading.Thread(target=keys, daemon=True).start())
    QTimer.singleShot(120_000, app.quit)
    app.exec()
    speaker.close() if hasattr(speaker, "close") else None
    report["said"] = [[round(t - t0, 3), text] for t, text in said]
    report["t_v"] = round(report.get("t_v", t0) - t0, 3)
    report["audio"] = [round(t - t0, 3) for t in sink.arrivals]
    report["results"] = results
    report["channel"] = window.announcer.channel
    report["marker"] = FirstRun(folder).marker.exists()
    print("REPORT " + json.dumps(report, ensure_ascii=False, default=str), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
