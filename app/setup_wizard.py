"""First-run setup: enabling USB debugging (read aloud step by step), connecting the phone, installing
the text-entry helper, and downloading the models with progress.

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
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QLabel, QProgressBar, QPushButton, QVBoxLayout, QWidget, QWizard, QWizardPage

from app.strings import tr
from app.workers import BackgroundOp
from assistant_core.i18n import Text

log = logging.getLogger(__name__)

Progress = Callable[[float], None]


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


def _check_phone() -> str:
    from app.phone import find_real_phone

    probe = find_real_phone(wait_s=2.0)
    if probe.connection is None:
        raise SetupStepError(probe.reason)
    name = probe.connection.label.en
    probe.connection.close()
    return name


IME_NEEDS_APK = Text(
    "The text-entry helper (ADBKeyboard) is not on the phone yet. Choose its APK file, then press Install again. "
    "Without it PhoneBuddy can still type through the mirror's clipboard.",
    "手机上还没有文字输入助手（ADBKeyboard）。请选择它的 APK 文件，然后再按“安装”。"
    "没有它时，手机助手仍可通过镜像的剪贴板输入文字。",
)


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
    from speech.models import ModelLocator

    locator = ModelLocator(allow_download=True, progress=lambda p: progress(0.1 * p.fraction))
    done = [str(locator.whisper("base")), str(locator.piper_voice("en_US-joe-medium").model)]
    progress(0.1)
    try:
        folder = download_weights(profile, on_progress=lambda p: progress(0.1 + 0.9 * p.fraction))
    except PolicyUnavailable as error:
        raise SetupStepError(error.message) from error
    done.append(str(folder))
    progress(1.0)
    return "\n".join(done)


def default_actions() -> SetupActions:
    return SetupActions(check_phone=_check_phone, install_ime=_install_ime, download=_download)


class _ProgressRelay(QObject):
    """Carries progress from a worker thread to the GUI thread (queued signal)."""

    fraction = Signal(float)


class StepPage(QWizardPage):
    def __init__(self, title_key: str, steps_key: str, *, lang: str, announce, action_key: str = "",
                 work: Callable[[Progress], str] | None = None, with_progress: bool = False):
        super().__init__()
        self.lang = lang
        self._announce = announce
        self._work = work
        self.title_key, self.steps_key, self.action_key = title_key, steps_key, action_key
        self.setTitle(tr(title_key, lang))
        self.steps = QLabel(tr(steps_key, lang))
        self.steps.setWordWrap(True)
        self.speak = QPushButton(tr("wiz_speak", lang))
        self.speak.setAccessibleName(tr("wiz_speak", lang))
        self.speak.setAccessibleDescription(tr("wiz_speak_desc", lang))
        self.speak.clicked.connect(self.read_aloud)
        layout = QVBoxLayout(self)
        layout.addWidget(self.steps)
        layout.addWidget(self.speak)
        self.action: QPushButton | None = None
        self.result = QLabel()
        self.result.setWordWrap(True)
        self.result.setObjectName("wizardResult")
        self.bar: QProgressBar | None = None
        self._relay = _ProgressRelay(self)
        if action_key:
            self.action = QPushButton(tr(action_key, lang))
            self.action.setAccessibleName(tr(action_key, lang))
            self.action.setAccessibleDescription(tr(f"{action_key}_desc", lang))
            self.action.clicked.connect(self.run_action)
            layout.addWidget(self.action)
        if with_progress:
            self.bar = QProgressBar()
            self.bar.setRange(0, 100)
            self.bar.setAccessibleName(tr("wiz_progress", lang))
            self.bar.setAccessibleDescription(tr("wiz_progress_desc", lang))
            self._relay.fraction.connect(self._on_progress)
            layout.addWidget(self.bar)
        layout.addWidget(self.result)
        layout.addStretch(1)
        self.op: BackgroundOp | None = None
        self._last_spoken_pct = -1

    def spoken(self) -> str:
        return f"{tr(self.title_key, self.lang)}. {tr(self.steps_key, self.lang)}"

    def read_aloud(self) -> None:
        if self._announce is not None:
            self._announce(self.spoken())

    def initializePage(self) -> None:
        self.read_aloud()

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
        if self._announce is not None and pct // 25 != self._last_spoken_pct // 25:
            self._last_spoken_pct = pct
            self._announce(f"{pct}%")

    def _show(self, text: str) -> None:
        self.result.setText(text)
        self.result.setAccessibleName(text)
        if self._announce is not None:
            self._announce(text)
        if self.action is not None:
            self.action.setEnabled(True)
        self.op = None

    def _choose_apk(self) -> None:
        from PySide6.QtWidgets import QFileDialog

        wizard = self.wizard()
        path, _filter = QFileDialog.getOpenFileName(self, tr("wiz_ime_title", self.lang), "", "APK (*.apk)")
        if path and wizard is not None:
            wizard.apk_path = path

    def _on_done(self, result: str) -> None:
        if self.title_key == "wiz_connect_title":
            self._show(tr("wiz_found", self.lang, phone=result))
        else:
            self._show(tr("wiz_done", self.lang))

    def _on_failed(self, exc: BaseException) -> None:
        if isinstance(exc, SetupStepError) and exc.text is IME_NEEDS_APK:
            self._show(exc.text.get(self.lang))
            self._choose_apk()
        elif isinstance(exc, SetupStepError):
            key = "wiz_not_found" if self.title_key == "wiz_connect_title" else "wiz_failed"
            self._show(tr(key, self.lang, detail=exc.text.get(self.lang)))
        elif isinstance(exc, NotAvailableError):
            self._show(tr("wiz_not_available", self.lang, what=str(exc)))
        elif self.title_key == "wiz_connect_title":
            self._show(tr("wiz_not_found", self.lang, detail=str(exc)))
        else:
            self._show(tr("wiz_failed", self.lang, detail=str(exc)))


class SetupWizard(QWizard):
    def __init__(self, *, lang: str, announce=None, actions: SetupActions | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("setupWizard")
        self.lang = lang
        self.apk_path = ""
        acts = actions or default_actions()
        self.setWindowTitle(tr("wiz_title", lang))
        self.setAccessibleName(tr("wiz_title", lang))
        self.setAccessibleDescription(tr("cs_setup_desc", lang))
        self.pages = [
            StepPage("wiz_usb_title", "wiz_usb_steps", lang=lang, announce=announce),
            StepPage("wiz_connect_title", "wiz_connect_steps", lang=lang, announce=announce, action_key="wiz_check",
                     work=lambda _p: acts.check_phone()),
            StepPage("wiz_ime_title", "wiz_ime_steps", lang=lang, announce=announce, action_key="wiz_install",
                     work=lambda _p: acts.install_ime(self.apk_path)),
            StepPage("wiz_models_title", "wiz_models_steps", lang=lang, announce=announce, action_key="wiz_download",
                     work=acts.download, with_progress=True),
        ]
        for page in self.pages:
            self.addPage(page)
        for which, key in ((QWizard.WizardButton.NextButton, "wiz_next"), (QWizard.WizardButton.BackButton, "wiz_back"),
                           (QWizard.WizardButton.FinishButton, "wiz_finish"), (QWizard.WizardButton.CancelButton, "cancel")):
            self.setButtonText(which, tr(key, lang))
            button = self.button(which)
            button.setAccessibleName(tr(key, lang))
            button.setAccessibleDescription(tr(key, lang))
        self.resize(760, 560)
