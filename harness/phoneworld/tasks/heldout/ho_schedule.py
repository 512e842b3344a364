"""More held-out templates, continued from ho_more.py: clock entries (AndroidWorld single/clock.py), notes
merging (single/markor.py MarkorMergeNotes), a calendar event with a place, and MobileWorld's "stop at the
payment page and let me take over".
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from assistant_core.i18n import Text
from harness.phoneworld.sideeffects import at
from harness.phoneworld.tasks import content
from harness.phoneworld.tasks.base import TaskCategory
from harness.phoneworld.tasks.content import Person, text_matches
from harness.phoneworld.tasks.driver import UI, Match, Move, T
from harness.phoneworld.tasks.flows import (
    CALENDAR,
    CLOCK,
    NOTES,
    SHOP,
    add_alarm,
    add_event,
    new_note,
    open_app,
    rich_wallet,
    rid,
)
from harness.phoneworld.tasks.heldout.ho_apps import same
from harness.phoneworld.tasks.heldout.ho_more import WALLET, Pick, _Held, _nth

# --- clock ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Span:
    hours: int
    minutes: int


class HoClockTimerHourMinutes(_Held):
    id = "HoClockTimerHourMinutes"
    apps = (CLOCK,)

    def params(self, rng: random.Random) -> Span:
        return Span(1, rng.choice((10, 15, 30, 45)))

    def perturb(self, p: Span, rng: random.Random) -> Span:
        return Span(0, p.minutes)  # the minutes without the hour

    def instruction(self, p: Span) -> Text:
        return Text("Start a timer for {hours} hour and {minutes} minutes.").format(hours=p.hours, minutes=p.minutes)

    def setup(self, world: Any, p: Span) -> None:
        pass

    def is_successful(self, world: Any, p: Span) -> bool:
        c = world.deskclock
        return c.timer_started_ms is not None and c.timer_seconds == (p.hours * 60 + p.minutes) * 60

    def solve(self, ui: UI, p: Span) -> Iterator[Move]:
        yield from open_app(ui, CLOCK)
        yield from ui.tap(rid(CLOCK, "tab_timer"), T("Open the Timer tab."))
        yield from ui.type_into(rid(CLOCK, "timer_minutes"), str(p.hours * 60 + p.minutes),
                                T("Enter the length in minutes."))
        yield from ui.tap(rid(CLOCK, "timer_start"), T("Start the timer."))


@dataclass(frozen=True)
class Labelled:
    time: str
    label: Text


class HoClockAlarmWithLabel(_Held):
    id = "HoClockAlarmWithLabel"
    apps = (CLOCK,)
    LABELS = (Text("Pills"), Text("Bus"), Text("Call Mum"))

    def params(self, rng: random.Random) -> Labelled:
        return Labelled(f"{rng.choice((5, 6, 7, 19, 20))}:{rng.choice((5, 20, 35, 50)):02d}", rng.choice(self.LABELS))

    def perturb(self, p: Labelled, rng: random.Random) -> Labelled:
        return Labelled(p.time, next(x for x in self.LABELS if x != p.label))  # the right time, the wrong label

    def may_change(self, params: Any) -> tuple[str, ...]:
        return ("+" + at("deskclock.alarms"),)

    def instruction(self, p: Labelled) -> Text:
        return Text("Add an alarm at {time} called “{label}”.").format(time=p.time, label=p.label)

    def setup(self, world: Any, p: Labelled) -> None:
        pass

    def is_successful(self, world: Any, p: Labelled) -> bool:
        start = set(world.start_state["deskclock"]["alarms"])
        new = [a for a in world.deskclock.alarms if a.id not in start]
        h, m = p.time.split(":")
        return len(new) == 1 and new[0].time == f"{int(h):02d}:{m}" and same(new[0].label, p.label)

    def solve(self, ui: UI, p: Labelled) -> Iterator[Move]:
        yield from add_alarm(ui, p.time, ui.say(p.label))


class HoClockDeleteAlarm(_Held):
    id = "HoClockDeleteAlarm"
    apps = (CLOCK,)

    def params(self, rng: random.Random) -> Pick:
        return Pick(rng.randrange(3))

    def perturb(self, p: Pick, rng: random.Random) -> Pick:
        return Pick((p.index + 1) % 3)

    def instruction(self, p: Pick) -> Text:
        en, zh = _nth(p.index)
        return Text("Delete the {en} alarm in my clock.").format(en=Text(str(en), str(zh)))

    def setup(self, world: Any, p: Pick) -> None:
        from harness.phoneworld.apps.clock import Alarm

        alarms = world.deskclock.alarms
        for i, (time, label) in enumerate((("10:10", Text("Tea")), ("12:40", Text("Lunch")),
                                           ("21:00", Text("Bed")))):
            if len(alarms) < 3:
                alarms.append(Alarm(f"a7{i}", time, label.get(world.language)))

    def is_successful(self, world: Any, p: Pick) -> bool:
        start = list(world.start_state["deskclock"]["alarms"])
        return [a.id for a in world.deskclock.alarms] == [k for i, k in enumerate(start) if i != p.index]

    def solve(self, ui: UI, p: Pick) -> Iterator[Move]:
        yield from open_app(ui, CLOCK)
        yield from ui.tap(ui.find_all(rid(CLOCK, "delete"))[p.index], T("Delete this alarm."))


# --- notes ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Merge:
    title: Text


class HoNotesMerge(_Held):
    id = "HoNotesMerge"
    apps = (NOTES,)
    TITLES = (Text("All together"), Text("Combined"), Text("Both notes"))

    def params(self, rng: random.Random) -> Merge:
        return Merge(rng.choice(self.TITLES))

    def perturb(self, p: Merge, rng: random.Random) -> Merge:
        return Merge(next(t for t in self.TITLES if t != p.title))

    def may_change(self, params: Any) -> tuple[str, ...]:
        return ("+" + at("notes.notes"),)

    def instruction(self, p: Merge) -> Text:
        return Text("Make a new note called “{title}” holding the text of my first two notes.").format(title=p.title)

    def setup(self, world: Any, p: Merge) -> None:
        pass

    def is_successful(self, world: Any, p: Merge) -> bool:
        start = list(world.start_state["notes"]["notes"].values())
        new = [n for n in world.notes.notes if n.id not in {s["id"] for s in start}]
        squash = lambda s: "".join(s.split())  # noqa: E731 - spaces and line breaks may differ
        return (len(new) == 1 and same(new[0].title, p.title)
                and all(squash(s["body"]) in squash(new[0].body) for s in start[:2]))

    def solve(self, ui: UI, p: Merge) -> Iterator[Move]:
        bodies = [n.body for n in ui.world.notes.notes[:2]] if ui.world is not None else []
        yield from open_app(ui, NOTES)  # the oracle reads the two notes' text from the phone's state
        yield from new_note(ui, ui.say(p.title), " ".join(bodies))


# --- calendar ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Visit:
    title: Text
    place: Text
    days: int


class HoCalendarAddWithPlace(_Held):
    id = "HoCalendarAddWithPlace"
    apps = (CALENDAR,)
    VISITS = ((Text("Blood test"), Text("City Hospital")),
              (Text("Choir"), Text("Community Centre")))

    def params(self, rng: random.Random) -> Visit:
        title, place = rng.choice(self.VISITS)
        return Visit(title, place, rng.choice((1, 3)))

    def perturb(self, p: Visit, rng: random.Random) -> Visit:
        return replace(p, place=next(v[1] for v in self.VISITS if v[1] != p.place))  # the wrong place

    def may_change(self, params: Any) -> tuple[str, ...]:
        return ("+" + at("calendar.events"),)

    def instruction(self, p: Visit) -> Text:
        when = ("tomorrow", "明天") if p.days == 1 else ("in three days", "三天后")
        return Text("Add “{title}” at {place} {when} at 10:00 to my calendar.").format(title=p.title, place=p.place, when=Text(str(when[0]), str(when[1])))

    def setup(self, world: Any, p: Visit) -> None:
        pass

    def is_successful(self, world: Any, p: Visit) -> bool:
        import datetime as dt

        start = set(world.start_state["calendar"]["events"])
        new = [e for e in world.calendar.events if e.id not in start]
        day = (world.now.date() + dt.timedelta(days=p.days)).isoformat()
        return (len(new) == 1 and text_matches(new[0].title, p.title) and text_matches(new[0].location, p.place)
                and new[0].date == day and new[0].time == "10:00")

    def solve(self, ui: UI, p: Visit) -> Iterator[Move]:
        import datetime as dt

        day = (ui.world.now.date() + dt.timedelta(days=p.days)).isoformat() if ui.world is not None else ""
        yield from add_event(ui, ui.say(p.title), day, "10:00", location=ui.say(p.place))


# --- MobileWorld: stop at the payment page ---------------------------------------------------------------


@dataclass(frozen=True)
class Order:
    product: int
    recipient: Person
    address: Text


ADDRESSES = (Text("8 Garden Road"), Text("21 River Street"))


class HoShopStopAtPayment(_Held):
    """Go as far as the payment page and hand over: submitted, never paid."""

    id = "HoShopStopAtPayment"
    category = TaskCategory.CROSS_APP
    apps = (SHOP, WALLET)
    max_steps: ClassVar[int] = 30

    def params(self, rng: random.Random) -> Order:
        from harness.phoneworld.apps.shop import CATALOGUE

        return Order(rng.randrange(len(CATALOGUE)), content.person(rng), rng.choice(ADDRESSES))

    def perturb(self, p: Order, rng: random.Random) -> Order:
        from harness.phoneworld.apps.shop import CATALOGUE

        return replace(p, product=(p.product + 1) % len(CATALOGUE))  # the wrong product

    def may_change(self, params: Any) -> tuple[str, ...]:
        return ("shop.cart*",)  # no order, no payment

    def _name(self, p: Order) -> Text:
        from harness.phoneworld.apps.shop import CATALOGUE

        return CATALOGUE[p.product][0]

    def instruction(self, p: Order) -> Text:
        n = self._name(p)
        return Text("Order “{n}” from the Shop for {name}, {address}. Stop at the payment page: I'll pay myself.").format(n=n, name=p.recipient.name, address=p.address)

    def setup(self, world: Any, p: Order) -> None:
        world.shop.cart.clear()
        rich_wallet(world)

    def is_successful(self, world: Any, p: Order) -> bool:
        pending = world.wallet.pending
        product = world.shop.products[p.product]
        lines = [(c.product, c.qty) for c in world.shop.cart]
        return (pending is not None and abs(pending.amount - product.price) < 0.005 and lines == [(product.id, 1)]
                and not world.shop.orders and len(world.wallet.transactions) == len(world.start_state["wallet"]["transactions"]))

    def solve(self, ui: UI, p: Order) -> Iterator[Move]:
        name = ui.say(self._name(p))
        yield from open_app(ui, SHOP)
        yield from ui.type_into(rid(SHOP, "search"), name, T("Search for {name}.").format(name=name))
        yield from ui.hide_keyboard()
        yield from ui.tap(Match(rid="android:id/title", text=name), T("Open {name}.").format(name=name))
        yield from ui.tap(rid(SHOP, "buy_now"), T("Tap 'Buy now'."))
        yield from ui.type_into(rid(SHOP, "name"), ui.say(p.recipient.name), T("Enter the recipient."))
        yield from ui.type_into(rid(SHOP, "address"), ui.say(p.address), T("Enter the address."))
        yield from ui.hide_keyboard()
        yield from ui.tap(rid(SHOP, "pay"), T("Tap Pay, then hand over at the payment page."))


TASKS = (
    HoClockTimerHourMinutes(), HoClockAlarmWithLabel(), HoClockDeleteAlarm(), HoNotesMerge(), HoCalendarAddWithPlace(),
    HoShopStopAtPayment(),
)
