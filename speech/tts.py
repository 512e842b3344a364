"""Speaking: piper voices per language, an espeak-ng fallback, and the `Speaker` that queues, streams and
stops speech.

- `split_sentences(text)` cuts English and Chinese text into sentences (".!?" followed by a space, and
  "。！？；" anywhere), so speech starts after the first sentence is synthesised.
- `PiperEngine` speaks with piper (en: en_US-joe-medium from its wheel; zh: zh_CN-huayan-medium once it has
  been downloaded into the model cache). `speech.kokoro.KokoroEngine` speaks Mandarin with Kokoro-82M (a
  male and a female voice). `EspeakEngine` speaks with the espeak-ng program (Chinese through pinyin with
  tone numbers, the only input espeak-ng 1.51 reads correctly): the last fallback.
- `VoiceRouter` runs every sentence through the text front end (`speech.textnorm.normalize`: phone numbers
  and codes digit by digit, money, times, dates as said) and picks, per sentence, the voice for its
  language: the preferred engine (Kokoro for Chinese), then piper, then espeak-ng. It never goes silent:
  when English has no voice it says so first in the language it *can* speak, then reads the text with
  espeak-ng if it can, else with the other voice. A Chinese sentence never goes to an English voice: with
  no Chinese voice installed the notice ("没有安装中文语音…") and the text are read by espeak-ng's Mandarin.
  `default_router()` builds the product's router.
- `Speaker` plays utterances one after another from a queue on its own threads (synthesis of the next
  sentence overlaps playback of the current one), in blocks of 50 ms to an `AudioSink`, so `stop()` ends
  playback within one block plus the sink's own abort (measured in tests: well under 200 ms).
  `repeat_last()`, `rate` (piper length_scale = 1 / rate) and `volume` (applied per block, so a change is
  heard at once).
"""

from __future__ import annotations

import logging
import queue
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np

from assistant_core import languages as langs
from assistant_core.i18n import Lang, normalize_lang
from speech import textnorm
from speech.audio import AudioSink, play_chunked, resample
from speech.chunk import MAX_RATE, MIN_RATE, SpeechChunk  # re-exported: engines share them
from speech.messages import MESSAGES, ModelMissingError, SpeechError, VoiceUnavailableError
from speech.models import ModelLocator

log = logging.getLogger(__name__)



def default_voices() -> dict[str, str]:
    """Each registered language's piper voice (assistant_core.languages): {"en": "en_US-joe-medium", ...}."""
    return {code: lang.piper_voice for code, lang in langs.registry().items() if lang.piper_voice}


def espeak_voices() -> dict[str, str]:
    """Each registered language's espeak-ng voice: {"en": "en-us", "zh": "cmn-latn-pinyin", ...}."""
    return {code: lang.espeak_voice for code, lang in langs.registry().items() if lang.espeak_voice}

_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_ABBREVIATIONS = ("mr.", "mrs.", "ms.", "dr.", "st.", "e.g.", "i.e.", "etc.", "vs.", "no.", "approx.")


def text_language(text: str, default: Lang = "en") -> Lang:
    """'zh' when the text has Chinese characters, else `default` (for text without letters) or 'en'."""
    if _HAN.search(text):
        return "zh"
    return "en" if re.search(r"[A-Za-z]", text) else default


def split_sentences(text: str) -> list[str]:
    """Split into sentences for streaming. Chinese ends at 。！？；… (and full-width !?), English at .!? when
    followed by whitespace (so '3.5' and 'e.g.' stay whole), and a newline always ends a sentence.
    Empty pieces are dropped; punctuation stays with its sentence."""
    out: list[str] = []
    for line in re.split(r"[\r\n]+", text):
        buf = ""
        i = 0
        while i < len(line):
            ch = line[i]
            buf += ch
            if ch in "。！？；!?…" and (ch not in "!?" or i + 1 == len(line) or line[i + 1].isspace() or _HAN.match(line[i + 1] or "")):
                while i + 1 < len(line) and line[i + 1] in "。！？!?…”\"'）)":
                    i += 1
                    buf += line[i]
                out.append(buf)
                buf = ""
            elif ch == "." and (i + 1 == len(line) or line[i + 1].isspace()):
                words = buf.strip().lower().split()
                if not (words and words[-1] in _ABBREVIATIONS):
                    out.append(buf)
                    buf = ""
            i += 1
        out.append(buf)
    return [s.strip() for s in out if s.strip() and re.search(r"\w", s)]


_CLAUSE = re.compile(r"(?<=[,，、:：])\s*")


def first_clause_split(sentences: list[str], *, min_words: int = 7, min_chars: int = 10) -> list[str]:
    """Split a long first sentence at its first comma or colon, so the first audio is ready sooner (piper
    synthesises a whole sentence at once; time to first audio grows with its length)."""
    if not sentences:
        return sentences
    first = sentences[0]
    long_enough = len(first.split()) >= min_words or len(_HAN.findall(first)) >= min_chars
    parts = [p for p in _CLAUSE.split(first, maxsplit=1) if p.strip()] if long_enough else [first]
    return [*parts, *sentences[1:]]


class TtsEngine(Protocol):
    """Synthesises one sentence at a time."""

    def available(self, lang: Lang) -> bool: ...

    def synthesize(self, sentence: str, lang: Lang, *, rate: float = 1.0) -> SpeechChunk: ...


# ----- piper ----------------------------------------------------------------------------------------------------
class PiperEngine:
    """piper voices, one per language, each loaded lazily once behind a lock."""

    def __init__(
        self,
        *,
        locator: ModelLocator | None = None,
        voices: dict[str, str] | None = None,
        use_cuda: bool = False,
    ):
        self.locator = locator or ModelLocator()
        self.voices = dict(default_voices() if voices is None else voices)
        self.use_cuda = use_cuda
        self._loaded: dict[str, object] = {}
        self._missing: dict[str, ModelMissingError] = {}
        self._lock = threading.Lock()

    def _voice(self, lang: Lang):
        name = self.voices.get(lang)
        if name is None:
            raise ModelMissingError(MESSAGES["voice_unavailable"].format(reason=f"no voice set for {lang}"))
        with self._lock:
            if name in self._loaded:
                return self._loaded[name]
            if name in self._missing:
                raise self._missing[name]
            try:
                files = self.locator.piper_voice(name)
            except ModelMissingError as error:
                self._missing[name] = error
                raise
            from piper import PiperVoice

            start = time.perf_counter()
            # download_dir: where piper keeps run-time resources (g2pW for pinyin voices), in our cache.
            voice = PiperVoice.load(
                files.model, files.config, use_cuda=self.use_cuda, download_dir=self.locator.cache_dir / "piper"
            )
            log.info("loaded piper voice %s in %.2f s", name, time.perf_counter() - start)
            self._loaded[name] = voice
            return voice

    def available(self, lang: Lang) -> bool:
        try:
            self._voice(lang)
        except ModelMissingError:
            return False
        return True

    def load(self, lang: Lang = "en") -> None:
        self._voice(lang)

    def synthesize(self, sentence: str, lang: Lang, *, rate: float = 1.0) -> SpeechChunk:
        from piper import SynthesisConfig

        voice = self._voice(lang)
        config = SynthesisConfig(length_scale=1.0 / max(MIN_RATE, min(MAX_RATE, rate)))
        parts = [chunk.audio_float_array for chunk in voice.synthesize(sentence, syn_config=config)]
        samples = np.concatenate(parts) if parts else np.zeros(0, np.float32)
        return SpeechChunk(samples.astype(np.float32), voice.config.sample_rate, sentence, lang, self.voices[lang])


# ----- espeak-ng ------------------------------------------------------------------------------------------------
def to_pinyin(text: str) -> str:
    """Chinese characters -> pinyin with tone numbers ('打开设置' -> 'da3 kai1 she4 zhi4'); other text kept."""
    from pypinyin import Style, lazy_pinyin

    return " ".join(lazy_pinyin(text, style=Style.TONE3, neutral_tone_with_five=True))


class EspeakEngine:
    """The espeak-ng program (robotic, but always there once installed): each language with its registered
    `espeak_voice` (English with `en-us`, Chinese from pinyin with `cmn-latn-pinyin`)."""

    def __init__(self, *, binary: str = "espeak-ng", words_per_minute: int = 150,
                 voices: dict[str, str] | None = None):
        self.binary = binary
        self.words_per_minute = words_per_minute
        self.VOICES = dict(espeak_voices() if voices is None else voices)

    def available(self, lang: Lang) -> bool:
        if lang not in self.VOICES or shutil.which(self.binary) is None:
            return False
        if lang == "zh":
            try:
                import pypinyin  # noqa: F401
            except ImportError:
                return False
        return True

    def synthesize(self, sentence: str, lang: Lang, *, rate: float = 1.0) -> SpeechChunk:
        from speech.audio import read_wav

        text = to_pinyin(sentence) if lang == "zh" else sentence
        speed = str(int(self.words_per_minute * max(MIN_RATE, min(MAX_RATE, rate)) * (0.85 if lang == "zh" else 1)))
        try:
            done = subprocess.run(
                [self.binary, "-v", self.VOICES[lang], "-s", speed, "--stdout", text],
                capture_output=True, check=True, timeout=30,
            )
        except (OSError, subprocess.SubprocessError) as error:
            raise VoiceUnavailableError(MESSAGES["voice_unavailable"].format(reason=error)) from error
        import tempfile

        with tempfile.NamedTemporaryFile(suffix=".wav") as tmp:
            Path(tmp.name).write_bytes(done.stdout)
            loaded = read_wav(tmp.name, target_rate=22_050)
        return SpeechChunk(loaded.samples, loaded.sample_rate, sentence, lang, f"espeak-ng:{self.VOICES[lang]}")


# ----- choosing a voice --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Plan:
    """What to synthesise for one sentence: the text, the language to say it in, and the engine."""

    text: str
    lang: Lang
    engine: TtsEngine


class VoiceRouter:
    """Routes each sentence to a voice for its language, never to silence (see the module docstring).

    `preferred` maps a language to the engine tried first for it (Kokoro for Chinese); then `piper`; then
    the `fallback` (espeak-ng). A Chinese sentence is never handed to an English voice, and a Chinese user
    is never told in English that the Chinese voice is missing."""

    def __init__(self, piper: TtsEngine, fallback: TtsEngine | None = None, *,
                 preferred: dict[str, TtsEngine] | None = None):
        self.piper = piper
        self.fallback = fallback
        self.preferred: dict[str, TtsEngine] = dict(preferred or {})
        self._warned: set[str] = set()
        self._lock = threading.Lock()

    def set_voice(self, lang: str, voice: str | None) -> None:
        """Choose the voice for `lang` on the engine that speaks it (e.g. 'zh', 'male'/'female')."""
        engine = self.preferred.get(normalize_lang(lang))
        if engine is not None and hasattr(engine, "set_voice"):
            engine.set_voice(voice)

    def warm_up(self, lang: str) -> threading.Thread:
        """Load the voice for `lang` on a background thread (Kokoro's first load joins and checks its model
        and builds the jieba dictionary: seconds), so the first sentence is not kept waiting."""
        thread = threading.Thread(target=self.engine_for, args=(normalize_lang(lang),), name="voice-warm-up",
                                  daemon=True)
        thread.start()
        return thread

    def engine_for(self, lang: Lang) -> TtsEngine | None:
        """The neural voice that speaks `lang` (preferred first, then piper), or None."""
        preferred = self.preferred.get(lang)
        if preferred is not None and preferred.available(lang):
            return preferred
        return self.piper if self.piper.available(lang) else None

    def plan(self, text: str, lang: Lang | None = None) -> list[Plan]:
        plans: list[Plan] = []
        for sentence in first_clause_split(split_sentences(text)):
            sentence_lang = text_language(sentence, default=normalize_lang(lang)) if lang is None else normalize_lang(lang)
            if sentence_lang == "zh" and not _HAN.search(sentence):
                sentence_lang = text_language(sentence)
            # Every engine hears the same front end: numbers, codes, money, times and dates as said.
            plans.extend(self._plan_sentence(textnorm.normalize(sentence, sentence_lang), sentence_lang))
        return plans

    def _plan_sentence(self, sentence: str, lang: Lang) -> list[Plan]:
        engine = self.engine_for(lang)
        if engine is not None:
            return [Plan(sentence, lang, engine)]
        with self._lock:
            first_time = lang not in self._warned
            self._warned.add(lang)
        if lang == "zh":
            return self._chinese_without_neural_voice(sentence, first_time)
        other: Lang = "zh" if lang == "en" else "en"  # the notice in a language that has a voice
        other_engine = self.engine_for(other)
        plans: list[Plan] = []
        if first_time:
            name = MESSAGES.get(f"lang_{lang}", other) if f"lang_{lang}" in MESSAGES else langs.get(lang).label(other)
            notice = MESSAGES.get("voice_missing", other, language=name)
            if other_engine is not None:
                plans.append(Plan(notice, other, other_engine))
            elif self.fallback is not None and self.fallback.available(other):
                plans.append(Plan(notice, other, self.fallback))
        if self.fallback is not None and self.fallback.available(lang):
            plans.append(Plan(sentence, lang, self.fallback))
        elif other_engine is not None:
            plans.append(Plan(sentence, other, other_engine))  # the other voice reads it as best it can
        elif self.fallback is not None and self.fallback.available(other):
            plans.append(Plan(sentence, other, self.fallback))
        if not any(p.text == sentence for p in plans):
            raise VoiceUnavailableError(MESSAGES["voice_unavailable"].format(reason=f"nothing can speak {lang}"))
        return plans

    def _chinese_without_neural_voice(self, sentence: str, first_time: bool) -> list[Plan]:
        """No Kokoro and no Chinese piper voice: the notice, in Chinese, and the sentence, both through
        espeak-ng's Mandarin (the last fallback). Never the English voice: it cannot read Chinese, and a
        Chinese user must not hear English."""
        if self.fallback is None or not self.fallback.available("zh"):
            raise VoiceUnavailableError(MESSAGES["voice_unavailable"].format(reason="nothing can speak zh"))
        plans = []
        if first_time:
            notice = MESSAGES.get("voice_missing", "zh", language=MESSAGES.get("lang_zh", "zh"))
            plans.append(Plan(notice, "zh", self.fallback))
        plans.append(Plan(sentence, "zh", self.fallback))
        return plans

    def synthesize(self, text: str, lang: Lang | None = None, *, rate: float = 1.0) -> Iterator[SpeechChunk]:
        """Sentence by sentence, lazily: the first chunk is ready after the first sentence."""
        for plan in self.plan(text, lang):
            yield plan.engine.synthesize(plan.text, plan.lang, rate=rate)


# ----- the speaker -----------------------------------------------------------------------------------------------
@dataclass
class SpokenItem:
    """One queued utterance. `done` is set when it finished or was stopped; `stopped` tells which."""

    text: str
    lang: Lang | None
    cancel: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)
    stopped: bool = False
    error: SpeechError | None = None
    first_audio_at: float | None = None
    queued_at: float = field(default_factory=time.monotonic)

    def wait(self, timeout: float | None = None) -> bool:
        return self.done.wait(timeout)


_SENTINEL = object()


class Speaker:
    """Queued, interruptible speech. Threads: one takes utterances off the queue and synthesises their
    sentences into a small buffer; one plays buffered sentences to the sink in `block_s` blocks.

    `say(text, lang=None)` queues text (lang None = by the characters); `stop()` silences the current
    utterance and drops the queue; `repeat_last()` queues the last utterance again; `rate` (0.5-2.0) and
    `volume` (0-1) may change at any time. `close()` ends the threads. Errors are logged and recorded on the
    item (`item.error`), never raised into the caller's thread.
    """

    def __init__(
        self,
        router: VoiceRouter,
        sink: AudioSink,
        *,
        rate: float = 1.0,
        volume: float = 1.0,
        block_s: float = 0.05,
        on_error: Callable[[SpeechError], None] | None = None,
    ):
        self.router = router
        self.sink = sink
        self.block_s = block_s
        self.on_error = on_error
        self._rate = rate
        self._volume = volume
        self._items: queue.Queue[object] = queue.Queue()
        self._audio: queue.Queue[object] = queue.Queue(maxsize=2)
        self._current: SpokenItem | None = None
        self._pending: list[SpokenItem] = []
        self._lock = threading.Lock()
        self._last: tuple[str, Lang | None] | None = None
        self._closed = False
        self._synth_thread = threading.Thread(target=self._synth_loop, name="speaker-synth", daemon=True)
        self._play_thread = threading.Thread(target=self._play_loop, name="speaker-play", daemon=True)
        self._synth_thread.start()
        self._play_thread.start()

    # settings
    @property
    def rate(self) -> float:
        return self._rate

    @rate.setter
    def rate(self, value: float) -> None:
        self._rate = max(MIN_RATE, min(MAX_RATE, float(value)))

    @property
    def volume(self) -> float:
        return self._volume

    @volume.setter
    def volume(self, value: float) -> None:
        self._volume = max(0.0, min(1.0, float(value)))

    @property
    def speaking(self) -> bool:
        with self._lock:
            return self._current is not None or bool(self._pending)

    # commands
    def say(self, text: str, lang: str | None = None) -> SpokenItem:
        item = SpokenItem(text, normalize_lang(lang) if lang else None)
        with self._lock:
            self._last = (text, item.lang)
            self._pending.append(item)
        self._items.put(item)
        return item

    def repeat_last(self) -> SpokenItem | None:
        with self._lock:
            last = self._last
        return self.say(last[0], last[1]) if last else None

    def stop(self) -> None:
        """Stop speaking now and forget queued utterances (repeat_last still knows the last one)."""
        with self._lock:
            victims = list(self._pending)
            if self._current is not None:
                victims.append(self._current)
        for item in victims:
            item.stopped = True
            item.cancel.set()
            item.done.set()  # at once: a sentence still being synthesised (Kokoro: up to ~1 s) is thrown away
        self.sink.abort()

    def wait_idle(self, timeout: float | None = None) -> bool:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.speaking:
            if deadline is not None and time.monotonic() > deadline:
                return False
            time.sleep(0.01)
        return True

    def close(self) -> None:
        self.stop()
        self._closed = True
        self._items.put(_SENTINEL)
        self._synth_thread.join(timeout=5)
        self._play_thread.join(timeout=5)

    # threads
    def _synth_loop(self) -> None:
        while True:
            item = self._items.get()
            if item is _SENTINEL:
                self._audio.put(_SENTINEL)
                return
            assert isinstance(item, SpokenItem)
            if item.cancel.is_set():
                self._finish(item)
                continue
            try:
                for chunk in self.router.synthesize(item.text, item.lang, rate=self._rate):
                    if item.cancel.is_set():
                        break
                    self._put_audio((item, chunk))
            except SpeechError as error:
                log.warning("speech failed: %s", error)
                item.error = error
                if self.on_error is not None:
                    self.on_error(error)
            self._put_audio((item, None))  # end of this item

    def _put_audio(self, entry: tuple[SpokenItem, SpeechChunk | None]) -> None:
        item = entry[0]
        while True:
            try:
                self._audio.put(entry, timeout=0.05)
                return
            except queue.Full:
                if item.cancel.is_set() and entry[1] is not None:
                    return

    def _play_loop(self) -> None:
        while True:
            entry = self._audio.get()
            if entry is _SENTINEL:
                return
            item, chunk = entry  # type: ignore[misc]
            if chunk is None:
                self._finish(item)
                continue
            with self._lock:
                self._current = item
            if item.cancel.is_set():
                continue
            samples = chunk.samples
            if chunk.sample_rate != self.sink.sample_rate:
                samples = resample(samples, chunk.sample_rate, self.sink.sample_rate)
            if item.first_audio_at is None:
                item.first_audio_at = time.monotonic()
            try:
                self._play(samples, item)
            except SpeechError as error:  # the device went away mid-sentence: report, keep serving
                log.warning("playback failed: %s", error)
                item.error = error
                item.cancel.set()
                if self.on_error is not None:
                    self.on_error(error)

    def _play(self, samples: np.ndarray, item: SpokenItem) -> None:
        block = max(1, int(self.sink.sample_rate * self.block_s))
        for start in range(0, len(samples), block):
            if item.cancel.is_set():
                self.sink.abort()
                return
            self.sink.write(samples[start : start + block] * self._volume)

    def _finish(self, item: SpokenItem) -> None:
        item.done.set()
        with self._lock:
            if item in self._pending:
                self._pending.remove(item)
            if self._current is item:
                self._current = None


def default_router(*, locator: ModelLocator | None = None, zh_voice: str | None = None) -> VoiceRouter:
    """The product's voices, as each language registers them (assistant_core.languages): Kokoro first for
    Chinese (`zh_voice` 'female' or 'male'), piper for English and any language naming a piper voice (and for
    Chinese when a Chinese piper voice was installed and Kokoro is not there), espeak-ng as the last
    fallback. Nothing is loaded until the first sentence (or `router.engine_for(lang)`)."""
    from speech.kokoro import KokoroEngine

    locator = locator or ModelLocator()
    kokoro = [lang for lang in langs.registry().values() if lang.tts_engine == "kokoro"]
    return VoiceRouter(PiperEngine(locator=locator), fallback=EspeakEngine(),
                       preferred={lang.code: KokoroEngine(locator=locator, voice=zh_voice if lang.code == "zh" and zh_voice
                                                          else lang.voice) for lang in kokoro})


def speak_to_array(router: VoiceRouter, text: str, lang: str | None = None, *, rate: float = 1.0,
                   volume: float = 1.0, sample_rate: int = 22_050) -> np.ndarray:
    """Synthesise all of `text` into one array at `sample_rate` (for `--out FILE.wav` and tests)."""
    parts = []
    for chunk in router.synthesize(text, normalize_lang(lang) if lang else None, rate=rate):
        samples = chunk.samples
        if chunk.sample_rate != sample_rate:
            samples = resample(samples, chunk.sample_rate, sample_rate)
        parts.append(samples * volume)
        parts.append(np.zeros(int(0.15 * sample_rate), np.float32))  # a short pause between sentences
    return np.concatenate(parts).astype(np.float32) if parts else np.zeros(0, np.float32)


__all__ = [
    "default_voices", "espeak_voices", "EspeakEngine", "default_router", "PiperEngine", "Plan", "SpeechChunk", "Speaker", "SpokenItem",
    "TtsEngine", "VoiceRouter", "play_chunked", "speak_to_array", "split_sentences", "text_language",
]
