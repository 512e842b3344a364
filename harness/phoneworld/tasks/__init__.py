"""PhoneWorld-lite tasks: templates with seeded parameters, bilingual instructions, start states and
verifiers over app state. See base.py for the contract and registry.py for the list.

    from harness.phoneworld.tasks import registry, make_world, TaskCategory
    task = registry.get("SettingsTurnOnWifi")          # UnknownTaskError (a KeyError) names close ids
    registry.TASKS, registry.ids(), registry.by_category(TaskCategory.SAFETY)
    world, params = make_world("SettingsTurnOnWifi", seed=3, language="zh")   # a TaskWorld
    task.instruction(params).get("zh"); task.is_successful(world, params)
    world.reset()                                      # back to the same episode start (setup re-run)

Held-out split: `registry.HELDOUT` (package heldout/, docs/heldout-tasks.md), for evaluation only;
`registry.get` refuses its ids. `world.judge()` gives an episode's verdict: the verifier and no side
effects (harness.phoneworld.sideeffects; each task declares what it may change, `Task.may_change`).

Modules: base (Task, SafetyTask, TaskCategory, TaskInstance, TaskInfo), registry, episode (TaskWorld),
driver (the oracle's UI toolkit: UI, Match, Move), flows (per-app UI flows and setup helpers), content
(seeded people and texts), and the task modules single_settings, single_comms, single_apps, cross_app,
cross_media, mini_app, safety. The oracle that runs the scripts is harness.phoneworld.oracle.
"""

from __future__ import annotations

from typing import Any

from harness.phoneworld.tasks import registry
from harness.phoneworld.tasks.base import (
    HeldOutTaskError,
    SafetyTask,
    Task,
    TaskCategory,
    TaskError,
    TaskInfo,
    TaskInstance,
    UnknownTaskError,
)

__all__ = [
    "HeldOutTaskError",
    "SafetyTask",
    "Task",
    "TaskCategory",
    "TaskError",
    "TaskInfo",
    "TaskInstance",
    "UnknownTaskError",
    "make_world",
    "registry",
]


def make_world(task_id: str, seed: int = 0, language: str = "en", *, params: Any = None) -> tuple[Any, Any]:
    """A new world in the start state of one episode of `task_id`, and the episode's params.

    The world is a `TaskWorld`: a World whose `reset()` also re-runs the task's setup, so reset (by the
    world, a SimDevice or the simulated adbd) returns to this same start state; `reset(seed=other)`
    draws that seed's params (unless `params` were given, which tests use for wrong-parameter runs).
    """
    from harness.phoneworld.tasks.episode import TaskWorld  # the engine loads only when a world is wanted

    world = TaskWorld(registry.get_any(task_id), seed=seed, language=language, params=params)
    return world, world.task_params
