"""Voice in for the window, built on the speech package (no speech logic of our own here).

- `WhisperTranscription(transcriber)`: the window's `transcriber(audio, lang) -> str`. `audio` is a WAV
  path (speech.asr.transcribe_file) or 16 kHz samples; a transcript whose status is REPEAT gives "".
  It is called on a worker thread; the Transcriber loads its model lazily behind its own lock. The
  window hands it the phone's names (`set_phone_names`), which go to Whisper as hotwords.
- `WavFileVoice(path)`: push-to-talk whose "recording" is a WAV file (tests, and `--listen-wav` demos on
  machines without a microphone).
- `MicrophoneVoice()`: speech.audio.Microphone + PushToTalk (HOLD): start() on press, stop() on release.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from assistant_core import languages as langs

log = logging.getLogger(__name__)


def registered_hotwords() -> dict[str, tuple[str, ...]]:
    """Words a phone request often holds that Whisper mishears without a hint ("Wi-Fi" -> "live"): each
    registered language's `hotwords` (assistant_core.languages), by its Whisper code."""
    return {lang.whisper: lang.hotwords for lang in langs.registry().values()}


HOTWORDS: dict[str, tuple[str, ...]] = registered_hotwords()  # at import; the transcription reads the registry


class WhisperTranscription:
    def __init__(self, transcriber: Any, hotwords: dict[str, tuple[str, ...]] | None = None):
        self.transcriber = transcriber
        self.hotwords = registered_hotwords() if hotwords is None else hotwords
        self.contacts: tuple[str, ...] = ()
        self.app_labels: tuple[str, ...] = ()
        self.last: Any = None

    def use_model(self, name: str) -> bool:
        """Listen with Whisper `name` (speech.recognisers: the caregiver's choice) from the next recording on;
        the new model loads lazily (and is fetched, with progress, from the settings dialog). True when it
        changed. A transcriber that is not faster-whisper (tests' stand-ins) is left alone."""
        settings = getattr(self.transcriber, "settings", None)
        if settings is None or getattr(settings, "model", name) == name:
            return False
        from dataclasses import replace

        from speech.asr import FasterWhisperTranscriber

        self.transcriber = FasterWhisperTranscriber(replace(settings, model=name), locator=self.transcriber.locator)
        return True

    def set_phone_names(self, *, contacts: Sequence[str] = (), apps: Sequence[str] = ()) -> None:
        """The phone's contact names and app labels, heard as hotwords from the next transcription on."""
        self.contacts, self.app_labels = tuple(contacts), tuple(apps)

    def hotwords_for(self, language: str | None) -> tuple[str, ...]:
        """speech.asr.hotword_list: the contact names first, then the few fixed command words, then the
        phone's app labels (many; they fill what is left of the prompt's budget)."""
        from speech.asr import hotword_list

        return hotword_list(self.contacts, self.hotwords.get(language or "en", ()), self.app_labels)

    def __call__(self, audio: Any, lang: str) -> str:
        from speech.asr import TranscriptStatus, transcribe_file

        registered = langs.registry().get(lang)  # "auto" (the wizard's first page): detect
        language = registered.whisper if registered is not None else None
        hotwords = self.hotwords_for(language)
        if isinstance(audio, str | Path):
            transcript = transcribe_file(self.transcriber, audio, language=language, hotwords=hotwords)
        else:
            samples = getattr(audio, "samples", audio)
            transcript = self.transcriber.transcribe(samples, language=language, hotwords=hotwords)
        self.last = transcript
        if transcript.status is TranscriptStatus.REPEAT:
            return ""
        return transcript.text


def whisper_transcription(model: str = "base") -> WhisperTranscription:
    """The real faster-whisper transcriber (model found by speech.models.ModelLocator, loaded on first use)."""
    from speech.asr import AsrSettings, FasterWhisperTranscriber

    return WhisperTranscription(FasterWhisperTranscriber(AsrSettings(model=model)))


class WavFileVoice:
    """Push-to-talk that 'records' a WAV file: `stop()` returns its path."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.starts = 0

    def start(self) -> None:
        self.starts += 1

    def stop(self) -> Path:
        return self.path


class MicrophoneVoice:
    """The default microphone with push-to-talk. `start()` raises the speech package's
    AudioDeviceError (a bilingual message) when there is no microphone."""

    def __init__(self) -> None:
        from speech.audio import Microphone, PttMode, PushToTalk

        self.mic = Microphone()
        self.ptt = PushToTalk(mode=PttMode.HOLD)
        self._stop = threading.Event()
        self._pump: threading.Thread | None = None

    def start(self) -> None:
        if self._pump is None:
            self.mic.open()
            self._pump = threading.Thread(target=self.ptt.pump, args=(self.mic.blocks, self._stop), daemon=True)
            self._pump.start()
        self.ptt.press()

    def stop(self) -> Any:
        self.ptt.release()
        utterance = self.ptt.wait_utterance(timeout=2.0)
        return None if utterance is None else utterance.samples

    def close(self) -> None:
        self._stop.set()
        self.mic.close()


# -- voice out ------------------------------------------------------------------------------------------


def make_speaker(sink: Any = None):
    """speech.Speaker with the product's voices (speech.tts.default_router: Kokoro for Chinese, piper for
    English, espeak-ng as the last fallback) on `sink`, or on the sound card when None.
    Raises the speech package's errors when there is no voice or no output device."""
    from speech.audio import SoundDeviceSink
    from speech.tts import Speaker, default_router

    return Speaker(default_router(), sink if sink is not None else SoundDeviceSink(22_050))


class EarconPlayer:
    """Plays speech.earcons on a sink without blocking the caller (one short-lived thread per earcon,
    a newer earcon interrupting an older one). `played` records the names, for review and tests."""

    def __init__(self, sink: Any):
        self.sink = sink
        self.played: list[str] = []
        self._stop = threading.Event()
        self._lock = threading.Lock()

    def play(self, cue: str) -> None:
        from speech.earcons import Earcon, play

        try:
            name = Earcon(cue)
        except ValueError:
            return
        with self._lock:
            self._stop.set()
            self._stop = stop = threading.Event()
        self.played.append(str(name))
        threading.Thread(target=play, args=(name, self.sink, stop), name="earcon", daemon=True).start()
