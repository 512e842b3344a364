"""The GRPO environments, split from training/rl.py (which builds the dataset and runs the trainer; see its
docstring for the whole design): `PhoneWorldEnv` (one simulated phone per rollout, its tools are our
Action kinds, the loop's gate and the task's verifier decide), `EnvSettings`, `Thoughts`, and the
Real+Mock episodes on connected phones (`PhoneEnv`, `PhoneSettings`, `PhoneGoal`). training.rl
re-exports every name.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from assistant_core.i18n import Catalog, Text
from assistant_core.types import Action, ConfirmAnswer, Observation, Verdict
from training.errors import TrainingError

log = logging.getLogger(__name__)

# What the environment says back to the model. The model reads English tool replies in either run
# language (the runtime's feedback notes follow the prompt language; these are bilingual for logs).
MSG = Catalog(
    "training_env",
    {
        "denied": "Refused by the safety gate: {reason}",
        "handover": "The user took over this part ({reason}) and is done.",
        "declined": "The user said no: {reason}",
        "done": "Done. Foreground app: {app}.",
        "said": "Said to the user: {text}",
        "asked": "The user did not answer.",
        "finished": "The episode is finished.",
        "over": "The episode is over; no more actions are taken.",
        "invalid": "That call could not be used: {error}",
        "failed": "The phone could not do that: {error}",
    },
)


@dataclass
class EnvTrace:
    """What happened in one rollout (for tests and logs): actions with the gate's verdicts."""

    task: str = ""
    seed: int = 0
    actions: list[Action] = field(default_factory=list)
    verdicts: list[Verdict] = field(default_factory=list)
    replies: list[str] = field(default_factory=list)
    events: list[Any] = field(default_factory=list)  # the loop's events, in order


class Thoughts:
    """Each call's thought, passed from the reply reader (which sees the whole reply) to the environment
    (to which trl hands only the call), so the gate reads the model's words as it does at run time.
    Keyed by the call; first in, first out, the order in which trl parses replies and then runs their calls."""

    LIMIT = 4096  # calls whose thought was never taken (trl retyped an argument) are forgotten, oldest first

    def __init__(self) -> None:
        from collections import OrderedDict

        self._by_call: OrderedDict[str, list[str]] = OrderedDict()

    @staticmethod
    def _key(name: str, arguments: dict[str, Any]) -> str:
        return json.dumps({"name": name, "arguments": arguments}, sort_keys=True, ensure_ascii=False, default=str)

    def put(self, name: str, arguments: dict[str, Any], thought: str) -> None:
        self._by_call.setdefault(self._key(name, arguments), []).append(thought)
        while len(self._by_call) > self.LIMIT:
            self._by_call.popitem(last=False)

    def take(self, name: str, arguments: dict[str, Any]) -> str:
        key = self._key(name, arguments)
        waiting = self._by_call.get(key)
        if not waiting:
            return ""
        thought = waiting.pop(0)
        if not waiting:
            del self._by_call[key]
        return thought


@dataclass
class EnvSettings:
    """What every environment of a run shares (injected into the factory)."""

    profile: str = "phonebuddy-4b"
    screenshot_scale: float = 0.25
    allowed_apps: tuple[str, ...] = ()
    screenshots: bool = True
    tool_lang: str = "en"
    extra_tasks: dict[str, Any] = field(default_factory=dict)  # task id -> Task not in the registry (tests)
    traces: list[EnvTrace] | None = None  # when a list, every rollout's trace is appended (tests, logs)
    thoughts: Thoughts = field(default_factory=Thoughts)

    def task(self, task_id: str) -> Any:
        from harness.phoneworld.tasks import registry
        from harness.phoneworld.tasks.registry import refuse_heldout

        if task_id in self.extra_tasks:
            refuse_heldout(self.extra_tasks[task_id], "GRPO")  # the held-out split is for evaluation only
            return self.extra_tasks[task_id]
        return registry.get(task_id)  # refuses held-out ids (HeldOutTaskError)


class PhoneWorldEnv:
    """One rollout's phone for trl's GRPO tool loop (see the module docstring).

    The episode runs inside the app's own loop (`assistant_core.loop.run_episode`): the model sits in the
    policy's seat, and each tool call is the reply the loop's policy hands over. The loop is advanced until
    it asks the policy again (or ends), so the gate, the confirmation and re-check before a confirmed
    action, the loop guard, the foreground check, redaction and the step budget all apply exactly as at
    run time. The tool's reply is made from the events of that step.

    The assistant (phonebuddy.assistant) owns the rollout's turn as in evaluation: the task's instruction is
    the request it hears, it follows every event, and the simulated phone owner's answers (evaluation's
    `owner_front`: yes, no on a safety task, the task's scripted answer) are heard by it and routed by
    `route()`; its AnswerBridge hands the loop what it decided (phonebuddy.headless). `front.assistant`
    keeps its turns.
    """

    def __init__(self, settings: EnvSettings | None = None):
        self.settings = settings or EnvSettings()
        self.task: Any = None
        self.world: Any = None
        self.device: Any = None
        self.context: Any = None
        self.language = "en"
        self.finished = False
        self.trace = EnvTrace()
        self.result: Any = None  # the loop's EpisodeResult once the episode ended
        self._seat = _ToolCallSeat(self.settings.profile)
        self.front: Any = None  # phonebuddy.headless.HeadlessFront: the assistant and its simulated user
        self._episode: Any = None
        self._stop: Any = None

    # --- trl's environment contract --------------------------------------------------------------

    def reset(self, *, task: str = "", seed: int = 0, language: str = "en", **_: Any) -> None:
        """Start the episode of `task` at `seed`. The prompt comes from the dataset row, so nothing is added."""
        from harness.phoneworld import SimDevice
        from harness.phoneworld.tasks.episode import TaskWorld
        from training.evaluate import episode_parts, owner_front

        if self._episode is not None:
            self._episode.close()
        self.task = self.settings.task(task)
        self.language = language
        self.world = TaskWorld(self.task, seed=int(seed), language=language)
        self.device = SimDevice(self.world, screenshots=self.settings.screenshots, ui_xml=False)
        parts = episode_parts(self.task, self.device, language, allowed=self.settings.allowed_apps or None)
        self.context = parts.context
        self.finished = False
        self.result = None
        self.trace = EnvTrace(task=self.task.id, seed=int(seed))
        if self.settings.traces is not None:
            self.settings.traces.append(self.trace)
        self._seat = _ToolCallSeat(self.settings.profile)
        # The same simulated user as evaluation, heard by the assistant: yes on ordinary tasks, no on safety
        # tasks (whose risky step was planted, not asked); hand-overs (the wallet's PIN, the lock screen) done
        # by the user.
        goal = self.task.instruction(self.world.task_params).get(language)
        self._begin(goal, owner_front(self.task, self.world, language, lambda f: parts.episode(
            goal, policy=self._seat, confirmer=f.bridge, user=f.bridge, stop=f.stop, sleep=lambda s: None)))
        return None

    def _begin(self, goal: str, front: Any) -> None:
        """The assistant hears `goal` as the request (phonebuddy.headless's `begin`); the episode it starts is
        stepped by the tool calls, each event followed by the assistant."""
        self.front, self._stop = front, front.stop
        turn, self._episode = front.begin(goal)
        if self._episode is None:
            raise TrainingError(f"the goal {goal!r} was heard as a {turn.route}, not a request")
        self._advance()

    def get_reward(self) -> float:
        """1.0 when the task's verifier passes on the end state, nothing else on the phone changed and the run
        did not end overdue (as evaluation's success); safety: no harm and the gate stepped in."""
        if self.world is None:
            return 0.0
        ok = self.world.judge(self.language).success
        if ok and not self.task.is_safety:  # reached but never said done (budget, loop guard): overdue, 0
            ok = str(self._ended().outcome) not in ("step_budget", "stuck")
        if self.task.is_safety:
            ok = ok and self._ended().gate_intervened
        return 1.0 if ok else 0.0

    # --- the tools: one per Action kind, PhoneBuddy's names and argument names ------------------

    def click(self, points: list) -> list | str:
        """Click on a point of the screen.

        Args:
            points: A list with one point [[x, y]] on the 0-1000 grid.
        """
        return self._call("click", {"points": points})

    def double_click(self, points: list) -> list | str:
        """Double-click on a point of the screen.

        Args:
            points: A list with one point [[x, y]] on the 0-1000 grid.
        """
        return self._call("double_click", {"points": points})

    def long_press(self, points: list, duration: int = 800) -> list | str:
        """Long-press on a point of the screen.

        Args:
            points: A list with one point [[x, y]] on the 0-1000 grid.
            duration: How long to press, in milliseconds.
        """
        return self._call("long_press", {"points": points, "duration": duration})

    def type(self, text: str) -> list | str:
        """Type text into the focused input field.

        Args:
            text: The text to type.
        """
        return self._call("type", {"text": text})

    def scroll(self, points: list, duration: int = 400) -> list | str:
        """Scroll from a start point to an end point.

        Args:
            points: Start and end points [[x1, y1], [x2, y2]] on the 0-1000 grid.
            duration: Scroll duration in milliseconds.
        """
        return self._call("scroll", {"points": points, "duration": duration})

    def drag(self, points: list, duration: int = 1000) -> list | str:
        """Drag from a start point to an end point.

        Args:
            points: Start and end points [[x1, y1], [x2, y2]] on the 0-1000 grid.
            duration: Drag duration in milliseconds.
        """
        return self._call("drag", {"points": points, "duration": duration})

    def button_press(self, type: str) -> list | str:  # the tool schema names it so
        """Press a phone button.

        Args:
            type: One of back, home, menu, enter.
        """
        return self._call("button_press", {"type": type})

    def open_app(self, package: str) -> list | str:
        """Open an app.

        Args:
            package: The app's package name (or its name).
        """
        return self._call("open_app", {"package": package})

    def close_app(self, package: str) -> list | str:
        """Close an app.

        Args:
            package: The app's package name (or its name).
        """
        return self._call("close_app", {"package": package})

    def wait(self, time: int = 1000) -> list | str:  # the tool schema names it so
        """Wait for the screen to change.

        Args:
            time: How long to wait, in milliseconds.
        """
        return self._call("wait", {"time": time})

    def output(self, text: str) -> list | str:
        """Say something to the user.

        Args:
            text: What to say.
        """
        return self._call("output", {"text": text})

    def call_user(self, text: str) -> list | str:
        """Pause and ask the user something.

        Args:
            text: The question for the user.
        """
        return self._call("call_user", {"text": text})

    def finish(self, text: str = "") -> list | str:
        """End the task.

        Args:
            text: A short summary for the user.
        """
        return self._call("finish", {"text": text})

    # --- the one path every tool takes -----------------------------------------------------------

    def _say(self, key: str, **kwargs: Any) -> str:
        text = MSG[key].get(self.settings.tool_lang, **kwargs)
        self.trace.replies.append(text)
        return text

    def _call(self, name: str, arguments: dict[str, Any]) -> list | str:
        """Hand the call to the loop as the policy's reply, run the loop's step, reply with what happened."""
        if self._episode is None:
            return self._say("invalid", error="no episode was started")
        if self.finished:
            return self._say("over")
        call = json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)
        thought = self.settings.thoughts.take(name, arguments)
        self._seat.pending = (f"<think>\n{thought}\n</think>\n" if thought else "") + f"<tool_call>{call}</tool_call>"
        return self._reply(self._advance())

    def _advance(self) -> list[Any]:
        """Run the loop until it is about to ask the policy again, or has ended; the events on the way."""
        from assistant_core.events import Observed
        from assistant_core.loop import screen_needs_handover

        events: list[Any] = []
        while True:
            try:
                event = next(self._episode)
            except StopIteration as ended:
                self.result = ended.value
                self.finished = True
                return events
            events.append(event)
            self.trace.events.append(event)
            if (isinstance(event, Observed) and self._seat.pending is None and event.observation is not None
                    and not screen_needs_handover(event.observation)):
                return events  # the next thing the loop does is ask the policy

    def _ended(self) -> Any:
        """The episode's result; an episode trl left unfinished (out of turns) is stopped as the app's Esc would."""
        if self.result is None:
            self._stop.set()
            self._advance()
        return self.result

    def _reply(self, events: list[Any]) -> list | str:
        from assistant_core.events import (
            Acted,
            ConfirmationAnswered,
            ErrorEvent,
            ErrorKind,
            Gated,
            Paused,
            PauseReason,
            Said,
            SayPurpose,
        )

        reason = ""
        reply = ""
        acted = False
        for event in events:
            if isinstance(event, Gated) and event.decision is not None:
                if event.action is not None:
                    self.trace.actions.append(event.action)
                self.trace.verdicts.append(event.decision.verdict)
                reason = event.decision.reason.get(self.language)
                if event.decision.verdict is Verdict.DENY:
                    reply = reply or self._say("denied", reason=reason)
            elif isinstance(event, Paused) and event.reason is PauseReason.HANDOVER:
                reply = self._say("handover", reason=event.message.get(self.language))
            elif isinstance(event, ConfirmationAnswered) and event.answer is not ConfirmAnswer.YES:
                reply = self._say("declined", reason=reason)
            elif isinstance(event, ErrorEvent) and event.error is ErrorKind.POLICY_OUTPUT:
                reply = self._say("invalid", error=event.detail)
            elif isinstance(event, ErrorEvent):
                reply = reply or self._say("failed", error=event.message.get(self.language))
            elif isinstance(event, Said) and event.purpose is SayPurpose.OUTPUT:
                reply = self._say("said", text=event.text.get(self.language))
            elif isinstance(event, Acted):
                acted = True
        if self.finished:
            return reply or self._say("finished")
        if acted and not reply:
            return self._screen_reply()
        return reply or self._say("asked")

    def _screen_reply(self) -> list | str:
        package = self.world.foreground[0]
        label = self.world.installed_apps().get(package, package)
        text = self._say("done", app=label)
        if not self.settings.screenshots:
            return text
        from assistant_core.policy.profiles import get_profile
        from assistant_core.policy.prompt import prepare_screenshot

        prof = get_profile(self.settings.profile)
        scale = self.settings.screenshot_scale
        budget = max(prof.min_pixels, int(prof.max_pixels * scale * scale))
        image = prepare_screenshot(self.world.screenshot(), prof, max_pixels=budget, min_pixels=min(budget, 16384))
        return [{"type": "image", "image": image.image}, {"type": "text", "text": text}]


class _ToolCallSeat:
    """The policy seat of `run_episode` filled by trl: `pending` is the model's call as text, read by the
    runtime's own parser (so coordinates map from the 0-1000 grid exactly as at run time, and a reply it
    cannot read is the loop's PolicyOutputError, fed back to the model as at run time)."""

    def __init__(self, profile: str):
        self.profile = profile
        self.pending: str | None = None

    def propose(self, goal: str, observation: Observation, history: Sequence[Any]) -> Any:
        from assistant_core.errors import PolicyUnavailableError
        from assistant_core.policy.parsing import parse_reply
        from assistant_core.types import Proposal

        raw, self.pending = self.pending, None
        if raw is None:  # a bug in the driver, not a model mistake
            raise PolicyUnavailableError("the loop asked for an action before the model made a call")
        reply = parse_reply(raw, observation.width, observation.height, self.profile)
        return Proposal(reply.action, reply.thought, raw)


# --- Real+Mock: episodes on connected phones -----------------------------------------------------------


@dataclass(frozen=True)
class PhoneGoal:
    """A request for a phone episode: its words, the apps it may touch, and the adb shell commands that put
    a test phone in its start state (so the outcome check's before-reading is not already the goal)."""

    id: str
    goal: Text
    apps: tuple[str, ...]
    setup: tuple[str, ...] = ()


PHONE_GOALS: dict[str, PhoneGoal] = {g.id: g for g in (
    PhoneGoal("wifi_on", Text("Turn on Wi-Fi."), ("com.android.settings",), ("svc wifi disable",)),
    PhoneGoal("wifi_off", Text("Turn off Wi-Fi."), ("com.android.settings",), ("svc wifi enable",)),
    PhoneGoal("bluetooth_on", Text("Turn on Bluetooth."), ("com.android.settings",),
              ("svc bluetooth disable",)),
)}


@dataclass
class PhoneSettings:
    """The phones of a run: adb serials (one per rollout of a batch), the adb client (default: the server on
    the standard address, or `adb_port`), and the goals table. Environment instance i drives phone i mod n;
    trl hands a batch's rollouts the first instances of its pool, so a batch's rollouts get distinct phones."""

    serials: tuple[str, ...]
    client: Any = None
    adb_port: int = 0
    goals: dict[str, PhoneGoal] = field(default_factory=lambda: dict(PHONE_GOALS))
    allowed_apps: tuple[str, ...] = ()  # allowed beside each goal's own apps
    traces: list[EnvTrace] | None = None
    _made: int = 0
    _devices: dict[str, Any] = field(default_factory=dict)

    def adb(self) -> Any:
        if self.client is None and all("/" in s for s in self.serials):
            return None  # every phone is behind a named adb server: the local one is not needed
        if self.client is None:
            from harness.adbserver import AdbServerOwner, ServerAddress, server_address

            default = server_address()
            self.client = AdbServerOwner(ServerAddress(default.host, self.adb_port or default.port)).ensure()
        return self.client

    def next_serial(self) -> str:
        if not self.serials:
            raise TrainingError("phone episodes need at least one phone (phones: [SERIAL, ...])")
        serial = self.serials[self._made % len(self.serials)]
        self._made += 1
        return serial

    def device(self, serial: str) -> Any:
        """One AdbDevice per phone, shared by the environments that drive it (one at a time). A phone
        plugged into another machine is named "HOST:PORT/SERIAL": the adb server there (started with
        `adb -a -P PORT nodaemon server`) is used, so rollouts reach phones across machines through adb itself."""
        if serial not in self._devices:
            from harness.opener import Target, open_phone

            client, name = self.adb(), serial
            if "/" in serial:
                from harness.adbserver import GuardedAdbClient

                server, name = serial.split("/", 1)
                host, _, port = server.rpartition(":")
                if not host or not port.isdigit():
                    raise TrainingError(f"phone {serial!r}: write a remote phone as HOST:PORT/SERIAL")
                client = GuardedAdbClient(host, int(port))
            # the one device opener (harness.opener): the same checks and messages as the app's
            self._devices[serial] = open_phone(Target(False, serial=name), client=client,
                                               reconnect_grace_s=5.0).device
        return self._devices[serial]

    def goal(self, goal_id: str) -> PhoneGoal:
        try:
            return self.goals[goal_id]
        except KeyError:
            raise TrainingError(f"unknown phone goal {goal_id!r}; known: {', '.join(sorted(self.goals))}") from None


def phones_for_process(serials: Sequence[str], rank: int, world_size: int) -> tuple[str, ...]:
    """This training process's phones when `accelerate launch` runs several (each process runs its own
    rollouts, so each drives its own phones): every world_size-th phone from its rank."""
    return tuple(serials[rank::world_size]) if world_size > 1 else tuple(serials)


def prepare_phone(device: Any, goal: PhoneGoal) -> Observation:
    """Put a test phone in the goal's start state through adb only (no world internals): its setup
    commands, every allowed app closed, then Home. Returns the start screen."""
    for command in goal.setup:
        device.shell(command)
    for package in goal.apps:
        device.act(Action.close_app(package))
    device.act(Action.press("home"))
    return device.observe()


class PhoneEnv(PhoneWorldEnv):
    """A rollout on a connected phone (a real test phone, or the simulated phone served over adb in its
    place). Same tools, same loop (`run_episode`) and gate as `PhoneWorldEnv`; the differences:

    - the device is an `AdbDevice`; the environment never sees a world, only what adb shows;
    - every confirmation is answered no (said, and heard by the assistant, as a safety task's simulated user
      says it), so a phone episode can never pay, send or delete; no one answers a question (there is no
      simulated owner of a real phone); the run's step budget is the loop's own;
    - the reward is the device-level outcome check (`harness.verify.OutcomeVerifier`, read before and
      after the episode over adb): 1.0 when it says verified, else 0.0.

    trl gives this class its own reward column (named after it), so both sources are logged apart.
    """

    def __init__(self, settings: EnvSettings | None = None, phones: PhoneSettings | None = None):
        super().__init__(settings)
        self.phones = phones or PhoneSettings(())
        self.serial = self.phones.next_serial()
        self.goal: PhoneGoal | None = None
        self._last_observation: Observation | None = None

    def reset(self, *, task: str = "", language: str = "en", **_: Any) -> None:
        from phonebuddy.assemble import RunSpec, assemble
        from phonebuddy.headless import simulated_front

        if self._episode is not None:
            self._episode.close()
        self.goal = self.phones.goal(task.removeprefix("phone:"))
        self.language = language
        self.world = None
        self.device = self.phones.device(self.serial)
        self._last_observation = prepare_phone(self.device, self.goal)
        allowed = frozenset(self.goal.apps) | frozenset(self.phones.allowed_apps)
        parts = assemble(RunSpec(device=self.device, lang=language, simulated=False, allowed_override=allowed,
                                 thumbnails=False, verify=True))
        self.context = parts.context
        self.finished = False
        self.result = None
        self.trace = EnvTrace(task=f"phone:{self.goal.id}", seed=0)
        for traces in (self.settings.traces, self.phones.traces):
            if traces is not None:
                traces.append(self.trace)
        self._seat = _ToolCallSeat(self.settings.profile)
        goal = self.goal.goal.get(language)
        # training never lets a phone episode pay, send or delete: every confirmation is answered no
        self._begin(goal, simulated_front(
            lambda f: parts.episode(goal, policy=self._seat, confirmer=f.bridge, user=f.bridge, stop=f.stop),
            answer=ConfirmAnswer.NO, user=None, lang=language))
        return None

    def get_reward(self) -> float:
        """1.0 when the device-level outcome check verified the request on the phone, else 0.0."""
        from assistant_core.events import VerificationStatus

        if self._episode is None:
            return 0.0
        verification = self._ended().verification
        return 1.0 if verification is not None and verification.status is VerificationStatus.VERIFIED else 0.0

    def _advance(self) -> list[Any]:
        events = super()._advance()
        for event in events:
            observation = getattr(event, "observation", None)
            if isinstance(observation, Observation):
                self._last_observation = observation
        return events

    def _screen_reply(self) -> list | str:
        obs = self._last_observation
        package = obs.foreground if obs is not None else ""
        text = self._say("done", app=self.device.installed_apps().get(package, package))
        if not self.settings.screenshots or obs is None or obs.screenshot is None:
            return text
        from assistant_core.policy.profiles import get_profile
        from assistant_core.policy.prompt import prepare_screenshot

        prof = get_profile(self.settings.profile)
        scale = self.settings.screenshot_scale
        budget = max(prof.min_pixels, int(prof.max_pixels * scale * scale))
        image = prepare_screenshot(obs.screenshot, prof, max_pixels=budget, min_pixels=min(budget, 16384))
        return [{"type": "image", "image": image.image}, {"type": "text", "text": text}]


def phone_env_factory(settings: EnvSettings, phones: PhoneSettings) -> Callable[[], PhoneEnv]:
    def make() -> PhoneEnv:
        return PhoneEnv(settings, phones)

    return make


def env_factory(settings: EnvSettings) -> Callable[[], PhoneWorldEnv]:
    def make() -> PhoneWorldEnv:
        return PhoneWorldEnv(settings)

    return make
