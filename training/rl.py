"""GRPO on PhoneWorld-lite with trl: multi-turn rollouts through tools that are our Action kinds.

    result = run_rl(RlConfig(base_model=folder, adapter=sft_adapter, mix={"single_app": .5, "cross_app": .5}))

The environment (`PhoneWorldEnv`, one per rollout, made by trl's `environment_factory`):
- `reset(task=, seed=, language=)` builds the task's episode world (`TaskWorld`) on an in-process
  `SimDevice`. The dataset row's prompt is the policy's own first-step request (`build_prompt`, the
  same system prompt, screenshot and instruction as the runtime), so rollouts start where the app
  starts. (trl also renders the tool schemas into a system block; the runtime prompt lists the same
  tools inside the user message.)
- Its public methods are the PhoneBuddy tools, one per Action kind, with the tool schema's argument
  names (`click(points)`, `type(text)`, `button_press(type)`, `open_app(package)`, `wait(time)`, ...).
- The episode runs in the app's own loop (`run_episode`): each call, with the thought the reply reader
  saw, is the reply the loop's policy seat hands over, read by the runtime's parser. So the gate (with
  the front hall's caregiver context: `allowed_apps`, or the task's own apps), confirmations and the re-check before a
  confirmed action, hand-overs, the loop guard, the foreground check, redaction and the step budget are
  those of the app. The simulated user answers as in evaluation: yes on ordinary tasks, no on safety
  tasks (whose risky step was planted, not asked), and does the hand-overs (the wallet PIN, unlocking).
  The tool's reply is made from the loop's events: the gate's refusal, the user's no, a hand-over, an
  unreadable call, or the new screenshot (scaled by `screenshot_scale`) and the foreground app.
- Replies are read by `ReplyReader`, installed as the tokenizer's `parse_response`: every dialect the
  app accepts, a reply starting inside the thought; unreadable replies are counted (`RlResult.replies`).
- `finish` ends the episode; later calls are answered "the episode is over".
- `get_reward()` is the task's verifier over the end state: 1.0 on success, else 0.0 (safety tasks:
  1.0 only when no harm happened and the gate stepped in, `EpisodeResult.gate_intervened`, the one
  definition evaluation and the safety table use). A small format reward (`format_reward` x the share
  of assistant turns that made a well-formed tool call) is added.

Task mix: rows are drawn per category with the `mix` weights, from training seeds (`seeds`, default
100-131) that evaluation does not use. Real+Mock: with `phone_share` > 0 that share of rows are episodes
on connected phones (`PhoneEnv`: an AdbDevice, no world; every confirmation answered no; reward only from
the device-level outcome check), routed by trl's multi-environment `environment_factory`; each
environment class is its own logged reward column (`RlResult.rewards_by_source`). See docs/capture.md.
Generation: vLLM (colocated) when installed and CUDA is present (`vllm="auto"`), else transformers.
Scaling out: the trainer runs on accelerate, so `accelerate launch -m training.cli rl CONFIG` on a
multi-GPU machine needs no code change (see configs/accelerate_multi_gpu.yaml).
"""

from __future__ import annotations

import importlib.util
import json
import logging
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assistant_core.i18n import Catalog, Text
from assistant_core.types import Action, ConfirmAnswer, Observation, Verdict
from training.config import RlConfig, config_to_dict
from training.errors import EmptyDatasetError, TrainingError
from training.runs import (
    MANIFEST,
    FreeBytes,
    RunFolder,
    atomic_dir,
    check_free_space,
    disk_free_bytes,
    write_json_atomic,
)

log = logging.getLogger(__name__)

# What the environment says back to the model. The model reads English tool replies in either run
# language (the runtime's feedback notes follow the prompt language; these are bilingual for logs).
MSG = Catalog(
    "training_env",
    {
        "denied": ("Refused by the safety gate: {reason}", "安全检查拒绝了这个操作：{reason}"),
        "handover": ("The user took over this part ({reason}) and is done.", "这一步由用户亲自完成了（{reason}）。"),
        "declined": ("The user said no: {reason}", "用户拒绝了：{reason}"),
        "done": ("Done. Foreground app: {app}.", "已执行。当前应用：{app}。"),
        "said": ("Said to the user: {text}", "已告诉用户：{text}"),
        "asked": ("The user did not answer.", "用户没有回答。"),
        "finished": ("The episode is finished.", "本轮任务已结束。"),
        "over": ("The episode is over; no more actions are taken.", "本轮任务已经结束，不再执行操作。"),
        "invalid": ("That call could not be used: {error}", "这个调用无法执行：{error}"),
        "failed": ("The phone could not do that: {error}", "手机无法执行：{error}"),
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
        self._episode: Any = None
        self._stop: Any = None

    # --- trl's environment contract --------------------------------------------------------------

    def reset(self, *, task: str = "", seed: int = 0, language: str = "en", **_: Any) -> None:
        """Start the episode of `task` at `seed`. The prompt comes from the dataset row, so nothing is added."""
        import threading

        from assistant_core.confirm import FixedConfirmer
        from harness.phoneworld import SimDevice
        from harness.phoneworld.tasks.episode import TaskWorld
        from training.evaluate import episode_parts, episode_user

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
        self._stop = threading.Event()
        # The same simulated user as evaluation: yes on ordinary tasks, no on safety tasks (whose risky
        # step was planted, not asked); hand-overs (the wallet's PIN, the lock screen) done by the user.
        confirmer = FixedConfirmer(ConfirmAnswer.NO if self.task.is_safety else ConfirmAnswer.YES)
        goal = self.task.instruction(self.world.task_params).get(language)
        self._episode = parts.episode(goal, policy=self._seat, confirmer=confirmer, user=episode_user(self.task, self.world, language),
                                      stop=self._stop, sleep=lambda s: None)
        self._advance()
        return None

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
    PhoneGoal("wifi_on", Text("Turn on Wi-Fi.", "打开 WLAN。"), ("com.android.settings",), ("svc wifi disable",)),
    PhoneGoal("wifi_off", Text("Turn off Wi-Fi.", "关闭 WLAN。"), ("com.android.settings",), ("svc wifi enable",)),
    PhoneGoal("bluetooth_on", Text("Turn on Bluetooth.", "打开蓝牙。"), ("com.android.settings",),
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
            from harness.adb import AdbDevice

            client, name = self.adb(), serial
            if "/" in serial:
                from harness.adbserver import GuardedAdbClient

                server, name = serial.split("/", 1)
                host, _, port = server.rpartition(":")
                if not host or not port.isdigit():
                    raise TrainingError(f"phone {serial!r}: write a remote phone as HOST:PORT/SERIAL")
                client = GuardedAdbClient(host, int(port))
            self._devices[serial] = AdbDevice(client, name, reconnect_grace_s=5.0)
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
    - every confirmation is answered no (`FixedConfirmer(NO)`), so a phone episode can never pay, send or
      delete, and the run's step budget is the loop's own;
    - the reward is the device-level outcome check (`harness.verify.OutcomeVerifier`, read before and
      after the episode over adb): 1.0 when it says verified, else 0.0.

    trl gives this class its own reward column (named after it), so both sources are logged apart.
    """

    def __init__(self, settings: EnvSettings | None = None, phones: PhoneSettings | None = None):
        super().__init__(settings)
        self.phones = phones or PhoneSettings(())
        self.serial = self.phones.next_serial()
        self.goal: PhoneGoal | None = None
        self.confirmer: Any = None
        self._last_observation: Observation | None = None

    def reset(self, *, task: str = "", language: str = "en", **_: Any) -> None:
        import threading

        from assistant_core.confirm import FixedConfirmer
        from phonebuddy.assemble import RunSpec, assemble

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
        self._stop = threading.Event()
        self.confirmer = FixedConfirmer(ConfirmAnswer.NO)  # training never lets a phone episode pay, send or delete
        self._episode = parts.episode(self.goal.goal.get(language), policy=self._seat, confirmer=self.confirmer,
                                      stop=self._stop)
        self._advance()
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


def format_reward(weight: float) -> Callable[..., list[float]]:
    """weight x the share of assistant turns, up to the first `finish` call, that made a tool call."""

    def phonebuddy_format(prompts: Any = None, completions: Any = None, **_: Any) -> list[float]:
        rewards = []
        for completion in completions or []:
            turns = 0
            good = 0
            for message in completion:
                if not isinstance(message, dict) or message.get("role") != "assistant":
                    continue
                turns += 1
                calls = message.get("tool_calls") or []
                good += bool(calls)
                if any(_call_name(c) == "finish" for c in calls):
                    break  # after finish the episode is over; later turns are not the model's task
            rewards.append(weight * good / turns if turns else 0.0)
        return rewards

    return phonebuddy_format


def _call_name(call: Any) -> str:
    function = call.get("function", call) if isinstance(call, dict) else {}
    return str(function.get("name", "")) if isinstance(function, dict) else ""


# --- the dataset: one row per (task, seed), drawn by the category mix --------------------------------


def choose_rows(config: RlConfig, settings: EnvSettings | None = None) -> list[tuple[str, int, str]]:
    """(task id, seed, language) rows: `tasks` if given, else tasks of each category drawn by `mix`."""
    from harness.phoneworld.tasks import registry

    settings = settings or EnvSettings()

    rng = random.Random(config.seed)
    languages = ("en", "zh") if config.language == "mixed" else (config.language,)
    if config.tasks:
        pool = {"chosen": ([settings.task(t).id for t in config.tasks], 1.0)}
    else:
        pool = {}
        for category, weight in config.mix.items():
            ids = [t.id for t in registry.by_category(category)]
            if weight > 0 and ids:
                pool[category] = (ids, weight)
    if not pool:
        raise EmptyDatasetError(f"no PhoneWorld-lite tasks for the mix {config.mix}")
    names = list(pool)
    weights = [pool[n][1] for n in names]
    rows = []
    for _ in range(config.num_examples):
        if config.phone_share > 0 and rng.random() < config.phone_share:
            # A phone episode: "phone:GOAL" (its start state is the phone's, set up over adb at reset).
            rows.append((f"phone:{rng.choice(config.phone_goals)}", 0, rng.choice(languages)))
            continue
        ids = pool[rng.choices(names, weights)[0]][0]
        rows.append((rng.choice(ids), rng.choice(config.seeds), rng.choice(languages)))
    return rows


def is_phone_row(task_id: str) -> bool:
    return task_id.startswith("phone:")


def build_rl_dataset(rows: Sequence[tuple[str, int, str]], *, profile: str, max_pixels: int | None = None,
                     settings: EnvSettings | None = None, phones: PhoneSettings | None = None) -> Any:
    """The GRPO dataset: each row's prompt is the policy's first-step request for that episode. With
    `phones`, rows name their environment ("mock" or "phone", trl's multi-environment routing); a phone
    row's first screen is the first phone's start screen for that goal (set up over adb as at reset)."""
    from datasets import Dataset

    from assistant_core.policy.prompt import build_prompt
    from harness.phoneworld import SimDevice
    from harness.phoneworld.tasks.episode import TaskWorld
    from training.data import storable_messages

    settings = settings or EnvSettings(profile=profile)

    records = []
    cache: dict[tuple[str, int, str], dict[str, Any]] = {}
    for task_id, seed, lang in rows:
        key = (task_id, seed, lang)
        if key not in cache and is_phone_row(task_id):
            if phones is None:
                raise TrainingError("phone rows need phones (phone_share > 0 with phones: [SERIAL, ...])")
            goal = phones.goal(task_id.removeprefix("phone:"))
            observation = prepare_phone(phones.device(phones.serials[0]), goal)
            prompt = build_prompt(goal.goal.get(lang), observation, (), profile, lang=lang, max_pixels=max_pixels)
            cache[key] = {"prompt": storable_messages(prompt.hf_messages()), "images": [prompt.image.image],
                          "task": task_id, "seed": seed, "language": lang, "environment": "phone"}
        if key not in cache:
            task = settings.task(task_id)
            world = TaskWorld(task, seed=seed, language=lang)
            observation = SimDevice(world, ui_xml=False).observe()
            goal = task.instruction(world.task_params).get(lang)
            prompt = build_prompt(goal, observation, (), profile, lang=lang, max_pixels=max_pixels)
            cache[key] = {"prompt": storable_messages(prompt.hf_messages()), "images": [prompt.image.image],
                          "task": task_id, "seed": seed, "language": lang}
            if phones is not None:
                cache[key]["environment"] = "mock"
        records.append(cache[key])
    if not records:
        raise EmptyDatasetError("no RL episodes were chosen")
    return Dataset.from_list(records)


class ReplyReader:
    """trl's tool-call parsing, done by the runtime's own parser: installed as the tokenizer's
    `parse_response`, which trl's GRPO calls on every generated turn.

    Every dialect the app accepts is read (PhoneBuddy JSON, the Qwen3.5 XML form, AutoGLM, mobile_use), and
    a reply that starts inside the thought (the 4B template ends the prompt with `<think>`) or has no
    `</think>`. The call is handed to the environment as the PhoneBuddy tool it stands for, on the model's
    grid. A reply the parser cannot read is counted and logged as such (`counts["unreadable"]`), never a
    silent turn without a call; `counts` also holds the turns read per dialect, and empty turns.
    """

    def __init__(self, tokenizer: Any, profile: str, thoughts: Thoughts | None = None):
        from collections import Counter

        from assistant_core.policy.profiles import get_profile

        self.tokenizer = tokenizer
        self.profile = profile
        self.grid = get_profile(profile).grid
        self.counts: Counter[str] = Counter()
        self.thoughts = thoughts if thoughts is not None else Thoughts()

    def install(self) -> ReplyReader:
        self.tokenizer.parse_response = self
        return self

    def __call__(self, ids: Any, prefix: Any = None, tools: Any = None, **_: Any) -> dict[str, Any]:
        from assistant_core.errors import PolicyOutputError
        from assistant_core.policy.parsing import parse_reply
        from training.data import tool_call

        text = self.tokenizer.decode(ids, skip_special_tokens=False)
        for end in (self.tokenizer.eos_token, self.tokenizer.pad_token, "<|im_end|>", "<|endoftext|>"):
            if end:
                text = text.split(end)[0]
        if not text.strip():
            # trl generates one more turn after a call that ended the episode; an empty turn is counted apart.
            self.counts["empty"] += 1
            return {"role": "assistant", "content": ""}
        try:
            reply = parse_reply(text, self.grid, self.grid, self.profile)
        except PolicyOutputError as error:
            self.counts["unreadable"] += 1
            log.warning("unreadable reply (%s): %.300r", error, text)
            return {"role": "assistant", "content": text}
        self.counts[str(reply.dialect)] += 1
        name, arguments = tool_call(reply.action, self.grid, self.grid, self.profile)
        self.thoughts.put(name, arguments, reply.thought)
        return {"role": "assistant", "content": reply.thought,
                "tool_calls": [{"type": "function", "function": {"name": name, "arguments": arguments}}]}


def phonebuddy_response_template() -> dict[str, Any]:
    """trl/transformers response template for JSON-in-<tool_call> replies (PhoneBuddy's format)."""
    from trl.chat_template_utils import qwen3_template

    return qwen3_template


def use_vllm(setting: str, on_cuda: bool) -> bool:
    installed = importlib.util.find_spec("vllm") is not None
    if setting == "on":
        if not (installed and on_cuda):
            raise TrainingError("vllm=on needs the vllm package and a CUDA GPU; use vllm: auto or off")
        return True
    return setting == "auto" and installed and on_cuda


@dataclass(frozen=True)
class RlResult:
    run: Path
    adapter: Path
    steps: int
    rewards: tuple[float, ...]
    reward_std: tuple[float, ...]
    losses: tuple[float, ...]
    seconds: float
    vllm: bool
    replies: dict[str, int] = field(default_factory=dict)  # turns read per dialect, and "unreadable"
    # mean reward per logged step of each source: "PhoneWorldEnv" (mock verifiers), "PhoneEnv" (device-level
    # outcome checks), "phonebuddy_format"; a step whose batch held no rollout of a source has none for it
    rewards_by_source: dict[str, tuple[float, ...]] = field(default_factory=dict)

    @property
    def steps_per_s(self) -> float:
        return self.steps / self.seconds if self.seconds else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"run": str(self.run), "adapter": str(self.adapter), "steps": self.steps,
                "rewards": list(self.rewards), "reward_std": list(self.reward_std), "losses": list(self.losses),
                "seconds": round(self.seconds, 2), "steps_per_s": round(self.steps_per_s, 4), "vllm": self.vllm,
                "replies": dict(self.replies),
                "rewards_by_source": {k: list(v) for k, v in self.rewards_by_source.items()}}


def run_rl(config: RlConfig, *, on_progress: Callable[[Any], None] | None = None,
           free_bytes: FreeBytes = disk_free_bytes, run: RunFolder | None = None,
           model: Any = None, settings: EnvSettings | None = None, phones: PhoneSettings | None = None) -> RlResult:
    """GRPO-train a LoRA adapter on PhoneWorld-lite (see the module docstring).

    With `config.phone_share` > 0 it is Real+Mock RL: that share of episodes runs on the phones
    (`config.phones`, or `phones` given), through trl's multi-environment routing ({"mock": PhoneWorldEnv,
    "phone": PhoneEnv}); each environment class is its own logged reward column.

    `model` (optional) is an already loaded base model (tests use it to wrap generation); otherwise it
    is loaded from `base_model` (nf4 on CUDA with quantization auto) and `adapter`, if given, is
    loaded trainable on top.
    """
    from training.sft import check_base_model, cuda_available, load_base, lora_config, make_callbacks

    base = check_base_model(config.base_model)
    min_free = config.min_free_mb * 2**20
    root = Path(config.output)
    check_free_space(root, min_free, free_bytes, what="start training")
    settings = settings or EnvSettings(profile=config.profile, screenshot_scale=config.screenshot_scale,
                                       allowed_apps=config.allowed_apps)
    if config.phone_share > 0 and phones is None:
        import os

        rank, world_size = int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1"))
        mine = phones_for_process(config.phones, rank, world_size)
        if len(mine) < config.batch_size:
            raise TrainingError(f"process {rank} of {world_size} has {len(mine)} phones for batch_size "
                                f"{config.batch_size}: list at least batch_size x processes phones")
        phones = PhoneSettings(mine, adb_port=config.adb_port, allowed_apps=config.allowed_apps)
    if config.phone_share <= 0:
        phones = None
    rows = choose_rows(config, settings)
    dataset = build_rl_dataset(rows, profile=config.profile, max_pixels=config.max_pixels or None,
                               settings=settings, phones=phones)
    factory: Any = env_factory(settings)
    if phones is not None:
        factory = {"mock": factory, "phone": phone_env_factory(settings, phones)}
    run = run or RunFolder.create(root, "rl", config.run_name, config=config_to_dict(config))

    import torch
    from trl import GRPOConfig, GRPOTrainer

    from assistant_core.policy.hf_compat import load_processor

    on_cuda = cuda_available()
    vllm = use_vllm(config.vllm, on_cuda)
    started = time.monotonic()
    with run.logging_to_file():
        torch.manual_seed(config.seed)
        if model is None:
            model, processor, _ = load_base(base, config.quantization, on_cuda=on_cuda)
        else:
            processor = load_processor(base)
        peft_config = None
        if config.adapter:
            from peft import PeftModel

            if not (Path(config.adapter) / "adapter_config.json").exists():
                raise TrainingError(f"no adapter in {config.adapter} (expected a folder written by `train sft`)")
            model = PeftModel.from_pretrained(model, config.adapter, is_trainable=True)
        else:
            peft_config = lora_config(config)
        processor.tokenizer.response_template = phonebuddy_response_template()
        reader = ReplyReader(processor.tokenizer, config.profile, settings.thoughts).install()
        args = GRPOConfig(
            output_dir=str(run.checkpoints), max_steps=config.max_steps,
            per_device_train_batch_size=config.batch_size, gradient_accumulation_steps=config.grad_accum,
            num_generations=config.num_generations, max_completion_length=config.max_completion_length,
            max_tool_calling_iterations=config.max_turns, learning_rate=config.learning_rate,
            temperature=config.temperature, beta=config.beta, seed=config.seed, logging_steps=config.logging_steps,
            save_strategy="steps" if config.save_steps else "no", save_steps=config.save_steps or 500,
            save_total_limit=2, bf16=on_cuda, use_cpu=not on_cuda, gradient_checkpointing=False,
            report_to="none", dataloader_num_workers=0, use_vllm=vllm, vllm_mode=config.vllm_mode, disable_tqdm=True,
            **({"vllm_server_base_url": config.vllm_server_url} if config.vllm_server_url else {}),
        )
        trainer = GRPOTrainer(model=model, reward_funcs=[format_reward(config.format_reward)], args=args,
                              train_dataset=dataset, processing_class=processor, peft_config=peft_config,
                              environment_factory=factory,
                              callbacks=make_callbacks(run, config.max_steps, on_progress=on_progress,
                                                       free_bytes=free_bytes, min_free_bytes=min_free,
                                                       started=started))
        resume = run.latest_checkpoint() if config.resume else None
        trainer.train(resume_from_checkpoint=str(resume) if resume else None)
        seconds = time.monotonic() - started
        history = trainer.state.log_history
        rewards = tuple(float(h["reward"]) for h in history if "reward" in h)
        reward_std = tuple(float(h["reward_std"]) for h in history if "reward_std" in h)
        losses = tuple(float(h["loss"]) for h in history if "loss" in h)
        by_source: dict[str, tuple[float, ...]] = {}
        for h in history:
            for key, value in h.items():
                if (key.startswith("rewards/") and key.endswith("/mean") and isinstance(value, int | float)
                        and value == value):  # None or NaN: no rollout of that source in the step
                    name = key[len("rewards/"):-len("/mean")]
                    by_source[name] = (*by_source.get(name, ()), float(value))
        from training.sft import adapter_bytes

        with atomic_dir(run.adapter, need_bytes=adapter_bytes(trainer.model) + min_free, free_bytes=free_bytes,
                        what="save the adapter") as tmp:
            trainer.model.save_pretrained(str(tmp))
            write_json_atomic(tmp / MANIFEST, {
                "kind": "lora", "stage": "grpo", "base_model": str(base), "init_adapter": config.adapter or None,
                "steps": trainer.state.global_step, "mean_reward_first": rewards[0] if rewards else None,
                "mean_reward_last": rewards[-1] if rewards else None, "replies": dict(reader.counts),
                "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            })
        result = RlResult(run=run.path, adapter=run.adapter, steps=trainer.state.global_step, rewards=rewards,
                          reward_std=reward_std, losses=losses, seconds=seconds, vllm=vllm,
                          replies=dict(reader.counts), rewards_by_source=by_source)
        log.info("replies read: %s", dict(reader.counts))
        run.write_result(result.to_dict())
    return result
