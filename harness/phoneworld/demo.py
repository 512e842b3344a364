"""The simulated phone as the app's demonstration opens it (no task loaded).

The demonstration's call and text tasks name people (Sophie Tang...): they are in the simulated phone's
contacts from the start, with the same numbers as in those tasks, so "Call Sophie Tang" (a demonstration
task) and "Text Sophie Tang that I am late" (the fast path, on the phone as it is) find the same person the
same way. (`phonebuddy run --device sim` keeps the plain seeded phone, whose contact list the fast path's
request table is written against.)
"""

from __future__ import annotations

from typing import Any

DEMO_PEOPLE_TASKS = ("PhoneCallContact", "MessagesSendText")


def add_demo_people(world: Any, seed: int) -> None:
    """Put the demonstration tasks' people (DEMO_PEOPLE_TASKS, with `seed`'s parameters) in the contacts."""
    from harness.phoneworld.tasks import registry
    from harness.phoneworld.tasks.flows import put_contact

    known = {c.name.en for c in world.phone.contacts}
    for task_id in DEMO_PEOPLE_TASKS:
        task = registry.get(task_id)
        params = task.params(task.rng_for(seed))
        for who in (getattr(params, "target", None), getattr(params, "decoy", None)):
            if who is not None and who.name.en not in known:
                put_contact(world, who)
                known.add(who.name.en)


def demo_world(seed: int, lang: str) -> Any:
    """A fresh simulated phone with the demonstration's people."""
    from harness.phoneworld import World

    world = World(seed=seed, language=lang)
    add_demo_people(world, seed)
    return world
