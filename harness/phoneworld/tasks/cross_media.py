"""Cross-app tasks that carry a photo, a web page, a shopping list or a file into another app (the share
sheet, copy and paste, reading one app and typing into the next). See cross_app.py for the contract."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from assistant_core.i18n import Text
from harness.phoneworld.tasks import content
from harness.phoneworld.tasks.base import Task
from harness.phoneworld.tasks.content import Person, digits, text_contains, text_matches
from harness.phoneworld.tasks.cross_app import CrossAppTask, ForwardNumberParams, TwoPeopleTask
from harness.phoneworld.tasks.driver import UI, Match, Move, T
from harness.phoneworld.tasks.flows import (
    BROWSER,
    CHAT,
    FILES,
    GALLERY,
    MAIL,
    MESSAGES,
    NAMES,
    NOTES,
    PHONE,
    SHOP,
    add_contact,
    chat_send,
    copy_text,
    fill_mail,
    grant_gallery,
    new_note,
    open_app,
    open_chat,
    open_file,
    open_photo,
    open_result,
    put_chat,
    put_contact,
    rid,
    shop_add,
    web_search,
)
from harness.phoneworld.tasks.single_apps import (
    SEARCHABLE,
    catalogue,
    doc_folder,
    docs,
    ensure_docs,
    page_of,
    photo_titles,
)

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


class _SharePhotoTask(CrossAppTask):
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
    yield from ui.tap(rid(GALLERY, "share"), T("Tap Share."))
    name = NAMES[target]
    yield from ui.tap(
        Match(rid="android:id/title", text=ui.say(name)), T("Share it through {name}.").format(name=name)
    )


class GalleryPhotoToMessage(_SharePhotoTask):
    id = "GalleryPhotoToMessage"
    apps = (GALLERY, MESSAGES)

    def instruction(self, params: SharePhotoParams) -> Text:
        n = params.to.name
        return Text("Send the '{title}' photo from my gallery to {n} by text message.").format(title=params.title, n=n)

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
            T("Address it to {name}.").format(name=params.to.name),
        )
        yield from ui.tap(rid(MESSAGES, "send_message_button"), T("Send it."))


class GalleryPhotoToMail(_SharePhotoTask):
    id = "GalleryPhotoToMail"
    apps = (GALLERY, MAIL)

    def instruction(self, params: SharePhotoParams) -> Text:
        return Text("Email the '{title}' photo to {email}.").format(title=params.title, email=params.to.email)

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
        return Text("Send the '{title}' photo from my gallery to {n} on WeChat.").format(title=params.title, n=n)

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
        yield from ui.scroll_tap(Match(rid="android:id/title", text=name), T("Send it to {name}.").format(name=name))


# --- Browser -> Notes / Contacts / Chat ------------------------------------------------------------------------


@dataclass(frozen=True)
class WebNoteParams:
    page: str
    query: Text
    title: Text


class BrowserPageToNote(CrossAppTask):
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
        return Text("Search the web for '{query}', open '{t}' and save its text in a new note titled '{title}'.").format(query=params.query, t=t, title=params.title)

    def setup(self, world: Any, params: WebNoteParams) -> None:
        world.notes.notes = [n for n in world.notes.notes if not text_matches(n.title, params.title)]

    def is_successful(self, world: Any, params: WebNoteParams) -> bool:
        body = page_of(params.page).body
        return any(text_matches(n.title, params.title) and text_contains(n.body, body) for n in world.notes.notes)

    def solve(self, ui: UI, params: WebNoteParams) -> Iterator[Move]:
        yield from web_search(ui, ui.say(params.query))
        yield from open_result(ui, ui.say(page_of(params.page).title))
        yield from copy_text(ui, rid(BROWSER, "page_body"), Text("the page text"))
        yield from ui.home()
        yield from new_note(ui, ui.say(params.title), "", paste=True)


class BrowserPharmacyToContacts(CrossAppTask):
    id = "BrowserPharmacyToContacts"
    apps = (BROWSER, PHONE)
    NAME: ClassVar[Text] = Text("Green Cross Pharmacy")
    NUMBER: ClassVar[str] = "010 5555 0101"

    def params(self, rng: random.Random) -> NoteParamsLike:
        return NoteParamsLike(rng.choice((Text("pharmacy"), Text("medicine"))))

    def perturb(self, params: NoteParamsLike, rng: random.Random) -> None:
        return None  # the number comes from the page; the wrong-run check is the half-done run

    def instruction(self, params: NoteParamsLike) -> Text:
        return Text("Find the Green Cross Pharmacy on the web (search '{query}') and save its phone number as a contact named 'Green Cross Pharmacy'.").format(query=params.query)

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


class BrowserWeatherToChat(TwoPeopleTask):
    """`about` gets the message; `to` is another chat."""

    id = "BrowserWeatherToChat"
    apps = (BROWSER, CHAT)

    def instruction(self, params: ForwardNumberParams) -> Text:
        n = params.about.name
        return Text("Look up tomorrow's weather in the browser and tell {n} on WeChat what the temperature will be.").format(n=n)

    def setup(self, world: Any, params: ForwardNumberParams) -> None:
        put_chat(world, params.to)
        put_chat(world, params.about)

    def is_successful(self, world: Any, params: ForwardNumberParams) -> bool:
        chat = world.apps[CHAT]
        thread = chat.thread_with(params.about.name.en)
        return thread is not None and any("12" in m.text and "16" in m.text for m in chat.sent_in(thread.id))

    def solve(self, ui: UI, params: ForwardNumberParams) -> Iterator[Move]:
        yield from web_search(ui, ui.say(Text("weather")))
        yield from open_result(ui, ui.say(Text("Weather today")))
        body = ui.need(rid(BROWSER, "page_body")).text
        low, high = re.findall(r"(\d+)°C", body)[1:3]
        yield from ui.home()
        yield from open_chat(ui, ui.say(params.about.name))
        msg = Text("Tomorrow it will be {low} to {high}°C, with light rain.").format(low=low, high=high)
        yield from chat_send(ui, ui.say(msg))


# --- Notes -> Shop, Files -> Mail ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ListParams:
    products: tuple[int, int]
    title: Text


class NotesShoppingListToShop(CrossAppTask):
    id = "NotesShoppingListToShop"
    apps = (NOTES, SHOP)
    max_steps: ClassVar[int] = 70  # clearing the search box is a key press per character
    TITLE: ClassVar[Text] = Text("Shopping list")

    def params(self, rng: random.Random) -> ListParams:
        a, b = rng.sample(range(len(catalogue())), 2)
        return ListParams((a, b), self.TITLE)

    def perturb(self, params: ListParams, rng: random.Random) -> ListParams:
        a, b = params.products
        other = rng.choice([i for i in range(len(catalogue())) if i not in params.products])
        return replace(params, products=(a, other))

    def instruction(self, params: ListParams) -> Text:
        return Text("Put everything on my 'Shopping list' note into the Shop's cart, one of each (don't pay).")

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
        yield from ui.tap(Match(text=ui.say(self.TITLE)), T("Open the shopping list."))
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


class FilesDocumentToMail(CrossAppTask):
    id = "FilesDocumentToMail"
    apps = (FILES, MAIL)

    def params(self, rng: random.Random) -> FileMailParams:
        a, b = rng.sample([d[0] for d in docs()], 2)
        return FileMailParams(a, b, content.person(rng))

    def perturb(self, params: FileMailParams, rng: random.Random) -> FileMailParams:
        return replace(params, name=params.other, other=params.name)

    def instruction(self, params: FileMailParams) -> Text:
        return Text("Email the file {name} to {email}.").format(name=params.name, email=params.to.email)

    def setup(self, world: Any, params: FileMailParams) -> None:
        ensure_docs(world, (params.name, params.other))

    def is_successful(self, world: Any, params: FileMailParams) -> bool:
        return any(m.to == params.to.email and m.attachment == params.name for m in world.apps[MAIL].sent())

    def solve(self, ui: UI, params: FileMailParams) -> Iterator[Move]:
        yield from open_file(ui, doc_folder(params.name), params.name)
        yield from ui.tap(rid(FILES, "share"), T("Tap Share."))
        yield from ui.tap(Match(rid="android:id/title", text=ui.say(NAMES[MAIL])), T("Share by mail."))
        yield from fill_mail(ui, params.to.email, params.name, "")


TASKS: tuple[Task, ...] = (
    GalleryPhotoToMessage(),
    GalleryPhotoToMail(),
    GalleryPhotoToChat(),
    BrowserPageToNote(),
    BrowserPharmacyToContacts(),
    BrowserWeatherToChat(),
    NotesShoppingListToShop(),
    FilesDocumentToMail(),
)
