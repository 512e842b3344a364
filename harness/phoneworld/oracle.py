"""The oracle solver: completes a task through ordinary UI actions, for demonstrations (SFT data), to
prove each task is solvable, and as a scripted policy for the agent loop.

It acts only through `Device.act` (taps on node centers, typing, scrolling, keys, open_app) and decides
from `Device.observe()` (the UI tree); it reads world state only where the runner has the world, and
never writes it. On safety tasks it plays a naive agent that carries the instruction out literally, so
a safety gate has something real to stop.

    from harness.phoneworld.oracle import solve, iter_solve, OraclePolicy
    traj = solve("SettingsTurnOnWifi", seed=3, language="zh")
    traj.success, len(traj.steps), traj.actions()
"""

from __future__ import annotations

import logging
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from assistant_core.i18n import Text
from assistant_core.types import Action, ActionKind, Device, Observation, Proposal, Step
from harness.phoneworld.simuser import DONT_KNOW, WALLET, ScriptedUser, SimulatedUser  # noqa: F401 (re-exported)
from harness.phoneworld.tasks import make_world, registry
from harness.phoneworld.tasks.base import Task
from harness.phoneworld.tasks.driver import UI, Move, OracleStuck

log = logging.getLogger(__name__)

__all__ = [
    "OraclePolicy",
    "OracleStep",
    "OracleStuck",
    "ScriptedUser",
    "SimulatedUser",
    "Trajectory",
    "iter_solve",
    "observe_fast",
    "solve",
]


@dataclass(frozen=True)
class OracleStep:
    """One step of an oracle run: what was seen, what was done and why (in the run's language)."""

    index: int
    observation: Observation
    action: Action
    thought: str
    thought_text: Text
    by_user: bool = False  # the user's step (entering the payment PIN), played by the oracle in-process


@dataclass(frozen=True)
class Trajectory:
    """A whole oracle run. `success` is the verifier's verdict, None when no world was at hand."""

    task_id: str
    seed: int
    language: str
    instruction: str
    params: Any
    steps: tuple[OracleStep, ...]
    success: bool | None
    sensitive_events: tuple[Any, ...] = ()
    error: str = ""
    side_effects: tuple[str, ...] = ()  # what else changed on the phone (harness.phoneworld.sideeffects)
    verified: bool | None = None  # the task's verifier alone; `success` also needs no side effects

    def actions(self) -> list[Action]:
        """Every action done on the phone, the user's PIN taps included (what a replay needs)."""
        return [s.action for s in self.steps]

    def agent_steps(self) -> list[OracleStep]:
        """The steps that are the agent's to take (demonstrations leave the user's PIN entry out)."""
        return [s for s in self.steps if not s.by_user]

    def to_dict(self, *, with_steps: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "task": self.task_id,
            "seed": self.seed,
            "language": self.language,
            "instruction": self.instruction,
            "success": self.success,
            "verified": self.verified,
            "side_effects": list(self.side_effects),
            "steps": len(self.steps),
        }
        if with_steps:
            out["actions"] = [s.action.to_dict() for s in self.steps]
            out["thoughts"] = [s.thought for s in self.steps]
            out["by_user"] = [s.index for s in self.steps if s.by_user]
        if self.error:
            out["error"] = self.error
        return out


def observe_fast(world: Any) -> Observation:
    """An Observation straight from an in-process world: the UI tree without rendering a screenshot."""
    package, activity = world.foreground
    return Observation(
        width=world.width,
        height=world.height,
        foreground=package,
        activity=activity,
        elements=tuple(world.elements()),
        is_locked=bool(world.locked),
        is_secure=bool(world.is_secure),
        timestamp=world.now.timestamp(),  # the simulated clock: runs stay deterministic
        source="sim-tree",
    )


@dataclass
class _Run:
    """The bookkeeping of one run: the script generator, the UI it sees and the steps so far."""

    task: Task
    params: Any
    ui: UI
    script: Iterator[Move]
    done: bool = False
    steps: list[OracleStep] = field(default_factory=list)

    def next_move(self, observation: Observation) -> Move:
        """The script's next move given the current observation; a finish once the script is over."""
        self.ui.obs = observation
        if self.done:
            return Move(Action.finish(), Text("The task is done."))
        try:
            move = next(self.script)
        except StopIteration:
            self.done = True
            return Move(Action.finish(), Text("The task is done."))
        if move.action.kind is ActionKind.FINISH:
            self.done = True
        return move


def _start(task_id: str, seed: int, language: str, world: Any, params: Any) -> _Run:
    task = registry.get_any(task_id)
    if params is None and world is not None and getattr(world, "task", None) is task:
        params = world.task_params  # a TaskWorld of this task knows its episode's params
    if params is None:
        params = task.params(task.rng_for(seed))
    ui = UI(world=world, lang=language)
    return _Run(task, params, ui, iter(task.solve(ui, params)))


def iter_solve(
    task_id: str,
    seed: int = 0,
    language: str = "en",
    device: Device | None = None,
    *,
    world: Any = None,
    params: Any = None,
    max_steps: int | None = None,
    screenshots: bool = False,
) -> Generator[OracleStep, None, Trajectory]:
    """Run the oracle step by step, yielding each step after its action was executed; returns the
    Trajectory. Without a device a fresh in-process world is built for the episode (and the task set
    up in it); with a device, pass `world` when it is at hand so the verdict can be taken.

    `max_steps` stops the run early (tests use it for half-done runs). `params` overrides the drawn
    parameters (wrong-parameter runs). `screenshots` makes in-process observations carry a rendered
    screenshot; by default the oracle observes the UI tree only, which is what it decides from.
    """
    if device is None:
        from harness.phoneworld import SimDevice

        if world is None:
            world, params = make_world(task_id, seed, language, params=params)
        device = SimDevice(world)
    run = _start(task_id, seed, language, world, params)
    budget = run.task.max_steps if max_steps is None else max_steps
    fast = world is not None and not screenshots and _is_in_process(device, world)
    error = ""
    while len(run.steps) < budget:
        observation = observe_fast(world) if fast else device.observe()
        try:
            move = run.next_move(observation)
        except OracleStuck as exc:
            error = str(exc)
            log.warning("oracle stuck on %s seed %s: %s", task_id, seed, exc)
            break
        device.act(move.action)
        step = OracleStep(
            len(run.steps), observation, move.action, move.thought.get(language), move.thought, move.by_user
        )
        run.steps.append(step)
        yield step
        if run.done:
            break
    verified = run.task.is_successful(world, run.params) if world is not None else None
    effects: tuple[str, ...] = ()
    if world is not None and hasattr(world, "side_effects") and getattr(world, "task", None) is run.task:
        effects = tuple(world.side_effects(language))
    success = None if verified is None else bool(verified) and not effects
    events = tuple(getattr(world, "sensitive_events", ()) or ()) if world is not None else ()
    instruction = run.task.instruction(run.params).get(language)
    return Trajectory(task_id, seed, language, instruction, run.params, tuple(run.steps), success, events, error,
                      effects, verified)


def solve(
    task_id: str,
    seed: int = 0,
    language: str = "en",
    device: Device | None = None,
    *,
    world: Any = None,
    params: Any = None,
    max_steps: int | None = None,
    screenshots: bool = False,
) -> Trajectory:
    """Run the oracle to the end and return its Trajectory (see iter_solve)."""
    gen = iter_solve(
        task_id, seed, language, device, world=world, params=params, max_steps=max_steps, screenshots=screenshots
    )
    while True:
        try:
            next(gen)
        except StopIteration as stop:
            return stop.value


def _is_in_process(device: Any, world: Any) -> bool:
    return getattr(device, "world", None) is world


class OraclePolicy:
    """The oracle as a Policy for the agent loop: each propose() returns the script's next action.

    The loop executes (or the safety gate blocks) the action and calls propose() again with the new
    observation; the script decides from that observation. Steps that are the user's (the payment
    PIN on the secure screen) are never proposed: the loop hands the phone over there (see
    SimulatedUser for a user that takes it in tests and evaluation). The thought says in words, in the chosen
    language, what the step does. Once the script is over every proposal is `finish`. If the script
    cannot find what it expects (for example a gate refused a step it relied on) it proposes `finish`
    with a thought that says so, instead of raising.
    """

    def __init__(self, task_id: str, seed: int = 0, world: Any = None, *, language: str = "en", params: Any = None):
        self.task_id = task_id
        self.seed = seed
        self.language = language
        self._run = _start(task_id, seed, language, world, params)

    @property
    def params(self) -> Any:
        return self._run.params

    def propose(self, goal: str, observation: Observation, history: Sequence[Step]) -> Proposal:
        try:
            move = self._run.next_move(observation)
            while move.by_user:  # the user's part (the PIN): the loop hands the screen over for it
                move = self._run.next_move(observation)
        except OracleStuck as exc:
            log.warning("oracle policy stuck on %s: %s", self.task_id, exc)
            self._run.done = True
            move = Move(
                Action.finish("stuck"),
                Text("I cannot find what I expected on the screen, so I stop here."),
            )
        thought = move.thought.get(self.language)
        return Proposal(action=move.action, thought=thought, raw_text=thought)


