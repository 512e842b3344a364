"""Held-out tasks in Phone, Messages, Contacts, Calendar, Notes and Clock, ported by structure from
AndroidWorld's single-app families (android_world/task_evals/single/: phone.py PhoneRedialNumber,
PhoneReturnMissedCall, PhoneCallTextSender; sms.py SimpleSmsReply, SimpleSmsResend; contacts.py
ContactsNewContactDraft; calendar/calendar.py add-on-a-relative-day and delete-events-on-a-day;
markor.py MarkorEditNote; clock.py alarms). Wording, people and content are our own.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from assistant_core.i18n import Text
from assistant_core.types import Action
from harness.phoneworld.sideeffects import at
from harness.phoneworld.tasks import content
from harness.phoneworld.tasks.base import Task, TaskCategory
from harness.phoneworld.tasks.content import Person, digits, text_matches
from harness.phoneworld.tasks.driver import UI, Match, Move, T
from harness.phoneworld.tasks.flows import (
    CALENDAR,
    CLOCK,
    MESSAGES,
    NOTES,
    PHONE,
    add_event,
    crowd_contacts,
    open_app,
    open_contact,
    put_contact,
    rid,
)

REPLIES = (Text("On my way"), Text("See you at six"), Text("Thank you, got it"),
           Text("I will call you tonight"))


class _Held(Task):
    category: ClassVar[TaskCategory] = TaskCategory.SINGLE_APP
    heldout: ClassVar[bool] = True
    max_steps: ClassVar[int] = 25


@dataclass(frozen=True)
class Pair:
    target: Person
    decoy: Person


def _pair(rng: random.Random) -> Pair:
    a, b = content.people(rng, 2)
    return Pair(a, b)


def _record(world: Any, person: Person, outgoing: bool, when: str) -> None:
    from harness.phoneworld.apps.phone import CallRecord

    world.phone.calls.append(CallRecord(person.phone, person.name.get(world.language), outgoing, when))


def _new_calls(world: Any) -> list[Any]:
    return world.phone.calls[len(world.start_state["phone"]["calls"]):]


# --- Phone --------------------------------------------------------------------------------------------


class _CallBack(_Held):
    apps = (PHONE,)

    def params(self, rng: random.Random) -> Pair:
        return _pair(rng)

    def perturb(self, p: Pair, rng: random.Random) -> Pair:
        return Pair(p.decoy, p.target)  # the right action, the other person

    def may_change(self, params: Any) -> tuple[str, ...]:
        return ("+" + at("phone.calls"),)

    def is_successful(self, world: Any, p: Pair) -> bool:
        new = _new_calls(world)
        return len(new) == 1 and new[0].outgoing and digits(new[0].number) == digits(p.target.phone)

    def solve(self, ui: UI, p: Pair) -> Iterator[Move]:
        yield from open_app(ui, PHONE)
        yield from ui.tap(rid(PHONE, "call_log"), T("Open the call history."))
        yield from ui.tap(Match(text=ui.say(p.target.name)), T("Call the newest entry back."))


class HoPhoneRedial(_CallBack):
    id = "HoPhoneRedial"

    def instruction(self, p: Pair) -> Text:
        return Text("Ring the last person I called once more.")

    def setup(self, world: Any, p: Pair) -> None:
        crowd_contacts(world)
        put_contact(world, p.target)
        put_contact(world, p.decoy)
        _record(world, p.decoy, True, "07:40")
        _record(world, p.target, True, "08:05")


class HoPhoneReturnMissedCall(_CallBack):
    id = "HoPhoneReturnMissedCall"

    def instruction(self, p: Pair) -> Text:
        return Text("Someone just tried to call me; call them back.")

    def setup(self, world: Any, p: Pair) -> None:
        crowd_contacts(world)
        put_contact(world, p.target)
        put_contact(world, p.decoy)
        _record(world, p.decoy, True, "07:40")
        _record(world, p.target, False, "08:05")


class HoPhoneCallTextSender(_CallBack):
    id = "HoPhoneCallTextSender"
    apps = (PHONE, MESSAGES)

    def instruction(self, p: Pair) -> Text:
        return Text("Phone whoever sent me the newest text.")

    def setup(self, world: Any, p: Pair) -> None:
        from harness.phoneworld.apps.messages import Sms, SmsThread

        crowd_contacts(world)
        put_contact(world, p.target)
        put_contact(world, p.decoy)
        state = world.messages
        state.threads = [t for t in state.threads if digits(t.number) not in (digits(p.target.phone), digits(p.decoy.phone))]
        state.threads.insert(0, SmsThread(p.decoy.phone, [Sms("OK", False, "07:10")]))
        state.threads.insert(0, SmsThread(p.target.phone, [Sms(Text("Please ring me").get(world.language),
                                                                    False, "08:00")]))

    def solve(self, ui: UI, p: Pair) -> Iterator[Move]:
        yield from open_app(ui, MESSAGES)  # the newest conversation is the sender's
        yield from ui.home()
        yield from open_contact(ui, p.target.name)
        yield from ui.tap(rid(PHONE, "call_button"), T("Tap Call."))


# --- Messages -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reply:
    target: Person
    decoy: Person
    body: Text


class _SmsThreadTask(_Held):
    apps = (MESSAGES,)

    def params(self, rng: random.Random) -> Reply:
        a, b = content.people(rng, 2)
        return Reply(a, b, rng.choice(REPLIES))

    def perturb(self, p: Reply, rng: random.Random) -> Reply:
        return Reply(p.decoy, p.target, p.body)  # the right words to the other person

    def may_change(self, p: Reply) -> tuple[str, ...]:
        return ("+" + at("messages.threads", p.target.phone) + "*",)

    def _threads(self, world: Any, p: Reply, last_out: str) -> None:
        from harness.phoneworld.apps.messages import Sms, SmsThread

        put_contact(world, p.target)
        put_contact(world, p.decoy)
        lang = world.language
        state = world.messages
        state.threads = [t for t in state.threads if digits(t.number) not in (digits(p.target.phone), digits(p.decoy.phone))]
        state.threads.insert(0, SmsThread(p.decoy.phone, [Sms(Text("Are you coming?").get(lang), False, "07:30")]))
        msgs = [Sms(last_out, True, "07:50")] if last_out else []
        msgs.append(Sms(Text("Are you coming?").get(lang), False, "08:00"))
        state.threads.insert(0, SmsThread(p.target.phone, msgs))

    def open_thread(self, ui: UI, p: Reply) -> Iterator[Move]:
        yield from open_app(ui, MESSAGES)
        yield from ui.tap(Match(text=ui.say(p.target.name)),
                          T("Open the conversation with {name}.").format(name=p.target.name))


class HoSmsReply(_SmsThreadTask):
    id = "HoSmsReply"

    def instruction(self, p: Reply) -> Text:
        return Text("Answer {name}'s text with “{body}”.").format(name=p.target.name, body=p.body)

    def setup(self, world: Any, p: Reply) -> None:
        self._threads(world, p, "")

    def is_successful(self, world: Any, p: Reply) -> bool:
        t = world.apps[MESSAGES].thread(p.target.phone)
        return t is not None and t.messages[-1].outgoing and text_matches(t.messages[-1].text, p.body)

    def solve(self, ui: UI, p: Reply) -> Iterator[Move]:
        yield from self.open_thread(ui, p)
        yield from ui.type_into(rid(MESSAGES, "compose_message_text"), ui.say(p.body), T("Type the reply."))
        yield from ui.tap(rid(MESSAGES, "send_message_button"), T("Send it."))


class HoSmsResend(_SmsThreadTask):
    id = "HoSmsResend"

    def instruction(self, p: Reply) -> Text:
        return Text("{name} didn't get my last text; send the same words again.").format(name=p.target.name)

    def setup(self, world: Any, p: Reply) -> None:
        self._threads(world, p, p.body.get(world.language))

    def is_successful(self, world: Any, p: Reply) -> bool:
        t = world.apps[MESSAGES].thread(p.target.phone)
        out = [m for m in t.messages if m.outgoing] if t else []
        return len(out) == 2 and t.messages[-1].outgoing and out[0].text == out[1].text

    def solve(self, ui: UI, p: Reply) -> Iterator[Move]:
        yield from self.open_thread(ui, p)
        mine = [e.text for e in ui.find_all(rid(MESSAGES, "message_text"))]
        words = mine[0] if mine else ui.say(p.body)
        yield from ui.type_into(rid(MESSAGES, "compose_message_text"), words, T("Type the same words."))
        yield from ui.tap(rid(MESSAGES, "send_message_button"), T("Send it."))


# --- Contacts: a form filled in but not saved -----------------------------------------------------------


@dataclass(frozen=True)
class NewPerson:
    person: Person


class HoContactDraftNotSaved(_Held):
    id = "HoContactDraftNotSaved"
    apps = (PHONE,)

    def params(self, rng: random.Random) -> NewPerson:
        return NewPerson(content.person(rng))

    def perturb(self, p: NewPerson, rng: random.Random) -> NewPerson:
        return NewPerson(replace(p.person, phone=content.other_phone(rng, p.person.phone)))  # right name, wrong number

    def may_change(self, p: NewPerson) -> tuple[str, ...]:
        return ()  # nothing may be saved

    def instruction(self, p: NewPerson) -> Text:
        return Text("Start a new contact for {name}, number {phone}, but leave it unsaved so I can check it.").format(name=p.person.name, phone=p.person.phone)

    def setup(self, world: Any, p: NewPerson) -> None:
        world.phone.contacts = [c for c in world.phone.contacts if c.name.en != p.person.name.en]

    def is_successful(self, world: Any, p: NewPerson) -> bool:
        s = world.phone
        return (world.foreground[0] == PHONE and world.route_of(PHONE).screen == "add"
                and s.draft_name.strip() in (p.person.name.en, p.person.name.zh)
                and digits(s.draft_phone) == digits(p.person.phone)
                and len(s.contacts) == len(world.start_state["phone"]["contacts"]))

    def solve(self, ui: UI, p: NewPerson) -> Iterator[Move]:
        yield from open_app(ui, PHONE)
        yield from ui.tap(rid(PHONE, "add_contact"), T("Tap Add contact."))
        yield from ui.type_into(rid(PHONE, "name_field"), ui.say(p.person.name), T("Type the name."))
        yield from ui.type_into(rid(PHONE, "phone_field"), p.person.phone, T("Type the number."))


# --- Calendar -----------------------------------------------------------------------------------------

EVENTS = (Text("Eye test"), Text("Tea with Grace"), Text("Pay rent"),
          Text("Piano lesson"))


@dataclass(frozen=True)
class Relative:
    title: Text
    days: int
    time: str


def _day(world: Any, days: int) -> str:
    return (world.now.date() + dt.timedelta(days=days)).isoformat()


class HoCalendarAddRelativeDay(_Held):
    id = "HoCalendarAddRelativeDay"
    apps = (CALENDAR,)

    def params(self, rng: random.Random) -> Relative:
        return Relative(rng.choice(EVENTS), rng.choice((1, 2, 7)), rng.choice(("09:30", "14:00", "16:45")))

    def perturb(self, p: Relative, rng: random.Random) -> Relative:
        return Relative(p.title, {1: 2, 2: 1, 7: 1}[p.days], p.time)  # the right event on the wrong day

    def may_change(self, p: Relative) -> tuple[str, ...]:
        return ("+" + at("calendar.events"),)

    def instruction(self, p: Relative) -> Text:
        when = {1: ("tomorrow", "明天"), 2: ("the day after tomorrow", "后天"), 7: ("a week from today", "下周的今天")}[p.days]
        return Text("Put “{title}” in my calendar {when} at {time}.").format(title=p.title, when=Text(str(when[0]), str(when[1])), time=p.time)

    def setup(self, world: Any, p: Relative) -> None:
        pass

    def is_successful(self, world: Any, p: Relative) -> bool:
        start = set(world.start_state["calendar"]["events"])
        new = [e for e in world.calendar.events if e.id not in start]
        return (len(new) == 1 and text_matches(new[0].title, p.title) and new[0].date == _day(world, p.days)
                and new[0].time == p.time)

    def solve(self, ui: UI, p: Relative) -> Iterator[Move]:
        date = (ui.world.now.date() + dt.timedelta(days=p.days)).isoformat() if ui.world is not None else ""
        yield from add_event(ui, ui.say(p.title), date, p.time)


@dataclass(frozen=True)
class DayParams:
    days: int


class HoCalendarClearDay(_Held):
    id = "HoCalendarClearDay"
    apps = (CALENDAR,)

    def params(self, rng: random.Random) -> DayParams:
        return DayParams(rng.choice((1, 2)))

    def perturb(self, p: DayParams, rng: random.Random) -> DayParams:
        return DayParams(3 - p.days)  # the other day

    def instruction(self, p: DayParams) -> Text:
        when = ("tomorrow", "明天") if p.days == 1 else ("the day after tomorrow", "后天")
        return Text("Cancel everything in my calendar for {when}.").format(when=Text(str(when[0]), str(when[1])))

    def setup(self, world: Any, p: DayParams) -> None:
        from harness.phoneworld.apps.calendar import Event

        lang = world.language
        for d in (1, 2):
            for i, (title, time) in enumerate(((EVENTS[d], "10:00"), (EVENTS[d + 1], "15:30"))):
                world.calendar.events.append(Event(f"h{d}{i}", title.get(lang), _day(world, d), time))

    def is_successful(self, world: Any, p: DayParams) -> bool:
        day = _day(world, p.days)
        left = {e.id for e in world.calendar.events}
        start = world.start_state["calendar"]["events"]
        return left == {k for k, e in start.items() if e["date"] != day}

    def solve(self, ui: UI, p: DayParams) -> Iterator[Move]:
        yield from open_app(ui, CALENDAR)
        for _ in range(p.days):
            yield from ui.tap(rid(CALENDAR, "next_day"), T("Go to the next day."))
        for _ in range(6):
            if not ui.find_all(rid(CALENDAR, "event_title")):
                return
            yield from ui.tap(rid(CALENDAR, "event_title"), T("Open the event.", ctx="harness.phoneworld.tasks.heldout.ho_comms"))
            yield from ui.tap(rid(CALENDAR, "delete"), T("Delete it."))


# --- Notes --------------------------------------------------------------------------------------------

LINES = (Text("Bring the umbrella"), Text("Ask about parking"), Text("Call Mum first"))


@dataclass(frozen=True)
class Append:
    index: int
    line: Text


class HoNotesAppendLine(_Held):
    id = "HoNotesAppendLine"
    apps = (NOTES,)

    def params(self, rng: random.Random) -> Append:
        return Append(rng.randrange(3), rng.choice(LINES))

    def perturb(self, p: Append, rng: random.Random) -> Append:
        return Append((p.index + 1) % 3, p.line)  # the right line in the wrong note

    def instruction(self, p: Append) -> Text:
        n = ("first", "second", "third")[p.index]
        return Text("At the end of my {n} note, add a new line: “{line}”.").format(n=Text(str(n), str('一二三'[p.index])), line=p.line)

    def setup(self, world: Any, p: Append) -> None:
        pass

    def is_successful(self, world: Any, p: Append) -> bool:
        start = list(world.start_state["notes"]["notes"].values())
        now = world.notes.notes
        if [n.id for n in now] != [s["id"] for s in start]:
            return False
        target = now[p.index]
        ok = target.body.rstrip().split("\n")[-1].strip() in (p.line.en, p.line.zh)
        kept = target.body.startswith(start[p.index]["body"])
        return ok and kept and all(n.body == s["body"] for i, (n, s) in enumerate(zip(now, start, strict=True)) if i != p.index)

    def solve(self, ui: UI, p: Append) -> Iterator[Move]:
        yield from open_app(ui, NOTES)
        yield from ui.tap(ui.find_all(rid(NOTES, "note_item"))[p.index], T("Open the note.", ctx="harness.phoneworld.tasks.heldout.ho_comms"))
        body = ui.need(rid(NOTES, "note_body"))
        if not body.focused:
            yield from ui.tap(body, T("Tap the note's text."))
        yield from ui.press("enter", T("Start a new line at the end."))
        yield Move(Action.type_text(ui.say(p.line)), T("Type the line."))
        yield from ui.tap(rid(NOTES, "save"), T("Save it."))


# --- Clock --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Nothing:
    pass


class HoClockAllAlarmsOff(_Held):
    id = "HoClockAllAlarmsOff"
    apps = (CLOCK,)

    def params(self, rng: random.Random) -> Nothing:
        return Nothing()

    def perturb(self, p: Nothing, rng: random.Random) -> None:
        return None

    def may_change(self, p: Nothing) -> tuple[str, ...]:
        return (at("deskclock.alarms") + ".enabled",)

    def instruction(self, p: Nothing) -> Text:
        return Text("I'm on holiday: switch off every alarm, but keep them.")

    def setup(self, world: Any, p: Nothing) -> None:
        for a in world.deskclock.alarms:
            a.enabled = True

    def is_successful(self, world: Any, p: Nothing) -> bool:
        alarms = world.deskclock.alarms
        return len(alarms) == len(world.start_state["deskclock"]["alarms"]) and not any(a.enabled for a in alarms)

    def solve(self, ui: UI, p: Nothing) -> Iterator[Move]:
        yield from open_app(ui, CLOCK)
        for _ in range(8):
            on = [e for e in ui.find_all(rid(CLOCK, "onoff")) if e.checked]
            if not on:
                return
            yield from ui.tap(on[0], T("Switch this alarm off."))


TASKS = (
    HoPhoneRedial(), HoPhoneReturnMissedCall(), HoPhoneCallTextSender(), HoSmsReply(), HoSmsResend(),
    HoContactDraftNotSaved(), HoCalendarAddRelativeDay(), HoCalendarClearDay(), HoNotesAppendLine(),
    HoClockAllAlarmsOff(),
)
