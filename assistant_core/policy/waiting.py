"""A short "still thinking" cue while the user waits for a slow model step (Qt-free; the app ticks it).

    cue = ThinkingCue(play=lambda text: announcer.announce(text.get(lang), Cue.WORKING, queued=True),
                      question_open=lambda: dialog is not None)
    cue.start()          # a model step began
    cue.tick()           # call often (a 1 s timer); plays at most once per period, never before the delay
    cue.stop()           # the step ended (an action, a question, an error)

Rules (issue 25): nothing during the first `first_after_s` (3 s) of a step, then at most one cue every
`period_s` (5 s); never while a question is open (`question_open()` is true: the cue is skipped, not
queued, so it cannot land on top of the question), and never after `stop()`. Where the cue goes (our own
voice, the screen reader, or both) is the caller's `play`, which the app routes through its announcer and
so through the user's chosen voice channel. The clock is injected, so tests run on a fake one.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from assistant_core.i18n import Text

STILL_THINKING = Text("Still thinking.")
FIRST_AFTER_S = 3.0
PERIOD_S = 5.0


class ThinkingCue:
    def __init__(self, play: Callable[[Text], object], *, question_open: Callable[[], bool] = lambda: False,
                 clock: Callable[[], float] = time.monotonic, first_after_s: float = FIRST_AFTER_S,
                 period_s: float = PERIOD_S, text: Text = STILL_THINKING):
        if first_after_s < 0 or period_s <= 0:
            raise ValueError("first_after_s must be >= 0 and period_s > 0")
        self._play = play
        self._question_open = question_open
        self._clock = clock
        self.first_after_s = first_after_s
        self.period_s = period_s
        self.text = text
        self._lock = threading.Lock()
        self._started: float | None = None
        self._last: float | None = None
        self.played = 0

    @property
    def active(self) -> bool:
        return self._started is not None

    def start(self) -> None:
        """A step began: the delay counts from now (a running cue restarts)."""
        with self._lock:
            self._started = self._clock()
            self._last = None

    def stop(self) -> None:
        with self._lock:
            self._started = None
            self._last = None

    def tick(self) -> bool:
        """Play the cue if it is due; True when it played."""
        with self._lock:
            if self._started is None:
                return False
            now = self._clock()
            if now - self._started < self.first_after_s:
                return False
            if self._last is not None and now - self._last < self.period_s:
                return False
            try:
                if self._question_open():
                    return False
            except Exception:  # an unknown question state counts as "a question may be open": stay quiet
                return False
            self._last = now
            self.played += 1
        self._play(self.text)  # outside the lock: the player may take a moment
        return True


__all__ = ["FIRST_AFTER_S", "PERIOD_S", "STILL_THINKING", "ThinkingCue"]
