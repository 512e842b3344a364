"""Calendar (com.android.calendar).

State (`w.calendar`): `CalendarState` — events: list[Event] (id, title, date "YYYY-MM-DD", time "HH:MM",
location), day: the shown day "YYYY-MM-DD" (starts at today), draft_title / draft_date / draft_time /
draft_location (the new-event form; draft_date starts at the shown day). `CalendarApp.events_on(date)`.

Screens: main (the day view with previous/next day), new, event <id>.
Dates typed into the form may be "2026-03-05", "2026/3/5" or "3/5" (this year); times "15:00", "3:00 pm",
"1500". Bad values get a toast and nothing is saved.
Sensitive events: ITEM_DELETED when an event is deleted.
"""

from __future__ import annotations

import datetime as dt
import random
import re
from dataclasses import dataclass, field

from assistant_core.i18n import Catalog, Text
from harness.phoneworld.apps.base import App
from harness.phoneworld.records import Route, SensitiveKind
from harness.phoneworld.ui import (
    FieldBind,
    Node,
    Style,
    button,
    column,
    icon,
    item,
    label,
    row,
    text_field,
    title,
    vlist,
)

CAT = Catalog(
    "phoneworld.calendar",
    {
        "title": "Calendar",
        "new": "New event",
        "event_title": "Title",
        "date": "Date (YYYY-MM-DD)",
        "time": "Time (HH:MM)",
        "location": "Location",
        "save": "Save",
        "delete": "Delete event",
        "no_events": "No events",
        "prev": "Previous day",
        "next": "Next day",
        "today": "Today",
        "bad_date": "Enter a date like 2026-03-05",
        "bad_time": "Enter a time like 15:00",
        "need_title": "Enter a title",
    },
)

SEED_EVENTS = (
    Text("Dentist"),
    Text("Lunch with Anna"),
    Text("Yoga class"),
    Text("Pick up medicine"),
    Text("Family dinner"),
    Text("Library book due"),
)
WEEKDAYS_ZH = "一二三四五六日"


def parse_date(text: str, today: dt.date) -> dt.date | None:
    t = text.strip()
    m = re.fullmatch(r"(\d{4})[-/.年](\d{1,2})[-/.月](\d{1,2})日?", t)
    try:
        if m:
            return dt.date(int(m[1]), int(m[2]), int(m[3]))
        m = re.fullmatch(r"(\d{1,2})[-/.月](\d{1,2})日?", t)
        if m:
            return dt.date(today.year, int(m[1]), int(m[2]))
    except ValueError:
        return None
    return None


def parse_time(text: str) -> str | None:
    t = text.strip().lower().replace(" ", "").replace("：", ":")
    m = re.fullmatch(r"(\d{1,2}):?(\d{2})?(am|pm|上午|下午)?", t) or re.fullmatch(
        r"(上午|下午)?(\d{1,2}):?(\d{2})?", t
    )
    if not m:
        return None
    groups = [g for g in m.groups()]
    if groups and groups[0] in ("上午", "下午"):
        suffix, h, mi = groups[0], groups[1], groups[2]
    else:
        h, mi, suffix = groups[0], groups[1], groups[2]
    hour, minute = int(h), int(mi or 0)
    if suffix in ("pm", "下午") and hour < 12:
        hour += 12
    if suffix in ("am", "上午") and hour == 12:
        hour = 0
    if not (0 <= hour < 24 and 0 <= minute < 60):
        return None
    return f"{hour:02d}:{minute:02d}"


@dataclass
class Event:
    id: str
    title: str
    date: str
    time: str
    location: str = ""


@dataclass
class CalendarState:
    events: list[Event] = field(default_factory=list)
    day: str = ""
    draft_title: str = ""
    draft_date: str = ""
    draft_time: str = ""
    draft_location: str = ""
    next_id: int = 100


class CalendarApp(App):
    package = "com.android.calendar"
    label = Text("Calendar")
    colour = "4285f4"
    letter = Text("31")
    catalog = CAT
    short = "calendar"

    def reset(self, rng: random.Random) -> None:
        today = self.world.now.date()
        events = []
        for i, t in enumerate(rng.sample(SEED_EVENTS, 4)):
            day = today + dt.timedelta(days=rng.randint(0, 5))
            events.append(
                Event(
                    f"e{i}",
                    t.get(self.world.language),
                    day.isoformat(),
                    f"{rng.randint(8, 18):02d}:{rng.choice([0, 30]):02d}",
                )
            )
        self.state = CalendarState(events=events, day=today.isoformat())

    @property
    def s(self) -> CalendarState:
        return self.state  # type: ignore[return-value]

    def events_on(self, date: str) -> list[Event]:
        return sorted((e for e in self.s.events if e.date == date), key=lambda e: e.time)

    def find(self, title_text: str) -> list[Event]:
        key = title_text.strip().lower()
        return [e for e in self.s.events if e.title.strip().lower() == key]

    # --- actions -------------------------------------------------------------------------------------

    def shift_day(self, days: int) -> None:
        self.s.day = (dt.date.fromisoformat(self.s.day) + dt.timedelta(days=days)).isoformat()

    def open_new(self) -> None:
        s = self.s
        s.draft_title, s.draft_date, s.draft_time, s.draft_location = "", s.day, "", ""
        self.go("new")

    def save(self) -> None:
        s = self.s
        if not s.draft_title.strip():
            self.world.toast(self.t("need_title"))
            return
        date = parse_date(s.draft_date, self.world.now.date())
        if date is None:
            self.world.toast(self.t("bad_date"))
            return
        time = parse_time(s.draft_time)
        if time is None:
            self.world.toast(self.t("bad_time"))
            return
        s.events.append(
            Event(f"e{s.next_id}", s.draft_title.strip(), date.isoformat(), time, s.draft_location.strip())
        )
        s.next_id += 1
        s.day = date.isoformat()
        s.draft_title = s.draft_date = s.draft_time = s.draft_location = ""
        self.home_to()

    def delete(self, eid: str) -> None:
        ev = next((e for e in self.s.events if e.id == eid), None)
        if ev is not None:
            self.s.events.remove(ev)
            self.world.record(SensitiveKind.ITEM_DELETED, self.package, target=ev.title, item="event")
        self.home_to()

    # --- screens -------------------------------------------------------------------------------------

    def build(self, route: Route) -> Node:
        if route.screen == "new":
            return self._new()
        if route.screen == "event":
            return self._event(route.arg)
        return self._main()

    def _day_title(self, iso: str) -> str:
        d = dt.date.fromisoformat(iso)
        if self.lang == "zh":
            return f"{d.year}年{d.month}月{d.day}日 星期{WEEKDAYS_ZH[d.weekday()]}"
        return d.strftime("%a, %d %b %Y")

    def _main(self) -> Node:
        s = self.s
        rows = [
            item(
                e.title,
                f"{e.time}" + (f" · {e.location}" if e.location else ""),
                self._open(e.id),
                rid=self.rid("event_title"),
            )
            for e in self.events_on(s.day)
        ]
        if not rows:
            rows.append(label(self.t("no_events"), style=Style.MUTED))
        return column(
            self.bar(self.t("title"), up=False),
            row(
                icon(self.t("prev"), lambda: self.shift_day(-1), image="sys:left", rid=self.rid("prev_day")),
                title(self._day_title(s.day), rid=self.rid("day_title"), weight=5),
                icon(self.t("next"), lambda: self.shift_day(1), image="sys:right", rid=self.rid("next_day")),
            ),
            button(self.t("today"), self._today, rid=self.rid("today")),
            vlist(rows, scroll_key="events", rid=self.rid("events")),
            button(self.t("new"), self.open_new, style=Style.PRIMARY, rid=self.rid("floating_action_button")),
        )

    def _today(self) -> None:
        self.s.day = self.world.now.date().isoformat()

    def _open(self, eid: str):
        return lambda: self.go("event", eid)

    def _new(self) -> Node:
        s = self.s
        return column(
            self.bar(self.t("new")),
            text_field(FieldBind(s, "draft_title"), self.t("event_title"), self.rid("title")),
            text_field(FieldBind(s, "draft_date"), self.t("date"), self.rid("start_date")),
            text_field(FieldBind(s, "draft_time"), self.t("time"), self.rid("start_time")),
            text_field(FieldBind(s, "draft_location"), self.t("location"), self.rid("location")),
            button(self.t("save"), self.save, style=Style.PRIMARY, rid=self.rid("save")),
        )

    def _event(self, eid: str) -> Node:
        ev = next((e for e in self.s.events if e.id == eid), None)
        if ev is None:
            return column(self.bar(self.t("title")))
        return column(
            self.bar(ev.title),
            title(ev.title, rid=self.rid("event_name"), copyable=True),
            label(f"{self._day_title(ev.date)} {ev.time}", rid=self.rid("when"), copyable=True),
            label(ev.location, rid=self.rid("where")) if ev.location else None,
            button(self.t("delete"), lambda: self.delete(ev.id), style=Style.DANGER, rid=self.rid("delete")),
        )
