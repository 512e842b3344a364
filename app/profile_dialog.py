"""The caregiver's privacy dialog: the user's profile with a tier per item, and the user's rights.

Opened from the caregiver settings ("Privacy and personal details…", after the PIN). Every item (name,
phone, home and work address, ID number, date of birth, card last digits, free notes) has a value and a
tier: share when a task needs it / ask me each time / never (assistant_core.privacy). Saving needs the
caregiver PIN again, typed in the dialog's own PIN field (assistant_core.profile_store checks it with the
PIN guard's back-off), and so do "Export…" and "Delete everything". "Hear what is stored" says the
history's size, the profile's items and tiers (never the values) and the summary of what was sent to a
remote model; the log itself is listed read-only. How the key is kept is shown and said (the OS keyring,
or a 0600 key file where no keyring exists).

Every widget has an accessible name in the dialog's language; labels are buddies of their fields, and the
tab order follows the layout, so the whole dialog works from the keyboard and a screen reader.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFileDialog,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from assistant_core.i18n import Catalog
from assistant_core.privacy import MSG as PMSG
from assistant_core.privacy import Kind, Profile, ProfileItem, Tier
from assistant_core.profile_store import (
    PrivacyStore,
    ProfileError,
    delete_stored,
    describe_stored,
    export_stored,
)

T = Catalog(
    "profile_dialog",
    {
        "title": "Privacy and personal details",
        "desc": "What the assistant may type about the user, and what is stored on this computer.",
        "open": "Privacy and personal details…",
        "item.name": "Name",
        "item.phone": "Phone number",
        "item.home": "Home address",
        "item.work": "Work address",
        "item.id_number": "ID number",
        "item.birth_date": "Date of birth (YYYY-MM-DD)",
        "item.card": "Card last digits",
        "item.notes": "Private notes",
        "tier_of": "{item}: when may the assistant use it",
        "value_of": "{item}",
        "pin": "Caregiver PIN (needed to save, export or delete)",
        "save": "Save the profile",
        "hear": "Hear what is stored",
        "export": "Export…",
        "delete": "Delete everything",
        "close": "Close",
        "log": "What was sent to a remote model",
        "log_row": "{time}  {host}  {kb} KB  masked: {masked}",
        "log_local": "{time}  the model ran on this computer: nothing sent",
        "saved": "The profile is saved.",
        "need_pin": "Type the caregiver PIN first.",
        "confirm_delete": ("Delete the whole history, the profile and the record of what was sent? This cannot be "
                           "undone."),
        "value_desc": "Typed into a form only as its tier allows.",
        "tier_desc": ("Share: typed when a task needs it, without asking. Ask me each time: the field and the app "
                      "are read back first. Never: never typed and hidden from remote models."),
        "pin_desc": "Nothing is saved, exported or deleted without the caregiver PIN.",
        "log_desc": "Each request: the time, the server, its size, and what was hidden before sending.",
        "save_desc": "Saves the profile, encrypted, on this computer.",
        "hear_desc": "Says how much history is stored, the profile's items and what was sent.",
        "export_desc": "Writes everything stored to a file you choose.",
        "delete_desc": "Deletes the history, the profile and the record of what was sent.",
        "close_desc": "Closes this window.",
        "cannot_write": "Could not write {path}: choose a folder that can be written.",
        "bad_date": "The date of birth must look like 1950-03-21.",
    },
)

# (row key, kind, label for addresses)
ROWS: tuple[tuple[str, Kind, str], ...] = (
    ("name", Kind.NAME, ""), ("phone", Kind.PHONE, ""), ("home", Kind.ADDRESS, "home"),
    ("work", Kind.ADDRESS, "work"), ("id_number", Kind.ID_NUMBER, ""), ("birth_date", Kind.BIRTH_DATE, ""),
    ("card", Kind.CARD, ""), ("notes", Kind.NOTES, ""),
)
TIERS = (Tier.SHARE, Tier.ASK, Tier.NEVER)
DEFAULT_TIER = {Kind.NAME: Tier.SHARE, Kind.PHONE: Tier.ASK, Kind.ADDRESS: Tier.ASK, Kind.ID_NUMBER: Tier.ASK,
                Kind.BIRTH_DATE: Tier.ASK, Kind.CARD: Tier.NEVER, Kind.NOTES: Tier.NEVER}


class ProfileDialog(QDialog):
    """See the module docstring. `announce(text)` speaks (the window's announcer); `confirm(question)` asks
    yes/no before deleting (a message box by default); `ask_path()` picks the export file."""

    def __init__(self, store: PrivacyStore, history: Any, guard: Any, *, lang: str,
                 announce: Callable[[str], object] | None = None, confirm: Callable[[str], bool] | None = None,
                 ask_path: Callable[[], str] | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("profileDialog")
        self.store, self.history, self.guard, self.lang = store, history, guard, lang
        self._announce = announce or (lambda text: None)
        self._confirm = confirm or self._ask_yes_no
        self._ask_path = ask_path or self._pick_path
        self.values: dict[str, QLineEdit | QPlainTextEdit] = {}
        self.tiers: dict[str, QComboBox] = {}
        self.labels: dict[str, QLabel] = {}
        grid = QGridLayout()
        order: list[QWidget] = []
        for row, (key, _kind, _label) in enumerate(ROWS):
            value: QLineEdit | QPlainTextEdit = QPlainTextEdit() if key == "notes" else QLineEdit()
            value.setObjectName(f"profile_{key}")
            if isinstance(value, QPlainTextEdit):
                value.setTabChangesFocus(True)
                value.setFixedHeight(70)
            tier = QComboBox()
            tier.setObjectName(f"tier_{key}")
            for _ in TIERS:
                tier.addItem("")
            label = QLabel()
            label.setBuddy(value)
            self.values[key], self.tiers[key], self.labels[key] = value, tier, label
            grid.addWidget(label, row, 0)
            grid.addWidget(value, row, 1)
            grid.addWidget(tier, row, 2)
            order += [value, tier]
        self.key_note = QLabel()
        self.key_note.setObjectName("profileKeyNote")
        self.key_note.setWordWrap(True)
        self.log_label = QLabel()
        self.log = QPlainTextEdit()
        self.log.setObjectName("privacyLog")
        self.log.setReadOnly(True)
        self.log.setTabChangesFocus(True)
        self.log_label.setBuddy(self.log)
        self.pin_label = QLabel()
        self.pin = QLineEdit()
        self.pin.setObjectName("profilePin")
        self.pin.setEchoMode(QLineEdit.EchoMode.Password)
        self.pin_label.setBuddy(self.pin)
        self.message = QLabel()
        self.message.setObjectName("profileMessage")
        self.message.setWordWrap(True)
        self.buttons: dict[str, QPushButton] = {}
        for key, slot in (("save", self.save), ("hear", self.hear), ("export", self.export),
                          ("delete", self.delete), ("close", self.reject)):
            b = QPushButton()
            b.setObjectName(f"profile_{key}")
            b.clicked.connect(slot)
            self.buttons[key] = b
        pin_row = QHBoxLayout()
        pin_row.addWidget(self.pin_label)
        pin_row.addWidget(self.pin, 1)
        button_row = QHBoxLayout()
        for b in self.buttons.values():
            button_row.addWidget(b)
        layout = QVBoxLayout(self)
        layout.addLayout(grid)
        layout.addWidget(self.key_note)
        layout.addWidget(self.log_label)
        layout.addWidget(self.log, 1)
        layout.addLayout(pin_row)
        layout.addWidget(self.message)
        layout.addLayout(button_row)
        order += [self.log, self.pin, *self.buttons.values()]
        for a, b in zip(order, order[1:], strict=False):
            self.setTabOrder(a, b)
        self.retranslate(lang)
        self.load()
        self.resize(820, 720)

    # --- text -------------------------------------------------------------------------------------------

    def retranslate(self, lang: str) -> None:
        self.lang = lang
        self.setWindowTitle(T.get("title", lang))
        self.setAccessibleName(T.get("title", lang))
        self.setAccessibleDescription(T.get("desc", lang))
        for key, _kind, _label in ROWS:
            item = T.get(f"item.{key}", lang)
            self.labels[key].setText(item)
            self.values[key].setAccessibleName(T.get("value_of", lang, item=item))
            self.values[key].setAccessibleDescription(T.get("value_desc", lang))
            self.tiers[key].setAccessibleName(T.get("tier_of", lang, item=item))
            self.tiers[key].setAccessibleDescription(T.get("tier_desc", lang))
            for i, tier in enumerate(TIERS):
                self.tiers[key].setItemText(i, PMSG[f"tier.{tier}"].get(lang))
        self.pin_label.setText(T.get("pin", lang))
        self.pin.setAccessibleName(T.get("pin", lang))
        self.pin.setAccessibleDescription(T.get("pin_desc", lang))
        self.log_label.setText(T.get("log", lang))
        self.log.setAccessibleName(T.get("log", lang))
        self.log.setAccessibleDescription(T.get("log_desc", lang))
        for key, b in self.buttons.items():
            b.setText(T.get(key, lang))
            b.setAccessibleName(T.get(key, lang))
            b.setAccessibleDescription(T.get(f"{key}_desc", lang))
        self.key_note.setText(self.store.key_message.get(lang))
        self.key_note.setAccessibleName(self.store.key_message.get(lang))
        self.message.setAccessibleName(self.message.text() or T.get("title", lang))
        self._fill_log()

    def _say(self, text: str) -> None:
        self.message.setText(text)
        self.message.setAccessibleName(text)
        self._announce(text)

    # --- the profile ---------------------------------------------------------------------------------------

    def load(self) -> None:
        try:
            profile = self.store.load_profile()
        except ProfileError as error:
            self._say(error.message.get(self.lang))
            profile = Profile()
        for key, kind, label in ROWS:
            item = next((i for i in profile.items if i.kind is kind and (not label or i.label == label)), None)
            widget = self.values[key]
            text = item.value if item is not None else ""
            widget.setPlainText(text) if isinstance(widget, QPlainTextEdit) else widget.setText(text)
            self.tiers[key].setCurrentIndex(TIERS.index(item.tier if item is not None else DEFAULT_TIER[kind]))

    def profile(self) -> Profile:
        items = []
        for key, kind, label in ROWS:
            widget = self.values[key]
            value = (widget.toPlainText() if isinstance(widget, QPlainTextEdit) else widget.text()).strip()
            if value:
                items.append(ProfileItem(kind, value, TIERS[self.tiers[key].currentIndex()], label))
        return Profile(tuple(items))

    def _pin(self) -> str | None:
        pin = self.pin.text().strip()
        if not pin:
            self._say(T.get("need_pin", self.lang))
            self.pin.setFocus()
            return None
        return pin

    def save(self) -> bool:
        profile = self.profile()
        birth = next((i.value for i in profile.items if i.kind is Kind.BIRTH_DATE), "")
        if birth:
            try:
                dt.date.fromisoformat(birth)
            except ValueError:
                self._say(T.get("bad_date", self.lang))
                self.values["birth_date"].setFocus()
                return False
        pin = self._pin()
        if pin is None:
            return False
        try:
            self.store.save_profile(profile, pin=pin, guard=self.guard)
        except ProfileError as error:
            self._say(error.message.get(self.lang))
            self.pin.selectAll()
            self.pin.setFocus()
            return False
        self.pin.clear()
        self._say(T.get("saved", self.lang))
        return True

    # --- the user's rights ------------------------------------------------------------------------------

    def _fill_log(self) -> None:
        lines = []
        for row in self.store.log_rows()[-200:]:
            when = dt.datetime.fromtimestamp(row["ts"]).strftime("%Y-%m-%d %H:%M:%S")
            if row["backend"] == "local":
                lines.append(T.get("log_local", self.lang, time=when))
                continue
            masked = ", ".join(f"{k} {v}" for k, v in row["masked"].items()) or "-"
            lines.append(T.get("log_row", self.lang, time=when, host=row["host"], kb=round(row["bytes"] / 1024, 1),
                               masked=masked))
        self.log.setPlainText("\n".join(lines))

    def hear(self) -> None:
        self._say(describe_stored(self.history, self.store).get(self.lang))

    def _checked(self) -> bool:
        pin = self._pin()
        if pin is None:
            return False
        check = self.guard.check(pin)
        if not check.ok:
            self._say(check.message.get(self.lang) if check.message else T.get("need_pin", self.lang))
            return False
        self.pin.clear()
        return True

    def export(self) -> bool:
        if not self._checked():
            return False
        path = self._ask_path()
        if not path:
            return False
        from assistant_core.profile_store import STORED

        target = Path(path)
        try:
            target.write_text(json.dumps(export_stored(self.history, self.store), ensure_ascii=False, indent=2,
                                         default=str), encoding="utf-8")
            target.chmod(0o600)
        except OSError:
            self._say(T.get("cannot_write", self.lang, path=str(target)))
            return False
        self._say(STORED["exported"].get(self.lang, path=str(target)))
        return True

    def delete(self) -> bool:
        if not self._checked() or not self._confirm(T.get("confirm_delete", self.lang)):
            return False
        said = delete_stored(self.history, self.store)
        self.load()
        self._fill_log()
        self._say(said.get(self.lang))
        return True

    def _ask_yes_no(self, question: str) -> bool:
        self._announce(question)
        box = QMessageBox(QMessageBox.Icon.Warning, T.get("title", self.lang), question,
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, self)
        box.setDefaultButton(QMessageBox.StandardButton.No)
        box.setAccessibleName(question)
        return box.exec() == QMessageBox.StandardButton.Yes

    def _pick_path(self) -> str:
        path, _ = QFileDialog.getSaveFileName(self, T.get("export", self.lang), "phonebuddy-data.json", "JSON (*.json)")
        return path


def open_profile_dialog(window: Any) -> None:
    """The dialog for the window's history (called from the caregiver settings, after the PIN)."""
    from assistant_core.settings import PinGuard

    history = window.services.history
    store = PrivacyStore.beside(history)
    if store is None:
        return
    dialog = ProfileDialog(store, history, PinGuard(history), lang=window.lang, announce=window.announcer.announce,
                           parent=window)
    window.profile_dialog = dialog
    window.announcer.announce(T.get("title", window.lang))
    dialog.exec()
