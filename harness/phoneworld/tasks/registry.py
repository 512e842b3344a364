"""The sorted registry of every task template, and lookup by id.

`TASKS` is one tuple sorted by id (android_world's registry habit). `get(task_id)` raises
`UnknownTaskError` naming the closest ids. The modules that define tasks list theirs in a module-level
`TASKS` tuple; this module only gathers them.
"""

from __future__ import annotations

import difflib

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
from harness.phoneworld.tasks.base import Task, TaskCategory, UnknownTaskError

_MODULES = (single_settings, single_comms, single_apps, cross_app, cross_media, mini_app, safety, privacy)


def _gather() -> tuple[Task, ...]:
    tasks: dict[str, Task] = {}
    for module in _MODULES:
        for task in module.TASKS:
            if task.id in tasks:
                raise RuntimeError(f"two tasks share the id {task.id!r}")
            tasks[task.id] = task
    return tuple(tasks[k] for k in sorted(tasks))


TASKS: tuple[Task, ...] = _gather()
_BY_ID: dict[str, Task] = {t.id: t for t in TASKS}


def ids() -> tuple[str, ...]:
    return tuple(_BY_ID)


def get(task_id: str) -> Task:
    """The task with this id; an unknown id raises UnknownTaskError naming close matches."""
    if not isinstance(task_id, str):
        raise UnknownTaskError(repr(task_id), [])
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
