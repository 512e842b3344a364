"""The demonstration's people on the simulated phone.

The demonstration's call and text tasks name people (Sophie Tang...). "Call Sophie Tang" is a demonstration
task, whose start state has her in the contacts; "Text Sophie Tang that I am late" is no task, and goes to
the fast path on the phone as it is. So that both find the same person the same way, a request that names
one of these people (in English or Chinese) puts them in the contacts first, with the same number as in
those tasks (`add_named_people`). Only the named: the contact list, which is also the recogniser's hint
list, stays as it was otherwise.
"""

from __future__ import annotations

from typing import Any

DEMO_PEOPLE_TASKS = ("PhoneCallContact", "MessagesSendText")


def add_named_people(world: Any, seed: int, request: str) -> list[str]:
    """Put the demonstration tasks' people (DEMO_PEOPLE_TASKS, with `seed`'s parameters) that `request`
    names into the contacts, unless a contact has that name already. Returns the names added."""
    from harness.phoneworld.tasks import registry
    from harness.phoneworld.tasks.flows import put_contact

    said = request.casefold()
    known = {c.name.en for c in world.phone.contacts}
    added: list[str] = []
    for task_id in DEMO_PEOPLE_TASKS:
        task = registry.get(task_id)
        params = task.params(task.rng_for(seed))
        for who in (getattr(params, "target", None), getattr(params, "decoy", None)):
            if who is None or who.name.en in known:
                continue
            if who.name.en.casefold() in said or (who.name.zh and who.name.zh in request):
                put_contact(world, who)
                known.add(who.name.en)
                added.append(who.name.en)
    return added
