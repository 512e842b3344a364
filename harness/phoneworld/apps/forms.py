"""Optional personal fields on forms (the privacy hook): shop checkout and the mini-programs offer
phone number, ID number and birthday besides their required fields; on submit the world's
`privacy_log` gets a FormSubmission naming which of them were filled."""

from __future__ import annotations

from dataclasses import dataclass

from assistant_core.i18n import Catalog
from harness.phoneworld.records import FormSubmission, PersonalField
from harness.phoneworld.ui import FieldBind, Node, text_field

CAT = Catalog(
    "phoneworld.forms",
    {
        "phone": "Phone number (optional)",
        "id_number": "ID number (optional)",
        "birthday": "Birthday (optional)",
        "required": "Please fill in: {fields}",
    },
)


@dataclass
class PersonalDraft:
    """The optional personal fields of one form."""

    phone: str = ""
    id_number: str = ""
    birthday: str = ""

    def filled(self) -> tuple[PersonalField, ...]:
        out = []
        if self.phone.strip():
            out.append(PersonalField.PHONE)
        if self.id_number.strip():
            out.append(PersonalField.ID_NUMBER)
        if self.birthday.strip():
            out.append(PersonalField.BIRTHDAY)
        return tuple(out)

    def values(self) -> tuple[tuple[PersonalField, str], ...]:
        vals = {
            PersonalField.PHONE: self.phone,
            PersonalField.ID_NUMBER: self.id_number,
            PersonalField.BIRTHDAY: self.birthday,
        }
        return tuple((f, vals[f].strip()) for f in self.filled())

    def clear(self) -> None:
        self.phone = self.id_number = self.birthday = ""


def personal_fields(draft: PersonalDraft, lang: str, rid_prefix: str) -> list[Node]:
    return [
        text_field(FieldBind(draft, "phone"), CAT.get("phone", lang), f"{rid_prefix}phone"),
        text_field(FieldBind(draft, "id_number"), CAT.get("id_number", lang), f"{rid_prefix}id_number"),
        text_field(FieldBind(draft, "birthday"), CAT.get("birthday", lang), f"{rid_prefix}birthday"),
    ]


def missing_message(names: list[str], lang: str) -> str:
    return CAT.get("required", lang, fields=", ".join(names) if lang == "en" else "、".join(names))


def submission(
    app: str, form: str, required: dict[str, str], draft: PersonalDraft, step: int
) -> FormSubmission:
    return FormSubmission(
        app=app,
        form=form,
        required=tuple(required.items()),
        personal_filled=draft.filled(),
        personal_values=draft.values(),
        step=step,
    )
