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
    Text("Sophie Tang", "唐苏菲"), Text("Ryan Gao", "高瑞安"), Text("Lily Deng", "邓莉莉"),
    Text("Kevin Luo", "罗凯文"), Text("Nina Song", "宋妮娜"), Text("Tom Feng", "冯汤姆"),
    Text("Amy Cao", "曹艾米"), Text("Eric Pan", "潘埃里克"), Text("Zoe Qian", "钱佐伊"),
    Text("Max Yuan", "袁麦克斯"), Text("Ruby Jiang", "蒋露比"), Text("Sam Xie", "谢山姆"),
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
    Text("Budget review", "预算评审"),
    Text("Project kickoff", "项目启动会"),
    Text("Team lunch", "团队午餐"),
    Text("Design sync", "设计讨论"),
    Text("Quarterly planning", "季度规划"),
    Text("Doctor visit", "看医生"),
    Text("Parent meeting", "家长会"),
)

NOTE_TITLES = (
    Text("Groceries", "购物清单"),
    Text("Packing list", "行李清单"),
    Text("Ideas", "想法"),
    Text("Books to read", "要读的书"),
    Text("Garden", "花园"),
    Text("Recipes", "菜谱"),
)

NOTE_BODIES = (
    Text("milk, eggs, bread", "牛奶、鸡蛋、面包"),
    Text("passport, charger, umbrella", "护照、充电器、雨伞"),
    Text("call the bank on Monday", "周一给银行打电话"),
    Text("water the roses twice a week", "玫瑰每周浇水两次"),
    Text("buy a birthday gift for mom", "给妈妈买生日礼物"),
)

MESSAGES = (
    Text("I will be there at six", "我六点到"),
    Text("See you tomorrow", "明天见"),
    Text("Happy birthday!", "生日快乐！"),
    Text("Please call me back", "请给我回电话"),
    Text("Dinner is ready", "晚饭好了"),
    Text("Thank you for the flowers", "谢谢你的花"),
)

FOLDERS = (Text("Taxes", "税务"), Text("Travel", "旅行"), Text("Recipes", "菜谱"), Text("Photos 2026", "2026照片"))


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
