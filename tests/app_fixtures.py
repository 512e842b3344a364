"""Shared set-up for the desktop-window tests: a MainWindow on PhoneWorld-lite with the real loop,
the oracle as the scripted policy, an in-memory history store, and (optionally) the real piper voice
writing into a MemorySink (there is no sound card here: the sink is the edge)."""

from __future__ import annotations

import time

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from app.agent import AgentChoice, AgentKind
from app.main_window import AppServices, MainWindow
from app.phone import open_simulated
from assistant_core.history import HistoryStore


class Ticker:
    """Counts QTimer ticks on the GUI thread: if the window froze, the count would stall."""

    def __init__(self, interval_ms: int = 20):
        self.count = 0
        self.timer = QTimer()
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self._tick)
        self.gaps: list[float] = []
        self._last = time.monotonic()

    def _tick(self) -> None:
        now = time.monotonic()
        self.gaps.append(now - self._last)
        self._last = now
        self.count += 1

    def start(self) -> Ticker:
        self._last = time.monotonic()
        self.timer.start()
        return self

    def stop(self) -> None:
        self.timer.stop()


def make_window(qtbot, *, lang: str = "en", seed: int = 0, services: AppServices | None = None,
                history: HistoryStore | None = None, task_id: str = "") -> MainWindow:
    history = history or HistoryStore.in_memory()
    base = services or AppServices()
    services = AppServices(
        speaker=base.speaker, earcons=base.earcons, voice_input=base.voice_input, transcriber=base.transcriber,
        episode_starter=base.episode_starter, history=history,
        simulated_phone=lambda lg: open_simulated(lg, seed=seed), confirm_timeout_s=base.confirm_timeout_s,
    )
    phone = open_simulated(lang, seed=seed, task_id=task_id)
    window = MainWindow(lang=lang, services=services, phone=phone, agent=AgentChoice(AgentKind.DEMO))
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    return window


def wait_for(qtbot, predicate, timeout_ms: int = 30_000) -> None:
    qtbot.waitUntil(predicate, timeout=timeout_ms)


def process(ms: int = 50) -> None:
    end = time.monotonic() + ms / 1000
    while time.monotonic() < end:
        QApplication.processEvents()
        time.sleep(0.005)
