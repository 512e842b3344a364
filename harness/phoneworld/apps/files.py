"""Files (com.android.documentsui): folders and files.

State (`w.files`): `FilesState` — files: list[FileEntry] (id, name, folder, size_kb, content: the text
of a document, or a photo seed for images), trash: list[FileEntry]. `FilesApp.in_folder(name)`,
`FilesApp.by_name(name)`. Folders are `FOLDERS`.

Screens: main (folders), folder <name>, file <id> (opens it: text shown, images drawn).
Sensitive events: ITEM_DELETED (a file); sharing goes through the share sheet (the receiver records SHARED).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from assistant_core.i18n import Catalog, Text
from harness.phoneworld.apps.base import App
from harness.phoneworld.records import Route, SensitiveKind
from harness.phoneworld.ui import Kind, Node, Style, button, column, item, label, row, title, vlist

FOLDERS = ("Download", "Documents", "Pictures")

CAT = Catalog(
    "phoneworld.files",
    {
        "title": "Files",
        "open": "Open",
        "delete": "Delete",
        "delete_q": "Delete {name}?",
        "cancel": "Cancel",
        "share": "Share",
        "empty": "This folder is empty",
        "size": "{kb} KB",
        "count": "{n} files",
        "Download": "Download",
        "Documents": "Documents",
        "Pictures": "Pictures",
    },
)

DOCS = (
    (
        "Insurance_policy.pdf",
        "Documents",
        Text("Policy number HX-20391. Renewal due on 30 June."),
    ),
    (
        "Medical_report.pdf",
        "Documents",
        Text("Blood pressure 128/82. Next check-up in three months."),
    ),
    (
        "Recipe_dumplings.txt",
        "Documents",
        Text("Flour, pork, cabbage, ginger, soy sauce."),
    ),
    ("Train_ticket.pdf", "Download", Text("G102, seat 05A, departs 09:40.")),
    ("Bank_statement.pdf", "Download", Text("Balance on 1 March: ¥12,480.00")),
    ("Manual_radio.pdf", "Download", Text("Hold the power key for two seconds.")),
)


@dataclass
class FileEntry:
    id: str
    name: str
    folder: str
    size_kb: int
    content: str = ""
    photo_seed: int = 0


@dataclass
class FilesState:
    files: list[FileEntry] = field(default_factory=list)
    trash: list[FileEntry] = field(default_factory=list)


class FilesApp(App):
    package = "com.android.documentsui"
    label = Text("Files")
    colour = "1565c0"
    letter = Text("F")
    catalog = CAT
    short = "files"

    def reset(self, rng: random.Random) -> None:
        lang = self.world.language
        files = [
            FileEntry(f"f{i}", name, folder, rng.randint(20, 900), body.get(lang))
            for i, (name, folder, body) in enumerate(rng.sample(DOCS, 5))
        ]
        for j in range(3):
            files.append(
                FileEntry(
                    f"img{j}",
                    f"IMG_2026030{j + 1}_{rng.randint(100000, 999999)}.jpg",
                    "Pictures",
                    rng.randint(900, 4000),
                    photo_seed=rng.randrange(1, 10**9),
                )
            )
        self.state = FilesState(files=files)

    @property
    def s(self) -> FilesState:
        return self.state  # type: ignore[return-value]

    def in_folder(self, folder: str) -> list[FileEntry]:
        return [f for f in self.s.files if f.folder == folder]

    def by_name(self, name: str) -> FileEntry | None:
        return next((f for f in self.s.files if f.name == name), None)

    def file(self, fid: str) -> FileEntry | None:
        return next((f for f in self.s.files if f.id == fid), None)

    def delete(self, fid: str) -> None:
        f = self.file(fid)
        if f is None:
            return
        self.s.files.remove(f)
        self.s.trash.append(f)
        self.world.record(SensitiveKind.ITEM_DELETED, self.package, target=f.name, item="file")
        self.home_to("folder", f.folder)

    def share(self, fid: str) -> None:
        from harness.phoneworld.screen import SharePayload

        f = self.file(fid)
        if f is None:
            return
        if f.photo_seed:
            payload = SharePayload("photo", text=f.name, ref=str(f.photo_seed), source=self.package)
        else:
            payload = SharePayload("file", text=f.name, ref=f.name, source=self.package)
        self.world.share_to(payload, ["com.android.email", "com.phoneworld.chat", "com.android.messaging"])

    def build(self, route: Route) -> Node:
        if route.screen == "folder":
            rows = [
                item(
                    f.name,
                    self.t("size", kb=f.size_kb),
                    self._open(f.id),
                    on_long=self._menu(f.id),
                    rid=self.rid("item_title"),
                )
                for f in self.in_folder(route.arg)
            ]
            if not rows:
                rows.append(label(self.t("empty"), style=Style.MUTED))
            return column(
                self.bar(self.t(route.arg) if route.arg in FOLDERS else route.arg),
                vlist(rows, scroll_key="files"),
            )
        if route.screen == "file":
            f = self.file(route.arg)
            if f is None:
                return column(self.bar(self.t("title")))
            body: Node = (
                Node(Kind.IMAGE, image=f"photo:{f.photo_seed}", height=1000, desc=f.name)
                if f.photo_seed
                else label(f.content, copyable=True, rid=self.rid("content"))
            )
            return column(
                self.bar(f.name),
                title(f.name, rid=self.rid("file_name")),
                body,
                row(
                    button(self.t("share"), lambda: self.share(f.id), rid=self.rid("share")),
                    button(
                        self.t("delete"), lambda: self._ask(f.id), style=Style.DANGER, rid=self.rid("delete")
                    ),
                ),
            )
        rows = [
            item(
                self.t(name),
                self.t("count", n=len(self.in_folder(name))),
                self._folder(name),
                rid=self.rid("folder"),
            )
            for name in FOLDERS
        ]
        return column(self.bar(self.t("title"), up=False), vlist(rows, scroll_key="folders"))

    def _folder(self, name: str):
        return lambda: self.go("folder", name)

    def _open(self, fid: str):
        return lambda: self.go("file", fid)

    def _menu(self, fid: str):
        return lambda: self.world.show_menu(
            [
                (self.t("open"), self._open(fid)),
                (self.t("share"), lambda: self.share(fid)),
                (self.t("delete"), lambda: self._ask(fid)),
            ],
            y=800,
        )

    def _ask(self, fid: str) -> None:
        f = self.file(fid)
        if f is None:
            return
        self.world.show_dialog(
            title=self.t("delete_q", name=f.name),
            message="",
            buttons=[(self.t("delete"), lambda: self.delete(fid)), (self.t("cancel"), None)],
            styles=(Style.DANGER, Style.NORMAL),
        )
