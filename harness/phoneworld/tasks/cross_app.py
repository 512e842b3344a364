"""Cross-app tasks: information carried from one app into another (a meeting time from a mail into the
calendar, a contact's number into a text, a photo from the gallery into a message, text copied from a
message and pasted into a new note...).

Each verifier checks the destination app's state for the carried value itself (the time, the number,
the photo's reference, the copied text), so doing the destination half with made-up content fails.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from assistant_core.i18n import Text
from harness.phoneworld.tasks import content
from harness.phoneworld.tasks.base import Task, TaskCategory
from harness.phoneworld.tasks.content import Person, digits, text_contains, text_matches
from harness.phoneworld.tasks.driver import UI, Match, Move, T
from harness.phoneworld.tasks.flows import (
    BROWSER,
    CALENDAR,
    CHAT,
    CLOCK,
    FILES,
    GALLERY,
    MAIL,
    MESSAGES,
    NAMES,
    NOTES,
    PHONE,
    SHOP,
    add_alarm,
    add_contact,
    add_event,
    chat_send,
    compose_mail,
    copy_text,
    fill_mail,
    grant_gallery,
    new_note,
    open_app,
    open_chat,
    open_contact,
    open_file,
    open_mail,
    open_photo,
    open_result,
    put_chat,
    put_contact,
    rid,
    send_sms,
    shop_add,
    web_search,
)
from harness.phoneworld.tasks.single_apps import (
    SEARCHABLE,
    EventParams,
    catalogue,
    doc_folder,
    docs,
    ensure_docs,
    event_params,
    other_time,
    page_of,
    photo_titles,
)


class _Cross(Task):
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
        Match(rid="android:id/title", text=who), T(f"Open the conversation with {who}.", f"打开与{who}的对话。"),
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


class MailMeetingToCalendar(_Cross):
    """The invitation mail holds the date and time; the instruction does not."""

    id = "MailMeetingToCalendar"
    apps = (MAIL, CALENDAR)
    TITLE: ClassVar[Text] = Text("Project review", "项目评审")

    def params(self, rng: random.Random) -> MeetingParams:
        ev = event_params(rng)
        return MeetingParams(replace(ev, title=self.TITLE), rng.randint(101, 420), content.person(rng))

    def perturb(self, params: MeetingParams, rng: random.Random) -> MeetingParams:
        return replace(params, meeting=replace(params.meeting, time=other_time(rng, params.meeting.time)))

    def instruction(self, params: MeetingParams) -> Text:
        return Text(
            "Check the meeting invitation in my mail and put the meeting in my calendar as 'Project review'.",
            "看一下邮件里的会议邀请，把这个会议以“项目评审”为标题加到日历里。",
        )

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


class _TwoPeopleTask(_Cross):
    """About two people; the wrong run swaps their roles."""

    def params(self, rng: random.Random) -> ForwardNumberParams:
        a, b = content.people(rng, 2)
        return ForwardNumberParams(a, b)

    def perturb(self, params: ForwardNumberParams, rng: random.Random) -> ForwardNumberParams:
        return ForwardNumberParams(params.to, params.about)


class ContactsNumberToMessage(_TwoPeopleTask):
    id = "ContactsNumberToMessage"
    apps = (PHONE, MESSAGES)

    def instruction(self, params: ForwardNumberParams) -> Text:
        a, b = params.about.name, params.to.name
        return Text(f"Text {b.en} the phone number of {a.en}.", f"把{a.zh}的电话号码用短信发给{b.zh}。")

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


class ContactsEmailToMail(_TwoPeopleTask):
    """Mail someone whose address is only in the contact card (`about`; `to` is a decoy contact)."""

    id = "ContactsEmailToMail"
    apps = (PHONE, MAIL)

    SUBJECT: ClassVar[Text] = Text("Photos from the trip", "旅行的照片")

    def instruction(self, params: ForwardNumberParams) -> Text:
        n = params.about.name
        return Text(
            f"Look up {n.en}'s email address in Contacts and send them a mail with the subject '{self.SUBJECT.en}'.",
            f"在联系人里查到{n.zh}的邮箱，给他发一封主题为“{self.SUBJECT.zh}”的邮件。",
        )

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


class MailNumberToContacts(_Cross):
    id = "MailNumberToContacts"
    apps = (MAIL, PHONE)
    SUBJECT: ClassVar[Text] = Text("My new phone number", "我换新号码了")

    def params(self, rng: random.Random) -> NewNumberParams:
        p = content.person(rng)
        return NewNumberParams(p, content.other_phone(rng, p.phone))

    def perturb(self, params: NewNumberParams, rng: random.Random) -> NewNumberParams:
        return NewNumberParams(replace(params.person, phone=params.decoy_number), params.person.phone)

    def instruction(self, params: NewNumberParams) -> Text:
        n = params.person.name
        return Text(
            f"{n.en} mailed me a new phone number. Save {n.en} as a new contact with that number.",
            f"{n.zh}发邮件告诉了我新号码，把{n.zh}存成新联系人，用这个新号码。",
        )

    def setup(self, world: Any, params: NewNumberParams) -> None:
        p = params.person
        world.phone.contacts = [c for c in world.phone.contacts if c.name.en != p.name.en]
        body = Text(
            f"Hi! My old number {params.decoy_number} no longer works. My new number is {p.phone}.\n{p.name.en}",
            f"你好！我原来的号码 {params.decoy_number} 不用了，新号码是 {p.phone}。\n{p.name.zh}",
        )
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
    Text("Room 1204, 88 Garden Road", "花园路88号1204室"),
    Text("Gate 3, North Station, platform 7", "北站3号门7站台"),
    Text("Wi-Fi password: sunflower-2026", "WLAN 密码：sunflower-2026"),
    Text("Locker 56, code 4471", "56号储物柜，密码4471"),
)


class _CopyToNoteTask(_Cross):
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
        return Text(
            f"Copy the text {n.en} sent me and paste it into a new note titled '{params.title.en}'.",
            f"把{n.zh}发给我的短信复制下来，粘贴到一条标题为“{params.title.zh}”的新备忘录里。",
        )

    def setup(self, world: Any, params: CopyParams) -> None:
        put_contact(world, params.sender)
        put_thread(world, params.sender.phone, world.text(params.text))
        world.notes.notes = [n for n in world.notes.notes if not text_matches(n.title, params.title)]

    def solve(self, ui: UI, params: CopyParams) -> Iterator[Move]:
        yield from open_thread(ui, ui.say(params.sender.name))
        yield from copy_text(ui, Match(rid=f"{MESSAGES}:id/message_text"), Text("the message", "这条短信"))
        yield from ui.home()
        yield from new_note(ui, ui.say(params.title), "", paste=True)


class MailTextToNote(_CopyToNoteTask):
    """Copy the body of a mail into a new note."""

    id = "MailTextToNote"
    apps = (MAIL, NOTES)
    SUBJECT: ClassVar[Text] = Text("Where to meet", "见面地点")

    def instruction(self, params: CopyParams) -> Text:
        return Text(
            f"Copy the text of the mail '{self.SUBJECT.en}' into a new note titled '{params.title.en}'.",
            f"把邮件“{self.SUBJECT.zh}”的正文复制到一条标题为“{params.title.zh}”的新备忘录里。",
        )

    def setup(self, world: Any, params: CopyParams) -> None:
        put_mail(world, sender=world.text(params.sender.name), address=params.sender.email,
                 subject=world.text(self.SUBJECT), body=world.text(params.text))
        world.notes.notes = [n for n in world.notes.notes if not text_matches(n.title, params.title)]

    def solve(self, ui: UI, params: CopyParams) -> Iterator[Move]:
        yield from open_mail(ui, ui.say(self.SUBJECT))
        yield from copy_text(ui, rid(MAIL, "body"), Text("the mail text", "邮件正文"))
        yield from ui.home()
        yield from new_note(ui, ui.say(params.title), "", paste=True)


@dataclass(frozen=True)
class WakeParams:
    sender: Person
    time: str


class MessagesTimeToAlarm(_Cross):
    id = "MessagesTimeToAlarm"
    apps = (MESSAGES, CLOCK)

    def params(self, rng: random.Random) -> WakeParams:
        return WakeParams(content.person(rng), f"{rng.randint(5, 7):02d}:{rng.choice((5, 10, 20, 25, 40, 50)):02d}")

    def perturb(self, params: WakeParams, rng: random.Random) -> WakeParams:
        h, m = params.time.split(":")
        return replace(params, time=f"{int(h) + 1:02d}:{m}")

    def instruction(self, params: WakeParams) -> Text:
        n = params.sender.name
        return Text(
            f"{n.en} texted me when the bus leaves tomorrow. Set an alarm for that time.",
            f"{n.zh}发短信告诉了我明天班车出发的时间，按那个时间定个闹钟。",
        )

    def setup(self, world: Any, params: WakeParams) -> None:
        put_contact(world, params.sender)
        text = Text(f"The bus leaves at {params.time} tomorrow, don't be late!", f"明天班车 {params.time} 出发，别迟到！")
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


class MessagesInviteToCalendar(_Cross):
    id = "MessagesInviteToCalendar"
    apps = (MESSAGES, CALENDAR)
    TITLE: ClassVar[Text] = Text("Dinner", "晚饭")

    def params(self, rng: random.Random) -> DinnerParams:
        ev = event_params(rng)
        return DinnerParams(content.person(rng), replace(ev, title=self.TITLE, time=f"{rng.randint(18, 20)}:{rng.choice(('00', '30'))}"))

    def perturb(self, params: DinnerParams, rng: random.Random) -> DinnerParams:
        y, m, d = params.event.date.split("-")
        return replace(params, event=replace(params.event, date=f"{y}-{m}-{int(d) % 28 + 1:02d}"))

    def instruction(self, params: DinnerParams) -> Text:
        n = params.sender.name
        return Text(
            f"{n.en} invited me to dinner by text. Add it to my calendar as 'Dinner'.",
            f"{n.zh}发短信约我吃晚饭，把它以“晚饭”为标题记到日历里。",
        )

    def setup(self, world: Any, params: DinnerParams) -> None:
        put_contact(world, params.sender)
        e = params.event
        text = Text(f"Dinner at my place on {e.date} at {e.time}?", f"{e.date} {e.time} 来我家吃晚饭吧？")
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


class CalendarEventToMessage(_Cross):
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
        return Text(
            f"Tell {n.en} by text what time my '{t.en}' is today.", f"发短信告诉{n.zh}我今天的“{t.zh}”是几点。"
        )

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
        yield from ui.tap(Match(text=title), T("Open the event.", "打开这个日程。"))
        when = ui.need(rid(CALENDAR, "when")).text
        time = when.split()[-1]
        yield from ui.home()
        body = Text(f"My {params.title.en} is at {time} today.", f"我今天的{params.title.zh}在 {time}。")
        yield from send_sms(ui, ui.say(params.to.name), ui.say(body), who=params.to.name)


# --- Notes -> Mail -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NoteToMailParams:
    to: Person
    title: Text
    body: Text


class NotesToMail(_Cross):
    id = "NotesToMail"
    apps = (NOTES, MAIL)

    def params(self, rng: random.Random) -> NoteToMailParams:
        return NoteToMailParams(content.person(rng), rng.choice(content.NOTE_TITLES), rng.choice(content.NOTE_BODIES))

    def perturb(self, params: NoteToMailParams, rng: random.Random) -> NoteToMailParams:
        return replace(params, to=content.person(rng, exclude=(params.to.name,)))

    def instruction(self, params: NoteToMailParams) -> Text:
        n = params.to
        return Text(
            f"Email the text of my note '{params.title.en}' to {n.email}.",
            f"把备忘录“{params.title.zh}”的内容用邮件发到 {n.email}。",
        )

    def setup(self, world: Any, params: NoteToMailParams) -> None:
        from harness.phoneworld.apps.notes import Note

        notes = world.notes
        notes.notes = [n for n in notes.notes if not text_matches(n.title, params.title)]
        notes.notes.insert(0, Note("task0", world.text(params.title), world.text(params.body)))

    def is_successful(self, world: Any, params: NoteToMailParams) -> bool:
        return any(m.to == params.to.email and text_contains(m.body, params.body) for m in world.apps[MAIL].sent())

    def solve(self, ui: UI, params: NoteToMailParams) -> Iterator[Move]:
        yield from open_app(ui, NOTES)
        yield from ui.tap(Match(text=ui.say(params.title)), T("Open the note.", "打开这条备忘录。"))
        text = ui.need(rid(NOTES, "note_body")).text
        yield from ui.back()  # leave the editor unchanged
        yield from ui.home()
        yield from compose_mail(ui, params.to.email, ui.say(params.title), text)


# --- Gallery -> Messages / Mail (share sheet) -------------------------------------------------------------------------


@dataclass(frozen=True)
class SharePhotoParams:
    to: Person
    title: Text
    other: Text


def _setup_photos(world: Any, params: SharePhotoParams) -> None:
    from harness.phoneworld.apps.gallery import Photo

    grant_gallery(world)
    gallery = world.gallery
    wanted = {params.title.en, params.title.zh, params.other.en, params.other.zh}
    photos = [p for p in gallery.photos if p.title not in wanted]
    photos.insert(1, Photo("task0", 7100 + len(params.title.en), world.text(params.title), world.now.date().isoformat()))
    photos.insert(3, Photo("task1", 7300 + len(params.other.en), world.text(params.other), world.now.date().isoformat()))
    gallery.photos = photos


class _SharePhotoTask(_Cross):
    """Send one named photo somewhere; the wrong run sends the other named photo."""

    def params(self, rng: random.Random) -> SharePhotoParams:
        a, b = rng.sample(photo_titles(), 2)
        return SharePhotoParams(content.person(rng), a, b)

    def perturb(self, params: SharePhotoParams, rng: random.Random) -> SharePhotoParams:
        return replace(params, title=params.other, other=params.title)


def photo_ref(world: Any, title: Text) -> str:
    return next((p.ref for p in world.gallery.photos if text_matches(p.title, title)), "?")


def share_photo(ui: UI, title: Text, target: str) -> Iterator[Move]:
    """Open a photo, Share, and pick the `target` app in the share sheet."""
    yield from open_photo(ui, ui.say(title))
    yield from ui.tap(rid(GALLERY, "share"), T("Tap Share.", "点击“分享”。"))
    name = NAMES[target]
    yield from ui.tap(
        Match(rid="android:id/title", text=ui.say(name)), T(f"Share it through {name.en}.", f"通过{name.zh}分享。")
    )


class GalleryPhotoToMessage(_SharePhotoTask):
    id = "GalleryPhotoToMessage"
    apps = (GALLERY, MESSAGES)

    def instruction(self, params: SharePhotoParams) -> Text:
        n = params.to.name
        return Text(
            f"Send the '{params.title.en}' photo from my gallery to {n.en} by text message.",
            f"把相册里的“{params.title.zh}”照片用短信发给{n.zh}。",
        )

    def setup(self, world: Any, params: SharePhotoParams) -> None:
        put_contact(world, params.to)
        _setup_photos(world, params)

    def is_successful(self, world: Any, params: SharePhotoParams) -> bool:
        thread = world.apps[MESSAGES].thread(params.to.phone)
        ref = photo_ref(world, params.title)
        return thread is not None and any(m.outgoing and m.photo == ref for m in thread.messages)

    def solve(self, ui: UI, params: SharePhotoParams) -> Iterator[Move]:
        yield from share_photo(ui, params.title, MESSAGES)
        yield from ui.type_into(
            rid(MESSAGES, "recipient_text_view"), ui.say(params.to.name),
            T(f"Address it to {params.to.name.en}.", f"收件人填{params.to.name.zh}。"),
        )
        yield from ui.tap(rid(MESSAGES, "send_message_button"), T("Send it.", "发送。"))


class GalleryPhotoToMail(_SharePhotoTask):
    id = "GalleryPhotoToMail"
    apps = (GALLERY, MAIL)

    def instruction(self, params: SharePhotoParams) -> Text:
        return Text(
            f"Email the '{params.title.en}' photo to {params.to.email}.",
            f"把“{params.title.zh}”这张照片用邮件发到 {params.to.email}。",
        )

    def setup(self, world: Any, params: SharePhotoParams) -> None:
        _setup_photos(world, params)

    def is_successful(self, world: Any, params: SharePhotoParams) -> bool:
        ref = photo_ref(world, params.title)
        return any(m.to == params.to.email and m.attachment == ref for m in world.apps[MAIL].sent())

    def solve(self, ui: UI, params: SharePhotoParams) -> Iterator[Move]:
        yield from share_photo(ui, params.title, MAIL)
        yield from fill_mail(ui, params.to.email, ui.say(params.title), "")


class GalleryPhotoToChat(_SharePhotoTask):
    id = "GalleryPhotoToChat"
    apps = (GALLERY, CHAT)

    def instruction(self, params: SharePhotoParams) -> Text:
        n = params.to.name
        return Text(
            f"Send the '{params.title.en}' photo from my gallery to {n.en} on WeChat.",
            f"把相册里的“{params.title.zh}”照片用微信发给{n.zh}。",
        )

    def setup(self, world: Any, params: SharePhotoParams) -> None:
        put_chat(world, params.to)
        _setup_photos(world, params)

    def is_successful(self, world: Any, params: SharePhotoParams) -> bool:
        chat = world.apps[CHAT]
        thread = chat.thread_with(params.to.name.en)
        ref = photo_ref(world, params.title)
        return thread is not None and any(m.kind == "photo" and m.ref == ref for m in chat.sent_in(thread.id))

    def solve(self, ui: UI, params: SharePhotoParams) -> Iterator[Move]:
        yield from share_photo(ui, params.title, CHAT)
        name = ui.say(params.to.name)
        yield from ui.scroll_tap(Match(rid="android:id/title", text=name), T(f"Send it to {name}.", f"发给{name}。"))


# --- Browser -> Notes / Contacts / Chat ------------------------------------------------------------------------


@dataclass(frozen=True)
class WebNoteParams:
    page: str
    query: Text
    title: Text


class BrowserPageToNote(_Cross):
    """Search, open the page, copy its text and paste it into a new note."""

    id = "BrowserPageToNote"
    apps = (BROWSER, NOTES)

    def params(self, rng: random.Random) -> WebNoteParams:
        pid, query = rng.choice(SEARCHABLE)
        return WebNoteParams(pid, query, rng.choice(content.NOTE_TITLES))

    def perturb(self, params: WebNoteParams, rng: random.Random) -> WebNoteParams:
        pid, query = rng.choice([x for x in SEARCHABLE if x[0] != params.page])
        return replace(params, page=pid, query=query)

    def instruction(self, params: WebNoteParams) -> Text:
        t = page_of(params.page).title
        return Text(
            f"Search the web for '{params.query.en}', open '{t.en}' and save its text in a new note titled "
            f"'{params.title.en}'.",
            f"在浏览器搜索“{params.query.zh}”，打开“{t.zh}”，把网页正文存到一条标题为“{params.title.zh}”的新备忘录里。",
        )

    def setup(self, world: Any, params: WebNoteParams) -> None:
        world.notes.notes = [n for n in world.notes.notes if not text_matches(n.title, params.title)]

    def is_successful(self, world: Any, params: WebNoteParams) -> bool:
        body = page_of(params.page).body
        return any(text_matches(n.title, params.title) and text_contains(n.body, body) for n in world.notes.notes)

    def solve(self, ui: UI, params: WebNoteParams) -> Iterator[Move]:
        yield from web_search(ui, ui.say(params.query))
        yield from open_result(ui, ui.say(page_of(params.page).title))
        yield from copy_text(ui, rid(BROWSER, "page_body"), Text("the page text", "网页正文"))
        yield from ui.home()
        yield from new_note(ui, ui.say(params.title), "", paste=True)


class BrowserPharmacyToContacts(_Cross):
    id = "BrowserPharmacyToContacts"
    apps = (BROWSER, PHONE)
    NAME: ClassVar[Text] = Text("Green Cross Pharmacy", "绿十字药店")
    NUMBER: ClassVar[str] = "010 5555 0101"

    def params(self, rng: random.Random) -> NoteParamsLike:
        return NoteParamsLike(rng.choice((Text("pharmacy", "药店"), Text("medicine", "药"))))

    def perturb(self, params: NoteParamsLike, rng: random.Random) -> None:
        return None  # the number comes from the page; the wrong-run check is the half-done run

    def instruction(self, params: NoteParamsLike) -> Text:
        return Text(
            f"Find the Green Cross Pharmacy on the web (search '{params.query.en}') and save its phone number "
            "as a contact named 'Green Cross Pharmacy'.",
            f"在浏览器搜索“{params.query.zh}”找到绿十字药店，把它的电话存成联系人“绿十字药店”。",
        )

    def setup(self, world: Any, params: NoteParamsLike) -> None:
        world.phone.contacts = [c for c in world.phone.contacts if digits(c.phone) != digits(self.NUMBER)]

    def is_successful(self, world: Any, params: NoteParamsLike) -> bool:
        return any(
            text_matches(c.name.en, self.NAME) and digits(c.phone) == digits(self.NUMBER) for c in world.phone.contacts
        )

    def solve(self, ui: UI, params: NoteParamsLike) -> Iterator[Move]:
        yield from web_search(ui, ui.say(params.query))
        yield from open_result(ui, ui.say(self.NAME))
        body = ui.need(rid(BROWSER, "page_body")).text
        number = re.search(r"\d{3} \d{4} \d{4}", body).group(0)  # type: ignore[union-attr]
        yield from ui.home()
        yield from add_contact(ui, ui.say(self.NAME), number)


@dataclass(frozen=True)
class NoteParamsLike:
    query: Text


class BrowserWeatherToChat(_TwoPeopleTask):
    """`about` gets the message; `to` is another chat."""

    id = "BrowserWeatherToChat"
    apps = (BROWSER, CHAT)

    def instruction(self, params: ForwardNumberParams) -> Text:
        n = params.about.name
        return Text(
            f"Look up tomorrow's weather in the browser and tell {n.en} on WeChat what the temperature will be.",
            f"用浏览器查一下明天的天气，在微信上告诉{n.zh}明天的气温。",
        )

    def setup(self, world: Any, params: ForwardNumberParams) -> None:
        put_chat(world, params.to)
        put_chat(world, params.about)

    def is_successful(self, world: Any, params: ForwardNumberParams) -> bool:
        chat = world.apps[CHAT]
        thread = chat.thread_with(params.about.name.en)
        return thread is not None and any("12" in m.text and "16" in m.text for m in chat.sent_in(thread.id))

    def solve(self, ui: UI, params: ForwardNumberParams) -> Iterator[Move]:
        yield from web_search(ui, ui.say(Text("weather", "天气")))
        yield from open_result(ui, ui.say(Text("Weather today", "今日天气")))
        body = ui.need(rid(BROWSER, "page_body")).text
        low, high = re.findall(r"(\d+)°C", body)[1:3]
        yield from ui.home()
        yield from open_chat(ui, ui.say(params.about.name))
        msg = Text(f"Tomorrow it will be {low} to {high}°C, with light rain.", f"明天气温 {low} 到 {high}°C，有小雨。")
        yield from chat_send(ui, ui.say(msg))


# --- Notes -> Shop, Files -> Mail ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ListParams:
    products: tuple[int, int]
    title: Text


class NotesShoppingListToShop(_Cross):
    id = "NotesShoppingListToShop"
    apps = (NOTES, SHOP)
    max_steps: ClassVar[int] = 70  # clearing the search box is a key press per character
    TITLE: ClassVar[Text] = Text("Shopping list", "购物清单")

    def params(self, rng: random.Random) -> ListParams:
        a, b = rng.sample(range(len(catalogue())), 2)
        return ListParams((a, b), self.TITLE)

    def perturb(self, params: ListParams, rng: random.Random) -> ListParams:
        a, b = params.products
        other = rng.choice([i for i in range(len(catalogue())) if i not in params.products])
        return replace(params, products=(a, other))

    def instruction(self, params: ListParams) -> Text:
        return Text(
            "Put everything on my 'Shopping list' note into the Shop's cart, one of each (don't pay).",
            "把备忘录“购物清单”里的东西各一件加进商城购物车（先别付款）。",
        )

    def setup(self, world: Any, params: ListParams) -> None:
        from harness.phoneworld.apps.notes import Note
        names = [world.text(catalogue()[i][0]) for i in params.products]
        notes = world.notes
        notes.notes = [n for n in notes.notes if not text_matches(n.title, self.TITLE)]
        notes.notes.insert(0, Note("task0", world.text(self.TITLE), "\n".join(names)))
        world.shop.cart.clear()

    def is_successful(self, world: Any, params: ListParams) -> bool:
        cart = sorted((c.product, c.qty) for c in world.shop.cart)
        return cart == sorted((f"sku{i}", 1) for i in params.products) and not world.shop.orders

    def solve(self, ui: UI, params: ListParams) -> Iterator[Move]:
        yield from open_app(ui, NOTES)
        yield from ui.tap(Match(text=ui.say(self.TITLE)), T("Open the shopping list.", "打开购物清单。"))
        yield from ui.back()
        yield from ui.home()
        yield from open_app(ui, SHOP)
        query = ""
        for i in params.products:
            name = ui.say(catalogue()[i][0])
            if query:
                yield from ui.back()  # from the product page to the list
            yield from shop_add(ui, name, query=query)
            query = name


@dataclass(frozen=True)
class FileMailParams:
    name: str
    other: str
    to: Person


class FilesDocumentToMail(_Cross):
    id = "FilesDocumentToMail"
    apps = (FILES, MAIL)

    def params(self, rng: random.Random) -> FileMailParams:
        a, b = rng.sample([d[0] for d in docs()], 2)
        return FileMailParams(a, b, content.person(rng))

    def perturb(self, params: FileMailParams, rng: random.Random) -> FileMailParams:
        return replace(params, name=params.other, other=params.name)

    def instruction(self, params: FileMailParams) -> Text:
        return Text(
            f"Email the file {params.name} to {params.to.email}.", f"把文件 {params.name} 用邮件发到 {params.to.email}。"
        )

    def setup(self, world: Any, params: FileMailParams) -> None:
        ensure_docs(world, (params.name, params.other))

    def is_successful(self, world: Any, params: FileMailParams) -> bool:
        return any(m.to == params.to.email and m.attachment == params.name for m in world.apps[MAIL].sent())

    def solve(self, ui: UI, params: FileMailParams) -> Iterator[Move]:
        yield from open_file(ui, doc_folder(params.name), params.name)
        yield from ui.tap(rid(FILES, "share"), T("Tap Share.", "点击“分享”。"))
        yield from ui.tap(Match(rid="android:id/title", text=ui.say(NAMES[MAIL])), T("Share by mail.", "通过邮件分享。"))
        yield from fill_mail(ui, params.to.email, params.name, "")


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
    GalleryPhotoToMessage(),
    GalleryPhotoToMail(),
    GalleryPhotoToChat(),
    BrowserPageToNote(),
    BrowserPharmacyToContacts(),
    BrowserWeatherToChat(),
    NotesShoppingListToShop(),
    FilesDocumentToMail(),
)


