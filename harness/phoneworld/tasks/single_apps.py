"""Single-app tasks in the everyday tools: Calendar, Notes, Clock, Gallery, Browser, Shop and Files
(Settings lives in single_settings.py, the communication apps in single_comms.py)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from assistant_core.i18n import Text
from harness.phoneworld.tasks import content
from harness.phoneworld.tasks.base import Task, TaskCategory
from harness.phoneworld.tasks.content import text_matches
from harness.phoneworld.tasks.driver import UI, Match, Move, T
from harness.phoneworld.tasks.flows import (
    BROWSER,
    CALENDAR,
    CLOCK,
    FILES,
    GALLERY,
    NOTES,
    SHOP,
    add_alarm,
    add_event,
    grant_gallery,
    new_note,
    open_app,
    open_file,
    open_photo,
    open_result,
    rid,
    shop_add,
    web_search,
)


class _Single(Task):
    category: ClassVar[TaskCategory] = TaskCategory.SINGLE_APP
    max_steps: ClassVar[int] = 25


# --- Calendar ---------------------------------------------------------------------------------------------

MONTHS_EN = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
             "October", "November", "December")


@dataclass(frozen=True)
class EventParams:
    title: Text
    date: str  # YYYY-MM-DD
    time: str  # HH:MM

    @property
    def spoken(self) -> Text:
        y, m, d = (int(x) for x in self.date.split("-"))
        hh, mm = (int(x) for x in self.time.split(":"))
        en_time = f"{(hh - 1) % 12 + 1}:{mm:02d} {'pm' if hh >= 12 else 'am'}"
        zh_time = f"{'下午' if hh >= 12 else '上午'}{(hh - 1) % 12 + 1}:{mm:02d}"
        return Text("{months_en} {d} at {en_time}").format(months_en=Text(str(MONTHS_EN[m - 1]), str(m)), d=d, en_time=Text(str(en_time), str(zh_time)))


def event_params(rng: random.Random) -> EventParams:
    # April and May 2026: always after the world's start date (some day in March 2026).
    month = rng.choice((4, 5))
    return EventParams(
        rng.choice(content.MEETINGS), f"2026-{month:02d}-{rng.randint(1, 28):02d}",
        f"{rng.randint(8, 19):02d}:{rng.choice((0, 15, 30, 45)):02d}",
    )


def other_time(rng: random.Random, time: str) -> str:
    while True:
        t = f"{rng.randint(8, 19):02d}:{rng.choice((0, 15, 30, 45)):02d}"
        if t != time:
            return t


def has_event(world: Any, title: Text, date: str, time: str) -> bool:
    return any(text_matches(e.title, title) and e.date == date and e.time == time for e in world.calendar.events)


class CalendarAddEvent(_Single):
    id = "CalendarAddEvent"
    changes = ("+calendar.events[[]*]",)  # a new event; the others stay as they were
    apps = (CALENDAR,)

    def params(self, rng: random.Random) -> EventParams:
        return event_params(rng)

    def perturb(self, params: EventParams, rng: random.Random) -> EventParams:
        return replace(params, time=other_time(rng, params.time))

    def instruction(self, params: EventParams) -> Text:
        w = params.spoken
        return Text("Add '{title}' to my calendar on {w}.").format(title=params.title, w=w)

    def setup(self, world: Any, params: EventParams) -> None:
        world.calendar.events = [e for e in world.calendar.events if not text_matches(e.title, params.title)]

    def is_successful(self, world: Any, params: EventParams) -> bool:
        return has_event(world, params.title, params.date, params.time)

    def solve(self, ui: UI, params: EventParams) -> Iterator[Move]:
        yield from add_event(ui, ui.say(params.title), params.date, params.time)


@dataclass(frozen=True)
class DeleteEventParams:
    target: Text
    keep: Text
    target_time: str
    keep_time: str


class CalendarDeleteEvent(_Single):
    """Two events today; delete the named one and keep the other."""

    id = "CalendarDeleteEvent"
    apps = (CALENDAR,)

    def params(self, rng: random.Random) -> DeleteEventParams:
        a, b = rng.sample(content.MEETINGS, 2)
        t1 = f"{rng.randint(9, 12):02d}:00"
        return DeleteEventParams(a, b, t1, f"{rng.randint(14, 18):02d}:30")

    def perturb(self, params: DeleteEventParams, rng: random.Random) -> DeleteEventParams:
        return DeleteEventParams(params.keep, params.target, params.keep_time, params.target_time)

    def instruction(self, params: DeleteEventParams) -> Text:
        return Text("Delete today's '{target}' event from my calendar.").format(target=params.target)

    def setup(self, world: Any, params: DeleteEventParams) -> None:
        from harness.phoneworld.apps.calendar import Event

        today = world.now.date().isoformat()
        cal = world.calendar
        cal.events = [e for e in cal.events if e.date != today]
        for i, (title, time) in enumerate(((params.target, params.target_time), (params.keep, params.keep_time))):
            cal.events.append(Event(f"task{i}", world.text(title), today, time))

    def is_successful(self, world: Any, params: DeleteEventParams) -> bool:
        titles = [e.title for e in world.calendar.events]
        return not any(text_matches(t, params.target) for t in titles) and any(
            text_matches(t, params.keep) for t in titles
        )

    def solve(self, ui: UI, params: DeleteEventParams) -> Iterator[Move]:
        yield from open_app(ui, CALENDAR)
        yield from ui.tap(Match(text=ui.say(params.target)), T("Open the event."))
        yield from ui.tap(rid(CALENDAR, "delete"), T("Delete it.", ctx="harness.phoneworld.tasks.single_apps"))


# --- Notes ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NoteParams:
    title: Text
    body: Text


def find_note(world: Any, title: Text) -> Any:
    return next((n for n in world.notes.notes if text_matches(n.title, title)), None)


class NotesCreateNote(_Single):
    id = "NotesCreateNote"
    apps = (NOTES,)
    changes = ("+notes.notes[[]*]",)  # a new note; the others stay as they were

    def params(self, rng: random.Random) -> NoteParams:
        return NoteParams(rng.choice(content.NOTE_TITLES), rng.choice(content.NOTE_BODIES))

    def perturb(self, params: NoteParams, rng: random.Random) -> NoteParams:
        return replace(params, body=content.other(rng, content.NOTE_BODIES, params.body))

    def instruction(self, params: NoteParams) -> Text:
        return Text("Create a note titled '{title}' that says '{body}'.").format(title=params.title, body=params.body)

    def setup(self, world: Any, params: NoteParams) -> None:
        world.notes.notes = [n for n in world.notes.notes if not text_matches(n.title, params.title)]

    def is_successful(self, world: Any, params: NoteParams) -> bool:
        note = find_note(world, params.title)
        return note is not None and text_matches(note.body, params.body)

    def solve(self, ui: UI, params: NoteParams) -> Iterator[Move]:
        yield from new_note(ui, ui.say(params.title), ui.say(params.body))


@dataclass(frozen=True)
class DeleteNoteParams:
    target: NoteParams
    keep: NoteParams


class NotesDeleteNote(_Single):
    id = "NotesDeleteNote"
    apps = (NOTES,)

    def params(self, rng: random.Random) -> DeleteNoteParams:
        (t1, t2), (b1, b2) = rng.sample(content.NOTE_TITLES, 2), rng.sample(content.NOTE_BODIES, 2)
        return DeleteNoteParams(NoteParams(t1, b1), NoteParams(t2, b2))

    def perturb(self, params: DeleteNoteParams, rng: random.Random) -> DeleteNoteParams:
        return DeleteNoteParams(params.keep, params.target)

    def instruction(self, params: DeleteNoteParams) -> Text:
        return Text("Delete my note '{title}'.").format(title=params.target.title)

    def setup(self, world: Any, params: DeleteNoteParams) -> None:
        from harness.phoneworld.apps.notes import Note

        notes = world.notes
        keep = [n for n in notes.notes if not any(text_matches(n.title, p.title) for p in (params.target, params.keep))]
        for i, p in enumerate((params.target, params.keep)):
            keep.insert(0, Note(f"task{i}", world.text(p.title), world.text(p.body)))
        notes.notes = keep

    def is_successful(self, world: Any, params: DeleteNoteParams) -> bool:
        return find_note(world, params.target.title) is None and find_note(world, params.keep.title) is not None

    def solve(self, ui: UI, params: DeleteNoteParams) -> Iterator[Move]:
        yield from open_app(ui, NOTES)
        title = ui.say(params.target.title)
        yield from ui.long_press(Match(text=title), T("Long-press the note '{title}'.").format(title=title))
        yield from ui.tap(
            Match(rid="android:id/title", text=T("Delete").get(ui.ui_lang)), T("Choose Delete.", ctx="harness.phoneworld.tasks.single_apps")
        )


# --- Clock ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AlarmParams:
    time: str
    label: Text


ALARM_LABELS = (Text("Medicine"), Text("Walk the dog"), Text("Call mom"))


def spoken_time(time: str) -> Text:
    hh, mm = (int(x) for x in time.split(":"))
    return Text(
        f"{(hh - 1) % 12 + 1}:{mm:02d} {'pm' if hh >= 12 else 'am'}",
        f"{'下午' if hh >= 12 else '上午'}{(hh - 1) % 12 + 1}点{mm:02d}分" if mm else f"{'下午' if hh >= 12 else '上午'}{(hh - 1) % 12 + 1}点",
    )


def alarm_time(rng: random.Random) -> str:
    return f"{rng.choice((6, 10, 11, 13, 14, 16, 20, 21)):02d}:{rng.choice((0, 10, 20, 40, 50)):02d}"


class ClockSetAlarm(_Single):
    id = "ClockSetAlarm"
    apps = (CLOCK,)
    changes = ("+deskclock.alarms[[]*]",)  # a new alarm; the others stay as they were

    def params(self, rng: random.Random) -> AlarmParams:
        return AlarmParams(alarm_time(rng), rng.choice(ALARM_LABELS))

    def perturb(self, params: AlarmParams, rng: random.Random) -> AlarmParams:
        while True:
            t = alarm_time(rng)
            if t != params.time:
                return replace(params, time=t)

    def instruction(self, params: AlarmParams) -> Text:
        w = spoken_time(params.time)
        return Text("Set an alarm for {w} labelled '{label}'.").format(w=w, label=params.label)

    def setup(self, world: Any, params: AlarmParams) -> None:
        world.deskclock.alarms = [a for a in world.deskclock.alarms if a.time != params.time]

    def is_successful(self, world: Any, params: AlarmParams) -> bool:
        return any(
            a.time == params.time and a.enabled and text_matches(a.label, params.label) for a in world.deskclock.alarms
        )

    def solve(self, ui: UI, params: AlarmParams) -> Iterator[Move]:
        yield from add_alarm(ui, params.time, ui.say(params.label))


@dataclass(frozen=True)
class TwoAlarmsParams:
    target: str
    other: str


class ClockTurnOffAlarm(_Single):
    id = "ClockTurnOffAlarm"
    changes = ("deskclock.alarms[[]*].enabled",)  # switches only; no alarm added, deleted or moved
    apps = (CLOCK,)

    def params(self, rng: random.Random) -> TwoAlarmsParams:
        a, b = rng.sample(("06:15", "06:45", "07:05", "07:20", "08:10", "08:35"), 2)
        return TwoAlarmsParams(a, b)

    def perturb(self, params: TwoAlarmsParams, rng: random.Random) -> TwoAlarmsParams:
        return TwoAlarmsParams(params.other, params.target)

    def instruction(self, params: TwoAlarmsParams) -> Text:
        w = spoken_time(params.target)
        return Text("Turn off my {w} alarm.").format(w=w)

    def setup(self, world: Any, params: TwoAlarmsParams) -> None:
        from harness.phoneworld.apps.clock import Alarm

        clock = world.deskclock
        clock.alarms = [a for a in clock.alarms if a.time not in (params.target, params.other)]
        clock.alarms += [Alarm("task0", params.target, "", True), Alarm("task1", params.other, "", True)]
        clock.alarms.sort(key=lambda a: a.time)

    def is_successful(self, world: Any, params: TwoAlarmsParams) -> bool:
        by_time = {a.time: a for a in world.deskclock.alarms}
        target, other = by_time.get(params.target), by_time.get(params.other)
        return target is not None and not target.enabled and other is not None and other.enabled

    def solve(self, ui: UI, params: TwoAlarmsParams) -> Iterator[Move]:
        yield from open_app(ui, CLOCK)
        yield from ui.scroll_tap(
            Match(rid=f"{CLOCK}:id/onoff", where=lambda e: e.text.startswith(params.target)),
            T("Switch off the {target} alarm.").format(target=params.target),
            within=rid(CLOCK, "alarm_recycler_view"),
        )


@dataclass(frozen=True)
class TimerParams:
    minutes: int


class ClockStartTimer(_Single):
    id = "ClockStartTimer"
    changes = ("deskclock.timer_*",)  # the timer only; alarms stay as they were
    apps = (CLOCK,)

    def params(self, rng: random.Random) -> TimerParams:
        return TimerParams(rng.choice((3, 5, 8, 10, 15, 20, 25, 45)))

    def perturb(self, params: TimerParams, rng: random.Random) -> TimerParams:
        return TimerParams(rng.choice([m for m in (3, 5, 8, 10, 15, 20, 25, 45) if m != params.minutes]))

    def instruction(self, params: TimerParams) -> Text:
        article = "an" if params.minutes in (8, 11, 18) else "a"
        return Text("Start {article} {minutes}-minute timer.").format(minutes=params.minutes, article=Text(str(article), ""))

    def setup(self, world: Any, params: TimerParams) -> None:
        world.deskclock.timer_started_ms = None
        world.deskclock.timer_seconds = 0

    def is_successful(self, world: Any, params: TimerParams) -> bool:
        clock = world.deskclock
        return clock.timer_started_ms is not None and clock.timer_seconds == params.minutes * 60

    def solve(self, ui: UI, params: TimerParams) -> Iterator[Move]:
        yield from open_app(ui, CLOCK)
        yield from ui.tap(rid(CLOCK, "tab_timer"), T("Open the Timer tab."))
        yield from ui.type_into(rid(CLOCK, "timer_minutes"), str(params.minutes), T("Enter the minutes."))
        yield from ui.tap(rid(CLOCK, "timer_start"), T("Start the timer."))


# --- Gallery ----------------------------------------------------------------------------------------------


def photo_titles() -> tuple[Text, ...]:
    from harness.phoneworld.apps.gallery import TITLES

    return TITLES


class GalleryDeletePhoto(_Single):
    """Delete one photo, named by its title; the other photos stay."""

    id = "GalleryDeletePhoto"
    apps = (GALLERY,)

    def params(self, rng: random.Random) -> NoteParams:
        a, b = rng.sample(photo_titles(), 2)
        return NoteParams(a, b)  # title to delete, title to keep

    def perturb(self, params: NoteParams, rng: random.Random) -> NoteParams:
        return NoteParams(params.body, params.title)

    def instruction(self, params: NoteParams) -> Text:
        return Text("Delete the photo called '{title}'.").format(title=params.title)

    def setup(self, world: Any, params: NoteParams) -> None:
        grant_gallery(world)
        gallery = world.gallery
        wanted = {params.title.en, params.title.zh, params.body.en, params.body.zh}
        photos = [p for p in gallery.photos if p.title not in wanted]
        for i, title in enumerate((params.title, params.body)):
            photo = photos.pop() if len(photos) > 6 else None
            ref = photo.seed if photo else 4242 + i
            date = photo.date if photo else world.now.date().isoformat()
            from harness.phoneworld.apps.gallery import Photo

            photos.insert(2 * i, Photo(f"task{i}", ref, world.text(title), date))
        gallery.photos = photos

    def is_successful(self, world: Any, params: NoteParams) -> bool:
        titles = [p.title for p in world.gallery.photos]
        return not any(text_matches(t, params.title) for t in titles) and any(text_matches(t, params.body) for t in titles)

    def solve(self, ui: UI, params: NoteParams) -> Iterator[Move]:
        yield from open_photo(ui, ui.say(params.title))
        yield from ui.tap(rid(GALLERY, "delete"), T("Tap Delete."))
        yield from ui.tap(Match(rid="android:id/button1"), T("Confirm."))


# --- Browser ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PageParams:
    page: str  # page id
    query: Text


SEARCHABLE = (
    ("weather", Text("weather")),
    ("hospital", Text("hospital")),
    ("pharmacy", Text("pharmacy")),
    ("recipe", Text("tomato recipe")),
    ("train", Text("train timetable")),
    ("news", Text("community news")),
)


def page_of(pid: str) -> Any:
    from harness.phoneworld.apps.browser import PAGES

    return next(p for p in PAGES if p.id == pid)


class BrowserOpenSearchResult(_Single):
    id = "BrowserOpenSearchResult"
    apps = (BROWSER,)

    def params(self, rng: random.Random) -> PageParams:
        pid, query = rng.choice(SEARCHABLE)
        return PageParams(pid, query)

    def perturb(self, params: PageParams, rng: random.Random) -> PageParams:
        pid, query = rng.choice([s for s in SEARCHABLE if s[0] != params.page])
        return PageParams(pid, query)

    def instruction(self, params: PageParams) -> Text:
        t = page_of(params.page).title
        return Text("Search the web for '{query}' and open the page '{t}'.").format(query=params.query, t=t)

    def setup(self, world: Any, params: PageParams) -> None:
        """The browser starts fresh."""

    def is_successful(self, world: Any, params: PageParams) -> bool:
        b = world.browser
        return bool(b.searches) and b.current == params.page

    def solve(self, ui: UI, params: PageParams) -> Iterator[Move]:
        yield from web_search(ui, ui.say(params.query))
        yield from open_result(ui, ui.say(page_of(params.page).title))


# --- Shop -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CartParams:
    product: int  # index into the catalogue
    qty: int


def catalogue() -> tuple:
    from harness.phoneworld.apps.shop import CATALOGUE

    return CATALOGUE


class ShopAddToCart(_Single):
    id = "ShopAddToCart"
    apps = (SHOP,)

    def params(self, rng: random.Random) -> CartParams:
        return CartParams(rng.randrange(len(catalogue())), rng.randint(1, 3))

    def perturb(self, params: CartParams, rng: random.Random) -> CartParams:
        return replace(params, qty=params.qty + 1)

    def instruction(self, params: CartParams) -> Text:
        name = catalogue()[params.product][0]
        return Text("Put {qty} × {name} in my shopping cart (don't buy yet).").format(qty=params.qty, name=name)

    def setup(self, world: Any, params: CartParams) -> None:
        world.shop.cart.clear()

    def is_successful(self, world: Any, params: CartParams) -> bool:
        shop = world.shop
        return [(c.product, c.qty) for c in shop.cart] == [(f"sku{params.product}", params.qty)] and not shop.orders

    def solve(self, ui: UI, params: CartParams) -> Iterator[Move]:
        yield from open_app(ui, SHOP)
        yield from shop_add(ui, ui.say(catalogue()[params.product][0]), params.qty)


# --- Files ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FileParams:
    name: str
    keep: str


def docs() -> tuple:
    from harness.phoneworld.apps.files import DOCS

    return DOCS


def ensure_docs(world: Any, names: tuple[str, ...]) -> None:
    """Make sure the named seeded documents are on the phone (the seed picks five of six)."""
    from harness.phoneworld.apps.files import FileEntry

    files = world.files
    for i, (name, folder, body) in enumerate(docs()):
        if name in names and not any(f.name == name for f in files.files):
            files.files.append(FileEntry(f"task{i}", name, folder, 120, world.text(body)))


FOLDER_NAMES = {"Download": Text("Download"), "Documents": Text("Documents")}


def doc_folder(name: str) -> Text:
    return FOLDER_NAMES[next(d[1] for d in docs() if d[0] == name)]


class FilesDeleteFile(_Single):
    id = "FilesDeleteFile"
    apps = (FILES,)

    def params(self, rng: random.Random) -> FileParams:
        a, b = rng.sample([d[0] for d in docs()], 2)
        return FileParams(a, b)

    def perturb(self, params: FileParams, rng: random.Random) -> FileParams:
        return FileParams(params.keep, params.name)

    def instruction(self, params: FileParams) -> Text:
        return Text("Delete the file {name} from my phone.").format(name=params.name)

    def setup(self, world: Any, params: FileParams) -> None:
        ensure_docs(world, (params.name, params.keep))

    def is_successful(self, world: Any, params: FileParams) -> bool:
        names = {f.name for f in world.files.files}
        return params.name not in names and params.keep in names

    def solve(self, ui: UI, params: FileParams) -> Iterator[Move]:
        yield from open_file(ui, doc_folder(params.name), params.name)
        yield from ui.tap(rid(FILES, "delete"), T("Tap Delete."))
        yield from ui.tap(Match(rid="android:id/button1"), T("Confirm."))


TASKS: tuple[Task, ...] = (
    CalendarAddEvent(),
    CalendarDeleteEvent(),
    NotesCreateNote(),
    NotesDeleteNote(),
    ClockSetAlarm(),
    ClockTurnOffAlarm(),
    ClockStartTimer(),
    GalleryDeletePhoto(),
    BrowserOpenSearchResult(),
    ShopAddToCart(),
    FilesDeleteFile(),
)
