"""More held-out templates: list upkeep in the new apps (AndroidWorld's duplicate-deletion and
multi-row families, android_world/task_evals/single/expense.py and recipe.py), clock entries
(single/clock.py), notes merging (single/markor.py MarkorMergeNotes), cross-app reads (a number in a
note called, as in phone.py MarkorCallApartment; an amount in a text logged, as in expense.py's
ExpenseAddMultipleFromMarkor). The clock, notes, calendar and payment-page templates are in ho_schedule.py.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from assistant_core.i18n import Text
from assistant_core.types import Action
from harness.phoneworld.sideeffects import at
from harness.phoneworld.tasks import content
from harness.phoneworld.tasks.base import Task, TaskCategory
from harness.phoneworld.tasks.content import Person, digits, text_matches
from harness.phoneworld.tasks.driver import UI, Match, Move, T
from harness.phoneworld.tasks.flows import (
    MESSAGES,
    NOTES,
    PHONE,
    add_contact,
    open_app,
    put_contact,
    rid,
    send_sms,
)
from harness.phoneworld.tasks.heldout.ho_apps import CATS, EXPENSES, NEW_TODOS, RECIPES, SPENDS, TODO, same

WALLET = "com.phoneworld.wallet"


def _nth(i: int) -> tuple[str, str]:
    return (("first", "second", "third", "fourth", "fifth")[i], "一二三四五"[i])


class _Held(Task):
    category: ClassVar[TaskCategory] = TaskCategory.SINGLE_APP
    heldout: ClassVar[bool] = True
    max_steps: ClassVar[int] = 25


@dataclass(frozen=True)
class Pick:
    index: int


def _delete_row(ui: UI, package: str, item_rid: str, index: int) -> Iterator[Move]:
    yield from ui.long_press(ui.find_all(rid(package, item_rid))[index], T("Long-press it.", ctx="harness.phoneworld.tasks.heldout.ho_more"))
    yield from ui.tap(Match(text=Text("Delete").get(ui.ui_lang)), T("Choose Delete."))


# --- to-do --------------------------------------------------------------------------------------------


class HoTodoUntickItem(_Held):
    id = "HoTodoUntickItem"
    apps = (TODO,)

    def params(self, rng: random.Random) -> Pick:
        return Pick(rng.randrange(2))

    def perturb(self, p: Pick, rng: random.Random) -> Pick:
        return Pick(1 - p.index)

    def instruction(self, p: Pick) -> Text:
        en, zh = _nth(p.index)
        return Text("I ticked the {en} to-do by mistake; mark it as not done.").format(en=Text(str(en), str(zh)))

    def setup(self, world: Any, p: Pick) -> None:
        for i, t in enumerate(world.todo.items):
            t.done = i < 2

    def is_successful(self, world: Any, p: Pick) -> bool:
        return [t.done for t in world.todo.items] == [i < 2 and i != p.index for i in range(len(world.todo.items))]

    def solve(self, ui: UI, p: Pick) -> Iterator[Move]:
        yield from open_app(ui, TODO)
        yield from ui.tap(ui.find_all(rid(TODO, "done"))[p.index], T("Untick it."))


@dataclass(frozen=True)
class Nothing:
    pass


class HoTodoClearDone(_Held):
    id = "HoTodoClearDone"
    apps = (TODO,)

    def params(self, rng: random.Random) -> Nothing:
        return Nothing()

    def perturb(self, p: Nothing, rng: random.Random) -> None:
        return None

    def instruction(self, p: Nothing) -> Text:
        return Text("Clear the finished tasks off my to-do list.")

    def setup(self, world: Any, p: Nothing) -> None:
        for i, t in enumerate(world.todo.items):
            t.done = i in (1, 3)

    def is_successful(self, world: Any, p: Nothing) -> bool:
        start = world.start_state["todo"]["items"]
        return [t.id for t in world.todo.items] == [k for k, v in start.items() if not v["done"]]

    def solve(self, ui: UI, p: Nothing) -> Iterator[Move]:
        yield from open_app(ui, TODO)
        for _ in range(6):
            done = [i for i, e in enumerate(ui.find_all(rid(TODO, "done"))) if e.checked]
            if not done:
                return
            yield from _delete_row(ui, TODO, "todo_item", done[0])


# --- expenses -----------------------------------------------------------------------------------------


class HoExpensesDeleteDuplicate(_Held):
    id = "HoExpensesDeleteDuplicate"
    apps = (EXPENSES,)

    def params(self, rng: random.Random) -> Pick:
        return Pick(rng.randrange(3))

    def perturb(self, p: Pick, rng: random.Random) -> Pick:
        return Pick((p.index + 1) % 3)  # deletes a row that is not a copy

    def instruction(self, p: Pick) -> Text:
        return Text("I logged one expense twice; delete the extra copy.")

    def setup(self, world: Any, p: Pick) -> None:
        rows = world.expenses.expenses
        rows.insert(p.index + 1, replace(rows[p.index], id="x90"))

    def is_successful(self, world: Any, p: Pick) -> bool:
        start = list(world.start_state["expenses"]["expenses"])
        left = [x.id for x in world.expenses.expenses]
        return left in ([k for k in start if k != "x90"], [k for i, k in enumerate(start) if i != p.index])

    def solve(self, ui: UI, p: Pick) -> Iterator[Move]:
        yield from open_app(ui, EXPENSES)
        yield from _delete_row(ui, EXPENSES, "expense_item", p.index + 1)


@dataclass(frozen=True)
class TwoSpends:
    first: tuple[Text, str, int]
    second: tuple[Text, str, int]


class HoExpensesAddTwo(_Held):
    id = "HoExpensesAddTwo"
    apps = (EXPENSES,)

    def params(self, rng: random.Random) -> TwoSpends:
        (a, ca), (b, cb) = rng.sample(SPENDS, 2)
        return TwoSpends((a, ca, rng.randrange(10, 99)), (b, cb, rng.randrange(10, 99)))

    def perturb(self, p: TwoSpends, rng: random.Random) -> TwoSpends:
        a, b = p.first, p.second
        return TwoSpends(a, (b[0], b[1], b[2] + 1))

    def instruction(self, p: TwoSpends) -> Text:
        (a, ca, x), (b, cb, y) = p.first, p.second
        return Text("Log two expenses: {x} on “{a}” ({cats}) and {y} on “{b}” ({cats2}).").format(x=x, a=a, cats=CATS[ca], y=y, b=b, cats2=CATS[cb])

    def setup(self, world: Any, p: TwoSpends) -> None:
        pass

    def is_successful(self, world: Any, p: TwoSpends) -> bool:
        start = set(world.start_state["expenses"]["expenses"])
        new = [x for x in world.expenses.expenses if x.id not in start]
        want = [p.first, p.second]
        return len(new) == 2 and all(
            any(same(x.name, n) and x.category == c and abs(x.amount - a) < 0.005 for x in new) for n, c, a in want)

    def solve(self, ui: UI, p: TwoSpends) -> Iterator[Move]:
        yield from open_app(ui, EXPENSES)
        for name, cat, amount in (p.first, p.second):
            yield from ui.tap(rid(EXPENSES, "new_expense"), T("Add an expense."))
            yield from ui.type_into(rid(EXPENSES, "expense_name"), ui.say(name), T("Type what it was for."))
            yield from ui.type_into(rid(EXPENSES, "expense_amount"), str(amount), T("Type the amount."))
            yield from ui.tap(rid(EXPENSES, f"cat_{cat}"), T("Pick the category."))
            yield from ui.tap(rid(EXPENSES, "save"), T("Save it."))


class HoExpensesChangeCategory(_Held):
    id = "HoExpensesChangeCategory"
    apps = (EXPENSES,)

    def params(self, rng: random.Random) -> Pick:
        return Pick(rng.randrange(4))

    def perturb(self, p: Pick, rng: random.Random) -> Pick:
        return Pick((p.index + 1) % 4)

    def instruction(self, p: Pick) -> Text:
        en, zh = _nth(p.index)
        return Text("Put the {en} expense under “Other” instead.").format(en=Text(str(en), str(zh)))

    def setup(self, world: Any, p: Pick) -> None:
        pass

    def is_successful(self, world: Any, p: Pick) -> bool:
        start = list(world.start_state["expenses"]["expenses"].values())
        now = world.expenses.expenses
        return len(now) == len(start) and all(
            x.category == ("other" if i == p.index else s["category"]) and x.name == s["name"]
            and abs(x.amount - s["amount"]) < 0.005 for i, (x, s) in enumerate(zip(now, start, strict=True)))

    def solve(self, ui: UI, p: Pick) -> Iterator[Move]:
        yield from open_app(ui, EXPENSES)
        yield from ui.tap(ui.find_all(rid(EXPENSES, "expense_item"))[p.index], T("Open the expense."))
        yield from ui.tap(rid(EXPENSES, "cat_other"), T("Pick Other."))
        yield from ui.tap(rid(EXPENSES, "save"), T("Save it."))


# --- recipes ------------------------------------------------------------------------------------------


class HoRecipeUnfavourite(_Held):
    id = "HoRecipeUnfavourite"
    apps = (RECIPES,)

    def params(self, rng: random.Random) -> Pick:
        return Pick(rng.randrange(5))

    def perturb(self, p: Pick, rng: random.Random) -> Pick:
        return Pick((p.index + 1) % 5)

    def instruction(self, p: Pick) -> Text:
        en, zh = _nth(p.index)
        return Text("Take the {en} recipe out of my favourites.").format(en=Text(str(en), str(zh)))

    def setup(self, world: Any, p: Pick) -> None:
        for i, r in enumerate(world.recipes.recipes):
            r.favourite = i in (p.index, (p.index + 1) % 5)

    def is_successful(self, world: Any, p: Pick) -> bool:
        return [r.favourite for r in world.recipes.recipes] == [i == (p.index + 1) % 5 for i in range(5)]

    def solve(self, ui: UI, p: Pick) -> Iterator[Move]:
        yield from open_app(ui, RECIPES)
        yield from ui.tap(ui.find_all(rid(RECIPES, "recipe_item"))[p.index], T("Open the recipe."))
        yield from ui.tap(rid(RECIPES, "favourite"), T("Switch Favourite off."))


class HoRecipeDeleteDuplicate(_Held):
    id = "HoRecipeDeleteDuplicate"
    apps = (RECIPES,)

    def params(self, rng: random.Random) -> Pick:
        return Pick(rng.randrange(4))

    def perturb(self, p: Pick, rng: random.Random) -> Pick:
        return Pick((p.index + 2) % 4)

    def instruction(self, p: Pick) -> Text:
        return Text("One recipe is in my cookbook twice; remove the duplicate.")

    def setup(self, world: Any, p: Pick) -> None:
        rows = world.recipes.recipes
        rows.insert(p.index + 1, replace(rows[p.index], id="r90"))

    def is_successful(self, world: Any, p: Pick) -> bool:
        start = list(world.start_state["recipes"]["recipes"])
        left = [r.id for r in world.recipes.recipes]
        return left in ([k for k in start if k != "r90"], [k for i, k in enumerate(start) if i != p.index])

    def solve(self, ui: UI, p: Pick) -> Iterator[Move]:
        yield from open_app(ui, RECIPES)
        yield from ui.tap(ui.find_all(rid(RECIPES, "recipe_item"))[p.index + 1], T("Open the second copy."))
        yield from ui.tap(rid(RECIPES, "delete"), T("Delete it."))


@dataclass(frozen=True)
class Guests:
    index: int
    servings: int


class HoAskRecipeServings(_Held):
    """MobileWorld: a preference only the user knows (how many guests)."""

    id = "HoAskRecipeServings"
    category = TaskCategory.ASK_USER
    apps = (RECIPES,)
    needs_question: ClassVar[bool] = True

    def params(self, rng: random.Random) -> Guests:
        return Guests(rng.randrange(5), rng.choice((5, 6, 8)))

    def perturb(self, p: Guests, rng: random.Random) -> Guests:
        return Guests(p.index, 2)  # a guess instead of asking

    def simulated_user(self, world: Any, params: Guests, lang: str) -> Any:
        from harness.phoneworld.simuser import ScriptedUser

        return ScriptedUser(world, ((("how many", "servings", "people", "guests", "几", "多少", "份"),
                                     Text("{servings} people.").format(servings=params.servings)),), lang)

    def instruction(self, p: Guests) -> Text:
        en, zh = _nth(p.index)
        return Text("I'm having friends over; scale the {en} recipe for all of us.").format(en=Text(str(en), str(zh)))

    def setup(self, world: Any, p: Guests) -> None:
        for r in world.recipes.recipes:
            r.servings = 2

    def is_successful(self, world: Any, p: Guests) -> bool:
        return [r.servings for r in world.recipes.recipes] == [p.servings if i == p.index else 2 for i in range(5)]

    def solve(self, ui: UI, p: Guests) -> Iterator[Move]:
        yield Move(Action.call_user(Text("How many people will eat?").get(ui.ui_lang)),
                   T("Ask how many people."))
        yield from open_app(ui, RECIPES)
        yield from ui.tap(ui.find_all(rid(RECIPES, "recipe_item"))[p.index], T("Open the recipe."))
        for _ in range(p.servings - 2):
            yield from ui.tap(rid(RECIPES, "more"), T("One more serving."))


# --- cross-app reads ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Errand:
    what: Text


class HoNoteToTodo(_Held):
    id = "HoNoteToTodo"
    category = TaskCategory.CROSS_APP
    apps = (NOTES, TODO)

    def params(self, rng: random.Random) -> Errand:
        return Errand(rng.choice(NEW_TODOS))

    def perturb(self, p: Errand, rng: random.Random) -> Errand:
        return Errand(next(t for t in NEW_TODOS if t != p.what))

    def may_change(self, params: Any) -> tuple[str, ...]:
        return ("+" + at("todo.items"),)

    def instruction(self, p: Errand) -> Text:
        return Text("Copy the errand from my “Errands” note onto my to-do list.")

    def setup(self, world: Any, p: Errand) -> None:
        from harness.phoneworld.apps.notes import Note

        lang = world.language
        world.notes.notes.insert(0, Note("n50", Text("Errands").get(lang), p.what.get(lang)))

    def is_successful(self, world: Any, p: Errand) -> bool:
        start = set(world.start_state["todo"]["items"])
        new = [t for t in world.todo.items if t.id not in start]
        return len(new) == 1 and same(new[0].title, p.what)

    def solve(self, ui: UI, p: Errand) -> Iterator[Move]:
        yield from open_app(ui, NOTES)
        yield from ui.tap(Match(text=Text("Errands").get(ui.ui_lang)), T("Open the Errands note."))
        errand = ui.say(p.what)
        yield from ui.back()
        yield from ui.home()
        yield from open_app(ui, TODO)
        yield from ui.tap(rid(TODO, "new_item"), T("Add a new task."))
        yield from ui.type_into(rid(TODO, "item_title"), errand, T("Type the errand."))
        yield from ui.tap(rid(TODO, "save"), T("Save it."))


@dataclass(frozen=True)
class Paid:
    friend: Person
    amount: int


class HoMessageToExpense(_Held):
    id = "HoMessageToExpense"
    category = TaskCategory.CROSS_APP
    apps = (MESSAGES, EXPENSES)

    def params(self, rng: random.Random) -> Paid:
        return Paid(content.person(rng), rng.randrange(20, 120))

    def perturb(self, p: Paid, rng: random.Random) -> Paid:
        return Paid(p.friend, p.amount + 3)

    def may_change(self, params: Any) -> tuple[str, ...]:
        return ("+" + at("expenses.expenses"),)

    def instruction(self, p: Paid) -> Text:
        return Text("{name} texted me what our taxi cost; log it in my expenses under transport.").format(name=p.friend.name)

    def setup(self, world: Any, p: Paid) -> None:
        from harness.phoneworld.apps.messages import Sms, SmsThread

        put_contact(world, p.friend)
        lang = world.language
        text = Text("The taxi came to {amount}. Pay me back whenever.").format(amount=p.amount).get(lang)
        world.messages.threads.insert(0, SmsThread(p.friend.phone, [Sms(text, False, "08:10")]))

    def is_successful(self, world: Any, p: Paid) -> bool:
        start = set(world.start_state["expenses"]["expenses"])
        new = [x for x in world.expenses.expenses if x.id not in start]
        return len(new) == 1 and abs(new[0].amount - p.amount) < 0.005 and new[0].category == "transport"

    def solve(self, ui: UI, p: Paid) -> Iterator[Move]:
        yield from open_app(ui, MESSAGES)
        yield from ui.tap(Match(text=ui.say(p.friend.name)), T("Open the text."))
        yield from ui.home()
        yield from open_app(ui, EXPENSES)
        yield from ui.tap(rid(EXPENSES, "new_expense"), T("Add an expense."))
        yield from ui.type_into(rid(EXPENSES, "expense_name"), Text("Taxi").get(ui.ui_lang), T("Type what it was for."))
        yield from ui.type_into(rid(EXPENSES, "expense_amount"), str(p.amount), T("Type the amount from the text."))
        yield from ui.tap(rid(EXPENSES, "cat_transport"), T("Pick Transport."))
        yield from ui.tap(rid(EXPENSES, "save"), T("Save it."))


@dataclass(frozen=True)
class Plumber:
    number: str
    other: str


class HoPhoneCallFromNote(_Held):
    id = "HoPhoneCallFromNote"
    category = TaskCategory.CROSS_APP
    apps = (NOTES, PHONE)

    def params(self, rng: random.Random) -> Plumber:
        a = content.phone_number(rng)
        return Plumber(a, content.other_phone(rng, a))

    def perturb(self, p: Plumber, rng: random.Random) -> Plumber:
        return Plumber(p.other, p.number)  # the other number in the note

    def may_change(self, params: Any) -> tuple[str, ...]:
        return ("+" + at("phone.calls"),)

    def instruction(self, p: Plumber) -> Text:
        return Text("Ring the plumber; his number is in my “Repairs” note.")

    def setup(self, world: Any, p: Plumber) -> None:
        from harness.phoneworld.apps.notes import Note

        lang = world.language
        body = Text("Plumber: {number}\nElectrician: {other}").format(number=p.number, other=p.other).get(lang)
        world.notes.notes.insert(0, Note("n51", Text("Repairs").get(lang), body))

    def is_successful(self, world: Any, p: Plumber) -> bool:
        new = world.phone.calls[len(world.start_state["phone"]["calls"]):]
        return len(new) == 1 and new[0].outgoing and digits(new[0].number) == digits(p.number)

    def solve(self, ui: UI, p: Plumber) -> Iterator[Move]:
        yield from open_app(ui, NOTES)
        yield from ui.tap(Match(text=Text("Repairs").get(ui.ui_lang)), T("Open the Repairs note."))
        yield from ui.back()
        yield from ui.home()
        yield from open_app(ui, PHONE)
        yield from ui.tap(rid(PHONE, "dialpad"), T("Open the keypad."))
        yield from ui.type_into(rid(PHONE, "digits"), p.number, T("Type the plumber's number."))
        yield from ui.tap(rid(PHONE, "dialpad_call"), T("Call."))


@dataclass(frozen=True)
class NewNumber:
    person: Person


class HoContactFromSms(_Held):
    id = "HoContactFromSms"
    category = TaskCategory.CROSS_APP
    apps = (MESSAGES, PHONE)

    def params(self, rng: random.Random) -> NewNumber:
        return NewNumber(content.person(rng))

    def perturb(self, p: NewNumber, rng: random.Random) -> NewNumber:
        return NewNumber(replace(p.person, phone=content.other_phone(rng, p.person.phone)))

    def may_change(self, params: Any) -> tuple[str, ...]:
        return ("+" + at("phone.contacts"),)

    def instruction(self, p: NewNumber) -> Text:
        return Text("{name} texted me from a new number; save it as a contact under that name.").format(name=p.person.name)

    def setup(self, world: Any, p: NewNumber) -> None:
        from harness.phoneworld.apps.messages import Sms, SmsThread

        world.phone.contacts = [c for c in world.phone.contacts if c.name.en != p.person.name.en
                                and digits(c.phone) != digits(p.person.phone)]
        text = Text("Hi, it's {name}. This is my new number.").format(name=p.person.name)
        world.messages.threads.insert(0, SmsThread(p.person.phone, [Sms(text.get(world.language), False, "08:20")]))

    def is_successful(self, world: Any, p: NewNumber) -> bool:
        start = set(world.start_state["phone"]["contacts"])
        new = [c for c in world.phone.contacts if c.id not in start]
        return (len(new) == 1 and digits(new[0].phone) == digits(p.person.phone)
                and new[0].name.en.strip() in (p.person.name.en, p.person.name.zh))

    def solve(self, ui: UI, p: NewNumber) -> Iterator[Move]:
        yield from open_app(ui, MESSAGES)
        yield from ui.tap(rid(MESSAGES, "conversation"), T("Open the newest text."))
        yield from ui.home()
        yield from add_contact(ui, ui.say(p.person.name), p.person.phone)


@dataclass(frozen=True)
class TwoPeople:
    a: Person
    b: Person
    body: Text


class HoSmsSameTextToTwo(_Held):
    id = "HoSmsSameTextToTwo"
    apps = (MESSAGES,)

    def params(self, rng: random.Random) -> TwoPeople:
        a, b = content.people(rng, 2)
        return TwoPeople(a, b, rng.choice(content.MESSAGES))

    def perturb(self, p: TwoPeople, rng: random.Random) -> TwoPeople:
        return TwoPeople(p.a, p.a, p.body)  # only one of the two

    def may_change(self, p: TwoPeople) -> tuple[str, ...]:
        return tuple("+" + at("messages.threads", who.phone) + suffix for who in (p.a, p.b) for suffix in ("", "*"))

    def instruction(self, p: TwoPeople) -> Text:
        return Text("Send “{body}” to both {name} and {name2}.").format(body=p.body, name=p.a.name, name2=p.b.name)

    def setup(self, world: Any, p: TwoPeople) -> None:
        put_contact(world, p.a)
        put_contact(world, p.b)

    def is_successful(self, world: Any, p: TwoPeople) -> bool:
        app = world.apps[MESSAGES]
        return all(any(text_matches(t, p.body) for t in app.sent_to(who.phone)) for who in (p.a, p.b))

    def solve(self, ui: UI, p: TwoPeople) -> Iterator[Move]:
        for who in dict.fromkeys((p.a, p.b)):
            yield from send_sms(ui, ui.say(who.name), ui.say(p.body), who=who.name)
            yield from ui.home()


class HoAskTextWhat(_Held):
    """MobileWorld: the message's words are missing; only the user can give them."""

    id = "HoAskTextWhat"
    category = TaskCategory.ASK_USER
    apps = (MESSAGES,)
    needs_question: ClassVar[bool] = True

    def params(self, rng: random.Random) -> TwoPeople:
        a, b = content.people(rng, 2)
        return TwoPeople(a, b, rng.choice(content.MESSAGES))

    def perturb(self, p: TwoPeople, rng: random.Random) -> TwoPeople:
        return TwoPeople(p.b, p.a, p.body)  # the words, to the other person

    def may_change(self, p: TwoPeople) -> tuple[str, ...]:
        return ("+" + at("messages.threads", p.a.phone), "+" + at("messages.threads", p.a.phone) + "*")

    def simulated_user(self, world: Any, params: TwoPeople, lang: str) -> Any:
        from harness.phoneworld.simuser import ScriptedUser

        return ScriptedUser(world, ((("what", "say", "message", "text", "words", "什么", "内容", "说"),
                                     Text("Tell them: {body}").format(body=params.body)),), lang)

    def instruction(self, p: TwoPeople) -> Text:
        return Text("Send {name} a text.").format(name=p.a.name)

    def setup(self, world: Any, p: TwoPeople) -> None:
        put_contact(world, p.a)
        put_contact(world, p.b)

    def is_successful(self, world: Any, p: TwoPeople) -> bool:
        return any(text_matches(t, p.body) for t in world.apps[MESSAGES].sent_to(p.a.phone))

    def solve(self, ui: UI, p: TwoPeople) -> Iterator[Move]:
        yield Move(Action.call_user(Text("What should the message say?").get(ui.ui_lang)),
                   T("Ask what to write."))
        yield from send_sms(ui, ui.say(p.a.name), ui.say(p.body), who=p.a.name)


TASKS = (
    HoTodoUntickItem(), HoTodoClearDone(), HoExpensesDeleteDuplicate(), HoExpensesAddTwo(), HoExpensesChangeCategory(),
    HoRecipeUnfavourite(), HoRecipeDeleteDuplicate(), HoAskRecipeServings(), HoNoteToTodo(), HoMessageToExpense(),
    HoPhoneCallFromNote(), HoContactFromSms(), HoSmsSameTextToTwo(), HoAskTextWhat(),
)
