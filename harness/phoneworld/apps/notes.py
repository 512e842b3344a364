"""Notes (com.phoneworld.notes).

State (`w.notes`): `NotesState` — notes: list[Note] (id, title, body), draft_title / draft_body (the
editor's fields), editing: the id being edited ("" for a new note). `NotesApp.find(text)` returns notes
whose title or body contains `text`.

Screens: main (list), edit <id or "">, share (a new note prefilled with shared text).
The editor saves on "Save" and also when leaving it with Back (like most notes apps) if anything was typed.
Sensitive events: ITEM_DELETED when a note is deleted.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from assistant_core.i18n import Catalog, Text
from harness.phoneworld.apps.base import App
from harness.phoneworld.records import Route, SensitiveKind
from harness.phoneworld.ui import FieldBind, Node, Style, button, column, item, label, text_field, vlist

CAT = Catalog(
    "phoneworld.notes",
    {
        "title": "Notes",
        "new": "New note",
        "note_title": "Title",
        "body": "Note",
        "save": "Save",
        "delete": "Delete",
        "empty": "No notes",
        "edit": "Edit note",
    },
)

SEED_NOTES = (
    (Text("Shopping list"), Text("Milk, eggs, bread, apples")),
    (
        Text("Doctor questions"),
        Text("Ask about the new pills and sleep."),
    ),
    (Text("Wi-Fi password"), Text("Guest network: sunflower2024")),
    (Text("Birthdays"), Text("Mum: 12 May. Leo: 3 October.")),
)


@dataclass
class Note:
    id: str
    title: str
    body: str


@dataclass
class NotesState:
    notes: list[Note] = field(default_factory=list)
    draft_title: str = ""
    draft_body: str = ""
    editing: str = ""
    next_id: int = 100


class NotesApp(App):
    package = "com.phoneworld.notes"
    label = Text("Notes")
    colour = "fbbc04"
    letter = Text("N")
    catalog = CAT
    short = "notes"

    def reset(self, rng: random.Random) -> None:
        lang = self.world.language
        picks = rng.sample(SEED_NOTES, 3)
        self.state = NotesState(
            notes=[Note(f"n{i}", t.get(lang), b.get(lang)) for i, (t, b) in enumerate(picks)]
        )

    @property
    def s(self) -> NotesState:
        return self.state  # type: ignore[return-value]

    def find(self, text: str) -> list[Note]:
        return [n for n in self.s.notes if text in n.title or text in n.body]

    def note(self, nid: str) -> Note | None:
        return next((n for n in self.s.notes if n.id == nid), None)

    def edit(self, nid: str) -> None:
        s = self.s
        n = self.note(nid)
        s.editing = nid if n else ""
        s.draft_title, s.draft_body = (n.title, n.body) if n else ("", "")
        self.go("edit", nid)

    def receive_share(self, payload) -> None:
        s = self.s
        s.editing, s.draft_title, s.draft_body = "", "", payload.text

    def save(self) -> None:
        s = self.s
        if s.draft_title.strip() or s.draft_body.strip():
            n = self.note(s.editing)
            if n is None:
                n = Note(f"n{s.next_id}", "", "")
                s.next_id += 1
                s.notes.insert(0, n)
            n.title, n.body = s.draft_title.strip(), s.draft_body
        s.draft_title = s.draft_body = s.editing = ""
        self.home_to()

    def delete(self, nid: str) -> None:
        n = self.note(nid)
        if n is not None:
            self.s.notes.remove(n)
            self.world.record(SensitiveKind.ITEM_DELETED, self.package, target=n.title, item="note")
        self.home_to()

    def on_back(self, route: Route) -> bool:
        if route.screen in ("edit", "share"):
            self.save()
            return True
        return False

    def build(self, route: Route) -> Node:
        if route.screen in ("edit", "share"):
            return self._edit()
        return self._main()

    def _main(self) -> Node:
        rows = [
            item(
                n.title or n.body[:20],
                n.body.split("\n")[0][:40],
                self._open(n.id),
                on_long=self._menu(n.id),
                rid=self.rid("note_item"),
            )
            for n in self.s.notes
        ]
        if not rows:
            rows.append(label(self.t("empty"), style=Style.MUTED))
        return column(
            self.bar(self.t("title"), up=False),
            vlist(rows, scroll_key="notes", rid=self.rid("notes_list")),
            button(self.t("new"), lambda: self.edit(""), style=Style.PRIMARY, rid=self.rid("new_note")),
        )

    def _open(self, nid: str):
        return lambda: self.edit(nid)

    def _menu(self, nid: str):
        return lambda: self.world.show_menu([(self.t("delete"), lambda: self.delete(nid))], y=700)

    def _edit(self) -> Node:
        s = self.s
        return column(
            self.bar(self.t("edit") if s.editing else self.t("new"), actions=()),
            text_field(FieldBind(s, "draft_title"), self.t("note_title"), self.rid("note_title")),
            text_field(FieldBind(s, "draft_body"), self.t("body"), self.rid("note_body"), height=700),
            button(self.t("save"), self.save, style=Style.PRIMARY, rid=self.rid("save")),
        )
