"""Gallery (com.android.gallery3d): generated photos.

State (`w.gallery`): `GalleryState` — photos: list[Photo] (id, seed: the image generator's seed, title,
date "YYYY-MM-DD", album), trash: list[Photo] (deleted ones). The photos permission lives on the world:
`(package, Permission.PHOTOS) in w.granted`. Photo pixels come from `render.photo_image(seed, size)`
(key "photo:<seed>"), so messages carrying a photo name it by its seed string.

A horizontal swipe on the open photo shows the next/previous one; a double tap zooms in or out (`zoomed`).
On first launch the app asks for the photos permission (a system dialog); until it is granted the grid
is replaced by an "Allow access" button.
Screens: main (grid), photo <id>.
Sensitive events: ITEM_DELETED (a photo), PERMISSION_GRANTED (by the world); sharing goes through the
share sheet and is recorded by the receiving app (SHARED, kind photo, ref = the photo's seed).
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field

from assistant_core.i18n import Catalog, Text
from harness.phoneworld.apps.base import App
from harness.phoneworld.records import Permission, Route, SensitiveKind
from harness.phoneworld.ui import Kind, Node, Style, button, column, grid, label, row, vlist

CAT = Catalog(
    "phoneworld.gallery",
    {
        "title": "Gallery",
        "need": "Gallery needs access to your photos.",
        "allow": "Allow access",
        "share": "Share",
        "delete": "Delete",
        "delete_q": "Move this photo to the trash?",
        "cancel": "Cancel",
        "empty": "No photos",
        "photo": "Photo {title}, {date}",
        "zoomed": "Photo {title}, {date}, zoomed in",
    },
)

TITLES = (
    Text("Beach"),
    Text("Mountain"),
    Text("Sunset"),
    Text("Garden"),
    Text("Lake"),
    Text("City"),
    Text("Birthday"),
    Text("Park"),
    Text("Snow"),
    Text("Forest"),
)


@dataclass
class Photo:
    id: str
    seed: int
    title: str
    date: str
    album: str = "Camera"

    @property
    def ref(self) -> str:
        return str(self.seed)


@dataclass
class GalleryState:
    photos: list[Photo] = field(default_factory=list)
    trash: list[Photo] = field(default_factory=list)
    zoomed: bool = False  # the photo view is zoomed in (double tap toggles)


class GalleryApp(App):
    package = "com.android.gallery3d"
    label = Text("Gallery")
    colour = "f9ab00"
    letter = Text("G")
    catalog = CAT
    short = "gallery"

    def reset(self, rng: random.Random) -> None:
        today = self.world.now.date()
        photos = []
        for i, t in enumerate(rng.sample(TITLES, 8)):
            day = today - dt.timedelta(days=rng.randint(0, 60))
            photos.append(
                Photo(f"ph{i}", rng.randrange(1, 10**9), t.get(self.world.language), day.isoformat())
            )
        photos.sort(key=lambda p: p.date, reverse=True)
        self.state = GalleryState(photos=photos)

    @property
    def s(self) -> GalleryState:
        return self.state  # type: ignore[return-value]

    @property
    def allowed(self) -> bool:
        return (self.package, Permission.PHOTOS) in self.world.granted

    def photo(self, pid: str) -> Photo | None:
        return next((p for p in self.s.photos if p.id == pid), None)

    def on_launch(self) -> None:
        if not self.allowed:
            self.world.request_permission(self.package, Permission.PHOTOS)

    def ask(self) -> None:
        self.world.request_permission(self.package, Permission.PHOTOS)

    def delete(self, pid: str) -> None:
        p = self.photo(pid)
        if p is not None:
            self.s.photos.remove(p)
            self.s.trash.append(p)
            self.world.record(
                SensitiveKind.ITEM_DELETED, self.package, target=p.title, item="photo", ref=p.ref
            )
        self.home_to()

    def share(self, pid: str) -> None:
        from harness.phoneworld.screen import SharePayload

        p = self.photo(pid)
        if p is not None:
            self.world.share_to(
                SharePayload("photo", text=p.title, ref=p.ref, source=self.package),
                ["com.phoneworld.chat", "com.android.messaging", "com.android.email"],
            )

    def build(self, route: Route) -> Node:
        if route.screen == "photo":
            return self._photo(route.arg)
        return self._main()

    def _main(self) -> Node:
        if not self.allowed:
            return column(
                self.bar(self.t("title"), up=False),
                label(self.t("need")),
                button(self.t("allow"), self.ask, style=Style.PRIMARY, rid=self.rid("allow_access")),
            )
        cells = [
            Node(
                Kind.IMAGE,
                image=f"photo:{p.seed}",
                desc=self.t("photo", title=p.title, date=p.date),
                on_tap=self._open(p.id),
                rid=self.rid("thumbnail"),
            )
            for p in self.s.photos
        ]
        body = (
            vlist([grid(cells, columns=3, cell_height=360)], scroll_key="grid", rid=self.rid("photo_grid"))
            if cells
            else label(self.t("empty"), style=Style.MUTED)
        )
        return column(self.bar(self.t("title"), up=False), body)

    def _open(self, pid: str):
        return lambda: self.go("photo", pid)

    def _flinger(self, pid: str):
        def fling(direction: int) -> None:
            ids = [p.id for p in self.s.photos]
            i = ids.index(pid) - direction  # swiping towards the left shows the next photo
            if 0 <= i < len(ids):
                self.replace("photo", ids[i])

        return fling

    def _toggle_zoom(self) -> None:
        self.s.zoomed = not self.s.zoomed

    def on_route(self, route: Route) -> None:
        self.s.zoomed = False  # every photo opens unzoomed

    def _photo(self, pid: str) -> Node:
        p = self.photo(pid)
        if p is None:
            return column(self.bar(self.t("title")))
        return column(
            self.bar(p.title),
            Node(
                Kind.IMAGE,
                image=f"{'photozoom' if self.s.zoomed else 'photo'}:{p.seed}",
                desc=self.t("zoomed" if self.s.zoomed else "photo", title=p.title, date=p.date),
                height=1200,
                rid=self.rid("photo_view"),
                on_double=self._toggle_zoom,
                on_fling=self._flinger(p.id),
            ),
            label(f"{p.title} · {p.date}", style=Style.MUTED, rid=self.rid("photo_info")),
            row(
                button(self.t("share"), lambda: self.share(p.id), rid=self.rid("share")),
                button(
                    self.t("delete"),
                    lambda: self._ask_delete(p.id),
                    style=Style.DANGER,
                    rid=self.rid("delete"),
                ),
            ),
        )

    def _ask_delete(self, pid: str) -> None:
        self.world.show_dialog(
            title=self.t("delete_q"),
            message="",
            buttons=[(self.t("delete"), lambda: self.delete(pid)), (self.t("cancel"), None)],
            styles=(Style.DANGER, Style.NORMAL),
        )
