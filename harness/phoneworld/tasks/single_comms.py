"""Single-app tasks in the communication apps: Phone/Contacts, Messages, Mail and WeChat chats.

Tasks about a person add that person, and a decoy with a similar role, to the contacts in setup; the
wrong-parameter run swaps them, so a verifier that only checks "some call happened" would be caught.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from assistant_core.i18n import Text
from harness.phoneworld.tasks import content
from harness.phoneworld.tasks.base import Task, TaskCategory
from harness.phoneworld.tasks.content import Person, digits, text_matches
from harness.phoneworld.tasks.driver import UI, Match, Move, T
from harness.phoneworld.tasks.flows import (
    CHAT,
    MAIL,
    MESSAGES,
    PHONE,
    add_contact,
    chat_send,
    compose_mail,
    contact_named,
    crowd_contacts,
    open_app,
    open_chat,
    open_contact,
    open_mail,
    put_chat,
    put_contact,
    rid,
    send_sms,
)


class _Single(Task):
    category: ClassVar[TaskCategory] = TaskCategory.SINGLE_APP
    max_steps: ClassVar[int] = 25


@dataclass(frozen=True)
class PairParams:
    """A target person and a decoy who is also in the contacts."""

    target: Person
    decoy: Person

    def swapped(self) -> PairParams:
        return PairParams(self.decoy, self.target)


def _pair(rng: random.Random) -> PairParams:
    a, b = content.people(rng, 2)
    return PairParams(a, b)


def _setup_pair(world: Any, params: PairParams) -> None:
    crowd_contacts(world)  # a long list: the oracle has to scroll to find people
    put_contact(world, params.target)
    put_contact(world, params.decoy)


# --- Phone / Contacts -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class NewContactParams:
    person: Person


class ContactsAddContact(_Single):
    id = "ContactsAddContact"
    changes = ("+phone.contacts[[]*]",)  # a new contact; the others stay as they were
    apps = (PHONE,)

    def params(self, rng: random.Random) -> NewContactParams:
        return NewContactParams(content.person(rng))

    def perturb(self, params: NewContactParams, rng: random.Random) -> NewContactParams:
        return NewContactParams(replace(params.person, phone=content.other_phone(rng, params.person.phone)))

    def instruction(self, params: NewContactParams) -> Text:
        p = params.person
        return Text("Add a new contact named {name} with the number {phone}.").format(name=p.name, phone=p.phone)

    def setup(self, world: Any, params: NewContactParams) -> None:
        p = params.person
        world.phone.contacts = [c for c in world.phone.contacts if c.name.en != p.name.en]

    def is_successful(self, world: Any, params: NewContactParams) -> bool:
        p = params.person
        return any(
            text_matches(c.name.en, p.name) and digits(c.phone) == digits(p.phone) for c in world.phone.contacts
        )

    def solve(self, ui: UI, params: NewContactParams) -> Iterator[Move]:
        yield from add_contact(ui, ui.say(params.person.name), params.person.phone)


class _PairTask(_Single):
    """About a target person with a decoy in the contacts; the wrong run swaps them."""

    def params(self, rng: random.Random) -> PairParams:
        return _pair(rng)

    def perturb(self, params: PairParams, rng: random.Random) -> PairParams:
        return params.swapped()

    def setup(self, world: Any, params: PairParams) -> None:
        _setup_pair(world, params)


class PhoneCallContact(_PairTask):
    id = "PhoneCallContact"
    changes = ("+phone.calls[[]*]",)  # a new call; contacts stay as they were
    apps = (PHONE,)

    def instruction(self, params: PairParams) -> Text:
        n = params.target.name
        return Text("Call {n}.").format(n=n)

    def is_successful(self, world: Any, params: PairParams) -> bool:
        want = digits(params.target.phone)
        return any(c.outgoing and digits(c.number) == want for c in world.phone.calls)

    def solve(self, ui: UI, params: PairParams) -> Iterator[Move]:
        yield from open_contact(ui, params.target.name)
        yield from ui.tap(rid(PHONE, "call_button"), T("Tap Call."))


@dataclass(frozen=True)
class NumberParams:
    number: str


class PhoneDialNumber(_Single):
    id = "PhoneDialNumber"
    changes = ("+phone.calls[[]*]",)
    apps = (PHONE,)

    def params(self, rng: random.Random) -> NumberParams:
        return NumberParams(content.digits(content.phone_number(rng)))

    def perturb(self, params: NumberParams, rng: random.Random) -> NumberParams:
        return NumberParams(content.digits(content.other_phone(rng, params.number)))

    def instruction(self, params: NumberParams) -> Text:
        return Text("Dial {number} on the keypad and call it.").format(number=params.number)

    def setup(self, world: Any, params: NumberParams) -> None:
        world.phone.calls = [c for c in world.phone.calls if digits(c.number) != params.number]

    def is_successful(self, world: Any, params: NumberParams) -> bool:
        return any(c.outgoing and digits(c.number) == params.number for c in world.phone.calls)

    def solve(self, ui: UI, params: NumberParams) -> Iterator[Move]:
        yield from open_app(ui, PHONE)
        yield from ui.tap(rid(PHONE, "dialpad"), T("Open the keypad.", ctx="harness.phoneworld.tasks.single_comms"))
        yield from ui.type_into(rid(PHONE, "digits"), params.number, T("Enter the number."))
        yield from ui.tap(rid(PHONE, "dialpad_call"), T("Tap Call."))


class ContactsDeleteContact(_PairTask):
    id = "ContactsDeleteContact"
    apps = (PHONE,)

    def instruction(self, params: PairParams) -> Text:
        n = params.target.name
        return Text("Delete the contact {n}.").format(n=n)

    def is_successful(self, world: Any, params: PairParams) -> bool:
        others = {p.name.en for p in world.people} | {params.decoy.name.en}
        names = {c.name.en for c in world.phone.contacts}
        return contact_named(world, params.target.name) is None and others <= names

    def solve(self, ui: UI, params: PairParams) -> Iterator[Move]:
        yield from open_contact(ui, params.target.name)
        yield from ui.tap(rid(PHONE, "delete_button"), T("Tap 'Delete contact'."))
        yield from ui.tap(Match(rid="android:id/button1"), T("Confirm the deletion."))


# --- Messages ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SmsParams:
    target: Person
    decoy: Person
    body: Text


class _MessageTask(_Single):
    """Send a text to a target person with a decoy around; the wrong run messages the decoy."""

    def params(self, rng: random.Random) -> SmsParams:
        pair = _pair(rng)
        return SmsParams(pair.target, pair.decoy, rng.choice(content.MESSAGES))

    def perturb(self, params: SmsParams, rng: random.Random) -> SmsParams:
        return SmsParams(params.decoy, params.target, params.body)


class MessagesSendText(_MessageTask):
    id = "MessagesSendText"
    apps = (MESSAGES, PHONE)

    def instruction(self, params: SmsParams) -> Text:
        n, b = params.target.name, params.body
        return Text("Text {n}: \"{b}\"").format(n=n, b=b)

    def setup(self, world: Any, params: SmsParams) -> None:
        put_contact(world, params.target)
        put_contact(world, params.decoy)

    def may_change(self, params: SmsParams) -> tuple[str, ...]:
        from harness.phoneworld.sideeffects import at

        # only new texts in the recipient's conversation (the contacts it may need are Phone's)
        return ("+" + at("messages.threads", params.target.phone), "+" + at("messages.threads", params.target.phone) + "*",
                "phone.*")

    def is_successful(self, world: Any, params: SmsParams) -> bool:
        sent = world.apps[MESSAGES].sent_to(params.target.phone)
        return any(text_matches(t, params.body) for t in sent)

    def solve(self, ui: UI, params: SmsParams) -> Iterator[Move]:
        yield from send_sms(ui, ui.say(params.target.name), ui.say(params.body), who=params.target.name)


# --- Mail -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MailParams:
    target: Person
    decoy: Person
    subject: Text
    body: Text


class MailSendMail(_Single):
    id = "MailSendMail"
    changes = ("+email.mails[[]*]",)  # the sent mail; no other mail deleted or moved
    apps = (MAIL,)

    def params(self, rng: random.Random) -> MailParams:
        pair = _pair(rng)
        return MailParams(pair.target, pair.decoy, rng.choice(content.MEETINGS), rng.choice(content.MESSAGES))

    def perturb(self, params: MailParams, rng: random.Random) -> MailParams:
        return replace(params, target=params.decoy, decoy=params.target)

    def instruction(self, params: MailParams) -> Text:
        p = params.target
        return Text("Email {name} at {email} with the subject '{subject}' and the text '{body}'.").format(name=p.name, email=p.email, subject=params.subject, body=params.body)

    def setup(self, world: Any, params: MailParams) -> None:
        put_contact(world, params.target)
        put_contact(world, params.decoy)

    def is_successful(self, world: Any, params: MailParams) -> bool:
        return any(
            m.to == params.target.email and text_matches(m.subject, params.subject) and text_matches(m.body, params.body)
            for m in world.apps[MAIL].sent()
        )

    def solve(self, ui: UI, params: MailParams) -> Iterator[Move]:
        yield from compose_mail(ui, params.target.email, ui.say(params.subject), ui.say(params.body))


@dataclass(frozen=True)
class DeleteMailParams:
    subject: Text
    keep: Text


class MailDeleteMail(_Single):
    id = "MailDeleteMail"
    apps = (MAIL,)

    def _subjects(self) -> tuple[Text, ...]:
        from harness.phoneworld.apps.mail import OTHER

        return tuple(o[0] for o in OTHER)

    def params(self, rng: random.Random) -> DeleteMailParams:
        a, b = rng.sample(self._subjects(), 2)
        return DeleteMailParams(a, b)

    def perturb(self, params: DeleteMailParams, rng: random.Random) -> DeleteMailParams:
        return DeleteMailParams(params.keep, params.subject)

    def instruction(self, params: DeleteMailParams) -> Text:
        return Text("Delete the mail '{subject}'.").format(subject=params.subject)

    def setup(self, world: Any, params: DeleteMailParams) -> None:
        """The seeded inbox already holds every one of these mails."""

    def is_successful(self, world: Any, params: DeleteMailParams) -> bool:
        subjects = [m.subject for m in world.apps[MAIL].s.mails]
        return not any(text_matches(x, params.subject) for x in subjects) and any(
            text_matches(x, params.keep) for x in subjects
        )

    def solve(self, ui: UI, params: DeleteMailParams) -> Iterator[Move]:
        yield from open_mail(ui, ui.say(params.subject))
        yield from ui.tap(rid(MAIL, "delete"), T("Delete the mail."))


# --- Chat -----------------------------------------------------------------------------------------------------


class ChatSendMessage(_MessageTask):
    id = "ChatSendMessage"
    changes = ("+chat.chats*",)  # new messages only
    apps = (CHAT,)

    def instruction(self, params: SmsParams) -> Text:
        n, b = params.target.name, params.body
        return Text("Send {n} a WeChat message: \"{b}\"").format(n=n, b=b)

    def setup(self, world: Any, params: SmsParams) -> None:
        put_chat(world, params.decoy)
        put_chat(world, params.target)

    def is_successful(self, world: Any, params: SmsParams) -> bool:
        chat = world.apps[CHAT]
        thread = chat.thread_with(params.target.name.en)
        return thread is not None and any(text_matches(m.text, params.body) for m in chat.sent_in(thread.id))

    def solve(self, ui: UI, params: SmsParams) -> Iterator[Move]:
        yield from open_chat(ui, ui.say(params.target.name))
        yield from chat_send(ui, ui.say(params.body))


TASKS: tuple[Task, ...] = (
    ContactsAddContact(),
    PhoneCallContact(),
    PhoneDialNumber(),
    ContactsDeleteContact(),
    MessagesSendText(),
    MailSendMail(),
    MailDeleteMail(),
    ChatSendMessage(),
)
