"""Mail (com.android.email).

State (`w.email`): `MailState` — mails: list[Mail] (id, sender, address, subject, body, time, read,
folder "inbox"|"sent", to, meeting_date "YYYY-MM-DD" and meeting_time "HH:MM" on invitations, attachment),
draft_to / draft_subject / draft_body (the compose form). `MailApp.invitation()` is the seeded meeting
invitation (its date and time are seeded); `MailApp.sent()` lists sent mails.

Screens: main (inbox), sent, mail <id> (reading marks it read), compose, share (compose prefilled).
Sensitive events: MESSAGE_SENT (channel=mail, target = address, details subject/body), SHARED when a
shared item is sent, ITEM_DELETED when a mail is deleted.
"""

from __future__ import annotations

import datetime as dt
import random
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
    item,
    label,
    row,
    text_field,
    title,
    vlist,
)

CAT = Catalog(
    "phoneworld.mail",
    {
        "title": "Inbox",
        "sent": "Sent",
        "compose": "Compose",
        "to": "To",
        "subject": "Subject",
        "body": "Compose email",
        "send": "Send",
        "reply": "Reply",
        "forward": "Forward",
        "delete": "Delete",
        "from": "From: {who}",
        "need_to": "Add a recipient",
        "re": "Re: {subject}",
        "fwd": "Fwd: {subject}",
        "empty": "No mail",
        "inbox": "Inbox",
        "attachment": "Attachment: {name}",
    },
)

INVITE_SUBJECT = Text("Meeting invitation: project review")
INVITE_BODY = Text("Hello,\nPlease join the project review on {date} at {time} in meeting room {room}.\nBest regards,\n{who}")
OTHER = (
    (
        Text("Your parcel is on its way"),
        Text("Your order will arrive tomorrow between 9:00 and 12:00."),
        "Parcel Express",
        "noreply@parcel.example",
    ),
    (
        Text("Weekly newsletter"),
        Text("Ten tips for a healthy spring. Read more on our website."),
        "Health Weekly",
        "news@health.example",
    ),
    (
        Text("Electricity bill"),
        Text("Your bill for February is ¥128.50, due on the 15th."),
        "City Power",
        "billing@power.example",
    ),
)


@dataclass
class Mail:
    id: str
    sender: str
    address: str
    subject: str
    body: str
    time: str
    read: bool = False
    folder: str = "inbox"
    to: str = ""
    meeting_date: str = ""
    meeting_time: str = ""
    attachment: str = ""


@dataclass
class MailState:
    mails: list[Mail] = field(default_factory=list)
    account: str = "me@example.com"
    draft_to: str = ""
    draft_subject: str = ""
    draft_body: str = ""
    draft_attachment: str = ""
    next_id: int = 100


class MailApp(App):
    package = "com.android.email"
    label = Text("Mail")
    colour = "d93025"
    letter = Text("@")
    catalog = CAT
    short = "email"

    def reset(self, rng: random.Random) -> None:
        lang = self.world.language
        boss = rng.choice(self.world.people)
        day = self.world.now.date() + dt.timedelta(days=rng.randint(1, 6))
        when = f"{rng.randint(9, 17):02d}:{rng.choice([0, 15, 30, 45]):02d}"
        room = rng.randint(101, 420)
        date_text = day.isoformat()
        mails = [
            Mail(
                "m0",
                boss.name.get(lang),
                boss.email,
                INVITE_SUBJECT.get(lang),
                INVITE_BODY.get(lang, date=date_text, time=when, room=room, who=boss.name.get(lang)),
                "08:05",
                meeting_date=date_text,
                meeting_time=when,
            ),
        ]
        for i, (subj, body, who, addr) in enumerate(rng.sample(OTHER, 3), start=1):
            mails.append(
                Mail(
                    f"m{i}",
                    who,
                    addr,
                    subj.get(lang),
                    body.get(lang),
                    f"0{7 - i}:{rng.randint(10, 59)}",
                    read=rng.random() < 0.5,
                )
            )
        self.state = MailState(mails=mails)

    @property
    def s(self) -> MailState:
        return self.state  # type: ignore[return-value]

    def invitation(self) -> Mail:
        return next(m for m in self.s.mails if m.meeting_date)

    def on_route(self, route: Route) -> None:
        if route.screen == "mail":  # opening a mail marks it read, from the list or a notification
            m = self.mail(route.arg)
            if m is not None:
                m.read = True

    def sent(self) -> list[Mail]:
        return [m for m in self.s.mails if m.folder == "sent"]

    def mail(self, mid: str) -> Mail | None:
        return next((m for m in self.s.mails if m.id == mid), None)

    # --- actions -------------------------------------------------------------------------------------

    def compose(self, to: str = "", subject: str = "", body: str = "") -> None:
        s = self.s
        s.draft_to, s.draft_subject, s.draft_body = to, subject, body
        self.go("compose")

    def receive_share(self, payload) -> None:
        s = self.s
        s.draft_to, s.draft_subject = "", ""
        s.draft_body = payload.text
        s.draft_attachment = payload.ref if payload.kind in ("photo", "file") else ""

    def send(self) -> None:
        s = self.s
        to = s.draft_to.strip()
        if "@" not in to:
            phone = self.world.apps["com.android.dialer"]
            c = phone.contact_by_name(to)
            to = c.email if c is not None and c.email else ""
        if not to:
            self.world.toast(self.t("need_to"))
            return
        attachment = s.draft_attachment if self.route.screen == "share" else ""
        m = Mail(
            f"m{s.next_id}",
            "me",
            s.account,
            s.draft_subject,
            s.draft_body,
            self.world.now.strftime("%H:%M"),
            read=True,
            folder="sent",
            to=to,
            attachment=attachment,
        )
        s.next_id += 1
        s.mails.append(m)
        self.world.record(
            SensitiveKind.MESSAGE_SENT,
            self.package,
            target=to,
            channel="mail",
            subject=m.subject,
            text=m.body,
            attachment=attachment,
        )
        if self.route.screen == "share":
            self.world.complete_share(self.package, to)
        s.draft_to = s.draft_subject = s.draft_body = s.draft_attachment = ""
        self.home_to()

    def delete(self, mid: str) -> None:
        m = self.mail(mid)
        if m is not None:
            self.s.mails.remove(m)
            self.world.record(SensitiveKind.ITEM_DELETED, self.package, target=m.subject, item="mail")
        self.home_to()

    # --- screens -------------------------------------------------------------------------------------

    def build(self, route: Route) -> Node:
        sc = route.screen
        if sc == "mail":
            return self._read(route.arg)
        if sc in ("compose", "share"):
            return self._compose()
        if sc == "sent":
            return self._list("sent")
        return self._list("inbox")

    def _list(self, folder: str) -> Node:
        rows = []
        for m in reversed(self.s.mails):
            if m.folder != folder:
                continue
            who = m.sender if folder == "inbox" else m.to
            rows.append(
                item(
                    f"{'' if m.read else '● '}{who}",
                    m.subject,
                    self._open(m.id),
                    rid=self.rid("conversation_item"),
                )
            )
        if not rows:
            rows.append(label(self.t("empty"), style=Style.MUTED))
        other = ("sent", self.t("sent")) if folder == "inbox" else ("main", self.t("inbox"))
        return column(
            self.bar(self.t("title") if folder == "inbox" else self.t("sent"), up=folder != "inbox"),
            button(
                other[1],
                (lambda: self.go("sent")) if folder == "inbox" else self.back,
                rid=self.rid("folder"),
            ),
            vlist(rows, scroll_key=folder, rid=self.rid("thread_list")),
            button(
                self.t("compose"), lambda: self.compose(), style=Style.PRIMARY, rid=self.rid("compose_button")
            ),
        )

    def _open(self, mid: str):
        def run() -> None:
            m = self.mail(mid)
            if m is not None:
                m.read = True
            self.go("mail", mid)

        return run

    def _read(self, mid: str) -> Node:
        m = self.mail(mid)
        if m is None:
            return column(self.bar(self.t("title")))
        subject_re = self.t("re", subject=m.subject)
        subject_fwd = self.t("fwd", subject=m.subject)
        body = [
            title(m.subject, rid=self.rid("subject"), copyable=True),
            label(
                self.t("from", who=f"{m.sender} <{m.address}>"),
                style=Style.MUTED,
                rid=self.rid("sender"),
                copyable=True,
            ),
            label(m.body, rid=self.rid("body"), copyable=True),
        ]
        if m.attachment:
            body.append(label(self.t("attachment", name=m.attachment), style=Style.MUTED))
        return column(
            self.bar(m.subject),
            vlist(body, scroll_key="mail"),
            row(
                button(
                    self.t("reply"), lambda: self.compose(m.address, subject_re, ""), rid=self.rid("reply")
                ),
                button(
                    self.t("forward"), lambda: self.compose("", subject_fwd, m.body), rid=self.rid("forward")
                ),
                button(
                    self.t("delete"), lambda: self.delete(m.id), style=Style.DANGER, rid=self.rid("delete")
                ),
            ),
        )

    def _compose(self) -> Node:
        s = self.s
        return column(
            self.bar(self.t("compose")),
            text_field(FieldBind(s, "draft_to"), self.t("to"), self.rid("to")),
            text_field(FieldBind(s, "draft_subject"), self.t("subject"), self.rid("subject")),
            text_field(FieldBind(s, "draft_body"), self.t("body"), self.rid("body"), height=400),
            button(self.t("send"), self.send, style=Style.PRIMARY, rid=self.rid("send")),
        )
