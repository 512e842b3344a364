"""The conversation view: every request, step, question and answer, in order, reviewable later.

A QListWidget, because screen readers read list items one by one with the arrow keys, each item
carries its whole sentence as its text (and accessible text), and the newest item is scrolled into
view without stealing focus. `entries` keeps the typed record (for the history store and for tests).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from enum import StrEnum

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QListWidget, QListWidgetItem, QWidget


class EntryKind(StrEnum):
    REQUEST = "request"
    STEP = "step"
    ASSISTANT = "assistant"
    QUESTION = "question"
    ANSWER = "answer"
    BLOCKED = "blocked"
    RESULT = "result"
    ERROR = "error"
    NOTE = "note"


@dataclass(frozen=True)
class ConversationEntry:
    kind: EntryKind
    text: str
    at: float = field(default_factory=time.time)


class ConversationView(QListWidget):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("conversationView")
        self.setWordWrap(True)
        self.setUniformItemSizes(False)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.entries: list[ConversationEntry] = []

    def add(self, kind: EntryKind, text: str) -> ConversationEntry:
        entry = ConversationEntry(kind=EntryKind(kind), text=text)
        self.entries.append(entry)
        item = QListWidgetItem(text)
        item.setData(Qt.ItemDataRole.UserRole, str(entry.kind))
        item.setData(Qt.ItemDataRole.AccessibleTextRole, text)
        item.setToolTip(time.strftime("%H:%M:%S", time.localtime(entry.at)))
        self.addItem(item)
        self.scrollToItem(item)
        return entry

    def texts(self) -> list[str]:
        return [e.text for e in self.entries]

    def as_text(self) -> str:
        """The whole conversation as plain lines with times, for saving or reading back."""
        return "\n".join(f"{time.strftime('%H:%M:%S', time.localtime(e.at))} {e.text}" for e in self.entries)
