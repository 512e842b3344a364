"""To-do (com.phoneworld.todo): a list of tasks to tick off.

State (`w.todo`): `TodoState` — items: list[TodoItem] (id, title, due: "" or YYYY-MM-DD, done),
draft_title / draft_due (the editor's fields), editing: the id being edited ("" for a new item).

Screens: main (the list: tap an item's box to tick it, tap its title to edit, long press to delete),
edit <id or "">. Sensitive events: ITEM_DELETED when an item is deleted.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from assistant_core.i18n import Catalog, Text
from harness.phoneworld.apps.base import App
from harness.phoneworld.records import Route, SensitiveKind
from harness.phoneworld.ui import (
    FieldBind,
    Node,
    Style,
    button,
    checkbox,
    column,
    label,
    row,
    text_field,
    vlist,
)

CAT = Catalog(
    "phoneworld.todo",
    {
        "title": "To-do",
        "new": "Add task",
        "item_title": "Task",
        "due": "Due date (YYYY-MM-DD)",
        "save": "Save",
        "delete": "Delete",
        "empty": "Nothing to do",
        "edit": "Edit task",
        "due_on": "due {date}",
    },
)

SEED_ITEMS = (
    Text("Pay the water bill"),
    Text("Call the pharmacy"),
    Text("Water the plants"),
    Text("Return the library book"),
    Text("Buy a birthday card"),
    Text("Book a haircut"),
)


@dataclass
class TodoItem:
    id: str
    title: str
    due: str = ""
    done: bool = False


@dataclass
class TodoState:
    items: list[TodoItem] = field(default_factory=list)
    draft_title: str = ""
    draft_due: str = ""
    editing: str = ""
    next_id: int = 100


class TodoApp(App):
    package = "com.phoneworld.todo"
    label = Text("To-do")
    colour = "0b8043"
    letter = Text("✓")
    catalog = CAT
    short = "todo"

    def reset(self, rng: random.Random) -> None:
        lang = self.world.language
        picks = rng.sample(SEED_ITEMS, 4)
        self.state = TodoState(items=[TodoItem(f"t{i}", t.get(lang), done=(i == 3)) for i, t in enumerate(picks)])

    @property
    def s(self) -> TodoState:
        return self.state  # type: ignore[return-value]

    def item(self, tid: str) -> TodoItem | None:
        return next((t for t in self.s.items if t.id == tid), None)

    def toggle(self, tid: str) -> None:
        t = self.item(tid)
        if t is not None:
            t.done = not t.done

    def edit(self, tid: str) -> None:
        s, t = self.s, self.item(tid)
        s.editing = tid if t else ""
        s.draft_title, s.draft_due = (t.title, t.due) if t else ("", "")
        self.go("edit", tid)

    def save(self) -> None:
        s = self.s
        if s.draft_title.strip():
            t = self.item(s.editing)
            if t is None:
                t = TodoItem(f"t{s.next_id}", "")
                s.next_id += 1
                s.items.append(t)
            t.title, t.due = s.draft_title.strip(), s.draft_due.strip()
        s.draft_title = s.draft_due = s.editing = ""
        self.home_to()

    def delete(self, tid: str) -> None:
        t = self.item(tid)
        if t is not None:
            self.s.items.remove(t)
            self.world.record(SensitiveKind.ITEM_DELETED, self.package, target=t.title, item="todo")
        self.home_to()

    def on_back(self, route: Route) -> bool:
        if route.screen == "edit":  # leaving the editor discards it, like a dialog's Cancel
            self.s.draft_title = self.s.draft_due = self.s.editing = ""
        return False

    def build(self, route: Route) -> Node:
        return self._edit() if route.screen == "edit" else self._main()

    def _main(self) -> Node:
        rows = []
        for t in self.s.items:
            due = self.t("due_on", date=t.due) if t.due else ""
            rows.append(row(
                checkbox("", t.done, self._toggle(t.id), rid=self.rid("done"), desc=t.title, weight=0.25),
                button(t.title + (f" · {due}" if due else ""), self._open(t.id), rid=self.rid("todo_item"),
                       on_long=self._menu(t.id)),
            ))
        if not rows:
            rows.append(label(self.t("empty"), style=Style.MUTED))
        return column(
            self.bar(self.t("title"), up=False),
            vlist(rows, scroll_key="todo", rid=self.rid("todo_list")),
            button(self.t("new"), lambda: self.edit(""), style=Style.PRIMARY, rid=self.rid("new_item")),
        )

    def _toggle(self, tid: str):
        return lambda: self.toggle(tid)

    def _open(self, tid: str):
        return lambda: self.edit(tid)

    def _menu(self, tid: str):
        return lambda: self.world.show_menu([(self.t("delete"), lambda: self.delete(tid))], y=700)

    def _edit(self) -> Node:
        s = self.s
        return column(
            self.bar(self.t("edit") if s.editing else self.t("new")),
            text_field(FieldBind(s, "draft_title"), self.t("item_title"), self.rid("item_title")),
            text_field(FieldBind(s, "draft_due"), self.t("due"), self.rid("item_due")),
            button(self.t("save"), self.save, style=Style.PRIMARY, rid=self.rid("save")),
        )
