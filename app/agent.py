"""Choosing the agent that drives the phone, and turning the loop's events into what the window shows.

- `AgentChoice`: which brain runs. Before any model is downloaded the simulated phone runs the
  PhoneWorld-lite oracle, labelled "scripted demonstration"; with weights present the real policy runs
  (local 4-bit, local CPU); a caregiver can point it at a server.
- `match_demo_task`: the scripted demonstration can only do the phone's own tasks, so a request is
  matched to the closest task instruction (both languages); no close match means we say what it can do.
- `make_policy`: the Policy object for a choice (OraclePolicy, or assistant_core.policy's backends).
"""

from __future__ import annotations

import difflib
import logging
import re
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from assistant_core.i18n import Text
from assistant_core.types import Policy

log = logging.getLogger(__name__)


class AgentKind(StrEnum):
    DEMO = "demo"
    LOCAL_4BIT = "local_4bit"
    LOCAL_CPU = "local_cpu"
    SERVER = "server"


AGENT_LABEL_KEYS = {
    AgentKind.DEMO: "agent_demo",
    AgentKind.LOCAL_4BIT: "agent_local_4bit",
    AgentKind.LOCAL_CPU: "agent_local_cpu",
    AgentKind.SERVER: "agent_server",
}


class AgentUnavailableError(RuntimeError):
    """The chosen agent cannot run; `text` says why in both languages."""

    def __init__(self, text: Text):
        self.text = text
        super().__init__(text.en)


@dataclass(frozen=True)
class AgentChoice:
    kind: AgentKind
    server_address: str = ""
    model_dir: str = ""  # a local checkpoint folder (else the profile's weights in the cache)
    profile: str = ""  # an assistant_core.policy profile name ("" = the default)
    max_pixels: int | None = None  # screenshot budget override (smaller = faster on a CPU)
    max_new_tokens: int | None = None  # reply length override

    def label(self, lang: str) -> str:
        from app.strings import tr

        if self.kind is AgentKind.SERVER:
            return tr("agent_server", lang, address=self.server_address)
        return tr(AGENT_LABEL_KEYS[self.kind], lang)


NO_LOCAL_RUNTIME = Text("This installation has no local model runtime: the installer leaves torch and transformers out to stay small. Set a model server address in Settings, or install the ML pack (see the installers README), then try again.")


def check_server_address(text: str) -> str:
    """The server address `text` (an OpenAI-compatible base URL such as http://192.168.1.20:8000/v1),
    stripped; raises ValueError when it is not one: no http:// or https://, no host, a bad port, or
    spaces inside."""
    from urllib.parse import urlsplit

    address = text.strip()
    if not address or any(ch.isspace() for ch in address):
        raise ValueError(f"not a server address: {text!r}")
    parts = urlsplit(address)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not a server address: {text!r}")
    host = parts.hostname
    if not re.fullmatch(r"[A-Za-z0-9.\-]+|[0-9A-Fa-f:.]+", host) or host.startswith(("-", ".")) or ".." in host:
        raise ValueError(f"not a server address: {text!r}")
    port = parts.port  # raises ValueError for a port that is not a number from 0 to 65535
    if port == 0:
        raise ValueError(f"not a server address: {text!r}")
    return address


def local_runtime_present() -> bool:
    """Whether torch and transformers can be imported here (the default installer bundle lacks them)."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("torch", "transformers"))


def weights_present(profile: str | None = None) -> bool:
    """Whether the policy's weights are on this computer (assistant_core.policy.weights, no network)."""
    from assistant_core.policy.errors import PolicyUnavailable
    from assistant_core.policy.weights import locate_weights

    try:
        locate_weights(profile)
    except PolicyUnavailable:
        return False
    return True


def choose_agent(preferred: AgentKind | None, *, simulated: bool, have_weights: bool, server: str = "",
                 profile: str = "", cuda: bool = False) -> AgentChoice:
    """The agent to run. A server wins when one is set; weights present run the real policy (4-bit on a
    CUDA GPU, else the CPU); no weights and no server: the scripted demonstration."""
    if preferred is AgentKind.SERVER and server:
        return AgentChoice(AgentKind.SERVER, server_address=server, profile=profile)
    if preferred in (AgentKind.LOCAL_4BIT, AgentKind.LOCAL_CPU) and have_weights:
        return AgentChoice(preferred, profile=profile)
    if preferred is AgentKind.DEMO and simulated:
        return AgentChoice(AgentKind.DEMO)
    if have_weights:
        return AgentChoice(AgentKind.LOCAL_4BIT if cuda else AgentKind.LOCAL_CPU, profile=profile)
    if server:
        return AgentChoice(AgentKind.SERVER, server_address=server, profile=profile)
    return AgentChoice(AgentKind.DEMO)


# -- the scripted demonstration ------------------------------------------------------------------


@dataclass(frozen=True)
class DemoMatch:
    task_id: str
    instruction: str
    score: float


def _norm(text: str) -> str:
    text = text.lower().replace("-", "").replace("wlan", "wifi")
    return re.sub(r"[\s\W_]+", " ", text).strip()


_HAN = re.compile(r"[\u4e00-\u9fff]")


def _tokens(text: str) -> set[str]:
    """Words for English, character pairs for Chinese (which has no spaces)."""
    out: set[str] = set()
    for word in text.split():
        if re.search(r"[\u4e00-\u9fff]", word):
            out |= {word[i:i + 2] for i in range(max(1, len(word) - 1))}
        else:
            out.add(word)
    return out


def match_score(request: str, instruction: str) -> float:
    """How well a request matches a task instruction: the larger of the character similarity and the
    share of the instruction's words (or Chinese character pairs) found in the request."""
    a, b = _norm(request), _norm(instruction)
    if not a or not b:
        return 0.0
    ratio = difflib.SequenceMatcher(None, a, b).ratio()
    want = _tokens(b)
    covered = len(want & _tokens(a)) / len(want) if want else 0.0
    return max(ratio, covered, _sound_ratio(a, b))


def _sound_ratio(a: str, b: str) -> float:
    """Chinese compared by sound (toneless pinyin syllables): the recogniser writes a name it cannot know
    with other characters of the same sound (糖酥飞 for 唐苏菲). 0.0 unless both are Chinese."""
    if not (_HAN.search(a) and _HAN.search(b)):
        return 0.0
    try:
        from pypinyin import lazy_pinyin  # the "speech" extra (the Chinese voice's front end)
    except ImportError:
        return 0.0

    return difflib.SequenceMatcher(None, lazy_pinyin(a), lazy_pinyin(b)).ratio()


def demo_tasks(seed: int = 0) -> list[tuple[str, Text]]:
    """(task id, instruction) for every PhoneWorld-lite task, with the seed's parameters."""
    from harness.phoneworld.tasks import registry

    out = []
    for task in registry.TASKS:
        params = task.params(task.rng_for(seed))
        out.append((task.id, task.instruction(params)))
    return out


def match_demo_task(request: str, *, seed: int = 0, cutoff: float = 0.7) -> DemoMatch | None:
    """The PhoneWorld-lite task whose instruction (English or Chinese) is closest to `request`."""
    if not _norm(request):
        return None
    best: DemoMatch | None = None
    for task_id, text in demo_tasks(seed):
        for instruction in (text.en, text.zh):
            score = match_score(request, instruction)
            if best is None or score > best.score:
                best = DemoMatch(task_id, instruction, score)
    if best is None or best.score < cutoff:
        return None
    return best


def policy_spec(choice: AgentChoice) -> Any:
    """The front hall's PolicySpec for a choice (phonebuddy.policyspec: one spec, one factory, one default)."""
    from phonebuddy.policyspec import PolicySpec

    backend = {AgentKind.DEMO: "oracle", AgentKind.SERVER: "remote", AgentKind.LOCAL_4BIT: "local",
               AgentKind.LOCAL_CPU: "cpu"}[choice.kind]
    return PolicySpec(backend=backend, model=choice.profile or None, model_dir=choice.model_dir,
                      url=choice.server_address, quantization="nf4" if choice.kind is AgentKind.LOCAL_4BIT else None,
                      max_pixels=choice.max_pixels, max_new_tokens=choice.max_new_tokens)


def make_policy(choice: AgentChoice, *, lang: str, world: Any = None, task_id: str = "", seed: int = 0,
                on_progress: Any = None) -> Policy:
    """The Policy for a choice, built by the front hall's factory (phonebuddy.policyspec.build_policy): the
    oracle for the demo (it needs the simulated world and a matched task), the local model (4-bit nf4 on
    CUDA, fp32 on the CPU) or a server. The fast path is put in front by app.runner, which knows whether a
    demonstration task matched. Model loading is lazy: it happens at the first step, on the worker thread;
    `on_progress` receives LocalPolicy's LoadProgress reports there."""
    from phonebuddy.policyspec import PolicySpecError, PolicyTarget, build_policy

    if choice.kind in (AgentKind.LOCAL_4BIT, AgentKind.LOCAL_CPU) and not local_runtime_present():
        raise AgentUnavailableError(NO_LOCAL_RUNTIME)
    spec = replace(policy_spec(choice), fast_path=False)
    try:
        return build_policy(spec, PolicyTarget(lang=lang, world=world, task_id=task_id, seed=seed,
                                               on_progress=on_progress))
    except PolicySpecError as error:
        raise AgentUnavailableError(error.text) from None
