"""The fast CPU path for PhoneBuddy (Qwen3.5) models: the processor's best precision, a reused prompt prefix,
per-machine screenshot and thinking budgets.

    runtime = CpuRuntime(model_dir, threads=2, on_progress=print)     # the folder the user downloaded
    runtime.load()                                                     # first run converts and caches (progress)
    gen = runtime.generate(prompt, max_new_tokens=400, think_budget=100)

Why this runtime (issue 25): it is plain PyTorch under the transformers model, with the matmul precision
picked for the processor (`choose_compute`): on x86 CPUs with AVX2 (most laptops, and the AMX machines
measured too) the fp16-weight plan of `cpu_fp16w_modules.py` (the checkpoint's weights held exactly in fp16
inside fbgemm's packed GEMM, fp32 arithmetic: half the bytes a generated token reads, the same numbers as
fp32); on CPUs with bf16 matrix units but no such GEMM the mixed plan of `cpu_bf16_modules.py` (bf16 weights
and matmuls; fp32 activations, norms, Gated DeltaNet states, KV cache and logits); fp32 elsewhere, and, on request, PyTorch's own dynamic int8 quantization (`torch.ao.quantization`, fbgemm
kernels on x86, qnnpack on ARM), which is faster still but missed the logit tolerance at real size.
Weight-only int8 with fp32 activations (torch's `_weight_int8pack_mm`, per-row scales) was tried at 0.8B
(AMX machine, 2 threads, 2026-12-06) and dropped: 356 ms a generated token against fp16w's 121 (its kernel
does not reach the memory bandwidth the fp16 GEMM does), unusable for a prefill (one 512-token chunk ran
for minutes; widening to fp32 per call instead took 5-6 s a prompt), and logits 9 % of the largest off.
8-bit decoder weights measured again on 2026-12-07 (bench/bench_weight_formats.py, 0.8B, 2 threads, no bf16
units; bench/results/weight_formats.json): on the random real-size weights every 8-bit format misses the 5 %
logit tolerance, llama.cpp's Q8_0 layout (a scale per 32 weights) included (6.5 %; one scale a row 9.7 %),
so only the real checkpoint can say whether one is acceptable; fbgemm's int8 GEMM with the candidate head's
exact input grid was no faster than the fp16 GEMM for one row (77-89 ms against 65 for the decoder's 186
linears), while ONNX Runtime's MatMulNBits (installed with faster-whisper) took 33-34 ms at 8 bits and 20-23
at 4. Nothing of it is used: the fp16 plan stays exact.
Prompt lookup (exact speculative decoding: tokens copied from the prompt or the reply checked in one forward,
rejected ones rolled back with transformers' `activate_past_recording`/`crop` for the Gated DeltaNet states)
was built and tried on 2026-12-06 and dropped: it wrote the same tokens as plain greedy decoding on the taught
tiny model (fp32 and fp16w, 20 replies), but at 0.8B with 2 threads a forward of 3 tokens costs 1.4x one of a
single token (116 -> 163 ms: the fp16 GEMM +20 %, the per-token recurrent updates and elementwise work +25 ms),
2 tokens about 1.2-1.3x, so with the share of guesses kept on replies in our format (12-61 % depending on the
n-gram, 20 replies) the best setting (4-gram, 2 guessed tokens) saved about 7 % of the decode time: not worth
a second decoding path. It pays where a forward of a few tokens costs what one costs (a GPU, or many cores).
- It runs every Qwen3.5 layer as transformers does, the hybrid Gated DeltaNet layers included (only the
  `nn.Linear` modules are swapped; the recurrence, the causal conv and attention stay transformers' code);
- it ships inside the torch wheel the app already installs on Linux, Windows and macOS: nothing new to
  download, no conversion tool, no second model format;
- most of a CPU step is the prompt, and most of the prompt (the system text before the screenshot) is
  the same every step: keeping its state is exact and removes that work from every step after the first.
OpenVINO GenAI, ONNX Runtime GenAI and llama.cpp were not chosen. All three have Gated DeltaNet support by
now (checked 2026-12 in their public trackers): llama.cpp runs the `qwen35` architecture (ggml-org/llama.cpp
PR 19468, its GGUF files), ONNX Runtime GenAI's model builder exports the Qwen3.5 hybrid decoder
(microsoft/onnxruntime-genai PR 2043, wheel 0.18.0 on PyPI), and optimum-intel has Qwen3.5 OpenVINO export
work (huggingface/optimum-intel PRs 1634/1635, issue 1628; openvino-genai 2026.4.1 on PyPI). But each needs
an export of this vision model to its own format on first run (optimum / the model builder: hundreds of MB
of tooling and a full fp32 copy of the model in memory), a second copy of the weights on disk and its own
processor path, and llama-cpp-python has no binary wheels on PyPI (`pip download --only-binary=:all:` finds
none: it compiles C++ on the user's machine). The torch runtime needs none of that, and on this CPU its bf16
plan meets the issue's goals within the measured noise; trying the others is left for a machine with time
to export (see bench/results/cpu_policy.json "runtime_choice").

With compute="int8", what is converted: every `nn.Linear` of the text decoder and of the vision tower becomes a dynamic int8
linear (per-output-channel weight scales, activations quantized per call); the tied token embedding is
stored as int8 rows with one scale per row; the output head is an int8 linear of the same matrix. Norms,
the Gated DeltaNet gates (A_log, dt_bias), the conv1d and everything else stay fp32.

Conversion happens on first load from the checkpoint folder (read in its own dtype, bf16 for the
published checkpoints; one layer at a time is widened to fp32 and quantized), with `on_progress`
callbacks, and the result is cached under `cache_dir` as one file named by the SHA-256 of the checkpoint's
config and weight files, with a manifest holding the cache file's own SHA-256; a cache whose checksum does
not match is rebuilt, never loaded.

Memory at load (fp16w): the checkpoint is read one tensor at a time into a model built on the meta device
(`cpu_stream.py`), not mapped whole by `from_pretrained`, so the bf16 file and the packed fp16 copy are never
both resident; the model is the same bit for bit.

Decoding step of the Gated DeltaNet layers (`gdn_step`, on by default): one token at a time they run the
CPU step of `cpu_gdn_step.py` (the same fp32 arithmetic on the cached states in place) instead of
transformers' reference code; at 0.8B, fp16w, 2 threads, A/B on one loaded model: 147 -> 131 ms a token
(medians of 4 alternations; 149 -> 129 in another run), the same 40 greedy tokens each time. Across
separate benchmark runs the host's own speed varied more than that (fp16w decode 135 ms without, 136 with).

Decoding step of the attention layers (`attn_step`, on by default): one token at a time they run the CPU
step of `cpu_attn_step.py` (keys and values written into a buffer with room to grow instead of the cache
concatenated each token, the rotary embedding without concatenations, grouped attention as two matrix
products instead of the flash kernel); at 0.8B, fp16w, 2 threads, A/B on two runtimes in one process
(alternating steps, 40 tokens each, medians of 5): 121.2 -> 115.2 ms a token, the same tokens.

Fused projections (`fuse`, on by default, fp16w): linears that read one input are packed as one matrix
(each gated MLP's gate and up; each Gated DeltaNet layer's qkv, z, b and a projections; each attention
layer's q, k and v), so a generated token makes one pass over them instead of two to four
(cpu_fp16w_modules.py). At 0.8B, 2 threads, A/B on two runtimes in one process, alternating steps: before
q, k and v were added, 174.9 -> 158.3 ms a token and prefill 5.66 -> 5.25 s (medians of 12 each, on a busy
host; 163 -> 152 ms in a shorter run); with them, 150.1 -> 138.3 ms and 4.63 -> 4.43 s; the same greedy
tokens, peak RSS unchanged (2.94 GB).

The output head (`candidate_head`, on by default, fp16w with a tied head as Qwen3.5's): scored in int8 with
a bound on each row's error, and every row whose bound reaches the best is computed again exactly from the
embedding's bf16 matrix (cpu_head.py), so the argmax, and so every greedy reply, is the fp16 head's; the
int8 copy (0.25 GB at 0.8B) replaces the packed fp16 one (0.5 GB). At 0.8B, 2 threads, A/B in one process
(alternating steps, 40 tokens each, same tokens): 131.5 -> 118.9 ms a token (157.5 -> 144.3 in a slower
spell of the host); 11.5 rows computed again a token on average, 33 at most; the runtime alone peaked at
2.56 GB after loading.

Chunked prompt: the prompt (and the prefix below) goes through the model `prefill_chunk` tokens at a time,
each chunk continuing from the state the one before left, which keeps a forward's temporaries small (see
PREFILL_CHUNK).

Prefix reuse: `generate()` keeps the model state (attention KV and Gated DeltaNet conv/recurrent states)
after the longest token prefix that is identical to the previous request and contains no image, and
continues from a copy of it. For PhoneBuddy's layout (the long system prompt, then the screenshot, then
the instruction and history) that is everything before the screenshot.

Unchanged screen: when a step's screenshot is the same as the previous step's (a tap that changed nothing,
a wait), the vision tower's output for it is reused (keyed by the SHA-256 of the processed pixels).

Thinking budget: with `think_budget=N`, once N tokens of thought have been generated without a
``</think>``, the runtime appends ``</think>`` itself and lets the model write its tool call.

The compute thread: `load()` and `generate()` run on one thread the runtime owns, which turns on
flush-to-zero and denormals-are-zero (`torch.set_flush_denormal`) before its first parallel operation, so the
OpenMP threads it starts inherit the setting (a thread's floating-point control word is copied to the threads
it creates; set afterwards on a thread whose OpenMP team already exists, it reaches that thread only). Why:
the Gated DeltaNet decays are exp(cumulative g), and g reaches -38 a token, so within a 64-token chunk the
products fall through the subnormal range (below 1.2e-38), where x86 arithmetic takes a microcode path many
times slower. Flushing them changes only those values: each is below 1e-38 next to terms of order 1e-3, so
the sum is the same in fp32 (the next-token logits in the benchmark were unchanged in every printed digit,
the same greedy tokens). Measured at 0.8B, fp16w, 2 threads, the machine plan's prompt, on an AVX-512
machine without bf16 units (2026-12-07): the chunked delta
rule took 85 ms a 512-token chunk per layer, 35 with the flush (the same inputs, recorded from a step);
a step's prefill 4.6-5.6 s -> 3.7-3.9 s (two processes, two steps each); decoding and vision unchanged.
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assistant_core.i18n import Catalog, Text

log = logging.getLogger(__name__)

RUNTIME_NAME = "cpu-int8"
# bf16: bf16 weights and matmuls, fp32 activations, norms, states and logits (cpu_bf16_modules.py);
# bf16-all: the whole model in bf16 (faster, less exact; kept for the benchmark's comparison);
# fp16w: fp16 weights in fbgemm's packed GEMM, fp32 arithmetic (cpu_fp16w_modules.py; x86 without bf16 units);
# fp32: transformers' precision; int8: dynamic int8 linears (opt-in); auto: choose_compute().
COMPUTES = ("auto", "bf16", "bf16-all", "fp16w", "fp32", "int8")
CACHE_FORMAT = 1
MESSAGES = Catalog("policy_cpu_runtime", {
    "checksum": "Checking the model files…",
    "converting": "Preparing the model for this computer's processor (first run only): {pct}%",
    "packing": "Preparing the model for this computer's processor: {pct}%",
    "loading_cache": "Loading the prepared model…",
    "ready": "The model is ready.",
})


@dataclass(frozen=True)
class CpuProgress:
    stage: str  # checksum, convert, cache, ready
    fraction: float
    message: Text


@dataclass(frozen=True)
class CpuGeneration:
    """One generation on the CPU runtime (seconds; token ids are the new tokens)."""

    text: str
    token_ids: tuple[int, ...]
    prompt_tokens: int
    visual_tokens: int
    reused_tokens: int  # prompt tokens whose state came from the prefix cache
    decode_tokens: int
    preprocess_s: float
    vision_s: float
    prefill_s: float  # the prompt forward (after the reused prefix), vision excluded
    decode_s: float
    finish_reason: str  # stop, length
    think_forced: bool  # the thinking budget closed the thought
    first_logits: Any = None  # next-token logits after the prompt (torch tensor), for agreement checks
    image_reused: bool = False  # the screenshot was the previous step's: its vision features were reused

    @property
    def total_s(self) -> float:
        return self.preprocess_s + self.vision_s + self.prefill_s + self.decode_s


@dataclass(frozen=True)
class MachinePlan:
    """What this runtime asks of the model on a machine: the screenshot budget and the thinking length."""

    max_pixels: int
    think_budget: int


# On few cores the prefill of the screenshot dominates a step: a smaller screenshot (still legible at
# phone-UI text sizes, 448x1024 for a 1080x2400 screen) and a shorter thought keep a step within a wait a
# user can bear. What that costs in accuracy is unknown until measured on the real checkpoint.
SMALL_MACHINE_PIXELS = 458752
SMALL_MACHINE_THINK = 64


def machine_plan(profile: Any, cores: int) -> MachinePlan:
    """The screenshot pixel budget and thinking budget for `profile` on a CPU with `cores` threads."""
    from assistant_core.policy.profiles import get_profile

    prof = get_profile(profile)
    if cores <= 2:
        return MachinePlan(min(prof.max_pixels, SMALL_MACHINE_PIXELS), SMALL_MACHINE_THINK)
    if cores <= 4:
        return MachinePlan(min(prof.max_pixels, 655360), 128)
    return MachinePlan(prof.max_pixels, 256)


# --- conversion --------------------------------------------------------------------------------------


def _sha256_files(paths: Sequence[Path], chunk: int = 1 << 22, names: bool = True) -> str:
    digest = hashlib.sha256()
    for path in sorted(paths):
        if names:
            digest.update(path.name.encode())
        with path.open("rb") as handle:
            while block := handle.read(chunk):
                digest.update(block)
    return digest.hexdigest()


def checkpoint_files(model_dir: Path) -> list[Path]:
    files = [model_dir / "config.json"] + sorted(model_dir.glob("*.safetensors"))
    return [f for f in files if f.exists()]


def default_cache_dir() -> Path:
    base = os.environ.get("PHONEBUDDY_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "phonebuddy")
    return Path(base) / "cpu-int8"


def convert_model(model: Any, progress: Callable[[float], None] | None = None) -> dict[str, int]:
    """Turn a loaded Qwen3.5 (or Qwen3-VL) model into the int8 CPU form, in place, one layer at a time."""
    import torch

    from assistant_core.policy.cpu_int8_modules import BlockedInt8Head, Int8RowEmbedding, quantize_linears

    inner = model.model
    language = inner.language_model
    blocks = list(language.layers) + list(getattr(inner.visual, "blocks", []))
    total = len(blocks) + 3
    done = 0

    def tick():
        nonlocal done
        done += 1
        if progress:
            progress(done / total)

    stats = {"int8_linears": 0}
    for block in blocks:
        block.float()
        stats["int8_linears"] += quantize_linears(block)
        tick()
    # the vision tower's patch embedding / merger and the remaining small modules: fp32 (merger linears int8)
    inner.visual.float()
    stats["int8_linears"] += quantize_linears(inner.visual)
    tick()
    embed = language.get_input_embeddings() if hasattr(language, "get_input_embeddings") else language.embed_tokens
    weight = embed.weight.detach()
    head = BlockedInt8Head(model.lm_head.weight.detach())  # the same matrix when tied, its own when not
    tick()
    language.embed_tokens = Int8RowEmbedding(weight, getattr(embed, "padding_idx", None))
    model.lm_head = head
    del weight, embed
    language.norm.float()
    for _name, param in list(model.named_parameters()):  # anything left in bf16 (gates, norms): fp32
        if param.dtype != torch.float32:
            param.data = param.data.float()
    for _name, buf in list(model.named_buffers()):
        if buf.is_floating_point() and buf.dtype != torch.float32:
            buf.data = buf.data.float()
    model.config.dtype = torch.float32
    tick()
    return stats


# --- the runtime ---------------------------------------------------------------------------------------


# The prompt goes through the model this many tokens at a time, continuing from the state the chunk before left
# (KV and Gated DeltaNet conv/recurrent states; the same arithmetic, only the order of some sums differs). The
# temporaries of a forward (the MLP's intermediate, the projections) grow with its length: at 0.8B a
# 1,767-token screenshot prompt in one call raised the peak by about 0.1 GB against 512-token chunks, at the
# same speed (bench/bench_cpu_policy.py). Returning big blocks to the system instead (glibc's mmap threshold
# fixed at 1-4 MB) saved another 0.1 GB but cost 25% of the prefill and 12% of each decode step (fresh pages
# for every KV-cache append), so it is not done.
PREFILL_CHUNK = 512


def cpu_features() -> dict[str, bool]:
    """What the processor offers for the matrix work (torch's own probes; all False when unknown)."""
    import torch

    probes = {"amx": "_is_amx_tile_supported", "avx512_bf16": "_is_avx512_bf16_supported",
              "vnni": "_is_vnni_supported", "avx2": "_is_avx2_supported"}
    found = {}
    for key, name in probes.items():
        probe = getattr(torch.cpu, name, None)
        try:
            found[key] = bool(probe()) if callable(probe) else False
        except Exception:  # a probe that fails means "not known to be there"
            found[key] = False
    return found


def cpu_class(features: dict[str, bool] | None = None) -> str:
    """The class of processor measured figures are keyed by: "bf16-units" (AMX or AVX512-BF16), "avx2"
    (x86 without them: most laptops), or "basic" (neither: ARM, old x86). The same runtime differs
    several-fold between the first two (bench/results/cpu_policy.json)."""
    feats = cpu_features() if features is None else features
    if feats.get("amx") or feats.get("avx512_bf16"):
        return "bf16-units"
    return "avx2" if feats.get("avx2") else "basic"


def choose_compute(features: dict[str, bool] | None = None, *, fp16_gemm: bool | None = None) -> str:
    """fp16 weights with fp32 arithmetic on x86 CPUs with AVX2 and fbgemm's packed fp16 GEMM (bf16 units or
    not); the mixed bf16 plan on CPUs with bf16 units but without that GEMM; fp32 everywhere else (ARM).

    Measured side by side at 0.8B, 2 threads, on an AMX machine (bench/results/cpu_policy.json,
    "bf16-units:0.8b/2", 2026-12-06, each planned step on a new screenshot, the Gated DeltaNet CPU step on):
    the fp16-weight plan took 26.3 s a step (18.9 s under the machine plan), the mixed bf16 plan 30.5 s
    (23.5 s; its decode, 158 ms a token, was no faster than the fp32 runtime's 164), the fp32 runtime 30.0 s
    (21.4 s), and fp16w's logits are fp32's (2e-5 of 2.92 against 0.077 for bf16). So bf16 units do not
    change the choice. The all-bf16 model took 25.2 s (18.5 s) and its logits differ by 4 %, so, like int8
    (faster than fp32 on any x86 CPU, missed the tolerance at real size), it is never chosen by itself: `compute="bf16-all"`
    or `"int8"` asks for it. Without bf16 units, bf16 matmuls run 4-10x slower than fp32 (AVX2 machines,
    shared/notes/ml-stack-facts.md). Measured on such a machine (AVX-512 without BF16, 2 threads, 2026-12-07,
    "avx2:0.8b/2", subnormals flushed), in two runs whose host speed differed by a quarter: fp16w 24.6 s a step
    (18.3 s under the machine plan) against today's fp32 path at 40.9 s, the fp32 runtime 27.6 s (21.0 s), the
    all-bf16 model 41.6 s (31.4 s: its bf16 emulated); then, with the fused projections, fp16w 27.3 s (20.1 s)
    against today's path at 50.9 s and the fp32 runtime's 29.3 s (21.8 s)."""
    feats = cpu_features() if features is None else features
    if fp16_gemm is None:
        from assistant_core.policy.cpu_fp16w_modules import fp16_gemm_available

        fp16_gemm = fp16_gemm_available()
    if feats.get("avx2") and fp16_gemm:
        return "fp16w"
    if feats.get("amx") or feats.get("avx512_bf16"):
        return "bf16"
    return "fp32"


_COMPUTE_THREAD = threading.local()


def _compute_thread_main(jobs: Any) -> None:
    """The compute thread: set up before it runs any torch operation (see the module docstring), then run the
    jobs it is given until it is given None (the runtime was collected). A daemon thread: closing the app
    mid-step does not wait for the step."""
    import torch

    _COMPUTE_THREAD.active = True
    _COMPUTE_THREAD.flushes = bool(torch.set_flush_denormal(True))  # False where the CPU cannot (then as before)
    while (job := jobs.get()) is not None:
        future, fn, args, kwargs = job
        del job
        if future.set_running_or_notify_cancel():
            try:
                future.set_result(fn(*args, **kwargs))
            except BaseException as error:  # handed to the caller, who raises it
                future.set_exception(error)
        del future, fn, args, kwargs  # nothing of the runtime is held between jobs


class CpuRuntime:
    """The CPU runtime over a checkpoint folder (see the module docstring).

    `compute`: "bf16" (the checkpoint's own bf16 weights, bf16 matmuls: for CPUs with bf16 units), "fp32"
    (today's precision, with prefix reuse and the machine plan), "int8" (dynamic int8 linears, converted and
    cached on first load; opt-in, see `choose_compute`) or "auto" (`choose_compute`).
    `gdn_step`, `attn_step`, `fuse`, `candidate_head`: the decoding steps, fused projections and output
    head described in the module docstring (on by default; off only for comparisons).
    `stream`: the fp16w plan reads and packs the checkpoint one tensor at a time (`cpu_stream.py`: about half
    the peak memory of `from_pretrained` then packing); False loads through `from_pretrained` (the same model,
    bit for bit; kept for the comparison in the benchmark)."""

    def __init__(self, model_dir: str | Path, *, threads: int | None = None, cache_dir: str | Path | None = None,
                 on_progress: Callable[[CpuProgress], None] | None = None, reuse_prefix: bool = True,
                 compute: str = "auto", head: str = "bf16", stream: bool = True, prefill_chunk: int = PREFILL_CHUNK,
                 gdn_step: bool = True, attn_step: bool = True, fuse: bool = True, candidate_head: bool = True):
        self.model_dir = Path(model_dir)
        if compute not in COMPUTES:
            raise ValueError(f"compute must be one of {', '.join(COMPUTES)}, not {compute!r}")
        if head not in ("bf16", "fp32"):
            raise ValueError(f"head must be bf16 or fp32, not {head!r}")
        self.compute = choose_compute() if compute == "auto" else compute
        self.head = head
        self.stream = stream
        self.prefill_chunk = max(0, int(prefill_chunk))
        self.gdn_step = gdn_step
        self.attn_step = attn_step
        self.fuse = fuse
        self.candidate_head = candidate_head
        self.threads = threads
        self.cache_dir = Path(cache_dir) if cache_dir else default_cache_dir()
        self.on_progress = on_progress
        self.reuse_prefix = reuse_prefix
        self.model: Any = None
        self.processor: Any = None
        self.load_info: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._worker: Any = None  # the compute thread's job queue (see the module docstring), made on first use
        self._worker_lock = threading.Lock()
        self._prefix_ids: tuple[int, ...] = ()
        self._prefix_state: Any = None
        self._image_state: tuple[str, Any] | None = None  # (digest of the pixels, vision features)

    def _progress(self, stage: str, fraction: float, message: Text) -> None:
        if self.on_progress is None:
            return
        try:
            self.on_progress(CpuProgress(stage, fraction, message))
        except Exception:  # progress UI must not break loading
            log.exception("progress callback failed")

    @property
    def loaded(self) -> bool:
        return self.model is not None

    def cache_file(self, digest: str) -> Path:
        return self.cache_dir / f"{digest[:32]}.pt"

    def _on_compute_thread(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run `fn` on the runtime's compute thread and return its result (its exception is raised here)."""
        if getattr(_COMPUTE_THREAD, "active", False):
            return fn(*args, **kwargs)
        import queue
        import weakref
        from concurrent.futures import Future

        with self._worker_lock:
            if self._worker is None:
                jobs: Any = queue.SimpleQueue()
                threading.Thread(target=_compute_thread_main, args=(jobs,), name="phonebuddy-cpu-policy",
                                 daemon=True).start()
                weakref.finalize(self, jobs.put, None)  # the thread ends with the runtime
                self._worker = jobs
        future: Future = Future()
        self._worker.put((future, fn, args, kwargs))
        return future.result()

    def load(self) -> None:
        """Load (and on first run convert or pack) the model, on the compute thread."""
        self._on_compute_thread(self._load)

    def _load(self) -> None:
        with self._lock:
            if self.model is not None:
                return
            import torch

            from assistant_core.policy.hf_compat import load_processor

            if self.threads:
                torch.set_num_threads(self.threads)
            started = time.perf_counter()
            self._progress("checksum", 0.0, MESSAGES["checksum"])
            digest = _sha256_files(checkpoint_files(self.model_dir))
            checksum_s = time.perf_counter() - started
            self.processor = load_processor(self.model_dir)
            target = self.cache_file(digest)
            if self.compute in ("bf16", "bf16-all", "fp16w", "fp32"):  # the checkpoint's weights: no cache
                from transformers import AutoModelForImageTextToText

                def packed(fraction: float) -> None:
                    pct = int(round(100 * fraction))
                    self._progress("convert", fraction, MESSAGES["packing"].format(pct=pct))

                model = None
                if self.compute == "fp16w" and self.stream:  # read and packed one tensor at a time (cpu_stream.py)
                    from assistant_core.policy.cpu_stream import load_fp16w_streamed

                    model = load_fp16w_streamed(self.model_dir, packed, fuse=self.fuse,
                                                candidates=self.candidate_head)
                    self.load_info["streamed"] = model is not None
                if model is None:
                    dtype = torch.float32 if self.compute == "fp32" else torch.bfloat16
                    model = AutoModelForImageTextToText.from_pretrained(str(self.model_dir), dtype=dtype)
                    if self.compute == "bf16":
                        from assistant_core.policy.cpu_bf16_modules import to_mixed_precision

                        to_mixed_precision(model, head=self.head)
                    elif self.compute == "fp16w":
                        from assistant_core.policy.cpu_fp16w_modules import to_fp16_weights

                        to_fp16_weights(model, packed, fuse=self.fuse, candidates=self.candidate_head)
                converted = False
            else:
                model = self._load_cached(target, digest)
                converted = model is None
                if model is None:
                    model = self._convert(target, digest)
            model.eval()
            if self.gdn_step:  # one-token Gated DeltaNet steps on the cached states in place (cpu_gdn_step.py)
                from assistant_core.policy.cpu_gdn_step import install

                self.load_info["gdn_step_layers"] = install(model)
            if self.attn_step:  # one-token attention steps, the KV cache grown in place (cpu_attn_step.py)
                from assistant_core.policy.cpu_attn_step import install as install_attn

                self.load_info["attn_step_layers"] = install_attn(model)
            if self.compute == "fp16w":
                from assistant_core.policy.cpu_fp16w_modules import Fp16FusedProjections, Fp16GateUpMlp

                self.load_info["fused_groups"] = sum(isinstance(m, (Fp16FusedProjections, Fp16GateUpMlp))
                                                     for m in model.modules())
                self.load_info["head"] = type(getattr(model, "lm_head", None)).__name__
            self.model = model
            self.load_info = {**self.load_info, "flush_denormal": _COMPUTE_THREAD.flushes,
                              "compute": self.compute, "checksum_s": round(checksum_s, 2), "converted": converted,
                              "load_s": round(time.perf_counter() - started, 2), "cache_file": str(target),
                              "source_sha256": digest}
            self._progress("ready", 1.0, MESSAGES["ready"])

    def _load_cached(self, target: Path, digest: str) -> Any:
        import torch

        manifest = target.with_suffix(".json")
        if not (target.exists() and manifest.exists()):
            return None
        try:
            meta = json.loads(manifest.read_text(encoding="utf-8"))
            if (meta.get("format") != CACHE_FORMAT or meta.get("source_sha256") != digest
                    or meta.get("torch") != torch.__version__):
                log.info("cached CPU model %s is stale; converting again", target)
                return None
            self._progress("cache", 0.1, MESSAGES["loading_cache"])
            if _sha256_files([target], names=False) != meta.get("cache_sha256"):
                log.warning("cached CPU model %s failed its checksum; converting again", target)
                return None
            # our own file, written by _convert and verified by its SHA-256 just above
            return torch.load(target, weights_only=False, map_location="cpu")
        except Exception as error:  # a broken cache is rebuilt, never fatal
            log.warning("could not load the cached CPU model %s (%s); converting again", target, error)
            return None

    def _convert(self, target: Path, digest: str) -> Any:
        import torch
        from transformers import AutoModelForImageTextToText

        def progress(fraction: float) -> None:
            pct = int(round(10 + 80 * fraction))
            self._progress("convert", pct / 100, MESSAGES["converting"].format(pct=pct))

        progress(0.0)
        model = AutoModelForImageTextToText.from_pretrained(str(self.model_dir), dtype="auto")
        if model.dtype == torch.float16:
            model = model.to(torch.bfloat16)  # fp16 overflows are possible on CPU; widen layer by layer below
        convert_model(model, progress)
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(".partial")
        torch.save(model, partial)
        cache_sha = _sha256_files([partial], names=False)
        partial.replace(target)
        target.with_suffix(".json").write_text(json.dumps({
            "format": CACHE_FORMAT, "source_sha256": digest, "cache_sha256": cache_sha, "torch": torch.__version__,
            "model_dir": str(self.model_dir), "runtime": RUNTIME_NAME}, indent=1), encoding="utf-8")
        self._progress("convert", 0.95, MESSAGES["converting"].format(pct=95))
        return model

    # --- generation ----------------------------------------------------------------------------------

    def _inputs(self, prompt: Any) -> Any:
        messages = prompt.hf_messages() if hasattr(prompt, "hf_messages") else prompt
        return self.processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=True,
                                                  return_dict=True, return_tensors="pt")

    def _stable_prefix(self, ids: list[int]) -> int:
        """Length of the longest image-free prefix shared with the cached one (0 when none)."""
        if not self.reuse_prefix or not self._prefix_ids:
            return 0
        n = 0
        for a, b in zip(self._prefix_ids, ids, strict=False):
            if a != b:
                break
            n += 1
        return n if n == len(self._prefix_ids) else 0

    def _image_start(self, ids: list[int]) -> int:
        start_id = self.model.config.vision_start_token_id
        try:
            return ids.index(start_id)
        except ValueError:
            return len(ids)

    def _prefill(self, model: Any, ids: Any, position_ids: Any, cache: Any, encoder_outputs: Any) -> Any:
        """The prompt forward, `prefill_chunk` tokens at a time (the whole prompt in one call when 0). The
        token embeddings, with the screenshot's features in place of its placeholder tokens, are made once
        here as the model's own forward makes them, since a chunk may hold only part of the image."""
        import torch
        from transformers import DynamicCache

        inner = model.model
        embeds = inner.get_input_embeddings()(ids)
        if encoder_outputs:
            image = torch.cat(encoder_outputs["image"].pooler_output, dim=0).to(embeds.dtype)
            mask, _ = inner.get_placeholder_mask(ids, inputs_embeds=embeds, image_features=image)
            embeds = embeds.masked_scatter(mask, image)
        if cache is None:
            cache = DynamicCache(config=model.config)
        chunk = self.prefill_chunk or ids.shape[1]
        out = None
        for at in range(0, ids.shape[1], chunk):
            out = model(inputs_embeds=embeds[:, at:at + chunk], position_ids=position_ids[:, :, at:at + chunk],
                        cache=cache, use_cache=True, logits_to_keep=1)
            cache = out.past_key_values
        return out

    def generate(self, prompt: Any, *, max_new_tokens: int = 512, min_new_tokens: int = 0,
                 think_budget: int | None = None, on_text: Callable[[str], None] | None = None,
                 keep_first_logits: bool = False, eos_ids: Sequence[int] | None = None) -> CpuGeneration:
        """Greedy generation (see the module docstring for prefix reuse and the thinking budget), on the
        compute thread; `on_text` is called from that thread."""
        return self._on_compute_thread(self._generate, prompt, max_new_tokens=max_new_tokens,
                                       min_new_tokens=min_new_tokens, think_budget=think_budget, on_text=on_text,
                                       keep_first_logits=keep_first_logits, eos_ids=eos_ids)

    def _generate(self, prompt: Any, *, max_new_tokens: int, min_new_tokens: int, think_budget: int | None,
                  on_text: Callable[[str], None] | None, keep_first_logits: bool,
                  eos_ids: Sequence[int] | None) -> CpuGeneration:
        import torch

        self.load()
        model, processor = self.model, self.processor
        t0 = time.perf_counter()
        inputs = self._inputs(prompt)
        ids = inputs["input_ids"]
        id_list = ids[0].tolist()
        prompt_tokens = len(id_list)
        image_id = model.config.image_token_id
        visual_tokens = int((ids == image_id).sum())
        tokenizer = processor.tokenizer
        if eos_ids is None:
            eos = model.generation_config.eos_token_id
            eos_ids = eos if isinstance(eos, list) else [eos] if eos is not None else []
        eos_set = set(int(e) for e in eos_ids)
        close_think = tokenizer.encode("</think>\n\n", add_special_tokens=False)
        close_think_id = tokenizer.convert_tokens_to_ids("</think>")
        open_think_id = tokenizer.convert_tokens_to_ids("<think>")
        t1 = time.perf_counter()
        with torch.inference_mode():
            inner = model.model
            grid = inputs.get("image_grid_thw")
            position_ids, rope_deltas = inner.get_rope_index(ids, mm_token_type_ids=inputs["mm_token_type_ids"],
                                                             image_grid_thw=grid,
                                                             attention_mask=inputs.get("attention_mask"))
            vision_s = 0.0
            encoder_outputs = None
            image_reused = False
            if inputs.get("pixel_values") is not None:
                tv = time.perf_counter()
                key = _image_key(inputs["pixel_values"], grid)
                if self.reuse_prefix and self._image_state is not None and self._image_state[0] == key:
                    features, image_reused = self._image_state[1], True  # the same screen: same features
                else:
                    features = inner.get_image_features(inputs["pixel_values"], grid, return_dict=True)
                    self._image_state = (key, features)
                encoder_outputs = {"image": features}
                vision_s = time.perf_counter() - tv
            tp = time.perf_counter()
            reused = self._stable_prefix(id_list)
            cache = copy.deepcopy(self._prefix_state) if reused else None
            if not reused and self.reuse_prefix:
                # fill the prefix state (everything before the first image) and keep it for the next steps
                cut = self._image_start(id_list)
                if cut >= 16:
                    from transformers import DynamicCache

                    cache = DynamicCache(config=model.config)
                    self._prefill(model, ids[:, :cut], position_ids[:, :, :cut], cache, None)
                    self._prefix_ids = tuple(id_list[:cut])
                    self._prefix_state = copy.deepcopy(cache)
                    reused = cut
            start = reused
            head = getattr(model, "lm_head", None)
            if hasattr(head, "protect"):  # the int8-scored head (cpu_head.py): rows the loop may mask stay exact
                head.protect(eos_set)
            exact = head.exact_scores() if keep_first_logits and hasattr(head, "exact_scores") else nullcontext()
            with exact:  # the first logits, kept for agreement checks, computed in full
                out = self._prefill(model, ids[:, start:], position_ids[:, :, start:], cache, encoder_outputs)
            cache = out.past_key_values
            logits = out.logits[:, -1, :]
            first_logits = logits[0].float().clone() if keep_first_logits else None
            t2 = time.perf_counter()
            next_pos = int(position_ids.max()) + 1
            new: list[int] = []
            thinking = bool(prompt_tokens and _ends_with_think(tokenizer, id_list))
            forced = False
            pending: list[int] = []
            emitted = 0
            finish = "length"
            while len(new) < max_new_tokens:
                if pending:
                    token = pending.pop(0)
                else:
                    row = logits[0]
                    if len(new) < min_new_tokens and eos_set:
                        row = row.clone()
                        row[list(eos_set)] = float("-inf")
                    token = int(torch.argmax(row))
                    if (thinking and think_budget is not None and len(new) >= think_budget
                            and token != close_think_id):
                        pending = list(close_think)
                        token = pending.pop(0)
                        forced = True
                new.append(token)
                if token == close_think_id:
                    thinking = False
                elif token == open_think_id:
                    thinking = True
                if on_text is not None:  # whole characters only (a token may end mid-way through one)
                    shown = tokenizer.decode(new, skip_special_tokens=True)
                    if not shown.endswith("\ufffd") and len(shown) > emitted:
                        try:
                            on_text(shown[emitted:])
                        except Exception:  # a UI callback must never break generation
                            log.exception("on_text callback failed")
                        emitted = len(shown)
                if token in eos_set and len(new) >= max(1, min_new_tokens):
                    finish = "stop"
                    break
                if len(new) >= max_new_tokens:
                    break
                step_ids = torch.tensor([[token]])
                pos = torch.full((3, 1, 1), next_pos, dtype=torch.long)
                next_pos += 1
                out = model(input_ids=step_ids, position_ids=pos, cache=cache, use_cache=True, logits_to_keep=1)
                cache = out.past_key_values
                logits = out.logits[:, -1, :]
            t3 = time.perf_counter()
        del rope_deltas
        text = tokenizer.decode(new, skip_special_tokens=True)
        return CpuGeneration(text=text, token_ids=tuple(new), prompt_tokens=prompt_tokens,
                             visual_tokens=visual_tokens, reused_tokens=reused, decode_tokens=len(new),
                             preprocess_s=t1 - t0, vision_s=vision_s, prefill_s=t2 - tp, decode_s=t3 - t2,
                             finish_reason=finish, think_forced=forced, first_logits=first_logits,
                             image_reused=image_reused)


def _image_key(pixel_values: Any, grid: Any) -> str:
    """A digest of the processed screenshot: an unchanged screen between steps gives the same key."""
    digest = hashlib.sha256(pixel_values.contiguous().view(-1).numpy().tobytes())
    digest.update(str(grid.tolist() if grid is not None else None).encode())
    return digest.hexdigest()


def _ends_with_think(tokenizer: Any, ids: list[int]) -> bool:
    """Whether the prompt ends inside an open <think> (the 4B template), i.e. the reply starts thinking."""
    tail = tokenizer.decode(ids[-4:], skip_special_tokens=False)
    return tail.rstrip().endswith("<think>")


__all__ = ["CpuGeneration", "CpuProgress", "CpuRuntime", "MachinePlan", "RUNTIME_NAME", "convert_model",
           "machine_plan"]
