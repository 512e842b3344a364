"""The F1 shortcut list: a dialog whose lines are a keyboard-navigable list (and read aloud by the
window when it opens)."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QListWidget, QPushButton, QVBoxLayout, QWidget

from app.strings import tr


class ShortcutsDialog(QDialog):
    def __init__(self, lines: list[str], *, lang: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("shortcutsDialog")
        self.setWindowTitle(tr("shortcuts_title", lang))
        self.setAccessibleName(tr("shortcuts_title", lang))
        self.setAccessibleDescription(tr("shortcuts_intro", lang))
        self.list = QListWidget()
        self.list.setObjectName("shortcutsList")
        self.list.setAccessibleName(tr("shortcuts_title", lang))
        self.list.setAccessibleDescription(tr("help_desc", lang))
        self.list.setWordWrap(True)
        self.list.addItems(lines)
        self.list.setCurrentRow(0)
        self.close_button = QPushButton(tr("close", lang))
        self.close_button.setAccessibleName(tr("close", lang))
        self.close_button.setAccessibleDescription(tr("close_desc", lang))
        self.close_button.clicked.connect(self.accept)
        layout = QVBoxLayout(self)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.close_button)
        self.resize(640, 520)
