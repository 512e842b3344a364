"""Training and evaluation configs: frozen dataclasses read from JSON or YAML files.

`load_config(path, SftConfig)` reads a file whose top level is a mapping; every key must be a field of
the config class (an unknown key is a `ConfigError` naming it, the closest valid key and the list of
valid keys, because a typo such as `learning_rat` silently ignored would train with the default).
Values are checked against the field's type (int, float, str, bool, optional, lists and mappings of
those); command-line overrides go through `with_overrides`, with the same checks.

Configs hold what a run needs to be reproduced; the run folder keeps a copy (`config.json`).
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import types
import typing
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, TypeVar

from training.errors import ConfigError

# The LoRA targets: the language model's attention and MLP projections (the vision tower stays frozen).
DEFAULT_LORA_TARGETS = (r".*language_model.*\.(q_proj|k_proj|v_proj|o_proj|gate_proj|up_proj|down_proj"
                        r"|in_proj_qkv|in_proj_z|out_proj)")

CATEGORIES = ("single_app", "cross_app", "mini_app", "ask_user", "safety")


@dataclass(frozen=True)
class SftConfig:
    """Supervised fine-tuning with LoRA (QLoRA on CUDA) on a dataset written by `training.data`."""

    base_model: str
    dataset: str
    output: str = "runs"  # the folder that receives the run folder (run-<kind>-<stamp>/)
    run_name: str = ""
    quantization: str = "auto"  # auto (nf4 on CUDA, none on CPU) | none | nf4
    lora_r: int = 16
    lora_alpha: int = 32
    lora_dropout: float = 0.0
    lora_targets: str = DEFAULT_LORA_TARGETS
    lora_modules_to_save: tuple[str, ...] = ()  # small modules trained in full (e.g. "language_model.norm")
    learning_rate: float = 2e-4
    lr_scheduler: str = "linear"
    max_steps: int = 200
    batch_size: int = 1
    grad_accum: int = 1
    warmup_steps: int = 0
    weight_decay: float = 0.0
    max_grad_norm: float = 1.0
    seed: int = 0
    save_steps: int = 100  # checkpoint every N steps (resumable); 0 = only the final adapter
    resume: bool = True  # continue from the newest checkpoint of the same run folder
    logging_steps: int = 1
    image_longest_edge: int = 1280 * 32 * 32  # pixels; bounds the visual tokens of a screenshot
    min_free_mb: int = 512  # refuse to start (or save) with less free disk than this
    gradient_checkpointing: bool = False

    def __post_init__(self) -> None:
        _positive(self, "lora_r", "max_steps", "batch_size", "grad_accum", "logging_steps", "image_longest_edge")
        _one_of(self, "quantization", ("auto", "none", "nf4"))
        if self.learning_rate <= 0:
            raise ConfigError(f"learning_rate must be positive, got {self.learning_rate}")


@dataclass(frozen=True)
class RlConfig:
    """GRPO on PhoneWorld-lite: rollouts through the environment's tools, rewards from verifiers."""

    base_model: str
    adapter: str = ""  # start from an SFT adapter (folder written by `train sft`)
    output: str = "runs"
    run_name: str = ""
    tasks: tuple[str, ...] = ()  # task ids; empty = every task of the categories in `mix`
    mix: dict[str, float] = field(default_factory=lambda: {"single_app": 0.5, "cross_app": 0.25, "mini_app": 0.25})
    seeds: tuple[int, ...] = tuple(range(100, 132))  # training seeds (evaluation uses others)
    language: str = "en"  # en | zh | mixed
    num_examples: int = 64  # rows drawn for the training set by the mix
    allowed_apps: tuple[str, ...] = ()  # the caregiver's allowed packages inside rollouts; empty = all installed
    max_pixels: int = 0  # first screenshot's pixel budget; 0 = the profile's
    profile: str = "phonebuddy-4b"
    quantization: str = "auto"
    lora_r: int = 16
    lora_alpha: int = 32
    lora_targets: str = DEFAULT_LORA_TARGETS
    lora_modules_to_save: tuple[str, ...] = ()
    learning_rate: float = 1e-5
    max_steps: int = 50
    batch_size: int = 4
    grad_accum: int = 1
    num_generations: int = 4
    max_turns: int = 8  # tool calls per rollout
    max_completion_length: int = 4096  # the whole trajectory, screenshot tokens of every step included
    temperature: float = 1.0
    beta: float = 0.0
    format_reward: float = 0.1  # weight of the well-formed-reply reward; success is worth 1.0
    screenshot_scale: float = 0.25  # tool replies carry the new screenshot scaled by this factor
    vllm: str = "auto"  # auto (when installed and on CUDA) | on | off
    seed: int = 0
    save_steps: int = 25
    resume: bool = True
    logging_steps: int = 1
    image_longest_edge: int = 1280 * 32 * 32
    min_free_mb: int = 512
    # Real+Mock: the share of episodes run on connected phones (rewarded only by the device-level outcome
    # check, every confirmation answered no), their adb serials, and the requests they get (training.rl.PHONE_GOALS).
    phone_share: float = 0.0
    phones: tuple[str, ...] = ()
    phone_goals: tuple[str, ...] = ("wifi_on", "bluetooth_on")
    adb_port: int = 0  # the adb server's port; 0 = ANDROID_ADB_SERVER_PORT or 5037
    vllm_mode: str = "colocate"  # colocate | server (`trl vllm-serve` on other GPUs, see docs/capture.md)
    vllm_server_url: str = ""  # server mode: e.g. http://gpu-node-0:8000

    def __post_init__(self) -> None:
        _one_of(self, "vllm_mode", ("colocate", "server"))
        if not 0 <= self.phone_share <= 1:
            raise ConfigError(f"phone_share must be between 0 and 1, got {self.phone_share}")
        if self.phone_share > 0 and len(self.phones) < self.batch_size:
            raise ConfigError(f"phone_share > 0 needs a phone per rollout of a batch: {len(self.phones)} phones "
                              f"for batch_size {self.batch_size}; list more serials in phones or lower batch_size")
        _positive(self, "max_steps", "batch_size", "grad_accum", "num_generations", "max_turns",
                  "max_completion_length", "num_examples", "logging_steps", "image_longest_edge")
        _one_of(self, "quantization", ("auto", "none", "nf4"))
        _one_of(self, "vllm", ("auto", "on", "off"))
        _one_of(self, "language", ("en", "zh", "mixed"))
        bad = sorted(set(self.mix) - set(CATEGORIES))
        if bad:
            raise ConfigError(f"mix: unknown categories {bad}; valid: {list(CATEGORIES)}")
        if any(w < 0 for w in self.mix.values()) or (not self.tasks and sum(self.mix.values()) <= 0):
            raise ConfigError("mix: weights must be >= 0 and at least one must be positive")
        if (self.batch_size * self.grad_accum) % self.num_generations:
            raise ConfigError(
                f"num_generations ({self.num_generations}) must divide batch_size x grad_accum "
                f"({self.batch_size} x {self.grad_accum})"
            )
        if not self.seeds:
            raise ConfigError("seeds: give at least one training seed")
        if not 0 < self.screenshot_scale <= 1:
            raise ConfigError(f"screenshot_scale must be in (0, 1], got {self.screenshot_scale}")


@dataclass(frozen=True)
class EvalConfig:
    """Evaluation over held-out PhoneWorld-lite tasks and seeds."""

    policy: str = "oracle"  # a phonebuddy.policyspec backend: oracle | noop | scripted | local | cpu | remote
    script: str = ""  # scripted: a replies file, or a folder of TASK.txt / TASK-SEED.txt files
    model: str = ""  # local: model folder; remote: model name
    adapter: str = ""  # local: LoRA adapter folder
    endpoint: str = ""  # remote: OpenAI-compatible base URL
    profile: str = "phonebuddy-4b"
    max_pixels: int = 0  # screenshot pixel budget for model policies; 0 = the profile's
    max_new_tokens: int = 0  # 0 = the profile's
    tasks: tuple[str, ...] = ()
    categories: tuple[str, ...] = CATEGORIES
    seeds: tuple[int, ...] = (0, 1)  # held out from training (RL uses 100+ by default)
    language: str = "en"
    max_steps: int = 0  # 0 = each task's own budget
    output: str = "runs"
    run_name: str = ""

    def __post_init__(self) -> None:
        from phonebuddy.policyspec import BUILDERS  # every backend the front hall's factory builds

        _one_of(self, "policy", tuple(sorted(BUILDERS)))
        _one_of(self, "language", ("en", "zh"))
        bad = sorted(set(self.categories) - set(CATEGORIES))
        if bad:
            raise ConfigError(f"categories: unknown {bad}; valid: {list(CATEGORIES)}")
        if not self.seeds:
            raise ConfigError("seeds: give at least one seed")


C = TypeVar("C")


def load_config(path: str | Path, cls: type[C], **overrides: Any) -> C:
    """Read `cls` from a JSON (.json) or YAML (.yaml/.yml) file; `overrides` win over the file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {path}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path} is not a text file (a JSON or YAML config was expected)") from None
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from None
    try:
        data = _parse(text, yaml_file=path.suffix.lower() in (".yaml", ".yml"))
    except ValueError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of settings, got {type(data).__name__}")
    data = {**data, **{k: v for k, v in overrides.items() if v is not None}}
    return config_from_dict(cls, data, source=str(path))


def _parse(text: str, *, yaml_file: bool) -> Any:
    """The file's data; a ValueError names the syntax problem."""
    if not yaml_file:
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"not valid JSON: {exc}") from None
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValueError(f"not valid YAML: {exc}") from None


def config_from_dict(cls: type[C], data: dict[str, Any], *, source: str = "config") -> C:
    """Build and validate `cls` from a mapping; unknown keys and wrong types are ConfigErrors."""
    valid = {f.name: f for f in fields(cls)}  # type: ignore[arg-type]
    unknown = [k for k in data if k not in valid]
    if unknown:
        hints = []
        for key in unknown:
            close = difflib.get_close_matches(str(key), list(valid), n=1)
            hints.append(f"{key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
        raise ConfigError(
            f"{source}: unknown setting{'s' if len(unknown) > 1 else ''} {', '.join(hints)}; "
            f"valid settings of {cls.__name__}: {', '.join(valid)}"
        )
    hints_by_name = typing.get_type_hints(cls)
    values = {}
    for key, value in data.items():
        values[key] = _coerce(value, hints_by_name[key], f"{source}: {key}")
    required = [f.name for f in valid.values() if f.default is dataclasses.MISSING
                and f.default_factory is dataclasses.MISSING and f.name not in values]
    if required:
        raise ConfigError(f"{source}: missing required setting{'s' if len(required) > 1 else ''} {required}")
    try:
        return cls(**values)
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from None


def with_overrides(config: C, **overrides: Any) -> C:
    """A copy of `config` with the non-None overrides applied and validated."""
    data = config_to_dict(config)
    data.update({k: v for k, v in overrides.items() if v is not None})
    return config_from_dict(type(config), data)


def config_to_dict(config: Any) -> dict[str, Any]:
    """JSON-ready (tuples become lists)."""
    return json.loads(json.dumps(dataclasses.asdict(config)))


def _coerce(value: Any, hint: Any, where: str) -> Any:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        errors = []
        for arg in (a for a in args if a is not type(None)):
            try:
                return _coerce(value, arg, where)
            except ConfigError as exc:
                errors.append(str(exc))
        raise ConfigError(errors[0] if errors else f"{where}: bad value {value!r}")
    if origin is tuple:
        if not isinstance(value, list | tuple):
            raise ConfigError(f"{where}: expected a list, got {value!r}")
        item = args[0] if args else Any
        return tuple(_coerce(v, item, f"{where}[{i}]") for i, v in enumerate(value))
    if origin is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: expected a mapping, got {value!r}")
        kt, vt = args if args else (Any, Any)
        return {_coerce(k, kt, where): _coerce(v, vt, f"{where}.{k}") for k, v in value.items()}
    if hint is Any:
        return value
    if hint is bool:
        if isinstance(value, bool):
            return value
        raise ConfigError(f"{where}: expected true or false, got {value!r}")
    if hint is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise ConfigError(f"{where}: expected a whole number, got {value!r}")
    if hint is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        raise ConfigError(f"{where}: expected a number, got {value!r}")
    if hint is str:
        if isinstance(value, str):
            return value
        raise ConfigError(f"{where}: expected text, got {value!r}")
    raise ConfigError(f"{where}: unsupported setting type {hint!r}")


def _positive(config: Any, *names: str) -> None:
    for name in names:
        value = getattr(config, name)
        if value <= 0:
            raise ConfigError(f"{name} must be positive, got {value}")


def _one_of(config: Any, name: str, allowed: tuple[str, ...]) -> None:
    value = getattr(config, name)
    if value not in allowed:
        raise ConfigError(f"{name} must be one of {list(allowed)}, got {value!r}")
