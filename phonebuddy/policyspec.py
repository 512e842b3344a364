"""One policy spec and one factory: every entry point builds its policy here, the same way.

    spec = PolicySpec.parse("remote:http://gpu-box:8000/v1", model="phonebuddy-4b")   # the command line
    policy = build_policy(spec, PolicyTarget(lang="zh", device=device))               # fast path included

`PolicySpec` says which brain runs (`backend`: oracle, noop, scripted, local, cpu, remote), which model
(`model`: a profile name from assistant_core/policy/profiles.json; `model_dir`: a local checkpoint folder),
its limits, and whether the fast path (harness.fastpath: tool actions for requests it understands, no
model) goes first. `PolicyTarget` is what one run adds: the language, the device, and on the simulated
phone the world and task the demonstration oracle solves.

Users: the app (`app/agent.py`: the window's agent choice becomes a spec), `phonebuddy run`
(`phonebuddy/run_cli.py`: `--policy`, `--model`, `--no-fast-path`) and evaluation (`training/cli.py`,
`training/evaluate.py`). They share the defaults of `PolicySpec` (`DEFAULT_FAST_PATH`: the fast path on,
as the app has always had it).

A new backend: its module in `assistant_core/policy/`, one builder registered here with `@backend("name")`,
and its test. `phonebuddy run --policy name` and `phonebuddy train eval --policy name` reach it with no
other change (see docs/architecture.md for the count).

Layering: above assistant_core and harness, never app, speech or training (import-linter contracts).
Heavy imports (torch, transformers) happen inside the builders, when a model backend is built.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assistant_core.i18n import Text
from assistant_core.types import Policy

DEFAULT_BACKEND = "noop"
DEFAULT_FAST_PATH = True  # the app and `phonebuddy run` both try the fast path first

# "phonebuddy" is the command line's older name for the local model.
ALIASES = {"phonebuddy": "local"}


class PolicySpecError(ValueError):
    """A spec that cannot become a policy; `text` says why in both languages."""

    def __init__(self, text: Text):
        self.text = text
        super().__init__(text.en)


@dataclass(frozen=True)
class PolicySpec:
    """Which policy runs (see the module docstring). Frozen: `replace()` makes a variant."""

    backend: str = DEFAULT_BACKEND
    model: str | None = None  # a model profile name; None = the profile's default
    model_dir: str = ""  # local/cpu: a checkpoint folder (else the profile's weights, found offline)
    adapter_dir: str = ""  # local/cpu: a LoRA adapter folder
    url: str = ""  # remote: an OpenAI-compatible base URL
    served_model: str = ""  # remote: the server's model id ("" = discovered)
    script: str = ""  # scripted: a file of raw model replies
    quantization: str | None = None  # local: None = nf4 with CUDA, else fp32
    max_pixels: int | None = None  # screenshot budget (smaller = faster on a CPU)
    max_new_tokens: int | None = None  # reply length
    waits: int = 2  # noop: how many waits before it finishes
    fast_path: bool = DEFAULT_FAST_PATH

    def __post_init__(self) -> None:
        object.__setattr__(self, "backend", ALIASES.get(self.backend, self.backend))

    @classmethod
    def parse(cls, text: str, **fields: Any) -> PolicySpec:
        """A spec from the command line's form: NAME, scripted:FILE or remote:URL (other fields as given)."""
        name, _, rest = text.strip().partition(":")
        name = ALIASES.get(name, name)
        if name == "scripted":
            fields["script"] = rest
        elif name == "remote":
            fields["url"] = rest
        elif rest:
            raise PolicySpecError(Text("--policy {text!r}: {name} takes nothing after ':'.").format(text=text, name=name))
        spec = cls(backend=name, **fields)
        if spec.backend not in BUILDERS:
            raise PolicySpecError(UNKNOWN.format(name=text, known=", ".join(backend_names())))
        return spec

    @property
    def label(self) -> str:
        """A short name for run records ("remote", "oracle", ...)."""
        return self.backend


@dataclass(frozen=True)
class PolicyTarget:
    """What one run adds to a spec."""

    lang: str = "en"
    device: Any = None  # the fast path needs the device (its contacts, its state)
    world: Any = None  # oracle: the simulated phone's world
    task_id: str = ""  # oracle: the task it solves
    seed: int = 0
    params: Any = None  # oracle: the task's parameters (else drawn from the seed)
    on_progress: Callable[[Any], None] | None = None  # local: model-loading progress (LoadProgress)
    planner: Any = None  # the fast path's planner (else harness.fastpath.FastPlanner over the built-in kinds)
    kinds: tuple[Path, ...] = ()  # extra task-kind folders for the fast path's planner


UNKNOWN = Text("--policy {name}: not a policy; expected {known}.")
NO_PROFILE = Text("--model {name}: no such model profile. Known: {known}.")
FORMS = {"scripted": "scripted:FILE", "remote": "remote:URL"}  # how the command line writes them
NEEDS = {
    "oracle": Text("The scripted demonstration works only on the simulated phone, with one of its tasks."),
    "scripted": Text("--policy scripted:FILE needs the file of model replies."),
    "remote": Text("--policy remote:URL needs the server's address, e.g. remote:http://gpu-box:8000/v1"),
}

Builder = Callable[[PolicySpec, PolicyTarget], Policy]
BUILDERS: dict[str, Builder] = {}


def backend(name: str) -> Callable[[Builder], Builder]:
    """Register the builder of one backend (see the module docstring)."""

    def register(builder: Builder) -> Builder:
        BUILDERS[name] = builder
        return builder

    return register


def backend_names() -> list[str]:
    """The backends as the command line writes them (scripted:FILE, remote:URL, noop, ...)."""
    return sorted(FORMS.get(name, name) for name in BUILDERS)


def build_policy(spec: PolicySpec, target: PolicyTarget | None = None) -> Policy:
    """The policy for `spec` on `target`, the fast path in front when the spec asks for it and a device is
    given. Raises PolicySpecError (bilingual) for a spec that cannot run here, and the backends' own
    PolicyUnavailable (bilingual) when a model's weights are missing. Model loading stays lazy."""
    target = target or PolicyTarget()
    builder = BUILDERS.get(spec.backend)
    if builder is None:
        raise PolicySpecError(UNKNOWN.format(name=spec.backend, known=", ".join(backend_names())))
    if spec.model:
        from assistant_core.policy.profiles import load_profiles

        book = load_profiles()
        if spec.model not in book.profiles:
            raise PolicySpecError(NO_PROFILE.format(name=spec.model, known=", ".join(sorted(book.profiles))))
    policy = builder(spec, target)
    if spec.fast_path and target.device is not None:
        policy = with_fast_path(policy, target)
    return policy


def with_fast_path(fallback: Policy, target: PolicyTarget) -> Policy:
    """harness.fastpath's policy in front of `fallback`, which gets every request it does not plan."""
    from harness.fastpath import FastPathPolicy, FastPlanner

    planner = target.planner
    if planner is None:
        from harness.verify import KindRegistry

        planner = FastPlanner(KindRegistry.load(extra=list(target.kinds)))
    return FastPathPolicy(planner, fallback=fallback, device=target.device, lang=target.lang)


# -- the backends -----------------------------------------------------------------------------------


@backend("noop")
def _noop(spec: PolicySpec, target: PolicyTarget) -> Policy:
    from assistant_core.policies import NoopPolicy

    return NoopPolicy(waits=spec.waits)


@backend("scripted")
def _scripted(spec: PolicySpec, target: PolicyTarget) -> Policy:
    from assistant_core.policies import ScriptedPolicy

    if not spec.script.strip():
        raise PolicySpecError(NEEDS["scripted"])
    if spec.model:
        return ScriptedPolicy.from_file(spec.script, profile=spec.model)
    return ScriptedPolicy.from_file(spec.script)


@backend("oracle")
def _oracle(spec: PolicySpec, target: PolicyTarget) -> Policy:
    from harness.phoneworld.oracle import OraclePolicy

    if target.world is None or not target.task_id:
        raise PolicySpecError(NEEDS["oracle"])
    return OraclePolicy(target.task_id, target.seed, target.world, language=target.lang, params=target.params)


@backend("remote")
def _remote(spec: PolicySpec, target: PolicyTarget) -> Policy:
    from assistant_core.policy.remote import RemotePolicy

    if not spec.url.strip():
        raise PolicySpecError(NEEDS["remote"])
    return RemotePolicy(spec.url, profile=spec.model, model=spec.served_model or None, lang=target.lang,
                        max_pixels=spec.max_pixels, max_new_tokens=spec.max_new_tokens)


def _local_folder(spec: PolicySpec) -> str:
    """The checkpoint folder: the spec's, else the profile's weights found offline (PolicyUnavailable, bilingual,
    when they are missing or the profile runs only on a server)."""
    from assistant_core.policy.errors import unavailable
    from assistant_core.policy.profiles import get_profile
    from assistant_core.policy.weights import locate_weights

    profile = get_profile(spec.model)
    if not profile.runs_locally:
        raise unavailable("not_local", title=profile.title.en)
    return spec.model_dir or str(locate_weights(profile))


def _limits(spec: PolicySpec, target: PolicyTarget) -> dict[str, Any]:
    return {"max_pixels": spec.max_pixels, "max_new_tokens": spec.max_new_tokens, "on_progress": target.on_progress,
            "adapter_dir": spec.adapter_dir or None}


@backend("local")
def _local(spec: PolicySpec, target: PolicyTarget) -> Policy:
    """The local model: nf4 on a CUDA GPU, fp32 on the CPU (LocalPolicy's own choice) unless quantized."""
    from assistant_core.policy.local import LocalPolicy

    extra = {"quantization": spec.quantization} if spec.quantization else {}
    return LocalPolicy(_local_folder(spec), profile=spec.model, lang=target.lang, **extra, **_limits(spec, target))


@backend("cpu")
def _cpu(spec: PolicySpec, target: PolicyTarget) -> Policy:
    """The local model on the CPU, through the CPU runtime where it applies (assistant_core.policy.cpu_runtime)."""
    from assistant_core.policy.local import LocalPolicy

    return LocalPolicy(_local_folder(spec), profile=spec.model, quantization="fp32", device="cpu", lang=target.lang,
                       runtime="auto", **_limits(spec, target))


__all__ = ["BUILDERS", "DEFAULT_BACKEND", "DEFAULT_FAST_PATH", "PolicySpec", "PolicySpecError", "PolicyTarget",
           "backend", "backend_names", "build_policy", "with_fast_path"]
