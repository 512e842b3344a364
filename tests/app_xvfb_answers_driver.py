"""Run inside Xvfb (QT_QPA_PLATFORM=xcb) by tests/test_app_xvfb_answers.py: the window on the simulated
phone, the talk key (Space) held with real X key events (XTEST, tests/app_xkeys.py) while a stand-in
recogniser hears each question, then a real F3. The voice's queue (say / stop, in order) is recorded.
Prints one JSON report line: for each question, what was said from the request on, and after F3.

argv: LANG QUESTION [QUESTION ...]
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
    lang, questions = sys.argv[1], sys.argv[2:]
    app = QApplication(sys.argv[:1])
    ears, speaker = Ears(), Speaker()
    services = AppServices(speaker=speaker, voice_input=Voice(), transcriber=ears, history=HistoryStore.in_memory())
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
                start, done = len(speaker.calls), len(finished)
                kb.hold("space", 0.3)
                if not wait(lambda done=done: len(finished) > done, 60):
                    raise AssertionError(f"no ending for {question!r}")
                time.sleep(0.5)
                run = {"question": question, "said": speaker.calls[start:],
                       "result": window.conversation.entries[-1].text}
                focus_talk()
                before = len(speaker.calls)
                kb.tap("F3")
                wait(lambda before=before: len(speaker.calls) > before, 5)
                time.sleep(0.3)
                run["f3"] = speaker.calls[before:]
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
