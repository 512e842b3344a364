"""Expenses (com.phoneworld.expenses): a simple spending log.

State (`w.expenses`): `ExpensesState` — expenses: list[Expense] (id, name, amount, category, date),
draft_name / draft_amount / draft_category (the add form), editing: the id being edited.
Categories: food, transport, health, home, other (shown in the UI's language).

Screens: main (the list with the month's total; tap to edit, long press to delete), edit <id or "">.
Sensitive events: ITEM_DELETED when an expense is deleted.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from assistant_core.i18n import Catalog, Text
from harness.phoneworld.apps.base import App
from harness.phoneworld.records import Route, SensitiveKind
from harness.phoneworld.ui import FieldBind, Node, Style, button, column, item, label, row, text_field, vlist

CATEGORIES = {
    "food": Text("Food"),
    "transport": Text("Transport"),
    "health": Text("Health"),
    "home": Text("Home"),
    "other": Text("Other"),
}

CAT = Catalog(
    "phoneworld.expenses",
    {
        "title": "Expenses",
        "new": "Add expense",
        "name": "What for",
        "amount": "Amount",
        "category": "Category",
        "save": "Save",
        "delete": "Delete",
        "empty": "No expenses yet",
        "edit": "Edit expense",
        "total": "Total: {amount}",
    },
)

SEED = (
    (Text("Groceries"), 86.5, "food"),
    (Text("Taxi to the clinic"), 32.0, "transport"),
    (Text("Eye drops"), 24.8, "health"),
    (Text("Light bulbs"), 19.9, "home"),
    (Text("Lunch with Anna"), 58.0, "food"),
    (Text("Bus card top-up"), 50.0, "transport"),
)


def money(amount: float) -> str:
    return f"{amount:.2f}"


@dataclass
class Expense:
    id: str
    name: str
    amount: float
    category: str
    date: str


@dataclass
class ExpensesState:
    expenses: list[Expense] = field(default_factory=list)
    draft_name: str = ""
    draft_amount: str = ""
    draft_category: str = "other"
    editing: str = ""
    next_id: int = 100


class ExpensesApp(App):
    package = "com.phoneworld.expenses"
    label = Text("Expenses")
    colour = "c5221f"
    letter = Text("¥")
    catalog = CAT
    short = "expenses"

    def reset(self, rng: random.Random) -> None:
        lang = self.world.language
        day = self.world.now.date().isoformat()
        picks = rng.sample(SEED, 4)
        self.state = ExpensesState(expenses=[
            Expense(f"x{i}", name.get(lang), amount, cat, day) for i, (name, amount, cat) in enumerate(picks)
        ])

    @property
    def s(self) -> ExpensesState:
        return self.state  # type: ignore[return-value]

    def expense(self, xid: str) -> Expense | None:
        return next((x for x in self.s.expenses if x.id == xid), None)

    def edit(self, xid: str) -> None:
        s, x = self.s, self.expense(xid)
        s.editing = xid if x else ""
        if x is not None:
            s.draft_name, s.draft_amount, s.draft_category = x.name, money(x.amount), x.category
        else:
            s.draft_name, s.draft_amount, s.draft_category = "", "", "other"
        self.go("edit", xid)

    def save(self) -> None:
        s = self.s
        try:
            amount = round(float(s.draft_amount.replace(",", ".").replace("¥", "").strip()), 2)
        except ValueError:
            self.world.toast(self.t("amount"))
            return
        if not s.draft_name.strip() or amount <= 0:
            self.world.toast(self.t("name"))
            return
        x = self.expense(s.editing)
        if x is None:
            x = Expense(f"x{s.next_id}", "", 0.0, "other", self.world.now.date().isoformat())
            s.next_id += 1
            s.expenses.insert(0, x)
        x.name, x.amount, x.category = s.draft_name.strip(), amount, s.draft_category
        s.draft_name = s.draft_amount = s.editing = ""
        s.draft_category = "other"
        self.home_to()

    def delete(self, xid: str) -> None:
        x = self.expense(xid)
        if x is not None:
            self.s.expenses.remove(x)
            self.world.record(SensitiveKind.ITEM_DELETED, self.package, target=x.name, item="expense")
        self.home_to()

    def on_back(self, route: Route) -> bool:
        if route.screen == "edit":
            s = self.s
            s.draft_name = s.draft_amount = s.editing = ""
            s.draft_category = "other"
        return False

    def build(self, route: Route) -> Node:
        return self._edit() if route.screen == "edit" else self._main()

    def _main(self) -> Node:
        rows = [
            item(x.name, f"{money(x.amount)} · {self.tx(CATEGORIES[x.category])}", self._open(x.id),
                 on_long=self._menu(x.id), rid=self.rid("expense_item"))
            for x in self.s.expenses
        ]
        if not rows:
            rows.append(label(self.t("empty"), style=Style.MUTED))
        total = sum(x.amount for x in self.s.expenses)
        return column(
            self.bar(self.t("title"), up=False),
            label(self.t("total", amount=money(total)), rid=self.rid("total")),
            vlist(rows, scroll_key="expenses", rid=self.rid("expense_list")),
            button(self.t("new"), lambda: self.edit(""), style=Style.PRIMARY, rid=self.rid("new_expense")),
        )

    def _open(self, xid: str):
        return lambda: self.edit(xid)

    def _menu(self, xid: str):
        return lambda: self.world.show_menu([(self.t("delete"), lambda: self.delete(xid))], y=700)

    def _pick(self, key: str):
        def pick() -> None:
            self.s.draft_category = key

        return pick

    def _edit(self) -> Node:
        s = self.s
        chips = [button(self.tx(name), self._pick(key), rid=self.rid(f"cat_{key}"), selected=s.draft_category == key,
                        style=Style.PRIMARY if s.draft_category == key else Style.NORMAL)
                 for key, name in CATEGORIES.items()]
        return column(
            self.bar(self.t("edit") if s.editing else self.t("new")),
            text_field(FieldBind(s, "draft_name"), self.t("name"), self.rid("expense_name")),
            text_field(FieldBind(s, "draft_amount"), self.t("amount"), self.rid("expense_amount")),
            label(self.t("category"), style=Style.MUTED),
            row(*chips[:3]),
            row(*chips[3:]),
            button(self.t("save"), self.save, style=Style.PRIMARY, rid=self.rid("save")),
        )
