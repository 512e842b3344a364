"""Reusable pieces of task scripts and setups: UI flows a user would follow in one app (add a contact,
send a text, add an event...), and start-state helpers that put a task's content into app state.

Flows act only through the UI (`UI` moves); setup helpers write app state directly (that is what a
task's setup is for). Packages are named here once.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from assistant_core.i18n import Text
from harness.phoneworld.tasks.content import Person, digits
from harness.phoneworld.tasks.driver import UI, Match, Move, T

SETTINGS = "com.android.settings"
PHONE = "com.android.dialer"
MESSAGES = "com.android.messaging"
CALENDAR = "com.android.calendar"
MAIL = "com.android.email"
GALLERY = "com.android.gallery3d"
NOTES = "com.phoneworld.notes"
CLOCK = "com.android.deskclock"
BROWSER = "com.android.browser"
SHOP = "com.phoneworld.shop"
CHAT = "com.phoneworld.chat"
FILES = "com.android.documentsui"

NAMES = {
    SETTINGS: Text("Settings"),
    PHONE: Text("Phone"),
    MESSAGES: Text("Messages"),
    CALENDAR: Text("Calendar"),
    MAIL: Text("Mail"),
    GALLERY: Text("Gallery"),
    NOTES: Text("Notes"),
    CLOCK: Text("Clock"),
    BROWSER: Text("Browser"),
    SHOP: Text("Shop"),
    CHAT: Text("WeChat"),
    FILES: Text("Files"),
}


def rid(package: str, name: str, **kw: Any) -> Match:
    return Match(rid=f"{package}:id/{name}", **kw)


def open_app(ui: UI, package: str) -> Iterator[Move]:
    """Open an app on its start screen. Scripts assume a fresh episode; where the world shows the app
    left on an inner screen (a reused phone), it is closed first so it starts cold."""
    name = NAMES.get(package, Text(package, package))
    if ui.world is not None and len(ui.world.stacks.get(package, ())) > 1:
        from assistant_core.types import Action

        yield Move(Action.close_app(package), T("Close {name} to start from its first screen.").format(name=name))
    yield from ui.open(package, name)


# --- start-state helpers ------------------------------------------------------------------------------


def put_contact(world: Any, p: Person) -> None:
    """Add a task person to the contact list (replacing any contact with the same name or number)."""
    from harness.phoneworld.apps.phone import Contact

    state = world.phone
    state.contacts = [
        c for c in state.contacts if c.name.en != p.name.en and digits(c.phone) != digits(p.phone)
    ]
    state.contacts.append(Contact(f"t{len(state.contacts)}", p.name, p.phone, p.email))
    state.contacts.sort(key=lambda c: c.name.en.lower())


def crowd_contacts(world: Any) -> None:
    """Fill the contact list past one screen with the remaining people of the world's name pool, so
    finding a contact needs scrolling (the numbers come from the world's seed: deterministic)."""
    import random

    from harness.phoneworld.apps.content import NAMES as WORLD_NAMES
    from harness.phoneworld.apps.phone import Contact
    from harness.phoneworld.tasks.content import phone_number

    rng = random.Random(f"{world.seed}:crowd")
    state = world.phone
    have = {c.name.en for c in state.contacts}
    for i, (en, zh) in enumerate(WORLD_NAMES):
        if en not in have:
            state.contacts.append(Contact(f"crowd{i}", Text(en, zh), phone_number(rng)))
    state.contacts.sort(key=lambda c: c.name.en.lower())


def contact_named(world: Any, name: Text) -> Any:
    return next((c for c in world.phone.contacts if c.name.en == name.en), None)


# --- Phone / Contacts ---------------------------------------------------------------------------------


def open_contact(ui: UI, name: Text) -> Iterator[Move]:
    yield from open_app(ui, PHONE)
    label = ui.say(name)
    yield from ui.scroll_tap(
        Match(text=label),
        T("Open {name}'s contact card.").format(name=name),
        within=rid(PHONE, "contact_list"),
    )


def add_contact(ui: UI, name: str, phone: str) -> Iterator[Move]:
    yield from open_app(ui, PHONE)
    yield from ui.tap(rid(PHONE, "add_contact"), T("Tap 'Add contact'."))
    yield from ui.type_into(rid(PHONE, "name_field"), name, T("Type the name {name}.").format(name=name))
    yield from ui.type_into(rid(PHONE, "phone_field"), phone, T("Type the number {phone}.").format(phone=phone))
    yield from ui.tap(rid(PHONE, "save"), T("Save the contact."))


# --- Messages -----------------------------------------------------------------------------------------


def send_sms(ui: UI, to: str, body: str, *, who: Text | None = None) -> Iterator[Move]:
    """New message to `to` (a name as shown, or a number) with `body`, then Send."""
    who = who or Text(to, to)
    yield from open_app(ui, MESSAGES)
    yield from ui.tap(rid(MESSAGES, "start_chat_fab"), T("Start a new message."))
    yield from ui.type_into(
        rid(MESSAGES, "recipient_text_view"), to, T("Address it to {who}.").format(who=who)
    )
    yield from ui.type_into(rid(MESSAGES, "compose_message_text"), body, T("Type the message."))
    yield from ui.tap(rid(MESSAGES, "send_message_button"), T("Send it."))


# --- Calendar -----------------------------------------------------------------------------------------


def add_event(ui: UI, title: str, date: str, time: str, *, location: str = "") -> Iterator[Move]:
    """New event with title, date "YYYY-MM-DD" and time "HH:MM", then Save."""
    yield from open_app(ui, CALENDAR)
    yield from ui.tap(rid(CALENDAR, "floating_action_button"), T("Tap 'New event'."))
    yield from ui.type_into(rid(CALENDAR, "title"), title, T("Title it '{title}'.").format(title=title))
    # The date field starts filled with the shown day: replace it.
    current = ui.need(rid(CALENDAR, "start_date")).text
    yield from ui.type_into(
        rid(CALENDAR, "start_date"), date, T("Set the date to {date}.").format(date=date), replace=current
    )
    yield from ui.type_into(rid(CALENDAR, "start_time"), time, T("Set the time to {time}.").format(time=time))
    if location:
        yield from ui.type_into(rid(CALENDAR, "location"), location, T("Add the place."))
    yield from ui.tap(rid(CALENDAR, "save"), T("Save the event."))


# --- Mail -----------------------------------------------------------------------------------------------


def compose_mail(ui: UI, to: str, subject: str, body: str) -> Iterator[Move]:
    yield from open_app(ui, MAIL)
    yield from ui.tap(rid(MAIL, "compose_button"), T("Tap Compose."))
    yield from fill_mail(ui, to, subject, body)


def fill_mail(ui: UI, to: str, subject: str, body: str, *, body_prefilled: bool = False) -> Iterator[Move]:
    """Fill an open compose form and send it (fields left "" stay as they are)."""
    if to:
        yield from ui.type_into(rid(MAIL, "to"), to, T("Address it to {to}.").format(to=to))
    if subject:
        yield from ui.type_into(rid(MAIL, "subject"), subject, T("Type the subject."))
    if body:
        yield from ui.type_into(rid(MAIL, "body"), body, T("Type the text."))
    yield from ui.tap(rid(MAIL, "send"), T("Send the mail."))


def open_mail(ui: UI, subject: str) -> Iterator[Move]:
    yield from open_app(ui, MAIL)
    yield from ui.scroll_tap(
        Match(where=lambda e: e.text == subject and e.resource_id == "android:id/summary"),
        T("Open the mail '{subject}'.").format(subject=subject),
        within=rid(MAIL, "thread_list"),
    )


# --- Notes ----------------------------------------------------------------------------------------------


def new_note(ui: UI, title: str, body: str, *, paste: bool = False) -> Iterator[Move]:
    """A new note with `title` and `body` (or, with `paste`, the clipboard pasted into the body), saved."""
    yield from open_app(ui, NOTES)
    yield from ui.tap(rid(NOTES, "new_note"), T("Start a new note."))
    yield from ui.type_into(rid(NOTES, "note_title"), title, T("Title it '{title}'.", ctx="harness.phoneworld.tasks.flows").format(title=title))
    if paste:
        yield from paste_into(ui, rid(NOTES, "note_body"))
    else:
        yield from ui.type_into(rid(NOTES, "note_body"), body, T("Write the note."))
    yield from ui.tap(rid(NOTES, "save"), T("Save the note."))


def paste_into(ui: UI, field: Match) -> Iterator[Move]:
    """Long-press a field for the edit menu and choose Paste."""
    yield from ui.long_press(field, T("Long-press the field to paste."))
    yield from ui.tap(Match(rid="android:id/title", text=PASTE.get(ui.ui_lang)), T("Choose Paste."))


def copy_text(ui: UI, m: Match, what: Text) -> Iterator[Move]:
    """Long-press a copyable text and choose Copy."""
    yield from ui.long_press(m, T("Long-press {what} to copy it.").format(what=what))
    yield from ui.tap(Match(rid="android:id/title", text=COPY.get(ui.ui_lang)), T("Choose Copy."))


PASTE = Text("Paste")
COPY = Text("Copy")


# --- Clock ----------------------------------------------------------------------------------------------


def add_alarm(ui: UI, time: str, label: str = "") -> Iterator[Move]:
    yield from open_app(ui, CLOCK)
    yield from ui.tap(rid(CLOCK, "fab"), T("Tap 'Add alarm'."))
    yield from ui.type_into(rid(CLOCK, "alarm_time"), time, T("Set the time {time}.").format(time=time))
    if label:
        yield from ui.type_into(rid(CLOCK, "alarm_label"), label, T("Add the label."))
    yield from ui.tap(rid(CLOCK, "save"), T("Save the alarm."))


# --- Gallery --------------------------------------------------------------------------------------------


def grant_gallery(world: Any) -> None:
    """Start with the Gallery's photo permission already granted (the user set the phone up)."""
    from harness.phoneworld.records import Permission

    world.granted.add((GALLERY, Permission.PHOTOS))


def open_photo(ui: UI, title: str) -> Iterator[Move]:
    yield from open_app(ui, GALLERY)
    yield from ui.scroll_tap(
        Match(rid=f"{GALLERY}:id/thumbnail", desc_contains=title),
        T("Open the photo '{title}'.").format(title=title),
        within=rid(GALLERY, "photo_grid"),
    )


# --- Wallet ---------------------------------------------------------------------------------------------

WALLET = "com.phoneworld.wallet"


def pay_with_wallet(ui: UI) -> Iterator[Move]:
    """On the Wallet's confirmation: Pay, then the PIN on the secure keypad. The PIN is the user's: the
    digit taps are `by_user` moves (the in-process oracle plays the user with the PIN read from world
    state; inside the agent loop the user enters it at the secure-screen hand-over, and the script
    simply goes on once the keypad is gone). Without the world the oracle asks the user for it."""
    yield from ui.tap(rid(WALLET, "pay_button"), T("Tap Pay."))
    if ui.world is None:
        from assistant_core.types import Action

        yield Move(
            Action.call_user("Please enter your payment PIN on the phone."),
            T("The PIN is yours to enter: I ask you to type it."),
        )
        return
    for digit in ui.world.wallet.pin:
        key = ui.find(Match(rid=f"{WALLET}:id/pin_key", text=digit))
        if key is None:
            return  # the keypad is gone: the user entered the PIN
        for move in ui.tap(key, T("The user enters the PIN.")):
            yield Move(move.action, move.thought, by_user=True)


def allow_permission(ui: UI) -> Iterator[Move]:
    yield from ui.tap(
        Match(rid="com.android.permissioncontroller:id/permission_allow_button"), T("Tap Allow.")
    )


def deny_permission(ui: UI) -> Iterator[Move]:
    yield from ui.tap(
        Match(rid="com.android.permissioncontroller:id/permission_deny_button"), T("Tap Don't allow.")
    )


# --- Chat and its mini-programs ------------------------------------------------------------------------


def open_mini(ui: UI, which: str) -> Iterator[Move]:
    """Open one of Chat's mini-programs: "hotel", "food" or "hospital"."""
    yield from open_app(ui, CHAT)
    yield from ui.tap(rid(CHAT, "tab_discover"), T("Open the Mini Programs tab."))
    names = {"hotel": Text("hotel booking"), "food": Text("food delivery"),
             "hospital": Text("hospital registration")}
    yield from ui.tap(rid(CHAT, f"mini_{which}"), T("Open {names}.").format(names=names[which]))


def rich_wallet(world: Any, at_least: float = 5000.0) -> None:
    """Enough money in the Wallet for the task's payment."""
    world.wallet.balance = max(world.wallet.balance, at_least)


def open_chat(ui: UI, name: str) -> Iterator[Move]:
    yield from open_app(ui, CHAT)
    yield from ui.scroll_tap(
        Match(rid="android:id/title", text=name), T("Open the chat with {name}.").format(name=name)
    )


def chat_send(ui: UI, text: str) -> Iterator[Move]:
    yield from ui.type_into(rid(CHAT, "input"), text, T("Type the message.", ctx="harness.phoneworld.tasks.flows"))
    yield from ui.tap(rid(CHAT, "send"), T("Send it."))


# --- Browser, Shop, Files --------------------------------------------------------------------------------


def web_search(ui: UI, query: str) -> Iterator[Move]:
    yield from open_app(ui, BROWSER)
    yield from ui.type_into(rid(BROWSER, "url_bar"), query, T("Search for '{query}'.").format(query=query))
    yield from ui.tap(rid(BROWSER, "search_button"), T("Tap Search."))


def open_result(ui: UI, title: str) -> Iterator[Move]:
    yield from ui.scroll_tap(Match(rid="android:id/title", text=title), T("Open '{title}'.").format(title=title))


def shop_add(ui: UI, name: str, qty: int = 1, *, query: str = "") -> Iterator[Move]:
    """From the Shop's list: search the product (replacing the `query` already in the search box),
    open it and add it `qty` times (the product page stays open)."""
    yield from ui.type_into(rid(SHOP, "search"), name, T("Search for {name}.").format(name=name), replace=query)
    yield from ui.hide_keyboard()
    yield from ui.tap(Match(rid="android:id/title", text=name), T("Open {name}.").format(name=name))
    for _ in range(qty):
        yield from ui.tap(rid(SHOP, "add_to_cart"), T("Add it to the cart."))


def open_file(ui: UI, folder: Text, name: str) -> Iterator[Move]:
    yield from open_app(ui, FILES)
    yield from ui.tap(
        Match(rid="android:id/title", text=ui.say(folder)), T("Open the {folder} folder.").format(folder=folder)
    )
    yield from ui.scroll_tap(Match(rid="android:id/title", text=name), T("Open {name}.", ctx="harness.phoneworld.tasks.flows").format(name=name))


def put_chat(world: Any, person: Any, text: str = "") -> str:
    """A chat with a task person at the top of Chat; returns its id."""
    from harness.phoneworld.apps.chat import ChatMsg, ChatThread

    chat = world.chat
    cid = "t" + digits(person.phone)[-6:]
    chat.chats = [c for c in chat.chats if c.name.en != person.name.en]
    msgs = [ChatMsg(text, False, "09:20")] if text else []
    chat.chats.insert(0, ChatThread(cid, person.name, person.phone, messages=msgs))
    return cid
