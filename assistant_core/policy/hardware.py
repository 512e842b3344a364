"""Which model and precision this computer should run, and how to say so to the user.

`detect_hardware()` looks at the machine (torch is imported inside it, lazily); `recommend(hw)` is pure and
testable: with a CUDA GPU of enough memory, PhoneBuddy-4B in 4-bit nf4 (double quantization, bf16
compute); without one, PhoneBuddy-0.8B on the CPU in fp32 (nf4 when memory is short), because a 4B model on
a laptop CPU takes minutes a step. `Recommendation.describe()` is the bilingual explanation (choice, memory,
expected speed) the app shows on first run and `phonebuddy policy recommend` prints.

Speed figures are estimates from measurements on similar hardware (see bench/bench_policy.py and
bench/gpu_policy.py): they are shown as "about", never promised.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

from assistant_core.i18n import Catalog, Text
from assistant_core.policy.profiles import get_profile, load_profiles

log = logging.getLogger(__name__)

MESSAGES = Catalog("policy_hardware", {
    "gpu_4b": (
        "Using {title} on your graphics card ({gpu}, {vram:.0f} GB) in 4-bit: about {mem:.1f} GB of graphics "
        "memory, about {speed} a step.",
        "在显卡（{gpu}，{vram:.0f} GB）上以 4 位精度运行 {title}：约占 {mem:.1f} GB 显存，每步约 {speed}。"),
    "gpu_small": (
        "Your graphics card ({gpu}) has {vram:.1f} GB of memory, too little for the 4B model, so {title} runs on "
        "it instead: about {mem:.1f} GB, about {speed} a step.",
        "您的显卡（{gpu}）只有 {vram:.1f} GB 显存，放不下 4B 模型，所以改用 {title}：约占 {mem:.1f} GB，每步约 {speed}。"),
    "cpu": (
        "No CUDA graphics card was found, so {title} runs on the processor ({cores} cores) in {precision}: about "
        "{mem:.1f} GB of memory, about {speed} a step. The 4B model would take minutes a step here; for faster "
        "help, connect to a PhoneBuddy server in Settings.",
        "没有找到 CUDA 显卡，所以 {title} 在处理器（{cores} 核）上以 {precision} 精度运行：约占 {mem:.1f} GB 内存，"
        "每步约 {speed}。4B 模型在这里每步要几分钟；想更快，可以在设置里连接 PhoneBuddy 服务器。"),
    "bf16_option": (
        "Your card has room for full bf16 precision too (about {mem:.1f} GB), which decodes faster; choose it in "
        "Settings.",
        "您的显卡也放得下完整的 bf16 精度（约 {mem:.1f} GB），解码更快；可在设置中选择。"),
    "seconds": ("{n:.0f} seconds", "{n:.0f} 秒"),
    "minutes": ("{n:.0f} minutes", "{n:.0f} 分钟"),
})

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


@dataclass(frozen=True)
class Recommendation:
    profile: str
    device: str  # "cuda" or "cpu"
    quantization: str  # nf4, int8, bf16, fp32
    memory_gb: float
    seconds_per_step: float
    message: Text
    extra: Text | None = None

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
    return Hardware(cuda=False, cpu_cores=cores, ram_gb=ram)


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
    # CPU: fp32 compute (bf16 is ~4x slower on CPUs without bf16 units); nf4 storage when RAM is short.
    precision = "fp32" if hw.ram_gb == 0 or hw.ram_gb >= 8 else "nf4"
    mem = small.weights_gb(precision) + 1.5
    # About 2 minutes a step on 2 cores (1,300-token prefill plus a ~200-token thought), scaling with cores.
    secs = 120.0 * 2 / max(1, min(hw.cpu_cores, 16))
    label = Text("fp32", "fp32") if precision == "fp32" else Text("4-bit nf4", "4 位 nf4")
    t = MESSAGES["cpu"]
    speed = _speed(secs)
    message = Text(
        t.en.format(title=small.title.en, cores=hw.cpu_cores, precision=label.en, mem=mem, speed=speed.en),
        t.zh.format(title=small.title.zh, cores=hw.cpu_cores, precision=label.zh, mem=mem, speed=speed.zh))
    return Recommendation(small.name, "cpu", precision, mem, secs, message)
