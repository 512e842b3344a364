"""Running one request: the bridge between the window's EpisodeRequest and assistant_core.loop.

`start_episode(request)` is the default episode starter: it picks the policy for the chosen agent (the
PhoneWorld-lite oracle for the scripted demonstration, matched to the request; the real policy
otherwise) and returns assistant_core.loop.run_episode's generator of events. It runs on the worker
thread. `prompt_from_request` turns the loop's ConfirmationRequest into the dialog's ConfirmPrompt;
app.failures makes any exception speakable.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any

from app.agent import AgentKind, AgentUnavailableError, make_policy, match_demo_task, policy_spec
from app.confirm_dialog import ConfirmPrompt
from assistant_core.i18n import Text

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EpisodeRequest:
    """Everything one run needs; handed to the episode starter on the worker thread."""

    goal: str
    lang: str
    connection: Any  # app.phone.PhoneConnection
    agent: Any  # app.agent.AgentChoice
    confirmer: Any  # assistant_core.confirm.Confirmer (the window's ConfirmBridge)
    user: Any  # assistant_core.loop.UserChannel (the window's UserBridge)
    stop_event: threading.Event
    settings: Any = None  # assistant_core.settings.CaregiverSettings, None before any are loaded
    history: Any = None  # assistant_core.history.HistoryStore
    progress: Callable[[Any], None] | None = None  # model-loading reports (called on the worker thread)
    started: Callable[[int], None] | None = None  # told the run id (phonebuddy.assistant.Assistant.run_started)


EpisodeStarter = Callable[[EpisodeRequest], Generator[Any, Any, Any]]

NO_DEMO_MATCH = Text("Without the model I can do everyday things, for example: {examples}. I can also set timers, switch Wi-Fi, Bluetooth, airplane mode, do not disturb, dark mode and location, open apps, and answer questions about the phone: battery, time, notifications, messages. Anything else needs the model, or is one of the scripted demonstration's tasks on the simulated phone.")

# The demonstration's everyday examples, said first when a request needs the model: a call, a text, an
# alarm. Never a safety task (an injected web page, a factory reset): those show the gate, not what to ask.
EVERYDAY_DEMO_TASKS = ("PhoneCallContact", "MessagesSendText", "ClockSetAlarm")


def demo_examples(lang: str, n: int = 3) -> str:
    from app.agent import demo_tasks

    by_id = dict(demo_tasks())
    texts = [by_id[t].get(lang).rstrip(".。") for t in EVERYDAY_DEMO_TASKS[:n] if t in by_id]
    return "; ".join(texts) if lang != "zh" else "；".join(texts)


def run_parts(request: EpisodeRequest, task_id: str = ""):
    """The gate's context, the loop's bounds and the outcome check for this request, from the front hall
    (phonebuddy.assemble: the one rule for the allowed apps, the caregiver's bounds, harness.verify's
    check) — as every other entry point assembles a run. `task_id`: the demonstration task this run
    starts from (the simulated phone was just reset to it)."""
    from phonebuddy.assemble import RunSpec, assemble

    phone = request.connection
    task = None
    if phone.is_simulated and task_id:
        from harness.phoneworld.tasks import registry

        task = registry.get(task_id)
    from assistant_core.profile_store import privacy_for

    store, profile, _note = privacy_for(getattr(request, "history", None))  # the profile and the remote-request log
    return assemble(RunSpec(device=phone.device, lang=request.lang, settings=request.settings,
                            simulated=phone.is_simulated, task=task, profile=profile, privacy_log=store))


def start_episode(request: EpisodeRequest, *, policy: Any = None) -> Generator[Any, Any, Any]:
    """The loop's generator for one request (see the module docstring). Runs on the worker thread.
    `policy` replaces the chosen agent's (a scripted policy for a replayed run). The fast path
    (harness.fastpath) goes first for a model; in the demonstration it does what it understands when no
    demonstration task matches, and says what it cannot do without the model."""
    phone, lang = request.connection, request.lang
    task_id = ""
    match = None
    # harness.fastpath before any model, as the spec's shared default says (phonebuddy.policyspec)
    fast = _fast_path(request) if policy is None and policy_spec(request.agent).fast_path else None
    if policy is None and request.agent.kind is AgentKind.DEMO:
        from harness.fastpath import negation

        # A request that says not to do something never runs the demonstration of doing it ("别打开飞行模式"
        # once started the airplane-mode demo): the fast path says "OK, I won't" (or it needs the model).
        match = None if negation(request.goal) else match_demo_task(request.goal, seed=phone.seed)
        if match is None and phone.is_simulated and phone.world is not None:
            from harness.phoneworld.demo import add_named_people

            # "Text Sophie Tang ..." finds the Sophie Tang "Call Sophie Tang" (a demonstration task) finds.
            add_named_people(phone.world, phone.seed, request.goal)
        if match is None and fast is not None and fast.understands(request.goal):
            return _episode(request, fast, "fastpath")  # no model and no demo task: the tools do it
        if match is None:
            raise AgentUnavailableError(NO_DEMO_MATCH.format(examples=demo_examples(lang)))
        task_id = match.task_id
        if phone.is_simulated:
            phone.load_task(task_id, lang)  # each demonstration starts from its task's start state
    if policy is None:
        policy = make_policy(request.agent, lang=lang, world=phone.world, task_id=task_id, seed=phone.seed,
                             on_progress=request.progress)
        if fast is not None and not task_id:
            fast.fallback = policy  # the model takes what the fast path does not do, with the same goal
            policy = fast
    episode = _episode(request, policy, request.agent.kind.value + (f":{task_id}" if task_id else ""), task_id)
    if not task_id:
        return episode
    instruction = match.instruction if match is not None else request.goal
    return _with_note(DEMO_RESET.format(instruction=instruction).get(lang), episode)


def _episode(request: EpisodeRequest, policy: Any, label: str, task_id: str = "") -> Generator[Any, Any, Any]:
    from assistant_core.loop import RunInfo

    # After `finish`, the phone's own state says whether the request was really carried out.
    return run_parts(request, task_id).episode(request.goal, policy=policy, confirmer=request.confirmer, user=request.user,
                                      history=request.history, stop=request.stop_event,
                                      info=RunInfo(device=request.connection.label.en, policy=label,
                                                   started=getattr(request, "started", None)))


def _fast_path(request: EpisodeRequest) -> Any:
    """The fast path's policy for this request (its fallback is set by the caller), or None when it cannot
    be built (a phone whose contacts cannot be read still gets it; only a missing kinds folder stops it)."""
    from harness.fastpath import FastPathPolicy, FastPlanner, WithoutModel

    try:
        planner = FastPlanner()
    except (OSError, ValueError) as error:  # pragma: no cover - the kinds ship with the package
        log.warning("fast path unavailable: %s", error)
        return None
    return FastPathPolicy(planner, fallback=WithoutModel(request.lang), device=request.connection.device,
                          lang=request.lang)


DEMO_RESET = Text("Scripted demonstration of: {instruction} The simulated phone starts this demonstration afresh.")


def _with_note(text: str, episode: Generator[Any, Any, Any]) -> Generator[Any, Any, Any]:
    from app.announce import Cue
    from app.conversation import EntryKind
    from app.events import Presented

    yield Presented(EntryKind.NOTE, text, Cue.INFO, refresh_mirror=True)  # said: the user must know it is a script
    return (yield from episode)


def prompt_from_request(request: Any, lang: str) -> ConfirmPrompt:
    """The dialog's text from assistant_core.confirm.ConfirmationRequest (or anything with a question)."""
    question = getattr(request, "question", None)
    if isinstance(question, Text):
        decision = getattr(request, "decision", None)
        reason = decision.reason.get(lang) if decision is not None and isinstance(decision.reason, Text) else ""
        spoken = request.spoken(lang) if callable(getattr(request, "spoken", None)) else ""
        return ConfirmPrompt(summary=question.get(lang), reason=reason, spoken=spoken)
    if isinstance(request, ConfirmPrompt):
        return request
    return ConfirmPrompt(summary=str(request))
