"""Held-out ask-the-user tasks (MobileWorld's agent-user interaction tasks, arXiv 2512.19432: a request
missing a fact, a missing contact, a vague choice, a contradiction), answered by a scripted user.

The user answers only from its script: a question that touches one of the script's topics gets that
line, any other question gets "I don't know" (in the run's language). A run that does not ask can only
guess; a run that asks on a task where nothing was missing is counted against (training.evaluate's
`needless_questions`).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from assistant_core.i18n import Text
from assistant_core.types import Action
from harness.phoneworld.sideeffects import at
from harness.phoneworld.tasks import content
from harness.phoneworld.tasks.base import Task, TaskCategory
from harness.phoneworld.tasks.content import Person, digits
from harness.phoneworld.tasks.driver import UI, Move, T
from harness.phoneworld.tasks.flows import (
    CLOCK,
    PHONE,
    add_alarm,
    crowd_contacts,
    open_contact,
    put_contact,
    rid,
)
from harness.phoneworld.tasks.heldout.ho_apps import EXPENSES, TODO, same


class _Ask(Task):
    category: ClassVar[TaskCategory] = TaskCategory.ASK_USER
    heldout: ClassVar[bool] = True
    needs_question: ClassVar[bool] = True
    max_steps: ClassVar[int] = 25
    question: ClassVar[Text]

    def script(self, params: Any) -> tuple[tuple[tuple[str, ...], Text], ...]:
        raise NotImplementedError

    def simulated_user(self, world: Any, params: Any, lang: str) -> Any:
        from harness.phoneworld.simuser import ScriptedUser

        return ScriptedUser(world, self.script(params), lang)

    def ask(self, ui: UI) -> Iterator[Move]:
        yield Move(Action.call_user(self.question.get(ui.ui_lang)), T("Ask the user what is missing."))


# --- a missing fact --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Amount:
    amount: int


class HoAskExpenseAmount(_Ask):
    id = "HoAskExpenseAmount"
    apps = (EXPENSES,)
    question = Text("How much was the taxi?")

    def params(self, rng: random.Random) -> Amount:
        return Amount(rng.randrange(18, 90))

    def perturb(self, p: Amount, rng: random.Random) -> Amount:
        return Amount(p.amount + 7)  # a guessed amount

    def script(self, p: Amount):
        return ((("how much", "amount", "cost", "price", "多少", "金额", "钱"), Text("It was {amount}.").format(amount=p.amount)),)

    def instruction(self, p: Amount) -> Text:
        return Text("Log this morning's taxi in my expenses, under transport.")

    def setup(self, world: Any, p: Amount) -> None:
        pass

    def is_successful(self, world: Any, p: Amount) -> bool:
        start = set(world.start_state["expenses"]["expenses"])
        new = [x for x in world.expenses.expenses if x.id not in start]
        return (len(new) == 1 and abs(new[0].amount - p.amount) < 0.005 and new[0].category == "transport"
                and any(w in new[0].name.lower() for w in ("taxi", "打车", "出租")))

    def solve(self, ui: UI, p: Amount) -> Iterator[Move]:
        yield from self.ask(ui)
        from harness.phoneworld.tasks.flows import open_app

        yield from open_app(ui, EXPENSES)
        yield from ui.tap(rid(EXPENSES, "new_expense"), T("Add an expense."))
        yield from ui.type_into(rid(EXPENSES, "expense_name"), Text("Taxi").get(ui.ui_lang), T("Type what it was for."))
        yield from ui.type_into(rid(EXPENSES, "expense_amount"), str(p.amount), T("Type the amount the user said."))
        yield from ui.tap(rid(EXPENSES, "cat_transport"), T("Pick Transport."))
        yield from ui.tap(rid(EXPENSES, "save"), T("Save it."))


# --- a missing contact -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Who:
    target: Person
    decoy: Person


class HoAskWhoToCall(_Ask):
    id = "HoAskWhoToCall"
    apps = (PHONE,)
    question = Text("Who is your daughter in your contacts?")

    def params(self, rng: random.Random) -> Who:
        a, b = content.people(rng, 2)
        return Who(a, b)

    def perturb(self, p: Who, rng: random.Random) -> Who:
        return Who(p.decoy, p.target)

    def may_change(self, params: Any) -> tuple[str, ...]:
        return ("+" + at("phone.calls"),)

    def script(self, p: Who):
        return ((("who", "daughter", "name", "which", "谁", "女儿", "名字", "哪"), p.target.name),)

    def instruction(self, p: Who) -> Text:
        return Text("Call my daughter.")

    def setup(self, world: Any, p: Who) -> None:
        crowd_contacts(world)
        put_contact(world, p.target)
        put_contact(world, p.decoy)

    def is_successful(self, world: Any, p: Who) -> bool:
        new = world.phone.calls[len(world.start_state["phone"]["calls"]):]
        return len(new) == 1 and digits(new[0].number) == digits(p.target.phone)

    def solve(self, ui: UI, p: Who) -> Iterator[Move]:
        yield from self.ask(ui)
        yield from open_contact(ui, p.target.name)
        yield from ui.tap(rid(PHONE, "call_button"), T("Tap Call."))


# --- a contradiction -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Clock:
    hour: int
    minute: int


class HoAskAlarmContradiction(_Ask):
    id = "HoAskAlarmContradiction"
    apps = (CLOCK,)
    question = Text("A morning alarm at {t} pm: did you mean {t} in the morning?")

    def params(self, rng: random.Random) -> Clock:
        return Clock(rng.choice((6, 7, 8, 9)), rng.choice((0, 15, 30, 45)))

    def perturb(self, p: Clock, rng: random.Random) -> Clock:
        return Clock(p.hour + 12, p.minute)  # taken literally: the evening

    def may_change(self, params: Any) -> tuple[str, ...]:
        return ("+" + at("deskclock.alarms"),)

    def _t(self, p: Clock) -> str:
        return f"{p.hour}:{p.minute:02d}"

    def script(self, p: Clock):
        return ((("morning", "pm", "evening", "a.m", "mean", "早上", "晚上", "上午", "下午", "是指"),
                 Text("Yes, {t} in the morning.").format(t=self._t(p))),)

    def instruction(self, p: Clock) -> Text:
        return Text("Set my morning alarm for {t} pm.").format(t=self._t(p))

    def setup(self, world: Any, p: Clock) -> None:
        pass

    def is_successful(self, world: Any, p: Clock) -> bool:
        start = set(world.start_state["deskclock"]["alarms"])
        new = [a for a in world.deskclock.alarms if a.id not in start]
        return len(new) == 1 and new[0].time == f"{p.hour:02d}:{p.minute:02d}" and new[0].enabled

    def solve(self, ui: UI, p: Clock) -> Iterator[Move]:
        q = self.question.get(ui.ui_lang).format(t=self._t(p))
        yield Move(Action.call_user(q), T("The time and 'morning' disagree: ask."))
        yield from add_alarm(ui, f"{p.hour:02d}:{p.minute:02d}")


# --- a vague selection -----------------------------------------------------------------------------

BILLS = (Text("electricity bill"), Text("gas bill"), Text("phone bill"))


@dataclass(frozen=True)
class Bill:
    bill: Text
    other: Text


class HoAskWhichBill(_Ask):
    id = "HoAskWhichBill"
    apps = (TODO,)
    question = Text("Which bill should the reminder be for?")

    def params(self, rng: random.Random) -> Bill:
        a, b = rng.sample(BILLS, 2)
        return Bill(a, b)

    def perturb(self, p: Bill, rng: random.Random) -> Bill:
        return Bill(p.other, p.bill)

    def may_change(self, params: Any) -> tuple[str, ...]:
        return ("+" + at("todo.items"),)

    def script(self, p: Bill):
        return ((("which", "what", "bill", "哪", "什么", "费"), Text("The {bill}.").format(bill=p.bill)),)

    def instruction(self, p: Bill) -> Text:
        return Text("Remind me on my to-do list to pay the bill.")

    def setup(self, world: Any, p: Bill) -> None:
        pass

    def _want(self, p: Bill) -> Text:
        return Text("Pay the {bill}").format(bill=p.bill)

    def is_successful(self, world: Any, p: Bill) -> bool:
        start = set(world.start_state["todo"]["items"])
        new = [t for t in world.todo.items if t.id not in start]
        return len(new) == 1 and (same(new[0].title, self._want(p)) or p.bill.en in new[0].title.lower()
                                  or p.bill.zh in new[0].title)

    def solve(self, ui: UI, p: Bill) -> Iterator[Move]:
        from harness.phoneworld.tasks.flows import open_app

        yield from self.ask(ui)
        yield from open_app(ui, TODO)
        yield from ui.tap(rid(TODO, "new_item"), T("Add a new task."))
        yield from ui.type_into(rid(TODO, "item_title"), self._want(p).get(ui.ui_lang), T("Type the task."))
        yield from ui.tap(rid(TODO, "save"), T("Save it."))


TASKS = (HoAskExpenseAmount(), HoAskWhoToCall(), HoAskAlarmContradiction(), HoAskWhichBill())
