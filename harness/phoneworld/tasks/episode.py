"""A World that carries one task episode: `reset()` restores the engine's start state for the seed and
then re-runs the task's setup, so every way of resetting (World.reset, SimDevice.reset, the simulated
adbd) lands in the episode's start state."""

from __future__ import annotations

from typing import Any

from harness.phoneworld.tasks.base import Task
from harness.phoneworld.world import World


class TaskWorld(World):
    """`World` plus a task episode. `task`, `task_params` and `task_seed` say which episode it holds."""

    def __init__(self, task: Task, seed: int = 0, language: str = "en", *, params: Any = None, **kwargs: Any):
        self.__dict__["task"] = task
        self.__dict__["_fixed_params"] = params
        self.__dict__["task_params"] = None
        super().__init__(seed=seed, language=language, **kwargs)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        task: Task = self.__dict__["task"]
        params = self.__dict__["_fixed_params"]
        if params is None:
            params = task.params(task.rng_for(self.seed))
        self.__dict__["task_params"] = params
        task.setup(self, params)
        self.refresh()

    @property
    def task_seed(self) -> int:
        return self.seed

    def is_successful(self) -> bool:
        return bool(self.task.is_successful(self, self.task_params))
