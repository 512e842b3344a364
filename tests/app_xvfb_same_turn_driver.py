"""Run inside Xvfb (QT_QPA_PLATFORM=xcb) by tests/test_app_xvfb_same_turn.py: the window on the simulated
phone with its history in DB, the talk key (Space) held with real X key events (XTEST, tests/app_xkeys.py)
while a stand-in recogniser hears each request. Prints one JSON report line: for each request, the loop
events the window saw (kinds, in order), how the assistant routed it, the ending shown, and the run id.

argv: LANG DB REQUEST [REQUEST ...]
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QApplication

from app.agent import AgentChoice, AgentKind
from app.main_window import AppServices, MainWindow
from app.phone import open_simulated
from assistant_core.history import HistoryStore
from tests.app_xkeys import XKeyboard


class Voice:
    def start(self) -> None:
        pass

    def stop(self) -> str:
        return "utterance.wav"


class Ears:
    def __init__(self) -> None:
        self.queue: list[str] = []

    def __call__(self, audio: object, lang: str) -> str:
        return self.queue.pop(0) if self.queue else ""


class Speaker:
    """The voice's queue, as the window fills it."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []
        self.last = ""

    def say(self, text: str, lang: str | None = None) -> None:
        self.calls.append(["say", text])
        self.last = text

    def stop(self) -> None:
        self.calls.append(["stop", ""])

    def repeat_last(self) -> None:
        self.calls.append(["say", self.last])

    def set_rate(self, rate: float) -> None:
        pass


class Remote(QObject):
    call = Signal(object)


def main() -> int:
    lang, db, questions = sys.argv[1], sys.argv[2], sys.argv[3:]
    app = QApplication(sys.argv[:1])
    ears, speaker = Ears(), Speaker()
    services = AppServices(speaker=speaker, voice_input=Voice(), transcriber=ears, history=HistoryStore(db))
    window = MainWindow(lang=lang, services=services, phone=open_simulated(lang), agent=AgentChoice(AgentKind.DEMO))
    window.show()
    remote = Remote()
    remote.call.connect(lambda fn: fn())
    finished: list[float] = []
    window.run_finished.connect(lambda _r: finished.append(time.monotonic()))
    report: dict = {"lang": lang, "runs": []}

    def wait(pred, timeout: float = 30.0) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if pred():
                return True
            time.sleep(0.01)
        return False

    def focus_talk() -> None:
        def do() -> None:
            window.raise_()
            window.activateWindow()
            window.talk_button.setFocus()
        remote.call.emit(do)
        time.sleep(0.4)

    def keys_main() -> None:
        kb = XKeyboard(os.environ["DISPLAY"])
        try:
            assert wait(window.isVisible, 20)
            time.sleep(1.0)
            for question in questions:
                focus_talk()
                ears.queue[:] = [question]
                done, turns = len(finished), len(window.assistant.turns)
                before = len(window.events_seen)  # a short run: well under the window's EVENTS_KEPT
                kb.hold("space", 0.3)
                if not wait(lambda done=done: len(finished) > done, 60):
                    raise AssertionError(f"no ending for {question!r}")
                time.sleep(0.5)
                result = window.last_result
                run = {"question": question, "ending": window.conversation.entries[-1].text,
                       "events": [e.payload()["kind"] for e in list(window.events_seen)[before:] if hasattr(e, "payload")],
                       "routes": [str(t.route) for t in list(window.assistant.turns)[turns:]],
                       "run_id": getattr(result, "run_id", None)}
                report["runs"].append(run)
        except Exception as exc:  # reported, so the test shows what went wrong
            report["error"] = repr(exc)
        finally:
            kb.close()
            remote.call.emit(app.quit)

    threading.Thread(target=keys_main, daemon=True).start()
    QTimer.singleShot(300_000, app.quit)
    app.exec()
    window.shutdown()
    print(json.dumps(report, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
