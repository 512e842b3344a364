"""A World that carries one task episode: `reset()` restores the engine's start state for the seed and
then re-runs the task's setup, so every way of resetting (World.reset, SimDevice.reset, the simulated
adbd) lands in the episode's start state.

It also keeps a snapshot of the whole phone taken right after the setup, so `side_effects()` can say
what else changed since (harness.phoneworld.sideeffects), and `judge()` gives the episode's verdict:
the verifier passed AND nothing changed that the task did not declare."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.phoneworld.tasks.base import Task
from harness.phoneworld.world import World


@dataclass(frozen=True)
class Verdict:
    """How an episode's end state is judged. `success` needs the verifier and no side effects."""

    verified: bool
    side_effects: tuple[str, ...]

    @property
    def success(self) -> bool:
        return self.verified and not self.side_effects


def run_labels(verified: bool, *, finished: bool, budget_ended: bool) -> dict[str, bool]:
    """MobileGym's failure labels for one run: `false_complete` (the run finished as if done, and the
    task's verifier says it is not) and `overdue` (the goal state was reached, but the run never said
    so: it ended by the step budget, the loop guard, or, for an action file, without a finish)."""
    return {"false_complete": bool(finished and not verified), "overdue": bool(verified and not finished and budget_ended)}


class TaskWorld(World):
    """`World` plus a task episode. `task`, `task_params` and `task_seed` say which episode it holds."""

    def __init__(self, task: Task, seed: int = 0, language: str = "en", *, params: Any = None, **kwargs: Any):
        self.__dict__["task"] = task
        self.__dict__["_fixed_params"] = params
        self.__dict__["task_params"] = None
        self.__dict__["_start_state"] = None
        super().__init__(seed=seed, language=language, **kwargs)

    def reset(self, seed: int | None = None) -> None:
        from harness.phoneworld.sideeffects import snapshot

        super().reset(seed)
        task: Task = self.__dict__["task"]
        params = self.__dict__["_fixed_params"]
        if params is None:
            params = task.params(task.rng_for(self.seed))
        self.__dict__["task_params"] = params
        task.setup(self, params)
        self.__dict__["_start_state"] = snapshot(self)
        self.refresh()

    @property
    def task_seed(self) -> int:
        return self.seed

    @property
    def start_state(self) -> dict[str, Any]:
        """The snapshot taken right after the task's setup."""
        return self.__dict__["_start_state"]

    def is_successful(self) -> bool:
        """The task's verifier alone (see `judge` for the episode's verdict)."""
        return bool(self.task.is_successful(self, self.task_params))

    def side_effects(self, lang: str = "en") -> list[str]:
        """What changed since the start that the task did not declare, in plain words."""
        from harness.phoneworld.sideeffects import side_effects, snapshot

        return side_effects(self.start_state, snapshot(self), self.task.may_change(self.task_params), lang)

    def judge(self, lang: str = "en") -> Verdict:
        return Verdict(self.is_successful(), tuple(self.side_effects(lang)))
