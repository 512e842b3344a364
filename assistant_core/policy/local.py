"""The local backend: the model runs in this process through transformers (+ bitsandbytes, + peft).

    policy = LocalPolicy("/path/to/PhoneBuddy-4B")                 # CUDA: nf4; CPU: fp32
    policy = LocalPolicy(folder, quantization="bf16", adapter_dir=lora_folder, on_thought=print)
    task = policy.load_in_background(on_progress=callback)          # returns at once; task.wait()
    proposal = policy.propose(goal, observation, history)           # loads first if needed

Loading: `AutoModelForImageTextToText.from_pretrained` + the image-only processor (`hf_compat`), lazily,
once, behind a lock (concurrent callers wait for the same load), optionally in a background thread with
`LoadProgress` callbacks. Quantization: CUDA defaults to 4-bit nf4 with double quantization and bf16 compute
(8-bit, bf16 and fp16 are options); the CPU defaults to fp32, and nf4 there computes in fp32 (a CPU without
bf16 units runs bf16 about 4x slower). The vision tower and lm_head stay unquantized, and on the CPU so do
linear layers whose output size bitsandbytes' packed CPU kernel cannot take (`cpu_unpackable_linears`).
A LoRA adapter folder (peft) is applied on top when given.

Decoding is greedy, up to the profile's `max_new_tokens`. The text is streamed as it is generated to
`on_thought(chunk)` so the app can say "thinking". Each Proposal records timings (preprocess, prefill,
decode, parse, total; seconds) and stats (visual_tokens, prompt_tokens, decode_tokens, decode_tokens_per_s,
thought_chars, and peak_vram_gb on CUDA).

`logits_processors` (optional) are transformers LogitsProcessors applied to every generation; each one's
`reset(prompt_length)`, if it has one, is called first. Scripted runs and tests use one to force a reply.

Errors: a missing or broken model folder, missing bitsandbytes, no CUDA for a CUDA-only setting or out of
memory raise `PolicyUnavailable` (a PolicyUnavailableError with a bilingual `message`); a reply that cannot
be parsed raises PolicyOutputError (the loop feeds it back).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from assistant_core.errors import PolicyOutputError, PolicyUnavailableError
from assistant_core.i18n import Text
from assistant_core.policy.errors import MESSAGES, PolicyUnavailable, unavailable
from assistant_core.policy.parsing import parse_reply
from assistant_core.policy.profiles import ModelProfile, get_profile
from assistant_core.policy.prompt import ChatPrompt, build_prompt
from assistant_core.types import Observation, Proposal, Step

log = logging.getLogger(__name__)


class Quantization(StrEnum):
    NF4 = "nf4"
    INT8 = "int8"
    BF16 = "bf16"
    FP16 = "fp16"
    FP32 = "fp32"


# Kept in full precision under 4/8-bit: the vision tower (small, sensitive) and the output head.
UNQUANTIZED_MODULES = ["model.visual", "lm_head"]  # prefixes (or suffixes) of module names
CPU_NF4_BLOCK = 32  # bitsandbytes' packed CPU nf4 kernel needs output sizes in multiples of this


@dataclass(frozen=True)
class LoadProgress:
    stage: str  # "start", "processor", "weights", "adapter", "ready"
    fraction: float
    message: Text


@dataclass(frozen=True)
class Generation:
    """One greedy generation: the text, token counts and timings in seconds."""

    text: str
    prompt_tokens: int
    visual_tokens: int
    decode_tokens: int
    preprocess_s: float
    prefill_s: float
    decode_s: float
    finish_reason: str  # "stop" or "length"
    peak_vram_gb: float | None = None

    @property
    def decode_tokens_per_s(self) -> float:
        steps = self.decode_tokens - 1  # the first token comes with the prefill
        return steps / self.decode_s if steps > 0 and self.decode_s > 0 else 0.0

    @property
    def total_s(self) -> float:
        return self.preprocess_s + self.prefill_s + self.decode_s


@dataclass
class LoadTask:
    """A background load. `wait(timeout)` -> True when finished; `error` holds what went wrong, if anything."""

    thread: threading.Thread
    finished: threading.Event = field(default_factory=threading.Event)
    error: BaseException | None = None

    @property
    def done(self) -> bool:
        return self.finished.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        return self.finished.wait(timeout)


def cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def default_quantization(device: str) -> Quantization:
    return Quantization.NF4 if device.startswith("cuda") else Quantization.FP32


def cpu_unpackable_linears(model_dir: str | Path, block: int = CPU_NF4_BLOCK) -> list[str]:
    """Names of the linear layers that bitsandbytes' CPU nf4 kernel cannot take, to keep them unquantized.

    On CPUs with AVX512-BF16, bitsandbytes repacks every nf4 weight for a fast kernel at its first forward
    pass and asserts that the output size is a multiple of 32; a smaller or odd layer (Qwen3.5's
    `in_proj_a`/`in_proj_b` have one row per linear-attention head) would crash the first step. Those
    layers are tiny, so keeping them in full precision costs nothing. The model is built on the meta
    device (no memory, no weights read) just to list its layers."""
    import torch
    from transformers import AutoConfig, AutoModelForImageTextToText

    config = AutoConfig.from_pretrained(str(model_dir))
    with torch.device("meta"):
        model = AutoModelForImageTextToText.from_config(config)
    return [name for name, module in model.named_modules()
            if isinstance(module, torch.nn.Linear) and module.out_features % block != 0]


def _make_streamer(tokenizer: Any, on_text: Callable[[str], None] | None):
    from transformers import TextStreamer

    class TimingStreamer(TextStreamer):
        """Records when the first new token arrives (end of prefill) and forwards decoded text."""

        def __init__(self) -> None:
            super().__init__(tokenizer, skip_prompt=True, skip_special_tokens=True)
            self.first_token_at: float | None = None
            self.tokens = 0

        def put(self, value) -> None:
            if not self.next_tokens_are_prompt:
                if self.first_token_at is None:
                    self.first_token_at = time.perf_counter()
                self.tokens += int(value.numel())
            super().put(value)

        def on_finalized_text(self, text: str, stream_end: bool = False) -> None:
            if on_text is not None and text:
                try:
                    on_text(text)
                except Exception:  # a UI callback must never break generation
                    log.exception("on_thought callback failed")

    return TimingStreamer()


class LocalPolicy:
    """A Policy backed by a model folder on this computer (see the module docstring)."""

    def __init__(self, model_dir: str | Path, *, profile: str | ModelProfile | None = None,
                 quantization: str | Quantization | None = None, device: str | None = None,
                 adapter_dir: str | Path | None = None, max_new_tokens: int | None = None,
                 max_pixels: int | None = None, min_pixels: int | None = None, lang: str = "en",
                 on_thought: Callable[[str], None] | None = None,
                 on_progress: Callable[[LoadProgress], None] | None = None, threads: int | None = None,
                 logits_processors: Sequence[Any] = (), runtime: str = "transformers",
                 think_budget: int | None = None):
        self.model_dir = Path(model_dir)
        self.profile = get_profile(profile)
        self._quantization = Quantization(quantization) if quantization else None
        self._device = device
        self.adapter_dir = Path(adapter_dir) if adapter_dir else None
        self.max_new_tokens = max_new_tokens or self.profile.max_new_tokens
        self.max_pixels = max_pixels
        self.min_pixels = min_pixels
        self.lang = lang
        self.on_thought = on_thought
        self.on_progress = on_progress
        self.threads = threads
        self.logits_processors = tuple(logits_processors)  # injected decoding constraints (scripted runs)
        self._lock = threading.Lock()
        self._generate_lock = threading.Lock()  # one generation at a time on one model
        self._model: Any = None
        self._processor: Any = None
        if runtime not in ("transformers", "auto", "cpu"):
            raise ValueError(f"runtime must be transformers, auto or cpu, not {runtime!r}")
        self.runtime_choice = runtime
        self.think_budget = think_budget
        self._cpu: Any = None  # the CpuRuntime, when this policy runs on it
        self.load_seconds: float | None = None
        self.template: dict[str, Any] = {}  # what the checkpoint's chat template does (hf_compat.template_facts)

    # --- loading -----------------------------------------------------------------------------------

    @property
    def device(self) -> str:
        if self._device is None:
            self._device = "cuda" if cuda_available() else "cpu"
        return self._device

    @property
    def quantization(self) -> Quantization:
        return self._quantization or default_quantization(self.device)

    @property
    def loaded(self) -> bool:
        return self._model is not None

    @property
    def model(self) -> Any:
        self.load()
        return self._model

    @property
    def processor(self) -> Any:
        self.load()
        return self._processor

    def _progress(self, stage: str, fraction: float, message: Text,
                  callback: Callable[[LoadProgress], None] | None) -> None:
        for cb in {id(c): c for c in (self.on_progress, callback) if c is not None}.values():
            try:
                cb(LoadProgress(stage, fraction, message))
            except Exception:  # progress UI must not break loading
                log.exception("progress callback failed")

    def load(self, on_progress: Callable[[LoadProgress], None] | None = None) -> None:
        """Load the model once; concurrent callers wait for the same load. Raises PolicyUnavailable."""
        with self._lock:
            if self._model is not None:
                return
            started = time.perf_counter()
            self._progress("start", 0.0, MESSAGES["loading"], on_progress)
            try:
                self._load_locked(on_progress)
            except PolicyUnavailableError:
                raise
            except Exception as error:  # translate every load failure into one clear, non-retried error
                raise self._load_error(error) from error
            self.load_seconds = time.perf_counter() - started
            self._progress("ready", 1.0, MESSAGES["ready"], on_progress)

    def load_in_background(self, on_progress: Callable[[LoadProgress], None] | None = None) -> LoadTask:
        """Start loading in a daemon thread and return at once."""
        task: LoadTask

        def run() -> None:
            try:
                self.load(on_progress)
            except BaseException as error:  # stored for the caller, who decides what to show
                task.error = error
                log.warning("background model load failed: %s", error)
            finally:
                task.finished.set()

        task = LoadTask(thread=threading.Thread(target=run, name="policy-load", daemon=True))
        task.thread.start()
        return task

    def _load_error(self, error: Exception) -> PolicyUnavailable:
        detail = f"{type(error).__name__}: {error}".strip()[:300]
        if "out of memory" in str(error).lower() or type(error).__name__ == "OutOfMemoryError":
            return unavailable("out_of_memory", detail=detail)
        return unavailable("load_failed", detail=detail)

    def _check_folder(self) -> dict[str, Any]:
        config_file = self.model_dir / "config.json"
        if not self.model_dir.is_dir():
            raise unavailable("no_weights", title=self.profile.title.en, where=str(self.model_dir),
                              name=self.profile.name)
        if not config_file.exists():
            raise unavailable("bad_folder", where=str(self.model_dir), detail="no config.json")
        try:
            config = json.loads(config_file.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as error:
            raise unavailable("bad_folder", where=str(self.model_dir), detail=f"config.json: {error}") from None
        if not any(self.model_dir.glob("*.safetensors")) and not any(self.model_dir.glob("*.bin")):
            raise unavailable("bad_folder", where=str(self.model_dir), detail="no weight files")
        model_type = config.get("model_type")
        if model_type != self.profile.architecture:
            log.warning("model folder %s is %s, profile %s expects %s", self.model_dir, model_type,
                        self.profile.name, self.profile.architecture)
        return config

    def _model_kwargs(self) -> dict[str, Any]:
        import torch

        quant, on_cuda = self.quantization, self.device.startswith("cuda")
        if on_cuda and not cuda_available():
            raise unavailable("no_gpu", quant=str(quant))
        kwargs: dict[str, Any] = {"device_map": {"": self.device} if on_cuda else "cpu"}
        compute = torch.bfloat16 if on_cuda else torch.float32
        if quant is Quantization.NF4:
            from transformers import BitsAndBytesConfig

            skip = UNQUANTIZED_MODULES if on_cuda else UNQUANTIZED_MODULES + cpu_unpackable_linears(self.model_dir)
            kwargs["quantization_config"] = BitsAndBytesConfig(
                load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_use_double_quant=True,
                bnb_4bit_compute_dtype=compute, llm_int8_skip_modules=skip)
            kwargs["dtype"] = compute
        elif quant is Quantization.INT8:
            from transformers import BitsAndBytesConfig

            kwargs["quantization_config"] = BitsAndBytesConfig(load_in_8bit=True,
                                                               llm_int8_skip_modules=UNQUANTIZED_MODULES)
            kwargs["dtype"] = torch.float16 if on_cuda else torch.float32
        elif quant is Quantization.BF16:
            if not on_cuda:
                log.warning("bf16 on the CPU is about 4x slower than fp32 on CPUs without bf16 units")
            kwargs["dtype"] = torch.bfloat16
        elif quant is Quantization.FP16:
            kwargs["dtype"] = torch.float16
        else:
            kwargs["dtype"] = torch.float32
        return kwargs

    def uses_cpu_runtime(self) -> bool:
        """Whether generation runs on the fast CPU runtime (cpu_runtime.py) instead of transformers' generate.

        `runtime="cpu"` asks for it; `runtime="auto"` takes it on the CPU at the default fp32 setting when
        nothing needs transformers' generate (no LoRA adapter, no injected logits processors)."""
        if self.runtime_choice == "transformers" or self.device.startswith("cuda"):
            return False
        if self.runtime_choice == "cpu":
            return True
        return (self.quantization is Quantization.FP32 and self.adapter_dir is None and not self.logits_processors
                and self.profile.architecture in ("qwen3_5", "qwen3_vl"))

    def _load_cpu_runtime(self, on_progress: Callable[[LoadProgress], None] | None) -> None:
        from assistant_core.policy.cpu_runtime import CpuRuntime
        from assistant_core.policy.hf_compat import template_facts

        def relay(p) -> None:
            self._progress("weights", 0.1 + 0.8 * p.fraction, p.message, on_progress)

        import os

        from assistant_core.policy.cpu_runtime import machine_plan

        plan = machine_plan(self.profile, self.threads or os.cpu_count() or 1)
        if self.max_pixels is None:  # the screenshot and thinking budgets this machine can bear
            self.max_pixels = plan.max_pixels
        if self.think_budget is None:
            self.think_budget = plan.think_budget
        runtime = CpuRuntime(self.model_dir, threads=self.threads, on_progress=relay)
        runtime.load()
        self._cpu = runtime
        self._model, self._processor = runtime.model, runtime.processor
        self.template = template_facts(runtime.processor)
        log.info("loaded %s on the CPU runtime (%s) from %s", self.profile.name, runtime.load_info, self.model_dir)

    def _load_locked(self, on_progress: Callable[[LoadProgress], None] | None) -> None:
        self._check_folder()
        if self.uses_cpu_runtime():
            self._load_cpu_runtime(on_progress)
            return
        import torch
        from transformers import AutoModelForImageTextToText

        from assistant_core.policy.hf_compat import load_processor, template_facts

        if self.threads:
            torch.set_num_threads(self.threads)
        self._progress("processor", 0.1, MESSAGES["loading_processor"], on_progress)
        processor = load_processor(self.model_dir)
        kwargs = self._model_kwargs()
        self._progress("weights", 0.2, MESSAGES["loading_weights"].format(quant=str(self.quantization),
                                                                          device=self.device), on_progress)
        model = AutoModelForImageTextToText.from_pretrained(str(self.model_dir), **kwargs)
        if self.adapter_dir is not None:
            self._progress("adapter", 0.9, MESSAGES["loading_adapter"], on_progress)
            model = self._apply_adapter(model)
        model.eval()
        self._model, self._processor = model, processor
        self.template = template_facts(processor)
        log.info("loaded %s (%s, %s) from %s; chat template: %s", type(model).__name__, self.quantization,
                 self.device, self.model_dir, self.template)

    def _apply_adapter(self, model: Any) -> Any:
        assert self.adapter_dir is not None
        if not (self.adapter_dir / "adapter_config.json").exists():
            raise unavailable("bad_folder", where=str(self.adapter_dir), detail="no adapter_config.json")
        from peft import PeftModel

        return PeftModel.from_pretrained(model, str(self.adapter_dir), is_trainable=False)

    def close(self) -> None:
        """Drop the model (frees memory once nothing else holds it)."""
        with self._lock:
            self._model = None
            self._processor = None
            self._cpu = None

    # --- generation --------------------------------------------------------------------------------

    def generate(self, prompt: ChatPrompt | list[dict[str, Any]], *, on_text: Callable[[str], None] | None = None,
                 max_new_tokens: int | None = None, min_new_tokens: int | None = None) -> Generation:
        """Greedy generation for one request: a ChatPrompt, or chat-template messages (loads the model first)."""
        model, processor = self.model, self.processor
        if self._cpu is not None:
            return self._generate_cpu(prompt, on_text, max_new_tokens, min_new_tokens)
        import torch
        from transformers import LogitsProcessorList

        t0 = time.perf_counter()
        messages = prompt.hf_messages() if isinstance(prompt, ChatPrompt) else prompt
        inputs = processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=True,
                                               return_dict=True, return_tensors="pt")
        inputs = inputs.to(model.device)
        input_ids = inputs["input_ids"]
        prompt_tokens = int(input_ids.shape[1])
        visual_tokens = int((input_ids == processor.image_token_id).sum())
        streamer = _make_streamer(processor.tokenizer, on_text)
        limit = max_new_tokens or self.max_new_tokens
        gen_kwargs: dict[str, Any] = {"max_new_tokens": limit, "do_sample": False, "temperature": None,
                                      "top_p": None, "top_k": None, "streamer": streamer}
        if min_new_tokens:
            gen_kwargs["min_new_tokens"] = min_new_tokens
        on_cuda = str(model.device).startswith("cuda")
        with self._generate_lock:
            t1 = time.perf_counter()
            if self.logits_processors:
                for processor_ in self.logits_processors:
                    reset = getattr(processor_, "reset", None)
                    if callable(reset):
                        reset(prompt_tokens)
                gen_kwargs["logits_processor"] = LogitsProcessorList(self.logits_processors)
            if on_cuda:
                torch.cuda.reset_peak_memory_stats()
            try:
                with torch.inference_mode():
                    output = model.generate(**inputs, **gen_kwargs)
            except torch.cuda.OutOfMemoryError as error:
                raise unavailable("out_of_memory", detail=str(error)[:200]) from error
            peak = torch.cuda.max_memory_allocated() / 2**30 if on_cuda else None
        t2 = time.perf_counter()
        new_ids = output[0][prompt_tokens:]
        eos = model.generation_config.eos_token_id
        eos_ids = set(eos if isinstance(eos, list) else [eos] if eos is not None else [])
        n = int(new_ids.shape[0])
        finish = "length" if n >= limit and (n == 0 or int(new_ids[-1]) not in eos_ids) else "stop"
        text = processor.tokenizer.decode(new_ids, skip_special_tokens=True)
        first = streamer.first_token_at or t2
        return Generation(text=text, prompt_tokens=prompt_tokens, visual_tokens=visual_tokens, decode_tokens=n,
                          preprocess_s=t1 - t0, prefill_s=first - t1, decode_s=t2 - first, finish_reason=finish,
                          peak_vram_gb=peak)

    def _generate_cpu(self, prompt: Any, on_text: Callable[[str], None] | None, max_new_tokens: int | None,
                      min_new_tokens: int | None) -> Generation:
        limit = max_new_tokens or self.max_new_tokens
        with self._generate_lock:
            gen = self._cpu.generate(prompt, max_new_tokens=limit, min_new_tokens=min_new_tokens or 0,
                                     think_budget=self.think_budget, on_text=on_text)
        return Generation(text=gen.text, prompt_tokens=gen.prompt_tokens, visual_tokens=gen.visual_tokens,
                          decode_tokens=gen.decode_tokens, preprocess_s=gen.preprocess_s,
                          prefill_s=gen.vision_s + gen.prefill_s, decode_s=gen.decode_s,
                          finish_reason=gen.finish_reason)

    def propose(self, goal: str, observation: Observation, history: Sequence[Step] = (), *,
                feedback: str | None = None) -> Proposal:
        """Build the prompt, generate, parse. Raises PolicyOutputError for an unusable reply."""
        started = time.perf_counter()
        prompt = build_prompt(goal, observation, history, self.profile, lang=self.lang, feedback=feedback,
                              max_pixels=self.max_pixels, min_pixels=self.min_pixels)
        built = time.perf_counter()
        gen = self.generate(prompt, on_text=self.on_thought)
        parse_start = time.perf_counter()
        try:
            reply = parse_reply(gen.text, observation.width, observation.height, self.profile)
        except PolicyOutputError as error:
            message = str(error)
            if gen.finish_reason == "length":
                message += f" (the reply was cut off after {gen.decode_tokens} tokens)"
            raise PolicyOutputError(message, raw_text=gen.text) from None
        done = time.perf_counter()
        timings = {"prompt": built - started, "preprocess": gen.preprocess_s, "prefill": gen.prefill_s,
                   "decode": gen.decode_s, "parse": done - parse_start, "total": done - started}
        stats: dict[str, float] = {"visual_tokens": gen.visual_tokens, "prompt_tokens": gen.prompt_tokens,
                                   "decode_tokens": gen.decode_tokens,
                                   "decode_tokens_per_s": round(gen.decode_tokens_per_s, 2),
                                   "thought_chars": len(reply.thought)}
        if gen.peak_vram_gb is not None:
            stats["peak_vram_gb"] = round(gen.peak_vram_gb, 3)
        for note in reply.notes:
            log.info("reply note: %s", note)
        return Proposal(action=reply.action, thought=reply.thought, raw_text=gen.text, timings=timings,
                        stats=stats)


__all__ = ["Generation", "LoadProgress", "LoadTask", "LocalPolicy", "PolicyUnavailable", "Quantization"]
