"""The caregiver settings dialog (opened only after the PIN, see app.settings_flow) and the PIN dialogs.

`CaregiverSettingsDialog(initial, agent, installed_apps, ...)` edits a copy: the allowed apps picked
from the phone's installed apps by their names, the optional categories that always ask (the mandatory
ones are listed as always asked and cannot be switched off), the step budget, language, voice, speech
rate, the model (local 4-bit, local CPU, a server address, or the scripted demonstration), and the speech
recogniser (speech.recognisers: Whisper base, small or large-v3-turbo, each with its published accuracy and its
speed measured on this computer, the recommended one marked; Download fetches the chosen one with a
progress bar and spoken percentages).
`result_settings()` / `result_agent()` give the validated choice; a bad value keeps the dialog open with
the reason shown and announced.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.agent import AgentChoice, AgentKind, check_server_address
from app.strings import language_label, tr
from assistant_core import languages as langs
from assistant_core.errors import SettingsError
from assistant_core.i18n import Text, retry_hint
from assistant_core.safety import MANDATORY_CONFIRM, OPTIONAL_CONFIRM, Category, category_phrase
from assistant_core.settings import CaregiverSettings
from speech.messages import MESSAGES
from speech.recognisers import DEFAULT as DEFAULT_RECOGNISER
from speech.recognisers import RECOGNISERS, Machine, load_speeds, offers
from speech.recognisers import TEXT as REC_TEXT

AGENT_OPTIONS = (
    (AgentKind.LOCAL_4BIT, "cs_model_local4"),
    (AgentKind.LOCAL_CPU, "cs_model_cpu"),
    (AgentKind.SERVER, "cs_model_server"),
    (AgentKind.DEMO, "cs_model_demo"),
)


class _Progress(QObject):
    """Carries download progress from the downloading thread to the dialog (queued to the GUI thread)."""

    fraction = Signal(float)


def _name(widget: QWidget, lang: str, key: str, desc: str | None = None) -> None:
    widget.setAccessibleName(tr(key, lang))
    widget.setAccessibleDescription(tr(desc or f"{key}_desc", lang))


class CaregiverSettingsDialog(QDialog):
    def __init__(
        self,
        initial: CaregiverSettings,
        agent: AgentChoice,
        installed_apps: dict[str, str],
        *,
        lang: str,
        voices: Sequence[str] = (),
        model_names: Sequence[str] = (),
        announce: Callable[[str], object] | None = None,
        recogniser: str = "base",
        recogniser_offers: Sequence | None = None,
        download_recogniser: Callable[[str, Callable[[float], None]], object] | None = None,
        recogniser_present: Callable[[str], bool] | None = None,
        parent: QWidget | None = None,
    ):
        super().__init__(parent)
        self.setObjectName("caregiverSettings")
        self.lang = lang
        self.initial = initial
        self._announce = announce
        self._settings: CaregiverSettings | None = None
        self._agent: AgentChoice | None = None
        self.change_pin_requested = False
        self.setup_requested = False

        self.apps = QListWidget()
        self.apps.setObjectName("allowedApps")
        for package, label in sorted(installed_apps.items(), key=lambda kv: kv[1].lower()):
            item = QListWidgetItem(f"{label} ({package})")
            item.setData(Qt.ItemDataRole.UserRole, package)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if package in initial.allowed_apps else Qt.CheckState.Unchecked)
            self.apps.addItem(item)
        if self.apps.count():
            self.apps.setCurrentRow(0)
        self.apps_label = QLabel()
        self.apps_label.setBuddy(self.apps)
        self.no_apps = QLabel()
        self.no_apps.setVisible(not installed_apps)

        self.categories = QListWidget()
        self.categories.setObjectName("alwaysAsk")
        for cat in sorted(MANDATORY_CONFIRM | OPTIONAL_CONFIRM, key=lambda c: (c in OPTIONAL_CONFIRM, c.value)):
            item = QListWidgetItem()
            item.setData(Qt.ItemDataRole.UserRole, cat.value)
            if cat in MANDATORY_CONFIRM:
                item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
                item.setCheckState(Qt.CheckState.Checked)
            else:
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                item.setCheckState(Qt.CheckState.Checked if cat in initial.always_confirm else Qt.CheckState.Unchecked)
            self.categories.addItem(item)
        self.categories.setCurrentRow(0)
        self.categories_label = QLabel()
        self.categories_label.setBuddy(self.categories)

        self.budget = QSpinBox()
        self.budget.setObjectName("stepBudget")
        self.budget.setRange(1, 500)
        self.budget.setValue(initial.step_budget)
        self.language = QComboBox()
        self.language.setObjectName("languageChoice")
        for code in langs.codes():  # every registered language (assistant_core.languages), named in retranslate
            self.language.addItem("", code)
        self.language.setCurrentIndex(max(0, self.language.findData(langs.get(initial.language).code)))
        # The Chinese voice (speech.kokoro: 'female' zf_xiaoxiao, the default, or 'male' zm_yunxi); any
        # other stored or offered voice name is kept as a choice of its own.
        self.voice = QComboBox()
        self.voice.setObjectName("voiceChoice")
        self.voice.addItem("", "female")
        self.voice.addItem("", "male")
        for v in dict.fromkeys([initial.voice, *voices]):
            if v and v.lower() not in ("female", "male"):
                self.voice.addItem(v, v)
        chosen = (initial.voice or "female").strip()
        index = self.voice.findData(chosen.lower() if chosen.lower() in ("female", "male") else chosen)
        self.voice.setCurrentIndex(max(0, index))
        self.rate = QSpinBox()
        self.rate.setObjectName("speechRate")
        self.rate.setRange(50, 200)
        self.rate.setSingleStep(10)
        self.rate.setValue(round(initial.speech_rate * 100))
        self.agent_kind = QComboBox()
        self.agent_kind.setObjectName("agentKind")
        for kind, _key in AGENT_OPTIONS:
            self.agent_kind.addItem("", kind.value)
        self.agent_kind.setCurrentIndex([k for k, _ in AGENT_OPTIONS].index(agent.kind))
        self.model_name = QComboBox()
        self.model_name.setObjectName("modelName")
        for name in dict.fromkeys([initial.model, *model_names]):
            self.model_name.addItem(name, name)
        self.server = QLineEdit(agent.server_address)
        self.server.setObjectName("serverAddress")
        self.server.setPlaceholderText("http://192.168.1.20:8000/v1")
        self.agent_kind.currentIndexChanged.connect(self._sync_server)
        self._build_recogniser(recogniser, recogniser_offers, download_recogniser, recogniser_present)

        self.change_pin = QPushButton()
        self.change_pin.setObjectName("changePin")
        self.change_pin.clicked.connect(self._on_change_pin)
        self.setup = QPushButton()
        self.setup.setObjectName("setupWizard")
        self.setup.clicked.connect(self._on_setup)
        self.privacy = QPushButton()  # app.profile_dialog: the profile, what is stored, export and delete
        self.privacy.setObjectName("privacySettings")
        self.privacy.clicked.connect(self._on_privacy)
        self.privacy_requested = False
        self.error = QLabel()
        self.error.setObjectName("settingsError")
        self.error.setWordWrap(True)
        self.ok = QPushButton()
        self.ok.setObjectName("settingsOk")
        self.ok.setDefault(True)
        self.ok.clicked.connect(self._on_ok)
        self.cancel = QPushButton()
        self.cancel.setObjectName("settingsCancel")
        self.cancel.clicked.connect(self.reject)

        self.form = QFormLayout()
        self.form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.form_labels: dict[str, QLabel] = {}
        for key, field in (("cs_budget", self.budget), ("cs_language", self.language), ("cs_voice", self.voice),
                           ("cs_rate", self.rate), ("cs_model", self.agent_kind), ("cs_model_name", self.model_name),
                           ("cs_server", self.server), ("rec_label", self.recogniser)):
            label = QLabel()
            label.setBuddy(field)
            self.form_labels[key] = label
            self.form.addRow(label, field)
        lists = QHBoxLayout()
        left, right = QVBoxLayout(), QVBoxLayout()
        left.addWidget(self.apps_label)
        left.addWidget(self.apps, 1)
        left.addWidget(self.no_apps)
        right.addWidget(self.categories_label)
        right.addWidget(self.categories, 1)
        lists.addLayout(left, 1)
        lists.addLayout(right, 1)
        buttons = QHBoxLayout()
        for b in (self.change_pin, self.setup, self.privacy):
            buttons.addWidget(b)
        buttons.addStretch(1)
        buttons.addWidget(self.ok)
        buttons.addWidget(self.cancel)
        layout = QVBoxLayout(self)
        layout.addLayout(lists, 1)
        layout.addLayout(self.form)
        row = QHBoxLayout()
        row.addWidget(self.recogniser_download)
        row.addWidget(self.recogniser_progress, 1)
        layout.addLayout(row)
        layout.addWidget(self.recogniser_status)
        layout.addWidget(self.error)
        layout.addLayout(buttons)
        order = [self.apps, self.categories, self.budget, self.language, self.voice, self.rate,
                 self.agent_kind, self.model_name, self.server, self.recogniser, self.recogniser_download, self.change_pin, self.setup, self.privacy, self.ok, self.cancel]
        for a, b in zip(order, order[1:], strict=False):
            self.setTabOrder(a, b)
        self.retranslate(lang)
        self._sync_server()
        self.resize(900, 700)

    def retranslate(self, lang: str) -> None:
        self.lang = lang
        self.setWindowTitle(tr("cs_title", lang))
        self.setAccessibleName(tr("cs_title", lang))
        self.setAccessibleDescription(tr("cs_apps_desc", lang))
        self.apps_label.setText(tr("cs_apps", lang))
        self.no_apps.setText(tr("cs_no_apps", lang))
        self.categories_label.setText(tr("cs_categories", lang))
        _name(self.apps, lang, "cs_apps")
        _name(self.categories, lang, "cs_categories")
        for i in range(self.categories.count()):
            item = self.categories.item(i)
            cat = Category(item.data(Qt.ItemDataRole.UserRole))
            text = category_phrase(cat).get(lang)
            item.setText(text + (" ✓" if cat in MANDATORY_CONFIRM else ""))
        labels = {"cs_budget": "cs_budget", "cs_language": "cs_language", "cs_voice": "cs_voice",
                  "cs_rate": "cs_rate", "cs_model": "cs_model", "cs_model_name": "cs_model_name", "cs_server": "cs_server"}
        for key, label in self.form_labels.items():
            label.setText(REC_TEXT.get(key[4:], lang) if key.startswith("rec_") else tr(labels[key], lang))
        _name(self.budget, lang, "cs_budget")
        _name(self.language, lang, "cs_language")
        _name(self.voice, lang, "cs_voice")
        _name(self.rate, lang, "cs_rate")
        _name(self.agent_kind, lang, "cs_model")
        _name(self.model_name, lang, "cs_model_name")
        _name(self.server, lang, "cs_server")
        self._retranslate_recogniser(lang)
        for i in range(self.language.count()):
            self.language.setItemText(i, language_label(self.language.itemData(i), lang))
        self.voice.setItemText(0, tr("cs_voice_female", lang))
        self.voice.setItemText(1, tr("cs_voice_male", lang))
        for i, (_kind, key) in enumerate(AGENT_OPTIONS):
            self.agent_kind.setItemText(i, tr(key, lang))
        for button, key in ((self.change_pin, "cs_pin_change"), (self.setup, "cs_setup"),
                            (self.ok, "ok"), (self.cancel, "cancel")):
            button.setText(tr(key, lang))
            _name(button, lang, key)
        from app.profile_dialog import T as PRIVACY_TEXT

        self.privacy.setText(PRIVACY_TEXT.get("open", lang))
        self.privacy.setAccessibleName(PRIVACY_TEXT.get("open", lang))
        self.privacy.setAccessibleDescription(PRIVACY_TEXT.get("desc", lang))

    # -- the speech recogniser ------------------------------------------------------------------------

    def _build_recogniser(self, chosen, given_offers, download, present) -> None:
        if given_offers is None:
            from speech.models import default_cache_dir

            machine = Machine.here()
            given_offers = offers(load_speeds(default_cache_dir(), machine.cores), machine)
        self.recogniser_offers = list(given_offers)
        self._download_recogniser = download
        self._recogniser_present = present
        self.recogniser = QComboBox()
        self.recogniser.setObjectName("recogniserChoice")
        for offer in self.recogniser_offers:
            self.recogniser.addItem("", offer.recogniser.name)
        self.recogniser.setCurrentIndex(max(0, self.recogniser.findData(chosen if chosen in RECOGNISERS
                                                                         else DEFAULT_RECOGNISER)))
        self.recogniser_download = QPushButton()
        self.recogniser_download.setObjectName("recogniserDownload")
        self.recogniser_download.setEnabled(download is not None)
        self.recogniser_download.clicked.connect(self.start_recogniser_download)
        self.recogniser_progress = QProgressBar()
        self.recogniser_progress.setObjectName("recogniserProgress")
        self.recogniser_progress.setRange(0, 100)
        self.recogniser_progress.setVisible(False)
        self.recogniser_status = QLabel()
        self.recogniser_status.setObjectName("recogniserStatus")
        self.recogniser_status.setWordWrap(True)
        self._progress = _Progress()
        self._progress.fraction.connect(self._on_download_progress, Qt.ConnectionType.QueuedConnection)
        self._said_percent = -1
        self.recogniser_download_op = None
        self.recogniser.currentIndexChanged.connect(self._show_recogniser_state)

    def _retranslate_recogniser(self, lang: str) -> None:
        for i, offer in enumerate(self.recogniser_offers):
            self.recogniser.setItemText(i, offer.describe(lang))
        self.recogniser.setAccessibleName(REC_TEXT.get("label", lang))
        self.recogniser.setAccessibleDescription(REC_TEXT.get("desc", lang))
        self.recogniser_download.setText(REC_TEXT.get("download", lang))
        self.recogniser_download.setAccessibleName(REC_TEXT.get("download", lang))
        self.recogniser_download.setAccessibleDescription(REC_TEXT.get("download_desc", lang))
        self.recogniser_progress.setAccessibleName(REC_TEXT.get("download", lang))
        self._show_recogniser_state()

    def chosen_recogniser(self) -> str:
        return self.recogniser.currentData() or DEFAULT_RECOGNISER

    def _recogniser_offer(self):
        return next(o for o in self.recogniser_offers if o.recogniser.name == self.chosen_recogniser())

    def _show_recogniser_state(self) -> None:
        name = self.chosen_recogniser()
        parts = [self._recogniser_offer().reason.get(self.lang)]
        if self._recogniser_present is not None:
            parts.append(REC_TEXT.get("present" if self._recogniser_present(name) else "absent", self.lang, name=name))
        self.recogniser_status.setText(" ".join(parts))
        self.recogniser_status.setAccessibleName(self.recogniser_status.text())

    def start_recogniser_download(self) -> None:
        """Fetch the chosen recogniser on a background thread; the bar follows, every 25% is said aloud, and
        the end (ready, or why not, in plain words) is shown and said."""
        if self._download_recogniser is None or self.recogniser_download_op is not None:
            return
        from app.workers import BackgroundOp

        name = self.chosen_recogniser()
        self._said_percent = -1
        self.recogniser_progress.setValue(0)
        self.recogniser_progress.setVisible(True)
        self.recogniser_download.setEnabled(False)
        fetch = self._download_recogniser
        emit = self._progress.fraction.emit
        self.recogniser_download_op = BackgroundOp(
            lambda: fetch(name, emit), on_done=lambda _r: self._download_ended(name, None),
            on_failed=lambda error: self._download_ended(name, error), parent=self).start()

    def _on_download_progress(self, fraction: float) -> None:
        percent = max(0, min(100, int(fraction * 100)))
        self.recogniser_progress.setValue(percent)
        step = percent // 25 * 25
        if step > self._said_percent:
            self._said_percent = step
            self._say(REC_TEXT.get("downloading", self.lang, name=self.chosen_recogniser(), percent=step))

    def _download_ended(self, name: str, error: BaseException | None) -> None:
        self.recogniser_download_op = None
        self.recogniser_download.setEnabled(True)
        if error is None:
            self.recogniser_progress.setValue(100)
            text = REC_TEXT.get("downloaded", self.lang, name=name)
        else:  # speech.models' errors carry plain words in both languages; anything else is said generically
            carried = getattr(error, "text", None)
            text = carried.get(self.lang) if isinstance(carried, Text) else \
                MESSAGES.get("model_offline", self.lang, name=name, again=retry_hint("button"))
        self.recogniser_status.setText(text)
        self.recogniser_status.setAccessibleName(text)
        self._say(text)

    def _say(self, text: str) -> None:
        if self._announce is not None:
            self._announce(text)

    def result_recogniser(self) -> str | None:
        """The chosen recogniser once OK was pressed (None before)."""
        return self.chosen_recogniser() if self._settings is not None else None

    def _sync_server(self) -> None:
        self.server.setEnabled(self.agent_kind.currentData() == AgentKind.SERVER.value)

    def _on_change_pin(self) -> None:
        self.change_pin_requested = True
        self._on_ok()

    def _on_setup(self) -> None:
        self.setup_requested = True
        self._on_ok()

    def _on_privacy(self) -> None:
        self.privacy_requested = True
        self._on_ok()

    # -- the result -------------------------------------------------------------------------------

    def allowed_packages(self) -> set[str]:
        return {self.apps.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.apps.count())
                if self.apps.item(i).checkState() == Qt.CheckState.Checked}

    def chosen_categories(self) -> set[Category]:
        out = set()
        for i in range(self.categories.count()):
            item = self.categories.item(i)
            cat = Category(item.data(Qt.ItemDataRole.UserRole))
            if cat in OPTIONAL_CONFIRM and item.checkState() == Qt.CheckState.Checked:
                out.add(cat)
        return out

    def _collect(self) -> tuple[CaregiverSettings, AgentChoice]:
        kind = AgentKind(self.agent_kind.currentData())
        server = self.server.text().strip()
        if kind is AgentKind.SERVER:
            try:
                server = check_server_address(server)  # the same check as the setup wizard's
            except ValueError:
                raise SettingsError(tr("cs_server_bad", self.lang)) from None
        settings = replace(
            self.initial,
            allowed_apps=frozenset(self.allowed_packages()),
            always_confirm=frozenset(self.chosen_categories()),
            step_budget=self.budget.value(),
            language=self.language.currentData(),
            voice=self.voice.currentData() or "",
            speech_rate=self.rate.value() / 100.0,
            model=self.model_name.currentData() or self.initial.model,
        )
        return settings, AgentChoice(kind, server_address=server if kind is AgentKind.SERVER else "",
                                     profile=settings.model)

    def _on_ok(self) -> None:
        try:
            self._settings, self._agent = self._collect()
        except SettingsError as error:
            self.error.setText(str(error))
            self.error.setAccessibleName(str(error))
            if self._announce is not None:
                self._announce(str(error))
            self.change_pin_requested = self.setup_requested = self.privacy_requested = False
            return
        self.accept()

    def result_settings(self) -> CaregiverSettings | None:
        return self._settings

    def result_agent(self) -> AgentChoice | None:
        return self._agent


class PinDialog(QDialog):
    """Asks for the PIN (or, with `new=True`, a new PIN twice). `pin()` is the entered PIN."""

    def __init__(self, *, lang: str, new: bool = False, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("pinDialog")
        self.lang = lang
        self.new = new
        self.prompt = QLabel(tr("pin_new" if new else "pin_desc", lang))
        self.prompt.setWordWrap(True)
        self.field = QLineEdit()
        self.field.setObjectName("pinField")
        self.field.setEchoMode(QLineEdit.EchoMode.Password)
        self.field.setMaxLength(12)
        _name(self.field, lang, "pin_label", "pin_new" if new else "pin_desc")
        self.prompt.setBuddy(self.field)
        self.repeat = QLineEdit()
        self.repeat.setObjectName("pinRepeat")
        self.repeat.setEchoMode(QLineEdit.EchoMode.Password)
        self.repeat.setMaxLength(12)
        _name(self.repeat, lang, "pin_repeat", "pin_repeat")
        self.repeat_label = QLabel(tr("pin_repeat", lang))
        self.repeat_label.setBuddy(self.repeat)
        self.repeat.setVisible(new)
        self.repeat_label.setVisible(new)
        self.message = QLabel()
        self.message.setObjectName("pinMessage")
        self.message.setWordWrap(True)
        self.ok = QPushButton(tr("ok", lang))
        _name(self.ok, lang, "ok")
        self.ok.setDefault(True)
        self.ok.clicked.connect(self._on_ok)
        self.cancel = QPushButton(tr("cancel", lang))
        _name(self.cancel, lang, "cancel")
        self.cancel.clicked.connect(self.reject)
        self.setWindowTitle(tr("pin_title", lang))
        self.setAccessibleName(tr("pin_title", lang))
        self.setAccessibleDescription(tr("pin_desc", lang))
        layout = QVBoxLayout(self)
        for w in (self.prompt, self.field, self.repeat_label, self.repeat, self.message):
            layout.addWidget(w)
        row = QHBoxLayout()
        row.addWidget(self.ok)
        row.addWidget(self.cancel)
        layout.addLayout(row)
        self.check: Callable[[str], str | None] | None = None

    def pin(self) -> str:
        return self.field.text()

    def show_message(self, text: str) -> None:
        """Show AND say it (a wrong PIN, a lockout, a mismatch): a label change alone reaches no one who
        cannot see it. Said through the window's announcer (speech and screen reader)."""
        self.message.setText(text)
        self.message.setAccessibleName(text)
        announcer = getattr(self.parent(), "announcer", None)
        if announcer is not None:
            from app.announce import Cue

            announcer.announce(text, Cue.ERROR)

    def _on_ok(self) -> None:
        if self.new and self.field.text() != self.repeat.text():
            self.show_message(tr("pin_mismatch", self.lang))
            return
        if self.check is not None:
            problem = self.check(self.field.text())
            if problem:
                self.show_message(problem)
                self.field.clear()
                return
        self.accept()
