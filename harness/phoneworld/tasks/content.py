"""Seeded content for task parameters: people, phone numbers, times, titles and bodies in both languages.

Everything here is drawn from a `random.Random` handed in, so a task's params depend only on its seed.
Names are bilingual, as the contact list shows them in the phone's language; free text that a user would
dictate (a note title, a meeting subject) is a `Text` pair, and verifiers accept either language.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from assistant_core.i18n import Text

# Task people never collide with the world's seeded contacts (apps/content.py NAMES).
NAMES: tuple[Text, ...] = (
    Text("Sophie Tang"), Text("Ryan Gao"), Text("Lily Deng"),
    Text("Kevin Luo"), Text("Nina Song"), Text("Tom Feng"),
    Text("Amy Cao"), Text("Eric Pan"), Text("Zoe Qian"),
    Text("Max Yuan"), Text("Ruby Jiang"), Text("Sam Xie"),
)


@dataclass(frozen=True)
class Person:
    """Someone a task is about: a bilingual name (as the contact list shows it), a number, a mail."""

    name: Text
    phone: str
    email: str

    def label(self, lang: str) -> str:
        return self.name.get(lang)


def phone_number(rng: random.Random) -> str:
    """A mobile number in the seeded contacts' style: "138 0013 8000"."""
    return f"1{rng.choice('3589')}{rng.randint(0, 9)} {rng.randint(1000, 9999)} {rng.randint(1000, 9999)}"


def person(rng: random.Random, *, exclude: tuple[Text, ...] = ()) -> Person:
    name = rng.choice([n for n in NAMES if n not in exclude])
    return Person(name, phone_number(rng), name.en.lower().replace(" ", ".") + "@example.com")


def people(rng: random.Random, n: int) -> tuple[Person, ...]:
    out: list[Person] = []
    for _ in range(n):
        out.append(person(rng, exclude=tuple(p.name for p in out)))
    return tuple(out)


def other_phone(rng: random.Random, phone: str) -> str:
    while True:
        candidate = phone_number(rng)
        if candidate != phone:
            return candidate


def digits(number: str) -> str:
    return "".join(c for c in number if c.isdigit())


# Things people say, with both languages. -----------------------------------------------------------

MEETINGS = (
    Text("Budget review"),
    Text("Project kickoff"),
    Text("Team lunch"),
    Text("Design sync"),
    Text("Quarterly planning"),
    Text("Doctor visit"),
    Text("Parent meeting"),
)

NOTE_TITLES = (
    Text("Groceries", ctx="harness.phoneworld.tasks.content"),
    Text("Packing list"),
    Text("Ideas"),
    Text("Books to read"),
    Text("Garden"),
    Text("Recipes"),
)

NOTE_BODIES = (
    Text("milk, eggs, bread"),
    Text("passport, charger, umbrella"),
    Text("call the bank on Monday"),
    Text("water the roses twice a week"),
    Text("buy a birthday gift for mom"),
)

MESSAGES = (
    Text("I will be there at six"),
    Text("See you tomorrow"),
    Text("Happy birthday!"),
    Text("Please call me back"),
    Text("Dinner is ready"),
    Text("Thank you for the flowers"),
)

FOLDERS = (Text("Taxes"), Text("Travel"), Text("Recipes"), Text("Photos 2026"))


def text_matches(value: str | None, expected: Text) -> bool:
    """Whether a typed value equals the expected text in either language (case and edge spaces ignored)."""
    if value is None:
        return False
    got = value.strip().casefold()
    return got in (expected.en.strip().casefold(), expected.zh.strip().casefold())


def text_contains(value: str | None, expected: Text) -> bool:
    if not value:
        return False
    got = value.casefold()
    return expected.en.casefold() in got or expected.zh.casefold() in got


def other(rng: random.Random, pool: tuple, current: object) -> object:
    """Another item of the pool than `current` (for wrong-parameter runs)."""
    choices = [p for p in pool if p != current]
    return rng.choice(choices)


def hhmm(hour: int, minute: int) -> str:
    return f"{hour:02d}:{minute:02d}"
