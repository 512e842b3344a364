"""What every voice engine returns: one synthesised sentence (`SpeechChunk`), and the speaking-rate bounds.

It sits below the engines (`speech.tts`: piper, espeak-ng, the router and the speaker; `speech.kokoro`) so
that Kokoro does not import the module that chooses it (no import cycle; tests/test_import_cycles.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from assistant_core.i18n import Lang

MIN_RATE, MAX_RATE = 0.5, 2.0


@dataclass(frozen=True)
class SpeechChunk:
    """One synthesised sentence."""

    samples: np.ndarray
    sample_rate: int
    text: str
    lang: Lang
    voice: str
