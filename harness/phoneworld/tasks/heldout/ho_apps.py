"""Held-out tasks in the to-do list, the expenses log and the cookbook (AndroidWorld's Markor/Tasks,
Expense and Recipe families), plus a cross-app one (a recipe's ingredients onto the to-do list).

Each template follows its family's structure (add, edit one field, tick, delete, favourite) with our own
wording and content; the verifiers check the one item asked about and that no other item changed
(the world's side-effect check covers the rest of the phone).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from assistant_core.i18n import Text
from harness.phoneworld.tasks.base import Task, TaskCategory
from harness.phoneworld.tasks.driver import UI, Match, Move, T
from harness.phoneworld.tasks.flows import open_app

TODO = "com.phoneworld.todo"
EXPENSES = "com.phoneworld.expenses"
RECIPES = "com.phoneworld.recipes"

NEW_TODOS = (
    Text("Renew the bus pass"), Text("Ring the plumber"),
    Text("Buy stamps"), Text("Pick up glasses"), Text("Send the rent"),
)


def rid(package: str, name: str, **kw: Any) -> Match:
    return Match(rid=f"{package}:id/{name}", **kw)


def same(a: str, b: Text) -> bool:
    return a.strip().lower() in (b.en.lower(), b.zh)


class _Held(Task):
    category: ClassVar[TaskCategory] = TaskCategory.SINGLE_APP
    heldout: ClassVar[bool] = True
    max_steps: ClassVar[int] = 20


# --- to-do ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NewTodo:
    title: Text
    due_days: int  # -1: no date


class HoTodoAddItem(_Held):
    id = "HoTodoAddItem"
    apps = (TODO,)

    def params(self, rng: random.Random) -> NewTodo:
        return NewTodo(rng.choice(NEW_TODOS), -1)

    def perturb(self, params: NewTodo, rng: random.Random) -> NewTodo:
        return NewTodo(next(t for t in NEW_TODOS if t != params.title), params.due_days)

    def instruction(self, p: NewTodo) -> Text:
        return Text("Put “{title}” on my to-do list.").format(title=p.title)

    def setup(self, world: Any, p: NewTodo) -> None:
        pass

    def _due(self, world: Any, p: NewTodo) -> str:
        import datetime as dt

        return "" if p.due_days < 0 else (world.now.date() + dt.timedelta(days=p.due_days)).isoformat()

    def is_successful(self, world: Any, p: NewTodo) -> bool:
        start = {i["id"] for i in world.start_state["todo"]["items"].values()} if hasattr(world, "start_state") else set()
        new = [t for t in world.todo.items if t.id not in start]
        return len(new) == 1 and same(new[0].title, p.title) and not new[0].done and new[0].due == self._due(world, p)

    def solve(self, ui: UI, p: NewTodo) -> Iterator[Move]:
        title = p.title.get(ui.ui_lang)
        yield from open_app(ui, TODO)
        yield from ui.tap(rid(TODO, "new_item"), T("Add a new task."))
        yield from ui.type_into(rid(TODO, "item_title"), title, T("Type “{title}”.").format(title=p.title))
        if p.due_days >= 0 and ui.world is not None:
            due = self._due(ui.world, p)
            yield from ui.type_into(rid(TODO, "item_due"), due, T("Set the date {due}.").format(due=due))
        yield from ui.tap(rid(TODO, "save"), T("Save it."))


class HoTodoAddItemWithDate(HoTodoAddItem):
    id = "HoTodoAddItemWithDate"

    def params(self, rng: random.Random) -> NewTodo:
        return NewTodo(rng.choice(NEW_TODOS), rng.choice((1, 2, 3)))

    def perturb(self, params: NewTodo, rng: random.Random) -> NewTodo:
        return replace(params, due_days=params.due_days % 3 + 1)  # the right item on the wrong day

    def instruction(self, p: NewTodo) -> Text:
        when = {1: ("tomorrow", "明天"), 2: ("the day after tomorrow", "后天"), 3: ("in three days", "三天后")}[p.due_days]
        return Text("Remind me on my to-do list to “{title}”, due {when}.").format(title=p.title, when=Text(str(when[0]), str(when[1])))


@dataclass(frozen=True)
class PickItem:
    index: int  # which of the start items (by position)


class _TodoItemTask(_Held):
    apps = (TODO,)

    def params(self, rng: random.Random) -> PickItem:
        return PickItem(rng.randrange(3))  # the first three start items are not done

    def perturb(self, params: PickItem, rng: random.Random) -> PickItem:
        return PickItem((params.index + 1) % 3)  # the right action on the wrong item

    def setup(self, world: Any, p: PickItem) -> None:
        for t in world.todo.items:
            t.done = t is world.todo.items[3]
        world.refresh()


class HoTodoTickItem(_TodoItemTask):
    id = "HoTodoTickItem"

    def instruction(self, p: PickItem) -> Text:
        n = ("first", "second", "third")[p.index]
        return Text("I've done the {n} thing on my to-do list; tick it off.").format(n=Text(str(n), str('一二三'[p.index])))

    def is_successful(self, world: Any, p: PickItem) -> bool:
        items = world.todo.items
        return len(items) == 4 and items[p.index].done and all(not t.done for i, t in enumerate(items[:3]) if i != p.index)

    def solve(self, ui: UI, p: PickItem) -> Iterator[Move]:
        yield from open_app(ui, TODO)
        boxes = ui.find_all(rid(TODO, "done"))
        yield from ui.tap(boxes[p.index], T("Tick the item."))


class HoTodoDeleteItem(_TodoItemTask):
    id = "HoTodoDeleteItem"

    def instruction(self, p: PickItem) -> Text:
        n = ("first", "second", "third")[p.index]
        return Text("Remove the {n} task from my to-do list.").format(n=Text(str(n), str('一二三'[p.index])))

    def is_successful(self, world: Any, p: PickItem) -> bool:
        start = list(world.start_state["todo"]["items"])
        left = [t.id for t in world.todo.items]
        return left == [k for i, k in enumerate(start) if i != p.index]

    def solve(self, ui: UI, p: PickItem) -> Iterator[Move]:
        yield from open_app(ui, TODO)
        yield from ui.long_press(ui.find_all(rid(TODO, "todo_item"))[p.index], T("Long-press the item."))
        yield from ui.tap(Match(text=Text("Delete").get(ui.ui_lang)), T("Choose Delete."))


class HoTodoRenameItem(_TodoItemTask):
    id = "HoTodoRenameItem"

    def instruction(self, p: PickItem) -> Text:
        n = ("first", "second", "third")[p.index]
        return Text("Change the {n} to-do to say “{new_todos}”.").format(n=Text(str(n), str('一二三'[p.index])), new_todos=NEW_TODOS[p.index])

    def is_successful(self, world: Any, p: PickItem) -> bool:
        items = world.todo.items
        start = list(world.start_state["todo"]["items"].values())
        return len(items) == 4 and same(items[p.index].title, NEW_TODOS[p.index]) and all(
            t.title == start[i]["title"] for i, t in enumerate(items) if i != p.index)

    def solve(self, ui: UI, p: PickItem) -> Iterator[Move]:
        yield from open_app(ui, TODO)
        item = ui.find_all(rid(TODO, "todo_item"))[p.index]
        old = item.text.split(" · ")[0]
        yield from ui.tap(item, T("Open the item."))
        yield from ui.type_into(rid(TODO, "item_title"), NEW_TODOS[p.index].get(ui.ui_lang),
                                T("Type the new wording."), replace=old)
        yield from ui.tap(rid(TODO, "save"), T("Save it."))


# --- expenses ---------------------------------------------------------------------------------------

CATS = {"food": Text("food"), "transport": Text("transport"), "health": Text("health"),
        "home": Text("home")}
SPENDS = (
    (Text("Pharmacy"), "health"), (Text("Train ticket"), "transport"),
    (Text("Noodles"), "food"), (Text("Curtains"), "home"),
)


@dataclass(frozen=True)
class Spend:
    name: Text
    category: str
    amount: float


class HoExpensesAdd(_Held):
    id = "HoExpensesAdd"
    apps = (EXPENSES,)

    def params(self, rng: random.Random) -> Spend:
        name, cat = rng.choice(SPENDS)
        return Spend(name, cat, float(rng.randrange(12, 180)))

    def perturb(self, p: Spend, rng: random.Random) -> Spend:
        return replace(p, amount=p.amount + 10)  # the right expense with the wrong amount

    def instruction(self, p: Spend) -> Text:
        return Text("Log {amount:.0f} spent on “{name}” under {cats} in my expenses.").format(amount=p.amount, name=p.name, cats=CATS[p.category])

    def setup(self, world: Any, p: Spend) -> None:
        pass

    def is_successful(self, world: Any, p: Spend) -> bool:
        start = set(world.start_state["expenses"]["expenses"])
        new = [x for x in world.expenses.expenses if x.id not in start]
        return (len(new) == 1 and same(new[0].name, p.name) and abs(new[0].amount - p.amount) < 0.005
                and new[0].category == p.category and len(world.expenses.expenses) == len(start) + 1)

    def solve(self, ui: UI, p: Spend) -> Iterator[Move]:
        lang = ui.ui_lang
        yield from open_app(ui, EXPENSES)
        yield from ui.tap(rid(EXPENSES, "new_expense"), T("Add an expense."))
        yield from ui.type_into(rid(EXPENSES, "expense_name"), p.name.get(lang), T("Type what it was for."))
        yield from ui.type_into(rid(EXPENSES, "expense_amount"), f"{p.amount:.0f}", T("Type the amount."))
        yield from ui.tap(rid(EXPENSES, f"cat_{p.category}"), T("Pick the category."))
        yield from ui.tap(rid(EXPENSES, "save"), T("Save it."))


class HoExpensesDelete(_Held):
    id = "HoExpensesDelete"
    apps = (EXPENSES,)

    def params(self, rng: random.Random) -> PickItem:
        return PickItem(rng.randrange(4))

    def perturb(self, p: PickItem, rng: random.Random) -> PickItem:
        return PickItem((p.index + 1) % 4)

    def instruction(self, p: PickItem) -> Text:
        n = ("first", "second", "third", "fourth")[p.index]
        return Text("The {n} expense in my log was a mistake; delete it.").format(n=Text(str(n), str('一二三四'[p.index])))

    def setup(self, world: Any, p: PickItem) -> None:
        pass

    def is_successful(self, world: Any, p: PickItem) -> bool:
        start = list(world.start_state["expenses"]["expenses"])
        return [x.id for x in world.expenses.expenses] == [k for i, k in enumerate(start) if i != p.index]

    def solve(self, ui: UI, p: PickItem) -> Iterator[Move]:
        yield from open_app(ui, EXPENSES)
        yield from ui.long_press(ui.find_all(rid(EXPENSES, "expense_item"))[p.index], T("Long-press it."))
        yield from ui.tap(Match(text=Text("Delete").get(ui.ui_lang)), T("Choose Delete."))


class HoExpensesFixAmount(HoExpensesDelete):
    id = "HoExpensesFixAmount"

    def instruction(self, p: PickItem) -> Text:
        n = ("first", "second", "third", "fourth")[p.index]
        return Text("The {n} expense should be 5 more than it says; correct the amount.").format(n=Text(str(n), str('一二三四'[p.index])))

    def is_successful(self, world: Any, p: PickItem) -> bool:
        start = list(world.start_state["expenses"]["expenses"].values())
        now = world.expenses.expenses
        return len(now) == len(start) and all(
            abs(x.amount - (s["amount"] + (5 if i == p.index else 0))) < 0.005 and x.name == s["name"]
            and x.category == s["category"] for i, (x, s) in enumerate(zip(now, start, strict=True)))

    def solve(self, ui: UI, p: PickItem) -> Iterator[Move]:
        yield from open_app(ui, EXPENSES)
        item = ui.find_all(rid(EXPENSES, "expense_item"))[p.index]
        yield from ui.tap(item, T("Open the expense."))
        old = ui.need(rid(EXPENSES, "expense_amount")).text
        new = f"{float(old) + 5:.2f}"
        yield from ui.type_into(rid(EXPENSES, "expense_amount"), new, T("Change the amount to {new}.").format(new=new),
                                replace=old)
        yield from ui.tap(rid(EXPENSES, "save"), T("Save it."))


# --- recipes ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PickRecipe:
    index: int
    servings: int = 0


class _RecipeTask(_Held):
    apps = (RECIPES,)

    def params(self, rng: random.Random) -> PickRecipe:
        return PickRecipe(rng.randrange(5), rng.choice((1, 5, 6)))

    def perturb(self, p: PickRecipe, rng: random.Random) -> PickRecipe:
        return PickRecipe((p.index + 1) % 5, p.servings)  # the right change on the wrong recipe

    def setup(self, world: Any, p: PickRecipe) -> None:
        for r in world.recipes.recipes:
            r.favourite = False
        world.refresh()

    def open_recipe(self, ui: UI, p: PickRecipe) -> Iterator[Move]:
        yield from open_app(ui, RECIPES)
        yield from ui.tap(ui.find_all(rid(RECIPES, "recipe_item"))[p.index], T("Open the recipe."))


def _nth(i: int) -> tuple[str, str]:
    return (("first", "second", "third", "fourth", "fifth")[i], "一二三四五"[i])


class HoRecipeFavourite(_RecipeTask):
    id = "HoRecipeFavourite"

    def instruction(self, p: PickRecipe) -> Text:
        en, zh = _nth(p.index)
        return Text("Save the {en} recipe in my cookbook as a favourite.").format(en=Text(str(en), str(zh)))

    def is_successful(self, world: Any, p: PickRecipe) -> bool:
        return [r.favourite for r in world.recipes.recipes] == [i == p.index for i in range(len(world.recipes.recipes))]

    def solve(self, ui: UI, p: PickRecipe) -> Iterator[Move]:
        yield from self.open_recipe(ui, p)
        yield from ui.tap(rid(RECIPES, "favourite"), T("Switch Favourite on."))


class HoRecipeServings(_RecipeTask):
    id = "HoRecipeServings"

    def instruction(self, p: PickRecipe) -> Text:
        en, zh = _nth(p.index)
        return Text("Set the {en} recipe to {servings} servings.").format(en=Text(str(en), str(zh)), servings=p.servings)

    def perturb(self, p: PickRecipe, rng: random.Random) -> PickRecipe:
        return replace(p, servings=p.servings + 1)  # the right recipe, the wrong number

    def is_successful(self, world: Any, p: PickRecipe) -> bool:
        start = list(world.start_state["recipes"]["recipes"].values())
        return all(r.servings == (p.servings if i == p.index else s["servings"])
                   for i, (r, s) in enumerate(zip(world.recipes.recipes, start, strict=True)))

    def solve(self, ui: UI, p: PickRecipe) -> Iterator[Move]:
        yield from self.open_recipe(ui, p)
        for _ in range(12):
            now = int("".join(ch for ch in ui.need(rid(RECIPES, "servings")).text if ch.isdigit()))
            if now == p.servings:
                return
            which = "more" if now < p.servings else "fewer"
            yield from ui.tap(rid(RECIPES, which), T("Change the servings by one."))


class HoRecipeDelete(_RecipeTask):
    id = "HoRecipeDelete"

    def instruction(self, p: PickRecipe) -> Text:
        en, zh = _nth(p.index)
        return Text("I never cook the {en} recipe; delete it.").format(en=Text(str(en), str(zh)))

    def is_successful(self, world: Any, p: PickRecipe) -> bool:
        start = list(world.start_state["recipes"]["recipes"])
        return [r.id for r in world.recipes.recipes] == [k for i, k in enumerate(start) if i != p.index]

    def solve(self, ui: UI, p: PickRecipe) -> Iterator[Move]:
        yield from self.open_recipe(ui, p)
        yield from ui.tap(rid(RECIPES, "delete"), T("Delete the recipe."))


class HoRecipeToTodo(_RecipeTask):
    """Cross-app: read a recipe's first ingredient and put buying it on the to-do list."""

    id = "HoRecipeToTodo"
    category = TaskCategory.CROSS_APP
    apps = (RECIPES, TODO)

    def may_change(self, params: Any) -> tuple[str, ...]:
        return ("todo.items*",)  # the cookbook itself must stay as it was

    def instruction(self, p: PickRecipe) -> Text:
        en, zh = _nth(p.index)
        return Text("Look up the {en} recipe and add “Buy” plus its first ingredient to my to-do list.").format(en=Text(str(en), str(zh)))

    def _first(self, world: Any, p: PickRecipe) -> Text:
        r = world.recipes.recipes[p.index]
        return Text(r.ingredients.en.split(",")[0].strip(), r.ingredients.zh.split("、")[0].strip())

    def is_successful(self, world: Any, p: PickRecipe) -> bool:
        start = set(world.start_state["todo"]["items"])
        new = [t for t in world.todo.items if t.id not in start]
        first = self._first(world, p)
        want = Text("Buy {first}").format(first=first)
        return len(new) == 1 and same(new[0].title, want)

    def solve(self, ui: UI, p: PickRecipe) -> Iterator[Move]:
        yield from self.open_recipe(ui, p)
        text = ui.need(rid(RECIPES, "ingredients")).text.split(":" if ui.ui_lang == "en" else "：", 1)[1]
        first = text.split("," if ui.ui_lang == "en" else "、")[0].strip()
        yield from ui.home()
        yield from open_app(ui, TODO)
        yield from ui.tap(rid(TODO, "new_item"), T("Add a new task."))
        words = f"Buy {first}" if ui.ui_lang == "en" else f"买{first}"
        yield from ui.type_into(rid(TODO, "item_title"), words, T("Type “{words}”.").format(words=words))
        yield from ui.tap(rid(TODO, "save"), T("Save it."))


TASKS = (
    HoTodoAddItem(), HoTodoAddItemWithDate(), HoTodoTickItem(), HoTodoDeleteItem(), HoTodoRenameItem(),
    HoExpensesAdd(), HoExpensesDelete(), HoExpensesFixAmount(),
    HoRecipeFavourite(), HoRecipeServings(), HoRecipeDelete(), HoRecipeToTodo(),
)
