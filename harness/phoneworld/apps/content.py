"""Seeded fixture content shared by several apps: the people on the phone (contacts, senders, chat
partners). `people(rng)` is called once per reset from the world's own stream."""

from __future__ import annotations

import random
from dataclasses import dataclass

from assistant_core.i18n import Text

NAMES: tuple[tuple[str, str], ...] = (
    ("Alice Chen", "陈爱丽"),
    ("Bob Li", "李波"),
    ("Carol Wang", "王卡萝"),
    ("David Zhang", "张大卫"),
    ("Emma Liu", "刘艾玛"),
    ("Frank Zhao", "赵弗兰"),
    ("Grace Huang", "黄格蕾"),
    ("Henry Wu", "吴亨利"),
    ("Iris Zhou", "周艾瑞"),
    ("Jack Xu", "徐杰克"),
    ("Karen Sun", "孙凯伦"),
    ("Leo Ma", "马里奥"),
    ("Mia Hu", "胡米娅"),
    ("Nathan Guo", "郭南森"),
    ("Olivia He", "何奥莉"),
    ("Peter Lin", "林彼得"),
)


@dataclass(frozen=True)
class Person:
    """Someone the phone's owner knows. `id` is stable for a seed; `phone` like "138 0013 8000"."""

    id: str
    name: Text
    phone: str
    email: str

    def label(self, lang: str) -> str:
        return self.name.get(lang)


def people(rng: random.Random, count: int = 10) -> list[Person]:
    picks = rng.sample(NAMES, count)
    out = []
    used: set[str] = set()
    for i, (en, zh) in enumerate(picks):
        while True:
            number = f"1{rng.choice('3589')}{rng.randint(0, 9)} {rng.randint(1000, 9999)} {rng.randint(1000, 9999)}"
            if number not in used:
                used.add(number)
                break
        mail = en.lower().replace(" ", ".") + "@example.com"
        out.append(Person(id=f"p{i}", name=Text(en, zh), phone=number, email=mail))
    out.sort(key=lambda p: p.name.en)
    return out


def digits(number: str) -> str:
    """A phone number reduced to its digits (and a leading +), for comparisons."""
    keep = "".join(c for c in number if c.isdigit())
    return ("+" + keep) if number.strip().startswith("+") else keep
