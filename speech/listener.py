"""`Listener`: the microphone, push-to-talk and a Transcriber put together, for the desktop app.

    listener = Listener(FasterWhisperTranscriber(AsrSettings(model="base")), mode=PttMode.HOLD)
    listener.open()                 # AudioDeviceError(no_microphone) when there is none
    listener.press(); ...; listener.release()
    heard = listener.next_transcript(timeout=10)   # a Heard, or None
    listener.close()

Without a microphone, `transcribe_file(path)` and `transcribe_audio(samples, rate)` give the same results
from recorded audio. Transcription runs on the caller's thread: call `next_transcript` from a worker.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from speech.asr import Transcriber, Transcript
from speech.audio import ASR_RATE, Microphone, PttMode, PushToTalk, WavFileSource, read_wav, resample, to_mono

# Spoken words that mean "stop talking" (barge-in): the app listens while the Speaker talks and calls
# speaker.stop() when a short transcript is one of these.
STOP_WORDS: frozenset[str] = frozenset(
    {"stop", "stop it", "stop talking", "be quiet", "quiet", "enough", "cancel", "shut up",
     "停", "停止", "停下", "别说了", "不要说了", "安静", "闭嘴", "取消", "够了"}
)


def is_stop_command(transcript: Transcript) -> bool:
    """True when the transcript is just a request to stop (any case or punctuation, at most 3 words)."""
    from speech.asr import normalize

    text = normalize(transcript.text)
    if not text or len(text.split()) > 3:
        return False
    return text in STOP_WORDS or text.replace(" ", "") in STOP_WORDS


@dataclass(frozen=True)
class Heard:
    """A transcript plus how long the user waited: `latency_s` from the end of capture (key released or
    trailing silence detected) to the text being ready."""

    transcript: Transcript
    ended_by: str
    latency_s: float


class Listener:
    def __init__(
        self,
        transcriber: Transcriber,
        *,
        mode: PttMode = PttMode.HOLD,
        trailing_silence_s: float = 0.7,
        language: str | None = None,
        hotwords: Sequence[str] = (),
        microphone_factory: Callable[[], Microphone | WavFileSource] = Microphone,
    ):
        self.transcriber = transcriber
        self.language = language
        self.hotwords = tuple(hotwords)
        self.ptt = PushToTalk(mode=mode, trailing_silence_s=trailing_silence_s)
        self._microphone_factory = microphone_factory
        self._microphone: Microphone | WavFileSource | None = None
        self._pump_stop = threading.Event()
        self._pump: threading.Thread | None = None

    def open(self) -> None:
        """Open the microphone and start moving its blocks into push-to-talk."""
        microphone = self._microphone_factory()
        microphone.open()
        self._microphone = microphone
        self._pump_stop.clear()
        self._pump = threading.Thread(
            target=self.ptt.pump, args=(microphone.blocks, self._pump_stop), name="listener-pump", daemon=True
        )
        self._pump.start()

    def close(self) -> None:
        self._pump_stop.set()
        if self._pump is not None:
            self._pump.join(timeout=2)
        if self._microphone is not None:
            self._microphone.close()
            self._microphone = None

    def press(self) -> None:
        self.ptt.press()

    def release(self) -> None:
        self.ptt.release()

    def next_transcript(self, timeout: float | None = None) -> Heard | None:
        utterance = self.ptt.wait_utterance(timeout)
        if utterance is None:
            return None
        transcript = self.transcriber.transcribe(utterance.samples, language=self.language, hotwords=self.hotwords)
        return Heard(transcript, utterance.ended_by, time.monotonic() - utterance.ended_at)

    def transcribe_audio(self, samples: np.ndarray, sample_rate: int = ASR_RATE) -> Transcript:
        audio = resample(to_mono(np.asarray(samples, np.float32)), sample_rate, ASR_RATE)
        return self.transcriber.transcribe(audio, language=self.language, hotwords=self.hotwords)

    def transcribe_file(self, path: str | Path) -> Transcript:
        loaded = read_wav(path)
        return self.transcriber.transcribe(loaded.samples, language=self.language, hotwords=self.hotwords)
