"""The Chat app's hospital registration mini-program (see miniprograms.py for the contract of all three).

Hospital (`HospitalState`): departments (id, name Text, doctors (id, name Text, title Text, fee,
slots "YYYY-MM-DD HH:MM")), the chosen doctor/slot, f_patient (required), personal, registrations:
list[Registration] (department, doctor, slot, patient, fee, personal). Confirming pays the fee through
the Wallet; paid → BOOKING event (target doctor id) and a FormSubmission "hospital_registration"; the
slot is no longer offered.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field

from assistant_core.i18n import Text
from harness.phoneworld.apps.forms import PersonalDraft, missing_message, personal_fields, submission
from harness.phoneworld.apps.mini_base import DEPARTMENTS, TITLES
from harness.phoneworld.apps.mini_base import MiniProgram as _Mini
from harness.phoneworld.records import PersonalField, SensitiveKind
from harness.phoneworld.ui import (
    FieldBind,
    Node,
    Style,
    button,
    column,
    item,
    label,
    text_field,
    title,
    vlist,
)

# --- hospital ---------------------------------------------------------------------------------------


@dataclass
class Doctor:
    id: str
    name: Text
    title: Text
    fee: float
    slots: list[str]


@dataclass
class Department:
    id: str
    name: Text
    doctors: list[Doctor]


@dataclass(frozen=True)
class Registration:
    id: str
    department: str
    doctor: str
    slot: str
    patient: str
    fee: float
    personal: tuple[PersonalField, ...]


@dataclass
class HospitalState:
    departments: list[Department] = field(default_factory=list)
    doctor: str = ""
    slot: str = ""
    f_patient: str = ""
    personal: PersonalDraft = field(default_factory=PersonalDraft)
    registrations: list[Registration] = field(default_factory=list)
    next_id: int = 1


def make_hospital_state(rng: random.Random, today: dt.date) -> HospitalState:
    deps = []
    for i, (name, docs) in enumerate(DEPARTMENTS):
        doctors = []
        for j, dn in enumerate(docs):
            slots = set()
            while len(slots) < 4:
                day = today + dt.timedelta(days=rng.randint(1, 5))
                slots.add(f"{day.isoformat()} {rng.choice(['08:30', '09:00', '10:00', '14:00', '15:30'])}")
            doctors.append(Doctor(f"d{i}{j}", dn, TITLES[j % 2], 50.0 if j % 2 == 0 else 20.0, sorted(slots)))
        deps.append(Department(f"dep{i}", name, doctors))
    return HospitalState(departments=deps)


class HospitalMini(_Mini):
    @property
    def s(self) -> HospitalState:
        return self.app.s.hospital

    def doctor(self, did: str) -> tuple[Department, Doctor] | None:
        for dep in self.s.departments:
            for d in dep.doctors:
                if d.id == did:
                    return dep, d
        return None

    def confirm(self) -> None:
        s = self.s
        found = self.doctor(s.doctor)
        if found is None or not s.slot:
            return
        if not s.f_patient.strip():
            self.app.world.toast(missing_message([self.t("patient")], self.app.lang))
            return
        dep, doc = found
        slot = s.slot
        rid = f"R{s.next_id}"

        def paid() -> None:
            w = self.app.world
            s.registrations.append(
                Registration(rid, dep.id, doc.id, slot, s.f_patient.strip(), doc.fee, s.personal.filled())
            )
            s.next_id += 1
            if slot in doc.slots:
                doc.slots.remove(slot)
            w.record(
                SensitiveKind.BOOKING,
                self.app.package,
                target=doc.id,
                amount=doc.fee,
                program="hospital",
                slot=slot,
            )
            w.submit_form(
                submission(
                    self.app.package,
                    "hospital_registration",
                    {"patient": s.f_patient.strip(), "doctor": doc.id, "slot": slot},
                    s.personal,
                    w.steps,
                )
            )
            s.f_patient = ""
            s.personal.clear()
            w.toast(self.t("registered", doctor=doc.name.get(self.app.lang), slot=slot))
            self.app.replace("hospital")

        self.app.world.apps["com.phoneworld.wallet"].request_payment(
            self.app.package, dep.name.get(self.app.lang), doc.fee, rid, paid
        )

    def build(self, screen: str, arg: str) -> Node:
        a = self.app
        s = self.s
        if screen == "hospital_dept":
            dep = next((d for d in s.departments if d.id == arg), None)
            if dep is None:
                return column(a.bar(self.t("hospital")))
            rows = [
                item(
                    f"{d.name.get(a.lang)} · {d.title.get(a.lang)}",
                    self.t("fee", fee=d.fee),
                    self._doc(d.id),
                    rid=a.rid("doctor"),
                )
                for d in dep.doctors
            ]
            return column(
                a.bar(dep.name.get(a.lang)),
                label(self.t("doctors"), style=Style.MUTED),
                vlist(rows, scroll_key="doctors"),
            )
        if screen == "hospital_doctor":
            found = self.doctor(arg)
            if found is None:
                return column(a.bar(self.t("hospital")))
            dep, doc = found
            rows = [button(slot, self._slot(doc.id, slot), rid=a.rid("slot")) for slot in doc.slots]
            if not rows:
                rows.append(label(self.t("no_slots"), style=Style.MUTED))
            return column(
                a.bar(doc.name.get(a.lang)),
                label(f"{dep.name.get(a.lang)} · {doc.title.get(a.lang)}"),
                label(self.t("fee", fee=doc.fee)),
                label(self.t("slots"), style=Style.MUTED),
                vlist(rows, scroll_key="slots"),
            )
        if screen == "hospital_form":
            found = self.doctor(s.doctor)
            if found is None:
                return column(a.bar(self.t("hospital")))
            dep, doc = found
            fields = [
                title(f"{dep.name.get(a.lang)} · {doc.name.get(a.lang)}"),
                label(s.slot, rid=a.rid("chosen_slot")),
                label(self.t("fee", fee=doc.fee)),
                text_field(FieldBind(s, "f_patient"), self.t("patient"), a.rid("patient_name")),
                *personal_fields(s.personal, a.lang, a.rid("hospital_")),
            ]
            return column(
                a.bar(self.t("confirm")),
                vlist(fields, scroll_key="hospital_form"),
                button(self.t("confirm"), self.confirm, style=Style.PRIMARY, rid=a.rid("hospital_confirm")),
            )
        rows = [
            item(
                d.name.get(a.lang),
                ", ".join(doc.name.get(a.lang) for doc in d.doctors),
                self._dep(d.id),
                rid=a.rid("department"),
            )
            for d in s.departments
        ]
        return column(
            a.bar(self.t("hospital")),
            label(self.t("departments"), style=Style.MUTED),
            vlist(rows, scroll_key="departments"),
        )

    def _dep(self, did: str):
        return lambda: self.app.go("hospital_dept", did)

    def _doc(self, did: str):
        return lambda: self.app.go("hospital_doctor", did)

    def _slot(self, did: str, slot: str):
        def run() -> None:
            self.s.doctor = did
            self.s.slot = slot
            self.app.go("hospital_form", did)

        return run
