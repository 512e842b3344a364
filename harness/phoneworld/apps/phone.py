"""Phone / Contacts (com.android.dialer).

State (`w.phone`): `PhoneState` — contacts: list[Contact] (id, name: Text en/zh, phone, email),
calls: list[CallRecord] (number, name, outgoing, time "HH:MM"), in_call: str (number, "" when idle),
draft_name / draft_phone / dial (the add-contact form and the keypad field), exported: bool.
`PhoneApp.contact_by_number(n)` / `contact_by_name(s)` look contacts up (any language).

Screens: main (contact list), contact <id>, add, keypad, call, recents.
Sensitive events: CALL_STARTED (target = number), ITEM_DELETED (a contact), CONTACT_EXPORTED ("Export
all contacts"), SHARED via the share sheet is recorded by the receiving app.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from assistant_core.i18n import Catalog, Text
from harness.phoneworld.apps.base import App
from harness.phoneworld.apps.content import digits
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
    spacer,
    text_field,
    title,
    vlist,
)

CAT = Catalog(
    "phoneworld.phone",
    {
        "title": "Contacts",
        "keypad": "Keypad",
        "add": "Add contact",
        "recents": "Recents",
        "export": "Export all contacts",
        "exported": "Contacts exported",
        "call": "Call",
        "message": "Message",
        "share": "Share contact",
        "delete": "Delete contact",
        "delete_q": "Delete this contact?",
        "cancel": "Cancel",
        "name": "Name",
        "phone": "Phone",
        "email": "Email",
        "save": "Save",
        "need_name": "Enter a name and a phone number",
        "number": "Enter a number",
        "calling": "Calling {who}…",
        "end": "End call",
        "outgoing": "Outgoing",
        "missed": "Missed",
        "no_calls": "No calls yet",
        "more": "More options",
    },
)


@dataclass
class Contact:
    id: str
    name: Text
    phone: str
    email: str = ""


@dataclass(frozen=True)
class CallRecord:
    number: str
    name: str
    outgoing: bool
    time: str


@dataclass
class PhoneState:
    contacts: list[Contact] = field(default_factory=list)
    calls: list[CallRecord] = field(default_factory=list)
    in_call: str = ""
    draft_name: str = ""
    draft_phone: str = ""
    dial: str = ""
    exported: bool = False
    next_id: int = 100


class PhoneApp(App):
    package = "com.android.dialer"
    label = Text("Phone")
    colour = "1e8e3e"
    letter = Text("P")
    catalog = CAT
    short = "phone"

    def reset(self, rng: random.Random) -> None:
        self.state = PhoneState(contacts=[Contact(p.id, p.name, p.phone, p.email) for p in self.world.people])

    @property
    def s(self) -> PhoneState:
        return self.state  # type: ignore[return-value]

    def contact_by_number(self, number: str) -> Contact | None:
        d = digits(number)
        return next((c for c in self.s.contacts if digits(c.phone) == d), None)

    def contact_by_name(self, name: str) -> Contact | None:
        key = name.strip().lower()
        return next((c for c in self.s.contacts if key in (c.name.en.lower(), c.name.zh.lower())), None)

    def contact(self, cid: str) -> Contact | None:
        return next((c for c in self.s.contacts if c.id == cid), None)

    def display(self, number: str) -> str:
        c = self.contact_by_number(number)
        return self.tx(c.name) if c else number

    # --- actions -------------------------------------------------------------------------------------

    def start_call(self, number: str) -> None:
        if not digits(number):
            self.world.toast(self.t("number"))
            return
        s = self.s
        s.in_call = number
        s.calls.append(CallRecord(number, self.display(number), True, self.world.now.strftime("%H:%M")))
        self.world.record(SensitiveKind.CALL_STARTED, self.package, target=number)
        self.go("call")

    def end_call(self) -> None:
        self.s.in_call = ""
        self.back()

    def save_contact(self) -> None:
        s = self.s
        name, phone = s.draft_name.strip(), s.draft_phone.strip()
        if not name or not digits(phone):
            self.world.toast(self.t("need_name"))
            return
        c = Contact(f"c{s.next_id}", Text(name, name), phone)
        s.next_id += 1
        s.contacts.append(c)
        s.contacts.sort(key=lambda x: x.name.en.lower())
        s.draft_name = s.draft_phone = ""
        self.replace("contact", c.id)

    def delete_contact(self, cid: str) -> None:
        c = self.contact(cid)
        if c is None:
            return
        self.s.contacts.remove(c)
        self.world.record(
            SensitiveKind.ITEM_DELETED, self.package, target=c.phone, item="contact", name=c.name.en
        )
        self.home_to()

    def export_all(self) -> None:
        self.s.exported = True
        self.world.record(
            SensitiveKind.CONTACT_EXPORTED, self.package, target="all", count=len(self.s.contacts)
        )
        self.world.toast(self.t("exported"))

    def share_contact(self, cid: str) -> None:
        from harness.phoneworld.screen import SharePayload

        c = self.contact(cid)
        if c is None:
            return
        text = f"{self.tx(c.name)}: {c.phone}"
        self.world.share_to(
            SharePayload("contact", text=text, ref=c.id, source=self.package),
            ["com.android.messaging", "com.android.email", "com.phoneworld.chat"],
        )

    def on_back(self, route: Route) -> bool:
        return route.screen == "call"  # Back does not hang up, as on a phone

    # --- screens -------------------------------------------------------------------------------------

    def activity(self, route: Route) -> str:
        if route.screen == "call":
            return "com.android.incallui.InCallActivity"
        return super().activity(route)

    def build(self, route: Route) -> Node:
        sc = route.screen
        if sc == "contact":
            return self._contact(route.arg)
        if sc == "add":
            return self._add()
        if sc == "keypad":
            return self._keypad()
        if sc == "call":
            return self._call()
        if sc == "recents":
            return self._recents()
        return self._main()

    def _main(self) -> Node:
        rows = [
            item(self.tx(c.name), c.phone, self._open(c.id), rid=self.rid("contact_name"))
            for c in self.s.contacts
        ]
        actions = (
            icon(self.t("add"), lambda: self.go("add"), image="sys:add", rid=self.rid("add_contact")),
            icon(self.t("more"), self._more, image="sys:menu", rid=self.rid("more")),
        )
        return column(
            self.bar(self.t("title"), up=False, actions=actions),
            row(
                button(self.t("keypad"), lambda: self.go("keypad"), rid=self.rid("dialpad")),
                button(self.t("recents"), lambda: self.go("recents"), rid=self.rid("call_log")),
            ),
            vlist(rows, scroll_key="contacts", rid=self.rid("contact_list")),
        )

    def _more(self) -> None:
        self.world.show_menu([(self.t("export"), self.export_all)], y=300)

    def _open(self, cid: str):
        return lambda: self.go("contact", cid)

    def _contact(self, cid: str) -> Node:
        c = self.contact(cid)
        if c is None:
            return column(self.bar(self.t("title")))
        return column(
            self.bar(self.tx(c.name)),
            title(self.tx(c.name), rid=self.rid("name")),
            label(c.phone, rid=self.rid("phone_number"), copyable=True),
            label(c.email, rid=self.rid("email"), copyable=True, style=Style.MUTED) if c.email else None,
            button(
                self.t("call"),
                lambda: self.start_call(c.phone),
                style=Style.PRIMARY,
                rid=self.rid("call_button"),
            ),
            button(
                self.t("message"),
                lambda: self.world.launch("com.android.messaging", Route("thread", c.phone)),
                rid=self.rid("message_button"),
            ),
            button(self.t("share"), lambda: self.share_contact(c.id), rid=self.rid("share_button")),
            button(
                self.t("delete"),
                lambda: self._ask_delete(c.id),
                style=Style.DANGER,
                rid=self.rid("delete_button"),
            ),
        )

    def _ask_delete(self, cid: str) -> None:
        self.world.show_dialog(
            title=self.t("delete_q"),
            message="",
            buttons=[(self.t("delete"), lambda: self.delete_contact(cid)), (self.t("cancel"), None)],
            styles=(Style.DANGER, Style.NORMAL),
        )

    def _add(self) -> Node:
        s = self.s
        return column(
            self.bar(self.t("add")),
            text_field(FieldBind(s, "draft_name"), self.t("name"), self.rid("name_field")),
            text_field(FieldBind(s, "draft_phone"), self.t("phone"), self.rid("phone_field")),
            button(self.t("save"), self.save_contact, style=Style.PRIMARY, rid=self.rid("save")),
        )

    def _keypad(self) -> Node:
        s = self.s
        keys = []
        for line in ("123", "456", "789", "*0#"):
            keys.append(row(*[button(ch, self._digit(ch), rid=self.rid("dialpad_key")) for ch in line]))
        return column(
            self.bar(self.t("keypad")),
            text_field(
                FieldBind(s, "dial"),
                self.t("number"),
                self.rid("digits"),
                on_submit=lambda: self.start_call(s.dial),
            ),
            *keys,
            button(
                self.t("call"),
                lambda: self.start_call(s.dial),
                style=Style.PRIMARY,
                rid=self.rid("dialpad_call"),
            ),
        )

    def _digit(self, ch: str):
        def run() -> None:
            self.s.dial += ch

        return run

    def _call(self) -> Node:
        who = self.display(self.s.in_call)
        return column(
            spacer(300),
            title(self.t("calling", who=who), rid="com.android.incallui:id/contactgrid_contact_name"),
            label(self.s.in_call, style=Style.MUTED),
            spacer(600),
            button(
                self.t("end"),
                self.end_call,
                style=Style.DANGER,
                rid="com.android.incallui:id/incall_end_call",
            ),
        )

    def _recents(self) -> Node:
        rows = [
            item(
                c.name,
                f"{self.t('outgoing' if c.outgoing else 'missed')} · {c.time}",
                lambda n=c.number: self.start_call(n),
                rid=self.rid("call_log_entry"),
            )
            for c in reversed(self.s.calls)
        ]
        if not rows:
            rows = [label(self.t("no_calls"), style=Style.MUTED)]
        return column(self.bar(self.t("recents")), vlist(rows, scroll_key="calls"))
