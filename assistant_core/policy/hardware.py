"""Which model and precision this computer should run, and how to say so to the user.

`detect_hardware()` looks at the machine (torch is imported inside it, lazily); `recommend(hw)` is pure and
testable: with a CUDA GPU of enough memory, PhoneBuddy-4B in 4-bit nf4 (double quantization, bf16
compute); without one, PhoneBuddy-0.8B on the fast CPU runtime (`cpu_runtime.py`: fp16 weights with fp32
arithmetic on x86 CPUs with AVX2, bf16 matmuls on CPUs with bf16 units and no fp16 GEMM, fp32 elsewhere, the prompt prefix reused, a smaller screenshot and a thinking budget on small
machines), because a
4B model on a laptop CPU takes minutes a step. `Recommendation.describe()` is the bilingual explanation (choice, memory,
expected speed) the app shows on first run and `phonebuddy policy recommend` prints.

The CPU's "about N seconds a step" comes from the measured figures `cpu_measured.json` beside this module
(package data, installed with the app; written by bench/bench_cpu_policy.py at real size together with the
full results in bench/results/cpu_policy.json): the entry measured on a processor of this computer's class
(`cpu_class`: with bf16 matrix units, or AVX2 without them: the two differ several-fold on the same
runtime), with the nearest thread count, scaled by cores. Figures of another class are used only when
none of this class exist, and the wait is then said to be an estimate.
When that file is missing or unreadable, the wait is a cautious estimate and the message says so. The GPU
figures are estimates from bench/gpu_policy.py. They are shown as "about", never promised.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from assistant_core.i18n import Catalog, Text
from assistant_core.policy.profiles import get_profile, load_profiles

log = logging.getLogger(__name__)

MESSAGES = Catalog("policy_hardware", {
    "gpu_4b": ("Using {title} on your graphics card ({gpu}, {vram:.0f} GB) in 4-bit: about {mem:.1f} GB of graphics "
        "memory, about {speed} a step."),
    "gpu_small": ("Your graphics card ({gpu}) has {vram:.1f} GB of memory, too little for the 4B model, so {title} runs on "
        "it instead: about {mem:.1f} GB, about {speed} a step."),
    "bf16_option": ("Your card has room for full bf16 precision too (about {mem:.1f} GB), which decodes faster; choose it in "
        "Settings."),
    "seconds": "{n:.0f} seconds",
    "minutes": "{n:.0f} minutes",
})

MEASURED_FILE = Path(__file__).resolve().with_name("cpu_measured.json")
CPU_MESSAGES = Catalog("policy_hardware_cpu", {
    "cpu_fast": ("No CUDA graphics card was found, so {title} runs on the processor ({cores} cores) in {precision}: about "
        "{mem:.1f} GB of memory. Expect about {speed} for each step on the phone; while it thinks you will hear "
        "a short sound every few seconds. The 4B model would take minutes a step here; for faster help, "
        "connect to a PhoneBuddy server in Settings."),
    "int8": "8-bit",
    "bf16": "bf16",
    "fp16w": "16-bit weights",
    "fp32": "fp32",
    "nf4": "4-bit nf4",
    "wait": "Without a CUDA graphics card, {title} takes about {speed} for each step on this computer.",
    "estimate": "This wait is an estimate: the measured speeds that come with the app were not found.",
    "other_class": "This wait is an estimate: it was measured on a different kind of processor.",
})


def _estimate_s(cores: int) -> float:
    """The stated estimate when nothing is measured: 120 s a step on 2 cores, scaled by cores up to 8."""
    return 120.0 * 2 / max(1, min(cores, 8))


def expected_wait_text(cores: int | None = None, path: Path | None = None) -> Text:
    """One sentence on the wait for a step on this computer's processor (cheap: no torch import), for the
    first-run wizard. Uses the runtime measured on processors without bf16 units (AVX2: fp16 weights, else
    fp32), the slower and commoner case; figures from another class of processor only as a stated estimate."""
    cores = cores or os.cpu_count() or 1
    small = get_profile(load_profiles().cpu_default)
    measured = (measured_cpu_step("0.8b", cores, "fp16w", path, cpu_class="avx2")
                or measured_cpu_step("0.8b", cores, "fp32", path, cpu_class="avx2"))
    if measured and not measured["other_class"]:
        return _fmt_wait(small.title, _speed(measured["step_s"]))
    measured = measured or measured_cpu_step("0.8b", cores, "fp32", path) or measured_cpu_step("0.8b", cores, "bf16", path)
    if measured:
        wait, note = _fmt_wait(small.title, _speed(measured["step_s"])), CPU_MESSAGES["other_class"]
        return Text(wait.en + " " + note.en, wait.zh + note.zh)
    wait, note = _fmt_wait(small.title, _speed(_estimate_s(cores))), CPU_MESSAGES["estimate"]
    return Text(wait.en + " " + note.en, wait.zh + note.zh)


def _fmt_wait(title: Text, speed: Text) -> Text:
    t = CPU_MESSAGES["wait"]
    return Text(t.en.format(title=title.en, speed=speed.en), t.zh.format(title=title.zh, speed=speed.zh))


def parse_run_key(key: str) -> tuple[str, str, int] | None:
    """A measured run's key, "CLASS:SIZE/THREADS" ("avx2:0.8b/2"), as (class, size, threads); a key without
    a class ("0.8b/2", older files) has class ""."""
    klass, _, rest = key.rpartition(":")
    size, _, threads = rest.partition("/")
    return (klass, size, int(threads)) if size and threads.isdigit() else None


def measured_cpu_step(size: str, cores: int, compute: str, path: Path | None = None, *,
                      cpu_class: str | None = None) -> dict | None:
    """The measured CPU step for a model size ("0.8b", "4b") and runtime ("fp16w", "bf16", ...) on `cores`
    cores, on a processor of `cpu_class` ("bf16-units", "avx2"; None: any).

    Returns {"step_s", "peak_rss_gb", "threads", "max_pixels", "think_budget", "cpu_class", "other_class"}
    from the measured file (the machine plan's step): of the entries of that class (of any class when it
    has none: then "other_class" is True), with a thread count not above `cores` (or the smallest), the
    fastest, its time scaled by threads/cores when this computer has more cores than any measurement used
    (up to 8; a rough, optimistic scaling, which is why the figure is said as "about"). None when nothing
    is measured."""
    source = path or MEASURED_FILE
    try:
        runs = json.loads(source.read_text(encoding="utf-8")).get("runs", {})
    except (OSError, ValueError, AttributeError):
        log.warning("no measured CPU step figures at %s; the expected wait is an estimate", source)
        return None
    found = []
    for key, entry in runs.items():
        parsed = parse_run_key(key)
        runtime = entry.get("runtimes", {}).get(compute) if isinstance(entry, dict) else None
        if parsed and parsed[1] == size and runtime:
            found.append((parsed[0], parsed[2], runtime))
    same = [f for f in found if cpu_class is None or f[0] == cpu_class]
    other_class = not same
    entries = [(threads, runtime) for klass, threads, runtime in (same or found)]
    if not entries:
        return None
    klass = (same or found)[0][0]
    entries.sort(key=lambda e: e[0])
    fitting = [e for e in entries if e[0] <= max(1, cores)] or entries[:1]
    usable = min(max(1, cores), 8)

    def step_of(entry: tuple[int, dict]) -> float:
        plan = entry[1].get("machine_plan", {})
        return float(plan.get("step_s") or entry[1]["step_s"])

    # the fastest measured thread count that fits (on a busy machine fewer threads can be faster); scaled
    # only when this computer has more cores than any measurement used
    threads, runtime = min(fitting, key=lambda e: (step_of(e), -e[0]))
    plan = runtime.get("machine_plan", {})
    step = step_of((threads, runtime))
    if usable > entries[-1][0]:
        step *= threads / usable
    return {"step_s": step, "peak_rss_gb": float(runtime.get("peak_rss_gb") or 0.0), "threads": threads,
            "max_pixels": plan.get("max_pixels"), "think_budget": plan.get("think_budget"),
            "cpu_class": klass, "other_class": other_class}


# Below this much free GPU memory the 4B nf4 model (about 3.4 GB of weights plus activations for a
# 1.3-megapixel screenshot and an 8k-token thought) does not fit comfortably.
MIN_VRAM_4B_NF4_GB = 6.0
ROOM_FOR_BF16_GB = 14.0


@dataclass(frozen=True)
class Hardware:
    cuda: bool
    gpu_name: str = ""
    vram_gb: float = 0.0
    cpu_cores: int = 1
    ram_gb: float = 0.0
    bf16_units: bool = False  # AMX or AVX512-BF16: bf16 matmuls are fast (the class measured figures are keyed by)
    fp16_weights: bool = False  # x86 with AVX2 and fbgemm's fp16 GEMM (cpu_fp16w_modules)

    @property
    def cpu_class(self) -> str:
        """The class of processor the measured figures are keyed by (cpu_runtime.cpu_class)."""
        return "bf16-units" if self.bf16_units else "avx2" if self.fp16_weights else "basic"

    @property
    def cpu_compute(self) -> str:
        """The CPU runtime's precision plan here (cpu_runtime.choose_compute)."""
        return "fp16w" if self.fp16_weights else "bf16" if self.bf16_units else "fp32"


@dataclass(frozen=True)
class Recommendation:
    profile: str
    device: str  # "cuda" or "cpu"
    quantization: str  # nf4, int8, bf16, fp32
    memory_gb: float
    seconds_per_step: float
    message: Text
    extra: Text | None = None
    runtime: str = "transformers"  # transformers, or cpu (cpu_runtime.CpuRuntime)
    max_pixels: int | None = None  # the screenshot budget chosen for this machine (None: the profile's)
    think_budget: int | None = None  # thinking tokens before the runtime closes the thought (None: no limit)

    def describe(self) -> Text:
        if self.extra is None:
            return self.message
        return Text(self.message.en + " " + self.extra.en, self.message.zh + self.extra.zh)


def detect_hardware() -> Hardware:
    """Inspect this computer. Imports torch (slow the first time)."""
    import torch

    cores = os.cpu_count() or 1
    ram = 0.0
    try:
        import psutil

        ram = psutil.virtual_memory().total / 2**30
    except ImportError:
        log.debug("psutil not installed; RAM unknown")
    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        return Hardware(cuda=True, gpu_name=props.name, vram_gb=props.total_memory / 2**30, cpu_cores=cores,
                        ram_gb=ram)
    from assistant_core.policy.cpu_runtime import choose_compute, cpu_class, cpu_features

    features = cpu_features()
    return Hardware(cuda=False, cpu_cores=cores, ram_gb=ram, bf16_units=cpu_class(features) == "bf16-units",
                    fp16_weights=choose_compute(features) == "fp16w")


def _speed(seconds: float) -> Text:
    if seconds < 90:
        return MESSAGES["seconds"].format(n=max(1, seconds))
    return MESSAGES["minutes"].format(n=seconds / 60)


def _fmt(key: str, speed: Text, **values: object) -> Text:
    t = MESSAGES[key]
    return Text(t.en.format(speed=speed.en, **values), t.zh.format(speed=speed.zh, **values))


def recommend(hw: Hardware) -> Recommendation:
    """The model, device and precision to run on `hw`, with the explanation for the user."""
    book = load_profiles()
    big, small = get_profile(book.default), get_profile(book.cpu_default)
    if hw.cuda and hw.vram_gb >= MIN_VRAM_4B_NF4_GB:
        mem = big.weights_gb("nf4") + 1.5
        secs = 2.0
        extra = None
        if hw.vram_gb >= ROOM_FOR_BF16_GB:
            extra = MESSAGES["bf16_option"].format(mem=big.weights_gb("bf16") + 1.5)
        return Recommendation(big.name, "cuda", "nf4", mem, secs,
                              _fmt("gpu_4b", _speed(secs), title=big.title.en, gpu=hw.gpu_name, vram=hw.vram_gb,
                                   mem=mem), extra)
    if hw.cuda:
        mem = small.weights_gb("bf16") + 1.0
        secs = 1.5
        return Recommendation(small.name, "cuda", "bf16", mem, secs,
                              _fmt("gpu_small", _speed(secs), title=small.title.en, gpu=hw.gpu_name,
                                   vram=hw.vram_gb, mem=mem))
    # CPU: the fast runtime (fp16 weights on x86 CPUs with AVX2, bf16 matmuls with bf16 units and no fp16
    # GEMM, fp32 otherwise: cpu_runtime.choose_compute), timed from the figures measured on this class of
    # processor.
    compute = hw.cpu_compute
    if compute in ("fp32", "fp16w") and 0 < hw.ram_gb < (8 if compute == "fp32" else 4):
        compute = "nf4"  # not enough memory for the weights: transformers + bitsandbytes nf4 (not measured)
    measured = None
    if compute != "nf4":
        measured = measured_cpu_step("0.8b", hw.cpu_cores, compute, cpu_class=hw.cpu_class)
        if compute == "fp16w" and (measured is None or measured["other_class"]):
            # fp16 weights not measured on this class yet: its fp32 figure is the slower bound, and closer
            # than another class's fp16w one
            slower = measured_cpu_step("0.8b", hw.cpu_cores, "fp32", cpu_class=hw.cpu_class)
            if slower is not None and (measured is None or not slower["other_class"]):
                measured = slower
    from assistant_core.policy.cpu_runtime import machine_plan

    plan = machine_plan(small, hw.cpu_cores)
    extra = None
    if measured:
        secs, mem = measured["step_s"], max(measured["peak_rss_gb"], 1.0)
        if measured["other_class"]:
            extra = CPU_MESSAGES["other_class"]
    else:  # nothing measured (nf4, or the file is missing): a cautious estimate, said to be one
        secs, mem = _estimate_s(hw.cpu_cores), small.weights_gb(compute) + 1.5
        extra = CPU_MESSAGES["estimate"]
    label = CPU_MESSAGES[compute]
    t = CPU_MESSAGES["cpu_fast"]
    speed = _speed(secs)
    message = Text(
        t.en.format(title=small.title.en, cores=hw.cpu_cores, precision=label.en, mem=mem, speed=speed.en),
        t.zh.format(title=small.title.zh, cores=hw.cpu_cores, precision=label.zh, mem=mem, speed=speed.zh))
    return Recommendation(small.name, "cpu", compute, round(mem, 1), round(secs, 1), message, extra,
                          runtime="transformers" if compute == "nf4" else "cpu",
                          max_pixels=plan.max_pixels, think_budget=plan.think_budget)
