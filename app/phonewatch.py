"""The window's side of the phone's lifecycle: harness.devicewatch.DeviceWatcher brought onto the GUI thread.

    watch = attach_phone_watch(window, owner)     # owner: harness.adbserver.AdbServerOwner

`PhoneWatch` turns the watcher's events (its own thread) into Qt signals on the GUI thread. Events that
follow each other within `settle_ms` are coalesced per phone (a phone passing through offline and
authorizing to device says only "connected"), so a change is announced within the 2 s a user waits.
`attach_phone_watch` wires it to a MainWindow: every announcement goes through the window's announcer
in its language (the server starting, a phone plugged in or pulled out, what to do about an unauthorized
or offline phone, the server restarted); a phone that becomes ready while the window has none is opened
off the GUI thread, and if its screen is locked the user is asked to unlock it (never the PIN). A run in progress pauses and resumes by itself (the loop waits for the phone on
DeviceDisconnected); while it runs, the loop's own "lost"/"back" sentences are not said twice.

Remembered Wi-Fi phones that stay silent (harness.adbserver.RememberedPhones; the server's reconnect at
start takes a dead one off its list again) are said once the first device list is in, with how to forget
them. Forgetting, like `phonebuddy devices forget`: by key (Ctrl+Shift+F, in the window's shortcut table app.shortcuts; with several, a
number key then picks) or by voice or typed request ("forget the phone", "forget the phone at
192.168.1.20", "forget number 2", 忘掉手机, 忘掉第二部手机). The phone is dropped from the remembered
list, from the server's reconnect list and from the server's phone list, and the window says so.
"""

from __future__ import annotations

import logging
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QApplication, QLineEdit, QPlainTextEdit, QTextEdit

from assistant_core.i18n import Catalog, Text
from harness.devicewatch import DeviceWatcher, PhoneEvent, PhoneEventKind
from harness.phonestates import STATES

log = logging.getLogger(__name__)

_QUIET_DURING_RUN = (STATES["unplugged"].en,)

FORGET = Catalog(
    "phonewatch",
    {
        "silent": "{what} To forget it, say “forget the phone”, or press Control Shift F.",
        "which": "{count} remembered phones are not answering: {names}. Say “forget” and the number, or press its number key.",
        "item": "number {number}, the phone at {address}",
        "nothing": "There is no remembered phone to forget: every remembered phone is answering, or none is remembered.",
    },
)


class PhoneWatch(QObject):
    """Qt signals for the adb server's phones (see the module docstring). Lives on the GUI thread."""

    announcement = Signal(object)  # Text to say
    phone_ready = Signal(str)  # serial that is now usable
    phone_lost = Signal(str)  # serial that went away or stopped answering
    _incoming = Signal(object)  # PhoneEvent or Text, emitted on the watcher's thread

    def __init__(self, owner: Any, *, settle_ms: int = 300, parent: QObject | None = None):
        super().__init__(parent)
        self.owner = owner
        self._pending: dict[str, PhoneEvent | Text] = {}
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(settle_ms)
        self._timer.timeout.connect(self._flush)
        self._incoming.connect(self._collect, Qt.ConnectionType.QueuedConnection)
        self._watcher: DeviceWatcher | None = None
        self.events: list[PhoneEvent] = []  # every event delivered (for tests and the log)

    def start(self) -> PhoneWatch:
        if self.owner.announce is None:  # "Starting the phone connection helper" comes through us too
            self.owner.announce = lambda text: self._incoming.emit(text)
        self._watcher = DeviceWatcher(self.owner, self._incoming.emit).start()
        return self

    def devices(self) -> list:
        """The phones the server lists now (harness.adb.DeviceInfo)."""
        return self._watcher.devices() if self._watcher is not None else []

    def stop(self) -> None:
        if self._watcher is not None:
            self._watcher.stop()
            self._watcher = None

    def _collect(self, item: PhoneEvent | Text) -> None:
        if isinstance(item, Text):
            self.announcement.emit(item)  # the server is starting: say it at once
            return
        self.events.append(item)
        key = item.serial or str(item.kind)
        self._pending.pop(key, None)
        self._pending[key] = item
        self._timer.start()

    def _flush(self) -> None:
        pending, self._pending = list(self._pending.values()), {}
        for event in pending:
            assert isinstance(event, PhoneEvent)
            if event.kind is PhoneEventKind.SERVER_FAILED and event.message == STATES["server_off"]:
                log.info("no adb server and starting one is off: waiting for one")  # the window shows no phone
            else:
                self.announcement.emit(event.message)
        for event in pending:  # after every sentence: what follows (opening, a choice) is said last
            assert isinstance(event, PhoneEvent)
            state = event.device.state if event.device is not None else ""
            if state == "device":
                self.phone_ready.emit(event.serial)
            elif event.serial:
                self.phone_lost.emit(event.serial)


_EN_NUMBERS = {w: i for i, ws in enumerate((("one", "first"), ("two", "second"), ("three", "third"),
                                              ("four", "fourth"), ("five", "fifth"), ("six", "sixth"),
                                              ("seven", "seventh"), ("eight", "eighth"), ("nine", "ninth")), 1)
               for w in ws}
_ZH_NUMBERS = {c: i for i, c in enumerate("一二三四五六七八九", 1)} | {"两": 2}
_FILLER = {"number", "phone", "the", "use", "no", "num", "please", "one's"}


def spoken_number(text: str) -> int | None:
    """The phone number in a short answer: "2", "two", "number two", "the second one", "第二部", "二号",
    "2号手机"; None when the words say something else (a request goes through as a request)."""
    import re

    t = text.strip().lower()
    zh = re.fullmatch(r"(?:第|选|用)?\s*([1-9一二两三四五六七八九])\s*(?:部|个|号|台)?(?:手机)?[。.!！]?", t)
    if zh:
        c = zh.group(1)
        return int(c) if c.isdigit() else _ZH_NUMBERS[c]
    words = [w for w in re.split(r"[\s,.!?]+", t) if w]
    numbers = [int(w) if w.isdigit() and len(w) == 1 else _EN_NUMBERS.get(w) for w in words]
    if len(words) > 1 and words[-1] == "one" and numbers[-2]:  # "the second one"
        words, numbers = words[:-1], numbers[:-1]
    picked = [n for n in numbers if n]
    rest = [w for w, n in zip(words, numbers, strict=True) if not n and w not in _FILLER]
    return picked[0] if len(picked) == 1 and not rest else None


class _NumberKeys(QObject):
    """While several phones wait for a choice: a digit key (outside text fields) picks one."""

    def __init__(self, pick, parent: QObject):
        super().__init__(parent)
        self.pick = pick

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # Qt names it
        if event.type() != QEvent.Type.KeyPress or not isinstance(event, QKeyEvent):
            return False
        if isinstance(QApplication.focusWidget(), QLineEdit | QTextEdit | QPlainTextEdit):
            return False
        key = event.key()
        if Qt.Key.Key_1 <= key <= Qt.Key.Key_9:
            return bool(self.pick(key - Qt.Key.Key_0))
        return False


_ADDRESS = r"(\d{1,3}(?:\.\d{1,3}){3})(?::(\d{1,5}))?"


def forget_request(text: str) -> tuple[str, str | int | None] | None:
    """A request to forget a remembered phone: ("forget", address / number / None for "the one"), or None
    when the words ask something else ("don't forget to call Mum" is a request for the phone)."""
    import re

    t = text.strip().lower().rstrip("。.!！?？")
    en = re.match(r"^(?:please\s+)?forget\b(.*)$", t)
    zh = re.match(r"^(?:请)?(?:把)?(.*?)(?:忘掉|忘记)(.*)$", t)
    rest = en.group(1) if en else (zh.group(1) + zh.group(2) if zh else None)
    if rest is None:
        return None
    address = re.search(_ADDRESS, rest)
    if address:
        return "forget", f"{address.group(1)}:{address.group(2) or 5555}"
    if not re.search(r"phone|手机", rest):  # "forget it", "忘掉第二张照片": not about a phone
        return None
    number = spoken_number(re.sub(r"^\s*(?:the\s+)?(?:phone|手机)\s*", "", rest).replace("手机", "").strip() or "x")
    return "forget", number


def attach_phone_watch(window: Any, owner: Any, *, settle_ms: int = 300, remembered: Any = None) -> PhoneWatch:
    """Start a PhoneWatch for `window` (an app.main_window.MainWindow); see the module docstring.

    With several phones ready and none chosen before, the phones are read out by number (model and the
    last digits of the serial) and a number key or a spoken number picks one; the choice is remembered (`remembered`, an
    app.phone.RememberedPhones) and picked by itself next time."""
    from app.announce import Cue
    from app.phone import RememberedPhones, find_real_phone
    from app.workers import BackgroundOp
    from harness.phonestates import several_phones

    remembered = remembered if remembered is not None else RememberedPhones()
    watch = PhoneWatch(owner, settle_ms=settle_ms, parent=window)
    opening: list[str] = []
    watch.pending_choice = []  # type: ignore[attr-defined]  # the phones read out, in their numbers' order

    def say(text: Text) -> None:
        if window.is_running() and text.en in _QUIET_DURING_RUN:
            return  # the run says "lost" and "back" itself as it pauses and resumes
        window.announcer.announce(text.get(window.lang), Cue.INFO)

    def opened(result) -> None:
        opening.clear()
        probe, locked = result
        if probe.connection is None:
            return
        if window.phone is None and not window.is_running():
            window.set_phone(probe.connection)
            if locked:  # ask the user to unlock it; the PIN is theirs to type, never ours
                say(STATES["locked"])
        else:
            probe.connection.close()

    def find(serial: str):
        probe = find_real_phone(owner=owner, serial=serial, wait_s=2.0)
        locked = False
        if probe.connection is not None:
            try:
                state = probe.connection.device.inner.screen_state()
                locked = state.locked or not state.screen_on
            except Exception:  # the lock check is a courtesy: the run checks again before acting
                log.info("could not read the lock state of %s", serial, exc_info=True)
        return probe, locked

    def open_phone(serial: str) -> None:
        opening.append(serial)
        BackgroundOp(lambda: find(serial), on_done=opened, on_failed=lambda _exc: opening.clear(),
                     parent=window).start()

    def ready(serial: str) -> None:
        if window.phone is not None or window.is_running() or opening:
            return
        usable = [d for d in watch.devices() if d.state == "device"]
        if len(usable) > 1:
            chosen = remembered.load()["chosen"]
            if chosen not in [d.serial for d in usable]:
                if [d.serial for d in watch.pending_choice] != [d.serial for d in usable]:
                    watch.pending_choice = usable
                    say(several_phones(usable))
                return
            serial = chosen
        watch.pending_choice = []
        open_phone(serial)

    def pick(number: int) -> bool:
        if not watch.pending_choice or not 1 <= number <= len(watch.pending_choice) or opening:
            return False
        serial = watch.pending_choice[number - 1].serial
        watch.pending_choice = []
        remembered.save(chosen=serial)
        open_phone(serial)
        return True

    # By voice: while the phones wait for a choice (so the window has no phone and nothing can run), a
    # request that is only a number ("two", "number 2", "第二部") picks that phone instead.
    plain_submit = window.submit_request

    def submit_or_pick(text: str) -> bool:
        number = spoken_number(text) if watch.pending_choice and window.phone is None else None
        if number is not None and pick(number):
            return True
        return plain_submit(text)

    # Forgetting a remembered Wi-Fi phone that no longer answers (by key, by voice, by a typed request).
    watch.pending_forget = []  # type: ignore[attr-defined]  # the silent phones read out, by number

    def silent_phones() -> list[str]:
        ready = {d.serial for d in watch.devices() if d.state == "device"}
        return [a for a in remembered.load()["wifi"] if a not in ready]

    def forget(address: str) -> None:
        watch.pending_forget = []
        owner.forget(address)
        known = remembered.forget(address)

        def drop() -> bool:  # off the server's list too, whatever its state (as `phonebuddy devices forget`)
            client = owner.client(socket_timeout=5.0)
            if any(d.serial == address for d in client.list()):
                client.disconnect(address)
                return True
            return False

        def said(listed: bool) -> None:
            say(STATES["forgot" if (known or listed) else "not_remembered"].format(address=address))

        BackgroundOp(drop, on_done=said, on_failed=lambda _exc: said(False), parent=window).start()

    def forget_what(target: str | int | None) -> bool:
        silent = silent_phones()
        if isinstance(target, str):
            forget(target)
        elif isinstance(target, int) and watch.pending_forget and 1 <= target <= len(watch.pending_forget):
            forget(watch.pending_forget[target - 1])
        elif not silent:
            say(FORGET["nothing"])
        elif len(silent) == 1 and target in (None, 1):
            forget(silent[0])
        else:
            watch.pending_forget = silent
            items = [FORGET["item"].format(number=i, address=a) for i, a in enumerate(silent, 1)]
            say(Text(FORGET["which"].en.format(count=len(silent), names="; ".join(t.en for t in items)),
                     FORGET["which"].zh.format(count=len(silent), names="；".join(t.zh for t in items))))
        return True

    def tell_silent() -> None:
        """Once the first device list is in: the remembered phones that did not come back, and how to forget."""
        watcher = watch._watcher
        if watcher is None:
            return
        if not watcher.wait_synced(0):
            QTimer.singleShot(500, tell_silent)
            return
        silent = silent_phones()
        if silent and window.phone is None:
            say(FORGET["silent"].format(what=STATES["remembered_silent"].format(address=silent[0])))

    def submit_or_forget(text: str) -> bool:
        if window.is_running():
            return plain_submit_or_pick(text)
        asked = forget_request(text)
        if asked is None and watch.pending_forget and spoken_number(text) is not None:
            asked = ("forget", spoken_number(text))
        if asked is not None:
            return forget_what(asked[1])
        return plain_submit_or_pick(text)

    plain_submit_or_pick = submit_or_pick
    window.submit_request = submit_or_forget
    # The key itself is in the window's shortcut table (app.shortcuts, so F1 lists it); it calls this.
    window.forget_phone = lambda: None if window.is_running() else forget_what(None)
    watch.destroyed.connect(lambda *_: setattr(window, "forget_phone", lambda: say(FORGET["nothing"])))

    def pick_or_forget(number: int) -> bool:
        if watch.pending_forget and 1 <= number <= len(watch.pending_forget):
            return forget_what(number)
        return pick(number)

    keys = _NumberKeys(pick_or_forget, watch)
    QApplication.instance().installEventFilter(keys)
    watch.destroyed.connect(lambda *_: QApplication.instance().removeEventFilter(keys))
    watch.pick = pick  # type: ignore[attr-defined]  # the same choice by other means (tests, voice later)
    watch.announcement.connect(say)
    watch.phone_ready.connect(ready)
    window.destroyed.connect(lambda *_: watch.stop())
    watch.start()
    QTimer.singleShot(500, tell_silent)
    return watch
