"""The sorted registry of every task template, and lookup by id.

`TASKS` is one tuple sorted by id (android_world's registry habit): the seen split, the tasks the fast
path, the oracle and the verifiers were shaped around, and the only ones training may use. `get(task_id)`
raises `UnknownTaskError` naming the closest ids. The modules that define tasks list theirs in a
module-level `TASKS` tuple; this module only gathers them.

`HELDOUT` is the held-out split (harness.phoneworld.tasks.heldout, docs/heldout-tasks.md): templates
ported by structure from public benchmarks, written after the rest and never seen by training. `get`
refuses them (`HeldOutTaskError`), so SFT data, GRPO datasets and the demo never load them; only
evaluation (`phonebuddy train eval --split heldout`) reaches them, through `get_any` / `split_tasks`.
"""

from __future__ import annotations

import difflib
from typing import Any

from harness.phoneworld.tasks import (
    cross_app,
    cross_media,
    mini_app,
    privacy,
    safety,
    single_apps,
    single_comms,
    single_settings,
)
from harness.phoneworld.tasks.base import HeldOutTaskError, Task, TaskCategory, UnknownTaskError
from harness.phoneworld.tasks.heldout import HELDOUT_MODULES

_MODULES = (single_settings, single_comms, single_apps, cross_app, cross_media, mini_app, safety, privacy)
SPLITS = ("seen", "heldout")


def _gather(modules: tuple, *, heldout: bool) -> tuple[Task, ...]:
    tasks: dict[str, Task] = {}
    for module in modules:
        for task in module.TASKS:
            if task.id in tasks:
                raise RuntimeError(f"two tasks share the id {task.id!r}")
            if bool(task.heldout) is not heldout:
                raise RuntimeError(f"task {task.id!r} is registered in the wrong split")
            tasks[task.id] = task
    return tuple(tasks[k] for k in sorted(tasks))


TASKS: tuple[Task, ...] = _gather(_MODULES, heldout=False)
HELDOUT: tuple[Task, ...] = _gather(HELDOUT_MODULES, heldout=True)
_BY_ID: dict[str, Task] = {t.id: t for t in TASKS}
_HELDOUT_BY_ID: dict[str, Task] = {t.id: t for t in HELDOUT}
if set(_BY_ID) & set(_HELDOUT_BY_ID):
    raise RuntimeError(f"ids in both splits: {sorted(set(_BY_ID) & set(_HELDOUT_BY_ID))}")


def split_tasks(split: str = "seen") -> tuple[Task, ...]:
    """The tasks of one split ("seen" or "heldout"). Only evaluation may ask for "heldout"."""
    if split == "seen":
        return TASKS
    if split == "heldout":
        return HELDOUT
    raise ValueError(f"unknown split {split!r}; use seen or heldout")


def get_any(task_id: str) -> Task:
    """A task of either split (worlds, the oracle and evaluation); unknown ids as in `get`."""
    if isinstance(task_id, str) and task_id in _HELDOUT_BY_ID:
        return _HELDOUT_BY_ID[task_id]
    return get(task_id)


def ids() -> tuple[str, ...]:
    return tuple(_BY_ID)


def get(task_id: str) -> Task:
    """The task with this id; an unknown id raises UnknownTaskError naming close matches."""
    if not isinstance(task_id, str):
        raise UnknownTaskError(repr(task_id), [])
    if task_id in _HELDOUT_BY_ID:
        raise HeldOutTaskError(task_id)
    try:
        return _BY_ID[task_id]
    except KeyError:
        lowered = {k.lower(): k for k in _BY_ID}
        if task_id.lower() in lowered:
            close = [lowered[task_id.lower()]]
        else:
            close = difflib.get_close_matches(task_id, list(_BY_ID), n=3, cutoff=0.5)
            close += [k for k in _BY_ID if task_id.lower() in k.lower() and k not in close][: 3 - len(close)]
        raise UnknownTaskError(task_id, close) from None


def by_category(category: TaskCategory | str) -> tuple[Task, ...]:
    category = TaskCategory(category)
    return tuple(t for t in TASKS if t.category is category)


def refuse_heldout(tasks: Any, what: str) -> None:
    """Raise HeldOutTaskError if any of `tasks` (Task objects or ids) is held out; `what` names the user."""
    for task in tasks if isinstance(tasks, (list, tuple, set, frozenset)) else [tasks]:
        task_id = task if isinstance(task, str) else getattr(task, "id", "")
        if getattr(task, "heldout", False) or task_id in {t.id for t in HELDOUT}:
            err = HeldOutTaskError(task_id)
            err.args = (f"{what} refuses {task_id!r}: {err.args[0]}",)
            raise err
