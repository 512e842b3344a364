"""Earcons: short, soft sounds that tell a user who cannot see the screen what state the assistant is in.

All generated in code (numpy), so nothing ships and nothing can be missing. Each is a few sine partials
with a smooth attack and decay (no clicks), peak level 0.35 (quieter than speech), under 0.6 s:

- LISTENING: a rising two-note chime (the microphone is open, speak now)
- HEARD: a single short high blip (got it; the microphone is closed)
- WORKING: a very soft low tick, meant to repeat every `WORKING_PERIOD_S` during long steps
- CONFIRM: two equal mid notes, a question ("please answer yes or no")
- SUCCESS: a rising major arpeggio of three notes
- ERROR: a falling pair of low notes (never a buzzer)

`earcon_audio(name, sample_rate)` returns float32 samples; `play(name, sink)` writes them to an AudioSink;
`WorkingTicker` repeats the WORKING tick on a thread until stopped.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from speech.audio import AudioSink, play_chunked

PEAK = 0.35
WORKING_PERIOD_S = 1.5


class Earcon(StrEnum):
    LISTENING = "listening"
    HEARD = "heard"
    WORKING = "working"
    CONFIRM = "confirm"
    SUCCESS = "success"
    ERROR = "error"


@dataclass(frozen=True)
class Note:
    freq: float
    start_s: float
    dur_s: float
    level: float = 1.0


NOTES: dict[Earcon, tuple[Note, ...]] = {
    Earcon.LISTENING: (Note(660.0, 0.0, 0.12), Note(880.0, 0.11, 0.16)),
    Earcon.HEARD: (Note(1046.5, 0.0, 0.09),),
    Earcon.WORKING: (Note(440.0, 0.0, 0.04, 0.45),),
    Earcon.CONFIRM: (Note(784.0, 0.0, 0.13), Note(784.0, 0.2, 0.13)),
    Earcon.SUCCESS: (Note(523.25, 0.0, 0.11), Note(659.25, 0.1, 0.11), Note(783.99, 0.2, 0.22)),
    Earcon.ERROR: (Note(392.0, 0.0, 0.16), Note(311.13, 0.16, 0.28)),
}


def _tone(freq: float, dur_s: float, sample_rate: int) -> np.ndarray:
    n = max(1, int(dur_s * sample_rate))
    t = np.arange(n) / sample_rate
    # A soft timbre: fundamental plus weak 2nd and 3rd partials.
    wave = np.sin(2 * np.pi * freq * t) + 0.25 * np.sin(4 * np.pi * freq * t) + 0.08 * np.sin(6 * np.pi * freq * t)
    attack = min(n, max(1, int(0.008 * sample_rate)))
    envelope = np.exp(-3.5 * t / dur_s)  # a bell-like decay
    envelope[:attack] *= np.linspace(0.0, 1.0, attack)
    release = min(n, max(1, int(0.02 * sample_rate)))
    envelope[-release:] *= np.linspace(1.0, 0.0, release)
    return (wave * envelope).astype(np.float64)


def earcon_audio(name: str | Earcon, sample_rate: int = 22_050) -> np.ndarray:
    """The earcon's samples (float32 mono, peak PEAK times the note level). Raises ValueError for an unknown
    name."""
    earcon = Earcon(name)
    notes = NOTES[earcon]
    total = max(n.start_s + n.dur_s for n in notes)
    out = np.zeros(int(total * sample_rate) + 1, np.float64)
    for note in notes:
        tone = _tone(note.freq, note.dur_s, sample_rate)
        start = int(note.start_s * sample_rate)
        out[start : start + len(tone)] += tone * note.level
    peak = max(n.level for n in notes)
    out *= PEAK * peak / (np.max(np.abs(out)) or 1.0)
    return out.astype(np.float32)


def play(name: str | Earcon, sink: AudioSink, stop: threading.Event | None = None) -> bool:
    """Play an earcon on `sink` (blocking, in short blocks; `stop` interrupts). True when played fully."""
    return play_chunked(sink, earcon_audio(name, sink.sample_rate), stop or threading.Event(), block_s=0.02)


class WorkingTicker:
    """Plays the WORKING tick every `period_s` on a background thread until `stop()`."""

    def __init__(self, sink: AudioSink, *, period_s: float = WORKING_PERIOD_S):
        self.sink = sink
        self.period_s = period_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.ticks = 0

    def start(self) -> WorkingTicker:
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="earcon-working", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            if play(Earcon.WORKING, self.sink, self._stop):
                self.ticks += 1
            self._stop.wait(self.period_s)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)

    def __enter__(self) -> WorkingTicker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
