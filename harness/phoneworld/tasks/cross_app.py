"""Cross-app tasks: information carried from one app into another (a meeting time from a mail into the
calendar, a contact's number into a text, a photo from the gallery into a message, text copied from a
message and pasted into a new note...).

Each verifier checks the destination app's state for the carried value itself (the time, the number,
the photo's reference, the copied text), so doing the destination half with made-up content fails.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from assistant_core.i18n import Text
from harness.phoneworld.tasks import content
from harness.phoneworld.tasks.base import Task, TaskCategory
from harness.phoneworld.tasks.content import Person, digits, text_contains, text_matches
from harness.phoneworld.tasks.driver import UI, Match, Move, T
from harness.phoneworld.tasks.flows import (
    CALENDAR,
    CLOCK,
    MAIL,
    MESSAGES,
    NOTES,
    PHONE,
    add_alarm,
    add_contact,
    add_event,
    compose_mail,
    copy_text,
    new_note,
    open_app,
    open_contact,
    open_mail,
    put_contact,
    rid,
    send_sms,
)
from harness.phoneworld.tasks.single_apps import (
    EventParams,
    event_params,
    other_time,
)


class CrossAppTask(Task):
    category: ClassVar[TaskCategory] = TaskCategory.CROSS_APP
    max_steps: ClassVar[int] = 30


def put_thread(world: Any, number: str, text: str, time: str = "08:30") -> None:
    """Add an incoming text from `number` at the top of Messages."""
    from harness.phoneworld.apps.messages import Sms, SmsThread

    msgs = world.messages
    msgs.threads = [t for t in msgs.threads if digits(t.number) != digits(number)]
    msgs.threads.insert(0, SmsThread(number, [Sms(text, False, time)]))


def put_mail(world: Any, *, sender: str, address: str, subject: str, body: str, mid: str = "task0", **extra: Any) -> None:
    """Add an unread mail at the top of the inbox."""
    from harness.phoneworld.apps.mail import Mail

    mail = world.email
    mail.mails = [m for m in mail.mails if m.id != mid]
    mail.mails.append(Mail(mid, sender, address, subject, body, "09:10", **extra))


def open_thread(ui: UI, who: str) -> Iterator[Move]:
    yield from open_app(ui, MESSAGES)
    yield from ui.scroll_tap(
        Match(rid="android:id/title", text=who), T("Open the conversation with {who}.").format(who=who),
        within=rid(MESSAGES, "conversation_list"),
    )


def sms_with(world: Any, number: str) -> list[str]:
    return world.apps[MESSAGES].sent_to(number)


# --- Mail -> Calendar ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MeetingParams:
    meeting: EventParams
    room: int
    boss: Person


class MailMeetingToCalendar(CrossAppTask):
    """The invitation mail holds the date and time; the instruction does not."""

    id = "MailMeetingToCalendar"
    apps = (MAIL, CALENDAR)
    TITLE: ClassVar[Text] = Text("Project review")

    def params(self, rng: random.Random) -> MeetingParams:
        ev = event_params(rng)
        return MeetingParams(replace(ev, title=self.TITLE), rng.randint(101, 420), content.person(rng))

    def perturb(self, params: MeetingParams, rng: random.Random) -> MeetingParams:
        return replace(params, meeting=replace(params.meeting, time=other_time(rng, params.meeting.time)))

    def instruction(self, params: MeetingParams) -> Text:
        return Text("Check the meeting invitation in my mail and put the meeting in my calendar as 'Project review'.")

    def setup(self, world: Any, params: MeetingParams) -> None:
        from harness.phoneworld.apps.mail import INVITE_BODY, INVITE_SUBJECT

        inv = world.apps[MAIL].invitation()
        who = world.text(params.boss.name)
        inv.sender, inv.address = who, params.boss.email
        inv.subject = world.text(INVITE_SUBJECT)
        inv.meeting_date, inv.meeting_time = params.meeting.date, params.meeting.time
        inv.body = world.text(INVITE_BODY, date=params.meeting.date, time=params.meeting.time, room=params.room, who=who)
        inv.read = False
        world.calendar.events = [e for e in world.calendar.events if e.date != params.meeting.date]

    def is_successful(self, world: Any, params: MeetingParams) -> bool:
        m = params.meeting
        return any(e.date == m.date and e.time == m.time and text_contains(e.title, self.TITLE) for e in world.calendar.events)

    def solve(self, ui: UI, params: MeetingParams) -> Iterator[Move]:
        from harness.phoneworld.apps.mail import INVITE_SUBJECT

        yield from open_mail(ui, ui.say(INVITE_SUBJECT))
        ui.need(rid(MAIL, "body"))  # the invitation's text holds the date and time (the params know them)
        yield from ui.home()
        yield from add_event(ui, ui.say(self.TITLE), params.meeting.date, params.meeting.time)


# --- Contacts -> Messages -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ForwardNumberParams:
    about: Person  # whose number is sent
    to: Person  # who receives it


class TwoPeopleTask(CrossAppTask):
    """About two people; the wrong run swaps their roles."""

    def params(self, rng: random.Random) -> ForwardNumberParams:
        a, b = content.people(rng, 2)
        return ForwardNumberParams(a, b)

    def perturb(self, params: ForwardNumberParams, rng: random.Random) -> ForwardNumberParams:
        return ForwardNumberParams(params.to, params.about)


class ContactsNumberToMessage(TwoPeopleTask):
    id = "ContactsNumberToMessage"
    apps = (PHONE, MESSAGES)

    def instruction(self, params: ForwardNumberParams) -> Text:
        a, b = params.about.name, params.to.name
        return Text("Text {b} the phone number of {a}.").format(b=b, a=a)

    def setup(self, world: Any, params: ForwardNumberParams) -> None:
        put_contact(world, params.about)
        put_contact(world, params.to)

    def is_successful(self, world: Any, params: ForwardNumberParams) -> bool:
        want = digits(params.about.phone)
        return any(want in digits(t) for t in sms_with(world, params.to.phone))

    def solve(self, ui: UI, params: ForwardNumberParams) -> Iterator[Move]:
        yield from open_contact(ui, params.about.name)
        number = ui.need(rid(PHONE, "phone_number")).text
        yield from ui.home()
        yield from send_sms(ui, ui.say(params.to.name), number, who=params.to.name)


class ContactsEmailToMail(TwoPeopleTask):
    """Mail someone whose address is only in the contact card (`about`; `to` is a decoy contact)."""

    id = "ContactsEmailToMail"
    apps = (PHONE, MAIL)

    SUBJECT: ClassVar[Text] = Text("Photos from the trip")

    def instruction(self, params: ForwardNumberParams) -> Text:
        n = params.about.name
        return Text("Look up {n}'s email address in Contacts and send them a mail with the subject '{subject}'.").format(n=n, subject=self.SUBJECT)

    def setup(self, world: Any, params: ForwardNumberParams) -> None:
        put_contact(world, params.about)
        put_contact(world, params.to)

    def is_successful(self, world: Any, params: ForwardNumberParams) -> bool:
        return any(
            m.to == params.about.email and text_matches(m.subject, self.SUBJECT) for m in world.apps[MAIL].sent()
        )

    def solve(self, ui: UI, params: ForwardNumberParams) -> Iterator[Move]:
        yield from open_contact(ui, params.about.name)
        address = ui.need(rid(PHONE, "email")).text
        yield from ui.home()
        yield from compose_mail(ui, address, ui.say(self.SUBJECT), "")


# --- Mail -> Contacts -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NewNumberParams:
    person: Person
    decoy_number: str  # an old number the mail also mentions


class MailNumberToContacts(CrossAppTask):
    id = "MailNumberToContacts"
    apps = (MAIL, PHONE)
    SUBJECT: ClassVar[Text] = Text("My new phone number")

    def params(self, rng: random.Random) -> NewNumberParams:
        p = content.person(rng)
        return NewNumberParams(p, content.other_phone(rng, p.phone))

    def perturb(self, params: NewNumberParams, rng: random.Random) -> NewNumberParams:
        return NewNumberParams(replace(params.person, phone=params.decoy_number), params.person.phone)

    def instruction(self, params: NewNumberParams) -> Text:
        n = params.person.name
        return Text("{n} mailed me a new phone number. Save {n} as a new contact with that number.").format(n=n)

    def setup(self, world: Any, params: NewNumberParams) -> None:
        p = params.person
        world.phone.contacts = [c for c in world.phone.contacts if c.name.en != p.name.en]
        body = Text("Hi! My old number {decoy_number} no longer works. My new number is {phone}.\n{name}").format(decoy_number=params.decoy_number, phone=p.phone, name=p.name)
        put_mail(world, sender=world.text(p.name), address=p.email, subject=world.text(self.SUBJECT), body=world.text(body))

    def is_successful(self, world: Any, params: NewNumberParams) -> bool:
        p = params.person
        return any(text_matches(c.name.en, p.name) and digits(c.phone) == digits(p.phone) for c in world.phone.contacts)

    def solve(self, ui: UI, params: NewNumberParams) -> Iterator[Move]:
        yield from open_mail(ui, ui.say(self.SUBJECT))
        ui.need(rid(MAIL, "body"))  # names the old number first, then the new one
        yield from ui.home()
        yield from add_contact(ui, ui.say(params.person.name), params.person.phone)


# --- Messages -> Notes / Clock / Calendar --------------------------------------------------------------------


@dataclass(frozen=True)
class CopyParams:
    sender: Person
    text: Text
    title: Text


ADDRESSES = (
    Text("Room 1204, 88 Garden Road"),
    Text("Gate 3, North Station, platform 7"),
    Text("Wi-Fi password: sunflower-2026"),
    Text("Locker 56, code 4471"),
)


class _CopyToNoteTask(CrossAppTask):
    """Copy a text into a new note with a title; the wrong run uses another title."""

    def params(self, rng: random.Random) -> CopyParams:
        return CopyParams(content.person(rng), rng.choice(ADDRESSES), rng.choice(content.NOTE_TITLES))

    def perturb(self, params: CopyParams, rng: random.Random) -> CopyParams:
        return replace(params, title=content.other(rng, content.NOTE_TITLES, params.title))

    def is_successful(self, world: Any, params: CopyParams) -> bool:
        return any(
            text_matches(n.title, params.title) and text_contains(n.body, params.text) for n in world.notes.notes
        )


class MessagesTextToNote(_CopyToNoteTask):
    """Copy a text from a conversation (long press, Copy) and paste it into a new note."""

    id = "MessagesTextToNote"
    apps = (MESSAGES, NOTES)

    def instruction(self, params: CopyParams) -> Text:
        n = params.sender.name
        return Text("Copy the text {n} sent me and paste it into a new note titled '{title}'.").format(n=n, title=params.title)

    def setup(self, world: Any, params: CopyParams) -> None:
        put_contact(world, params.sender)
        put_thread(world, params.sender.phone, world.text(params.text))
        world.notes.notes = [n for n in world.notes.notes if not text_matches(n.title, params.title)]

    def solve(self, ui: UI, params: CopyParams) -> Iterator[Move]:
        yield from open_thread(ui, ui.say(params.sender.name))
        yield from copy_text(ui, Match(rid=f"{MESSAGES}:id/message_text"), Text("the message"))
        yield from ui.home()
        yield from new_note(ui, ui.say(params.title), "", paste=True)


class MailTextToNote(_CopyToNoteTask):
    """Copy the body of a mail into a new note."""

    id = "MailTextToNote"
    apps = (MAIL, NOTES)
    SUBJECT: ClassVar[Text] = Text("Where to meet")

    def instruction(self, params: CopyParams) -> Text:
        return Text("Copy the text of the mail '{subject}' into a new note titled '{title}'.").format(subject=self.SUBJECT, title=params.title)

    def setup(self, world: Any, params: CopyParams) -> None:
        put_mail(world, sender=world.text(params.sender.name), address=params.sender.email,
                 subject=world.text(self.SUBJECT), body=world.text(params.text))
        world.notes.notes = [n for n in world.notes.notes if not text_matches(n.title, params.title)]

    def solve(self, ui: UI, params: CopyParams) -> Iterator[Move]:
        yield from open_mail(ui, ui.say(self.SUBJECT))
        yield from copy_text(ui, rid(MAIL, "body"), Text("the mail text"))
        yield from ui.home()
        yield from new_note(ui, ui.say(params.title), "", paste=True)


@dataclass(frozen=True)
class WakeParams:
    sender: Person
    time: str


class MessagesTimeToAlarm(CrossAppTask):
    id = "MessagesTimeToAlarm"
    apps = (MESSAGES, CLOCK)

    def params(self, rng: random.Random) -> WakeParams:
        return WakeParams(content.person(rng), f"{rng.randint(5, 7):02d}:{rng.choice((5, 10, 20, 25, 40, 50)):02d}")

    def perturb(self, params: WakeParams, rng: random.Random) -> WakeParams:
        h, m = params.time.split(":")
        return replace(params, time=f"{int(h) + 1:02d}:{m}")

    def instruction(self, params: WakeParams) -> Text:
        n = params.sender.name
        return Text("{n} texted me when the bus leaves tomorrow. Set an alarm for that time.").format(n=n)

    def setup(self, world: Any, params: WakeParams) -> None:
        put_contact(world, params.sender)
        text = Text("The bus leaves at {time} tomorrow, don't be late!").format(time=params.time)
        put_thread(world, params.sender.phone, world.text(text))
        world.deskclock.alarms = [a for a in world.deskclock.alarms if a.time != params.time]

    def is_successful(self, world: Any, params: WakeParams) -> bool:
        return any(a.time == params.time and a.enabled for a in world.deskclock.alarms)

    def solve(self, ui: UI, params: WakeParams) -> Iterator[Move]:
        yield from open_thread(ui, ui.say(params.sender.name))
        ui.need(rid(MESSAGES, "message_text"))  # the text names the time
        yield from ui.home()
        yield from add_alarm(ui, params.time)


@dataclass(frozen=True)
class DinnerParams:
    sender: Person
    event: EventParams


class MessagesInviteToCalendar(CrossAppTask):
    id = "MessagesInviteToCalendar"
    apps = (MESSAGES, CALENDAR)
    TITLE: ClassVar[Text] = Text("Dinner")

    def params(self, rng: random.Random) -> DinnerParams:
        ev = event_params(rng)
        return DinnerParams(content.person(rng), replace(ev, title=self.TITLE, time=f"{rng.randint(18, 20)}:{rng.choice(('00', '30'))}"))

    def perturb(self, params: DinnerParams, rng: random.Random) -> DinnerParams:
        y, m, d = params.event.date.split("-")
        return replace(params, event=replace(params.event, date=f"{y}-{m}-{int(d) % 28 + 1:02d}"))

    def instruction(self, params: DinnerParams) -> Text:
        n = params.sender.name
        return Text("{n} invited me to dinner by text. Add it to my calendar as 'Dinner'.").format(n=n)

    def setup(self, world: Any, params: DinnerParams) -> None:
        put_contact(world, params.sender)
        e = params.event
        text = Text("Dinner at my place on {date} at {time}?").format(date=e.date, time=e.time)
        put_thread(world, params.sender.phone, world.text(text))
        world.calendar.events = [x for x in world.calendar.events if x.date != e.date]

    def is_successful(self, world: Any, params: DinnerParams) -> bool:
        e = params.event
        return any(x.date == e.date and x.time == e.time and text_contains(x.title, self.TITLE) for x in world.calendar.events)

    def solve(self, ui: UI, params: DinnerParams) -> Iterator[Move]:
        yield from open_thread(ui, ui.say(params.sender.name))
        ui.need(rid(MESSAGES, "message_text"))  # the text names the date and time
        yield from ui.home()
        yield from add_event(ui, ui.say(self.TITLE), params.event.date, params.event.time)


# --- Calendar -> Messages ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TellTimeParams:
    to: Person
    title: Text
    time: str
    other_time: str  # a second event today, not the one asked about
    other_title: Text


class CalendarEventToMessage(CrossAppTask):
    id = "CalendarEventToMessage"
    apps = (CALENDAR, MESSAGES)

    def params(self, rng: random.Random) -> TellTimeParams:
        a, b = rng.sample(content.MEETINGS, 2)
        t1, t2 = rng.sample(("09:30", "10:45", "13:15", "14:00", "16:30", "17:45"), 2)
        return TellTimeParams(content.person(rng), a, t1, t2, b)

    def perturb(self, params: TellTimeParams, rng: random.Random) -> TellTimeParams:
        return replace(params, title=params.other_title, time=params.other_time, other_title=params.title,
                       other_time=params.time)

    def instruction(self, params: TellTimeParams) -> Text:
        n, t = params.to.name, params.title
        return Text("Tell {n} by text what time my '{t}' is today.").format(n=n, t=t)

    def setup(self, world: Any, params: TellTimeParams) -> None:
        from harness.phoneworld.apps.calendar import Event

        put_contact(world, params.to)
        today = world.now.date().isoformat()
        cal = world.calendar
        cal.events = [e for e in cal.events if e.date != today]
        cal.events.append(Event("task0", world.text(params.title), today, params.time))
        cal.events.append(Event("task1", world.text(params.other_title), today, params.other_time))

    def is_successful(self, world: Any, params: TellTimeParams) -> bool:
        return any(params.time in t for t in sms_with(world, params.to.phone))

    def solve(self, ui: UI, params: TellTimeParams) -> Iterator[Move]:
        yield from open_app(ui, CALENDAR)
        title = ui.say(params.title)
        yield from ui.tap(Match(text=title), T("Open the event."))
        when = ui.need(rid(CALENDAR, "when")).text
        time = when.split()[-1]
        yield from ui.home()
        body = Text("My {title} is at {time} today.").format(title=params.title, time=time)
        yield from send_sms(ui, ui.say(params.to.name), ui.say(body), who=params.to.name)


# --- Notes -> Mail -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NoteToMailParams:
    to: Person
    title: Text
    body: Text


class NotesToMail(CrossAppTask):
    id = "NotesToMail"
    apps = (NOTES, MAIL)

    def params(self, rng: random.Random) -> NoteToMailParams:
        return NoteToMailParams(content.person(rng), rng.choice(content.NOTE_TITLES), rng.choice(content.NOTE_BODIES))

    def perturb(self, params: NoteToMailParams, rng: random.Random) -> NoteToMailParams:
        return replace(params, to=content.person(rng, exclude=(params.to.name,)))

    def instruction(self, params: NoteToMailParams) -> Text:
        n = params.to
        return Text("Email the text of my note '{title}' to {email}.").format(title=params.title, email=n.email)

    def setup(self, world: Any, params: NoteToMailParams) -> None:
        from harness.phoneworld.apps.notes import Note

        notes = world.notes
        notes.notes = [n for n in notes.notes if not text_matches(n.title, params.title)]
        notes.notes.insert(0, Note("task0", world.text(params.title), world.text(params.body)))

    def is_successful(self, world: Any, params: NoteToMailParams) -> bool:
        return any(m.to == params.to.email and text_contains(m.body, params.body) for m in world.apps[MAIL].sent())

    def solve(self, ui: UI, params: NoteToMailParams) -> Iterator[Move]:
        yield from open_app(ui, NOTES)
        yield from ui.tap(Match(text=ui.say(params.title)), T("Open the note."))
        text = ui.need(rid(NOTES, "note_body")).text
        yield from ui.back()  # leave the editor unchanged
        yield from ui.home()
        yield from compose_mail(ui, params.to.email, ui.say(params.title), text)


TASKS: tuple[Task, ...] = (
    MailMeetingToCalendar(),
    ContactsNumberToMessage(),
    ContactsEmailToMail(),
    MailNumberToContacts(),
    MessagesTextToNote(),
    MailTextToNote(),
    MessagesTimeToAlarm(),
    MessagesInviteToCalendar(),
    CalendarEventToMessage(),
    NotesToMail(),
)
