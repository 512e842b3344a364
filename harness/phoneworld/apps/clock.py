"""Clock (com.android.deskclock): alarms and a timer.

State (`w.deskclock`): `ClockState` — alarms: list[Alarm] (id, time "HH:MM", label, enabled),
timer_seconds: the set duration (0 = none), timer_started_ms: the world clock's elapsed ms when started
(None = not running), draft_time / draft_label (the add-alarm form), draft_minutes (the timer field).
`ClockApp.alarm_at("07:30")`, `ClockApp.timer_remaining()`.

Screens: main (alarms), add, timer. Times accept "7:30", "07:30", "7:30 am", "1930" (see calendar.parse_time).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from assistant_core.i18n import Catalog, Text
from harness.phoneworld.apps.base import App
from harness.phoneworld.apps.calendar import parse_time
from harness.phoneworld.records import Route, SensitiveKind
from harness.phoneworld.ui import (
    FieldBind,
    Node,
    Style,
    button,
    column,
    label,
    row,
    switch,
    text_field,
    title,
    vlist,
)

CAT = Catalog(
    "phoneworld.clock",
    {
        "title": "Clock",
        "alarms": "Alarm",
        "timer": "Timer",
        "add": "Add alarm",
        "time": "Time (HH:MM)",
        "label": "Label",
        "save": "Save",
        "delete": "Delete",
        "bad_time": "Enter a time like 07:30",
        "minutes": "Minutes",
        "start": "Start",
        "stop": "Stop",
        "remaining": "{m:02d}:{s:02d} left",
        "not_set": "Timer not running",
        "bad_minutes": "Enter the minutes, like 10",
        "no_alarms": "No alarms",
        "alarm_desc": "Alarm {time} {label}",
    },
)

LABELS = (Text("Wake up"), Text("Medicine"), Text("Walk"), Text(""))


@dataclass
class Alarm:
    id: str
    time: str
    label: str = ""
    enabled: bool = True


@dataclass
class ClockState:
    alarms: list[Alarm] = field(default_factory=list)
    timer_seconds: int = 0
    timer_started_ms: int | None = None
    draft_time: str = ""
    draft_label: str = ""
    draft_minutes: str = ""
    next_id: int = 100


class ClockApp(App):
    package = "com.android.deskclock"
    label = Text("Clock")
    colour = "3949ab"
    letter = Text("C")
    catalog = CAT
    short = "deskclock"

    def reset(self, rng: random.Random) -> None:
        alarms = []
        for i in range(rng.randint(2, 3)):
            lab = rng.choice(LABELS).get(self.world.language)
            alarms.append(
                Alarm(
                    f"a{i}",
                    f"{rng.randint(5, 9):02d}:{rng.choice([0, 15, 30, 45]):02d}",
                    lab,
                    rng.random() < 0.6,
                )
            )
        alarms.sort(key=lambda a: a.time)
        self.state = ClockState(alarms=alarms)

    @property
    def s(self) -> ClockState:
        return self.state  # type: ignore[return-value]

    def alarm_at(self, time: str) -> Alarm | None:
        norm = parse_time(time) or time
        return next((a for a in self.s.alarms if a.time == norm), None)

    def timer_remaining(self) -> int | None:
        s = self.s
        if s.timer_started_ms is None:
            return None
        left = s.timer_seconds - (self.world.clock.elapsed_ms - s.timer_started_ms) // 1000
        return max(0, left)

    def add(self) -> None:
        s = self.s
        t = parse_time(s.draft_time)
        if t is None:
            self.world.toast(self.t("bad_time"))
            return
        s.alarms.append(Alarm(f"a{s.next_id}", t, s.draft_label.strip(), True))
        s.next_id += 1
        s.alarms.sort(key=lambda a: a.time)
        s.draft_time = s.draft_label = ""
        self.home_to()

    def toggle(self, aid: str) -> None:
        a = next((a for a in self.s.alarms if a.id == aid), None)
        if a is not None:
            a.enabled = not a.enabled

    def delete(self, aid: str) -> None:
        a = next((a for a in self.s.alarms if a.id == aid), None)
        if a is not None:
            self.s.alarms.remove(a)
            self.world.record(SensitiveKind.ITEM_DELETED, self.package, target=a.time, item="alarm")

    def start_timer(self) -> None:
        s = self.s
        try:
            minutes = float(s.draft_minutes.strip())
        except ValueError:
            minutes = 0
        if minutes <= 0:
            self.world.toast(self.t("bad_minutes"))
            return
        s.timer_seconds = int(minutes * 60)
        s.timer_started_ms = self.world.clock.elapsed_ms

    def stop_timer(self) -> None:
        self.s.timer_started_ms = None

    def build(self, route: Route) -> Node:
        tabs = row(
            button(
                self.t("alarms"),
                lambda: self.home_to(),
                rid=self.rid("tab_alarm"),
                style=Style.PRIMARY if route.screen == "main" else Style.NORMAL,
            ),
            button(
                self.t("timer"),
                lambda: self.home_to("timer"),
                rid=self.rid("tab_timer"),
                style=Style.PRIMARY if route.screen == "timer" else Style.NORMAL,
            ),
        )
        if route.screen == "add":
            s = self.s
            return column(
                self.bar(self.t("add")),
                text_field(FieldBind(s, "draft_time"), self.t("time"), self.rid("alarm_time")),
                text_field(FieldBind(s, "draft_label"), self.t("label"), self.rid("alarm_label")),
                button(self.t("save"), self.add, style=Style.PRIMARY, rid=self.rid("save")),
            )
        if route.screen == "timer":
            left = self.timer_remaining()
            status = self.t("not_set") if left is None else self.t("remaining", m=left // 60, s=left % 60)
            return column(
                self.bar(self.t("title"), up=False),
                tabs,
                title(status, rid=self.rid("timer_time")),
                text_field(
                    FieldBind(self.s, "draft_minutes"),
                    self.t("minutes"),
                    self.rid("timer_minutes"),
                    on_submit=self.start_timer,
                ),
                row(
                    button(
                        self.t("start"), self.start_timer, style=Style.PRIMARY, rid=self.rid("timer_start")
                    ),
                    button(self.t("stop"), self.stop_timer, rid=self.rid("timer_stop")),
                ),
            )
        rows: list[Node] = []
        for a in self.s.alarms:
            rows.append(
                row(
                    switch(
                        f"{a.time}  {a.label}".strip(),
                        a.enabled,
                        self._toggler(a.id),
                        rid=self.rid("onoff"),
                        weight=5,
                        desc=self.t("alarm_desc", time=a.time, label=a.label),
                    ),
                    button(self.t("delete"), self._deleter(a.id), rid=self.rid("delete"), weight=2),
                )
            )
        if not rows:
            rows.append(label(self.t("no_alarms"), style=Style.MUTED))
        return column(
            self.bar(self.t("title"), up=False),
            tabs,
            vlist(rows, scroll_key="alarms", rid=self.rid("alarm_recycler_view")),
            button(self.t("add"), lambda: self.go("add"), style=Style.PRIMARY, rid=self.rid("fab")),
        )

    def _toggler(self, aid: str):
        return lambda: self.toggle(aid)

    def _deleter(self, aid: str):
        return lambda: self.delete(aid)
