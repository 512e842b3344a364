"""Run inside Xvfb (QT_QPA_PLATFORM=xcb) by tests/test_app_xvfb_confirm.py: the real main window on the
simulated phone with the real loop and the scripted demonstration, driven ONLY by real X key events sent
through the X server (tests/app_xkeys.py) from a second thread, as a keyboard would. Prints one JSON
report line.

argv: LANG N_OFFSETS. Runs, in order:
1. "early": the request is spoken (Space held on the talk button; the transcriber is a stand-in that
   returns the request, speech recognition itself is tested elsewhere); a Y pressed as the dialog opens
   and Space held through its opening must not answer; Space held again after the grace period listens
   (and hears no answer); then N: not done, because you said no.
2. "yes": the same request, and a deliberate Y after the grace period: the call is placed.
3. "esc": N_OFFSETS runs with Escape pressed at timed offsets from the request, from before the
   announcement of the step that needs the confirmation to after the dialog has opened.
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
from app.confirm_dialog import GRACE_MS
from app.main_window import AppServices, MainWindow
from app.phone import open_simulated
from assistant_core.history import HistoryStore
from tests.app_xkeys import XKeyboard

REQUEST = {"en": "Call Sophie Tang", "zh": "给唐苏菲打电话"}


class Voice:
    def __init__(self) -> None:
        self.starts = 0

    def start(self) -> None:
        self.starts += 1

    def stop(self) -> str:
        return "utterance.wav"


class Ears:
    """The stand-in transcriber: hands out the queued transcripts in order ("" once they run out)."""

    def __init__(self) -> None:
        self.queue: list[str] = []
        self.heard = 0

    def __call__(self, audio: object, lang: str) -> str:
        self.heard += 1
        return self.queue.pop(0) if self.queue else ""


class Remote(QObject):
    """Calls from the key thread onto the GUI thread (queued signals)."""

    call = Signal(object)


class Record:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.said: list[tuple[float, str, str]] = []
        self.dialog_opened: list[float] = []
        self.started: list[float] = []
        self.finished: list[dict] = []


def main() -> int:
    lang, n_offsets = sys.argv[1], int(sys.argv[2])
    app = QApplication(sys.argv[:1])
    ears, voice = Ears(), Voice()
    services = AppServices(voice_input=voice, transcriber=ears, history=HistoryStore.in_memory(),
                           simulated_phone=lambda lg: open_simulated(lg))
    window = MainWindow(lang=lang, services=services, phone=open_simulated(lang), agent=AgentChoice(AgentKind.DEMO))
    window.show()
    rec = Record()
    remote = Remote()
    remote.call.connect(lambda fn: fn())

    window.announcer.announced.connect(lambda text, cue: rec.said.append((time.monotonic(), text, cue)))
    window.request_started.connect(lambda _t: rec.started.append(time.monotonic()))
    seen_dialog: list[object] = []

    def poll_dialog() -> None:
        d = window._dialog
        if d is not None and d.isVisible() and (not seen_dialog or seen_dialog[-1] is not d):
            seen_dialog.append(d)
            rec.dialog_opened.append(time.monotonic())

    poller = QTimer()
    poller.setInterval(2)
    poller.timeout.connect(poll_dialog)
    poller.start()

    def calls() -> int:
        world = window.phone.world
        return sum(1 for e in world.sensitive_events if "call" in str(getattr(e, "kind", e)).lower())

    def on_finished(result: object) -> None:
        from assistant_core.events import EpisodeResult

        last = window.conversation.entries[-1].text if window.conversation.entries else ""
        rec.finished.append({
            "t": time.monotonic(), "stopped": result is None or (isinstance(result, EpisodeResult)
                                                                   and str(result.outcome) == "stopped"),
            "result_text": last, "calls": calls(), "dialog_left_open": window._dialog is not None,
            "last_said": rec.said[-1][1] if rec.said else "",
        })

    window.run_finished.connect(on_finished)
    report: dict = {"lang": lang, "grace_ms": GRACE_MS}

    def gui(fn) -> None:
        remote.call.emit(fn)

    def wait(pred, timeout: float = 30.0) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if pred():
                return True
            time.sleep(0.005)
        return False

    def need(ok: bool, what: str) -> None:
        if not ok:
            raise AssertionError(f"{what}; said: {[t for _, t, _ in rec.said[-6:]]}")

    def is_step(text: str) -> bool:
        return text.startswith(("Step", "第"))

    def focus_talk() -> None:
        def do() -> None:
            window.raise_()
            window.activateWindow()
            window.talk_button.setFocus()
        gui(do)
        time.sleep(0.4)

    def keys_main() -> None:
        kb = XKeyboard(os.environ["DISPLAY"])
        try:
            assert wait(lambda: window.isVisible(), 20)
            time.sleep(1.0)
            # 1. spoken request; Y as the dialog opens and Space held through its opening; then N.
            focus_talk()
            ears.queue[:] = [REQUEST[lang]]
            n_finished = len(rec.finished)
            kb.hold("space", 0.3)
            report["request_started"] = wait(lambda: len(rec.started) >= 1, 30)
            opened = wait(lambda: len(rec.dialog_opened) >= 1, 60)
            report["early_dialog_opened"] = opened
            kb.tap("y")  # a key landing as the dialog opens
            kb.press("space")  # and Space held through the opening: the push-to-talk key
            time.sleep(1.5)
            kb.release("space")
            time.sleep(0.3)
            report["early_answered"] = window._dialog is None or window._dialog.answer is not None
            report["early_calls"] = calls()
            ears.queue[:] = ["hmm"]  # Space held after the grace period: listening, not an answer
            kb.hold("space", 0.5)
            wait(lambda: ears.heard >= 2, 10)
            time.sleep(0.5)
            report["space_listened"] = ears.heard >= 2
            report["space_answered"] = window._dialog is None or window._dialog.answer is not None
            kb.tap("n")
            wait(lambda: len(rec.finished) > n_finished, 30)
            report["early"] = rec.finished[n_finished] if len(rec.finished) > n_finished else None
            # 2. the deliberate Y after the grace period
            time.sleep(0.5)
            focus_talk()
            ears.queue[:] = [REQUEST[lang]]
            n_finished, n_open, n_start = len(rec.finished), len(rec.dialog_opened), len(rec.started)
            kb.hold("space", 0.3)
            need(wait(lambda: len(rec.started) > n_start, 30), "yes run: the spoken request did not start")
            need(wait(lambda: len(rec.dialog_opened) > n_open, 60), "yes run: no dialog")
            time.sleep(GRACE_MS / 1000 + 0.4)
            kb.tap("y")
            wait(lambda: len(rec.finished) > n_finished, 30)
            report["yes"] = rec.finished[n_finished] if len(rec.finished) > n_finished else None
            # Calibration: two typed runs answered N, warm, to time the step announcement and the dialog.
            timelines = []
            for _ in range(2):
                time.sleep(0.3)
                focus_talk()
                n_finished, n_open, n_start = len(rec.finished), len(rec.dialog_opened), len(rec.started)
                gui(lambda: window.submit_request(REQUEST[lang]))
                need(wait(lambda: len(rec.dialog_opened) > n_open, 60), "calibration run: no dialog")
                t0, t_open = rec.started[n_start], rec.dialog_opened[-1]
                time.sleep(GRACE_MS / 1000 + 0.2)
                kb.tap("n")
                wait(lambda: len(rec.finished) > n_finished, 30)
                steps = [t for t, text, _cue in rec.said if t0 <= t <= t_open and is_step(text)]
                timelines.append(((steps[-1] if steps else t0) - t0, t_open - t0))
            t_step, t_dialog = min(t for t, _ in timelines), max(t for _, t in timelines)
            t_first_dialog = min(t for _, t in timelines)
            report["timeline"] = {"step_announced_s": round(t_step, 3), "dialog_opened_s": round(t_dialog, 3)}
            # 3. Escape at timed offsets from before the step announcement to after the dialog opened:
            # half of them close around the two moments (up to the earliest opening seen, so a busy machine
            # that opens it sooner in a later run still leaves most of them before it), the rest spread to
            # past the grace period.
            dense = n_offsets // 2
            lo, mid, hi = max(0.0, t_step - 0.25), t_first_dialog + 0.1, t_dialog + GRACE_MS / 1000 + 0.5
            offsets = [lo + (mid - lo) * i / max(1, dense - 1) for i in range(dense)]
            offsets += [mid + (hi - mid) * (i + 1) / (n_offsets - dense) for i in range(n_offsets - dense)]
            runs = []
            for offset in offsets:
                need(wait(lambda: not window.is_running(), 10), "the previous run did not end")
                time.sleep(0.3)
                focus_talk()
                n_finished, n_start = len(rec.finished), len(rec.started)
                gui(lambda: window.submit_request(REQUEST[lang]))
                need(wait(lambda: len(rec.started) > n_start, 10), f"escape run {offset:.3f}: did not start")
                start = rec.started[n_start]
                time.sleep(max(0.0, start + offset - time.monotonic()))
                pressed_at = time.monotonic() - start
                kb.tap("Escape")
                done = wait(lambda: len(rec.finished) > n_finished, 30)
                idle = wait(lambda: not window.is_running(), 10)
                out = dict(rec.finished[n_finished]) if done else {"stopped": False, "timeout": True}
                out.update(offset_s=round(offset, 3), pressed_s=round(pressed_at, 3), idle_after_s=(
                               round(time.monotonic() - start - pressed_at, 3) if idle else None),
                           dialog_seen=any(t >= start for t in rec.dialog_opened),
                           dialog_before_esc=any(start <= t <= start + pressed_at for t in rec.dialog_opened),
                           step_said_before_esc=any(start <= t <= start + pressed_at and is_step(text)
                                                    for t, text, _cue in rec.said))
                runs.append(out)
            report["esc_runs"] = runs
        except Exception as exc:  # reported, so the test shows what went wrong
            report["error"] = repr(exc)
        finally:
            kb.close()
            gui(app.quit)

    threading.Thread(target=keys_main, daemon=True).start()
    QTimer.singleShot(600_000, app.quit)
    app.exec()
    window.shutdown()
    print(json.dumps(report, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
