"""Model profiles: which model, which reply dialect, which coordinate grid, which screenshot size.

Profiles live in `profiles.json` beside this module (data, not code). `load_profiles()` reads them;
`get_profile(name)` returns one `ModelProfile` or raises `KeyError` with the known names.

A profile's `grid` is what the model's coordinates are divided by: 1000 for PhoneBuddy (0-1000),
1000 for AutoGLM (0-999 in its prompt, divided by 1000 in its runtime), 999 for Qwen3-VL's mobile_use.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache
from pathlib import Path

from assistant_core.i18n import Text

PROFILES_FILE = Path(__file__).with_name("profiles.json")


class Dialect(StrEnum):
    """How a model writes its action."""

    PHONEBUDDY = "phonebuddy"  # <think>..</think><tool_call>{"name": fn, "arguments": {...}}</tool_call>
    AUTOGLM = "autoglm"  # <think>..</think><answer>do(action="Tap", element=[x, y])</answer>
    MOBILE_USE = "mobile_use"  # <tool_call>{"name": "mobile_use", "arguments": {"action": ...}}</tool_call>


class Backend(StrEnum):
    LOCAL = "local"
    REMOTE = "remote"


@dataclass(frozen=True)
class ModelProfile:
    """Everything the runtime needs to talk to one model the way it was trained."""

    name: str
    title: Text
    repo_id: str
    architecture: str  # transformers model_type: qwen3_5, qwen3_vl, ...
    backends: tuple[Backend, ...]
    dialect: Dialect
    prompt: str  # prompt family: the stem of the files in prompts/
    grid: int
    params_b: float
    download_gb: float
    min_pixels: int
    max_pixels: int
    max_new_tokens: int
    jpeg_quality: int = 90
    notes: str = ""

    def __post_init__(self) -> None:
        if self.grid <= 0:
            raise ValueError(f"profile {self.name}: grid must be positive")
        if not 0 < self.min_pixels <= self.max_pixels:
            raise ValueError(f"profile {self.name}: need 0 < min_pixels <= max_pixels")

    @property
    def runs_locally(self) -> bool:
        return Backend.LOCAL in self.backends

    def weights_gb(self, quantization: str) -> float:
        """Approximate weight memory in GB for a quantization (nf4, int8, bf16, fp32)."""
        bytes_per_param = {"nf4": 0.62, "int8": 1.1, "bf16": 2.0, "fp16": 2.0, "fp16w": 2.0, "fp32": 4.0}
        try:
            return round(self.params_b * bytes_per_param[quantization], 1)
        except KeyError:
            raise ValueError(f"unknown quantization {quantization!r}") from None


def _profile_from_json(name: str, data: dict) -> ModelProfile:
    title = data.get("title", [name, name])
    return ModelProfile(
        name=name,
        title=Text(title[0], title[1]),
        repo_id=data["repo_id"],
        architecture=data["architecture"],
        backends=tuple(Backend(b) for b in data["backends"]),
        dialect=Dialect(data["dialect"]),
        prompt=data["prompt"],
        grid=int(data["grid"]),
        params_b=float(data["params_b"]),
        download_gb=float(data["download_gb"]),
        min_pixels=int(data["min_pixels"]),
        max_pixels=int(data["max_pixels"]),
        max_new_tokens=int(data["max_new_tokens"]),
        jpeg_quality=int(data.get("jpeg_quality", 90)),
        notes=data.get("notes", ""),
    )


@dataclass(frozen=True)
class ProfileBook:
    """All profiles plus the defaults (with and without a CUDA GPU)."""

    profiles: dict[str, ModelProfile]
    default: str
    cpu_default: str

    def get(self, name: str) -> ModelProfile:
        try:
            return self.profiles[name]
        except KeyError:
            raise KeyError(f"unknown model profile {name!r}; known: {', '.join(sorted(self.profiles))}") from None


def load_profiles(path: Path | None = None) -> ProfileBook:
    """Read a profiles file (default: the one shipped beside this module)."""
    if path is None:
        return _shipped_profiles()
    return _read(path)


def _read(path: Path) -> ProfileBook:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    profiles = {name: _profile_from_json(name, p) for name, p in data["profiles"].items()}
    book = ProfileBook(profiles=profiles, default=data["default"], cpu_default=data["cpu_default"])
    book.get(book.default)
    book.get(book.cpu_default)
    return book


@lru_cache(maxsize=1)
def _shipped_profiles() -> ProfileBook:
    return _read(PROFILES_FILE)


def get_profile(profile: str | ModelProfile | None = None) -> ModelProfile:
    """A profile by name (None: the default), or the profile itself when one is passed."""
    if isinstance(profile, ModelProfile):
        return profile
    book = load_profiles()
    return book.get(profile or book.default)
