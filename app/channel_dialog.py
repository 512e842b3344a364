"""Asked once, when a screen reader is running and no choice was made: does PhoneBuddy speak with its own
voice, or leave speech to the screen reader? V = PhoneBuddy's voice, S = the screen reader; closing it
leaves speech to the screen reader (never two voices at once). F11 in the window switches it later."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QDialog, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from app.screen_reader import SpeechChannel
from app.strings import tr


class ChannelDialog(QDialog):
    chosen = Signal(object)  # SpeechChannel

    def __init__(self, *, lang: str, reader: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("channelDialog")
        self.lang = lang
        self._done = False
        self.question = QLabel(tr("channel_question", lang, reader=reader))
        self.question.setWordWrap(True)
        self.own = QPushButton(tr("channel_own", lang))
        self.own.setObjectName("channelOwn")
        self.reader = QPushButton(tr("channel_reader", lang))
        self.reader.setObjectName("channelReader")
        for button, key in ((self.own, "channel_own"), (self.reader, "channel_reader")):
            button.setAccessibleName(tr(key, lang))
            button.setAccessibleDescription(tr(f"{key}_desc", lang))
            button.setAutoDefault(False)
        self.own.clicked.connect(lambda: self.choose(SpeechChannel.OWN_VOICE))
        self.reader.clicked.connect(lambda: self.choose(SpeechChannel.SCREEN_READER))
        self.setWindowTitle(tr("channel_title", lang))
        self.setAccessibleName(tr("channel_title", lang))
        self.setAccessibleDescription(self.question.text())
        layout = QVBoxLayout(self)
        layout.addWidget(self.question)
        row = QHBoxLayout()
        row.addWidget(self.reader)
        row.addWidget(self.own)
        layout.addLayout(row)
        self.reader.setFocus(Qt.FocusReason.OtherFocusReason)

    def choose(self, channel: SpeechChannel) -> None:
        if self._done:
            return
        self._done = True
        self.chosen.emit(channel)
        self.accept()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_V:
            self.choose(SpeechChannel.OWN_VOICE)
        elif event.key() == Qt.Key.Key_S:
            self.choose(SpeechChannel.SCREEN_READER)
        else:
            super().keyPressEvent(event)

    def reject(self) -> None:
        self.choose(SpeechChannel.SCREEN_READER)  # closed: never two voices at once
