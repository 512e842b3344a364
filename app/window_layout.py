"""The main window's widgets, their order, shortcuts and labels (both languages, re-labelled at run time), the
status line, and the application-wide key filter (any key silences speech; keys go to the phone when asked).
A part of app.main_window.MainWindow (a mixin).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from app.confirm_dialog import STOP_KEYS
from app.conversation import ConversationView
from app.mirror_view import MirrorView
from app.pin_pad import PinPad, handover_done
from app.shortcuts import SHORTCUTS, Command
from app.strings import tr
from app.window_parts import State

log = logging.getLogger(__name__)


class _KeyFilter(QObject):
    """Application-wide: any key stops speech (during a question, only the dialog's stop, repeat and answers
    do); with 'send keys' on, keys go to the phone (F9 excepted)."""

    def __init__(self, window: Any):
        super().__init__(window)
        self.window = window

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind not in (QEvent.Type.KeyPress, QEvent.Type.ShortcutOverride):
            return False
        assert isinstance(event, QKeyEvent)
        w = self.window
        forwarding = (w.send_keys_box.isChecked() and event.key() != Qt.Key.Key_F9
                      and isinstance(obj, QWidget) and obj.window() is w)
        if kind == QEvent.Type.ShortcutOverride:
            if forwarding:
                event.accept()  # the phone gets the key: none of our shortcuts may fire
                return True
            return False
        # A question is open: only stop, repeat or a counted answer silence it, and the dialog says each
        # itself. A key it ignores (too early, held, not its own), or one that reached this window while
        # the dialog took the focus, leaves the question being read.
        question_open = w._dialog is not None and event.key() not in STOP_KEYS
        if question_open and isinstance(obj, QWidget) and obj.window() is w._dialog:
            return False
        # Only where the key first arrives (the window, then the focused widget): a key the focused widget
        # used and let go on to its parents (Enter in the request box) must not silence what it just
        # started saying ("Working on ...").
        focused = QApplication.focusWidget()
        first_arrival = not (isinstance(obj, QWidget) and focused is not None and obj is not focused
                             and obj.isAncestorOf(focused))
        if first_arrival and event.key() != Qt.Key.Key_F3 and not event.isAutoRepeat() and not question_open:
            w.announcer.stop()
        if forwarding:
            w.forward_key(event)
            return True
        return False


class LayoutPart:
    """Widgets, shortcuts, labels and the status line (see the module docstring)."""

    def _build(self) -> None:
        central = QWidget()
        central.setObjectName("central")
        self.setCentralWidget(central)
        outer = QVBoxLayout(central)

        self.status_line = QLabel()
        self.status_line.setObjectName("statusLine")
        self.status_line.setWordWrap(True)
        self.status_line.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.status_line.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByKeyboard)
        outer.addWidget(self.status_line)

        self.offer_bar = QFrame()
        self.offer_bar.setObjectName("offerBar")
        offer = QHBoxLayout(self.offer_bar)
        self.offer_label = QLabel()
        self.offer_label.setWordWrap(True)
        self.use_sim_button = QPushButton()
        self.use_sim_button.setObjectName("useSimButton")
        self.use_sim_button.clicked.connect(self.use_simulated_phone)
        offer.addWidget(self.offer_label, 1)
        offer.addWidget(self.use_sim_button)
        outer.addWidget(self.offer_bar)

        split = QSplitter(Qt.Orientation.Horizontal)
        outer.addWidget(split, 1)

        left = QWidget()
        lv = QVBoxLayout(left)
        self.phone_label = QLabel()
        self.phone_label.setObjectName("phoneLabel")
        self.phone_label.setWordWrap(True)
        self.mirror = MirrorView()
        self.mirror.tapped.connect(self._on_mirror_tap)
        self.mirror.long_pressed.connect(self._on_mirror_long_press)
        self.mirror.swiped.connect(self._on_mirror_swipe)
        self.send_keys_box = QCheckBox()
        self.send_keys_box.setObjectName("sendKeysBox")
        self.send_keys_box.toggled.connect(self._on_send_keys_toggled)
        lv.addWidget(self.phone_label)
        lv.addWidget(self.mirror, 1)
        self.pin_pad = PinPad(self)  # the simulated phone's protected PIN, typed by the user (app.pin_pad)
        lv.addWidget(self.pin_pad)
        lv.addWidget(self.send_keys_box)
        split.addWidget(left)

        right = QWidget()
        rv = QVBoxLayout(right)
        self.conversation_label = QLabel()
        self.conversation = ConversationView()
        self.conversation_label.setBuddy(self.conversation)
        self.talk_button = QPushButton()
        self.talk_button.setObjectName("talkButton")
        self.talk_button.setMinimumHeight(80)
        self.talk_button.pressed.connect(self.start_listening)
        self.talk_button.released.connect(self.stop_listening)
        self.request_label = QLabel()
        self.request_box = QLineEdit()
        self.request_box.setObjectName("requestBox")
        self.request_box.returnPressed.connect(self.submit_typed)
        self.request_label.setBuddy(self.request_box)
        self.send_button = QPushButton()
        self.send_button.setObjectName("sendButton")
        self.send_button.clicked.connect(self.submit_typed)
        row = QHBoxLayout()
        row.addWidget(self.request_box, 1)
        row.addWidget(self.send_button)
        self.stop_button = QPushButton()
        self.stop_button.setObjectName("stopButton")
        self.stop_button.clicked.connect(self.stop_run)
        self.settings_button = QPushButton()
        self.settings_button.setObjectName("settingsButton")
        self.settings_button.clicked.connect(self.open_settings)
        self.help_button = QPushButton()
        self.help_button.setObjectName("helpButton")
        self.help_button.clicked.connect(self.show_shortcuts)
        tools = QHBoxLayout()
        for b in (self.stop_button, self.settings_button, self.help_button):
            tools.addWidget(b)
        rv.addWidget(self.conversation_label)
        rv.addWidget(self.conversation, 1)
        rv.addWidget(self.talk_button)
        rv.addWidget(self.request_label)
        rv.addLayout(row)
        rv.addLayout(tools)
        split.addWidget(right)
        split.setStretchFactor(0, 2)
        split.setStretchFactor(1, 3)

        self.live_region = QLabel()
        self.live_region.setObjectName("liveRegion")
        self.live_region.setWordWrap(True)
        self.live_region.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.live_region.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByKeyboard)
        outer.addWidget(self.live_region)

        order = [
            self.talk_button, self.request_box, self.send_button, self.conversation, self.mirror,
            self.send_keys_box, self.stop_button, self.settings_button, self.help_button,
            self.use_sim_button, self.status_line, self.live_region,
        ]
        for a, b in zip(order, order[1:], strict=False):
            self.setTabOrder(a, b)
        self.areas = [self.talk_button, self.request_box, self.conversation, self.mirror, self.status_line]
        self.resize(1100, 800)

    def _install_shortcuts(self) -> None:
        handlers: dict[Command, Callable[[], object]] = {
            Command.HELP: self.show_shortcuts,
            Command.TALK: self.toggle_listening,
            Command.REPEAT: self.repeat_last,
            Command.STOP: self.stop_run,
            Command.STOP_ALT: self.stop_run,
            Command.SIM_PHONE: self.use_simulated_phone,
            Command.CHANNEL: self.next_channel,
            Command.REQUEST_BOX: self.request_box.setFocus,
            Command.NEXT_AREA: self.next_area,
            Command.CONTRAST: self.toggle_contrast,
            Command.LANGUAGE: self.toggle_language,
            Command.SEND_KEYS: self.send_keys_box.toggle,
            Command.RATE_UP: lambda: self.change_rate(+10),
            Command.RATE_DOWN: lambda: self.change_rate(-10),
            Command.HANDOVER_DONE: lambda: handover_done(self),
            Command.SETTINGS: self.open_settings,
            Command.FORGET_PHONE: lambda: self.forget_phone(),  # looked up each time: the phone watch sets it
            Command.QUIT: self.close,
        }
        self.shortcuts: dict[Command, QShortcut] = {}
        for sc in SHORTCUTS:
            shortcut = QShortcut(QKeySequence(sc.keys), self)
            shortcut.setContext(Qt.ShortcutContext.WindowShortcut)
            shortcut.activated.connect(handlers[sc.command])
            self.shortcuts[sc.command] = shortcut

    def retranslate(self, lang: str) -> None:
        self.lang = self.assistant.lang = lang
        L = lang
        self.setWindowTitle(tr("window_title", L))
        self.setAccessibleName(tr("window_title", L))
        self.setAccessibleDescription(tr("window_desc", L))
        labelled: list[tuple[QWidget, str, str]] = [
            (self.mirror, "mirror", "mirror_desc"),
            (self.send_keys_box, "send_keys", "send_keys_desc"),
            (self.conversation, "conversation", "conversation_desc"),
            (self.request_box, "request", "request_desc"),
            (self.send_button, "send", "send_desc"),
            (self.stop_button, "stop", "stop_desc"),
            (self.settings_button, "settings", "settings_desc"),
            (self.help_button, "help", "help_desc"),
            (self.use_sim_button, "use_sim", "use_sim_desc"),
            (self.talk_button, "talk", "talk_desc"),
        ]
        for widget, name, desc in labelled:
            widget.setAccessibleName(tr(name, L))
            widget.setAccessibleDescription(tr(desc, L))
        for button, key in (
            (self.send_button, "send"), (self.stop_button, "stop"), (self.settings_button, "settings"),
            (self.help_button, "help"), (self.use_sim_button, "use_sim"),
        ):
            button.setText(tr(key, L))
        self.send_keys_box.setText(tr("send_keys", L))
        self._name_talk_button()
        self.pin_pad.retranslate(L)
        self.conversation_label.setText(tr("conversation", L))
        self.request_label.setText(tr("request", L))
        self.request_box.setPlaceholderText(tr("request_placeholder", L))
        self.offer_label.setText(tr("sim_phone_offer", L))
        self.mirror.set_placeholder(tr("mirror_empty", L))
        self.status_line.setAccessibleDescription(tr("status_desc", L))
        self.live_region.setAccessibleDescription(tr("announcements", L))
        if not self.live_region.text():
            self.live_region.setAccessibleName(tr("announcements", L))
        self._update_status()
        if self._dialog is not None:
            self._dialog.retranslate(L)
        wizard = self.setup_wizard
        if wizard is not None and wizard.isVisible() and wizard.lang != L:
            wizard.retranslate(L)

    def _name_talk_button(self) -> None:
        """The talk button's text and accessible name say "Listening" while it listens (en+zh)."""
        key = "talk_listening" if self.state == State.LISTENING else "talk"
        self.talk_button.setText(tr(key, self.lang))
        self.talk_button.setAccessibleName(tr(key, self.lang))

    def _update_status(self) -> None:
        phone = self.phone.label.get(self.lang) if self.phone else tr("no_phone", self.lang)
        text = tr("status_line", self.lang, phone=phone, agent=self.agent.label(self.lang), state=tr(self.state, self.lang))
        self.status_line.setText(text)
        self.status_line.setAccessibleName(text)
        self.phone_label.setText(phone)
        self.offer_bar.setVisible(self.phone is None)
