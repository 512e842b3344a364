"""Opening the caregiver settings: PIN first (set one on first use), then the dialog, then save.

The PIN check and back-off are assistant_core.settings.PinGuard's; the settings record is
assistant_core.settings.SettingsStore's. The app's own choice of agent (local 4-bit / CPU / server
address / demo) is kept beside them in the history store's settings under `AGENT_KEY`, as JSON.

`make_setup_wizard(window)` builds the first-run wizard wired to the window: its announcer, its
push-to-talk (`listen_for`), the language switch (`apply_language`: F8's switch, saved in the
settings record) and the server address (`use_server`: saved under `AGENT_KEY` like the settings
dialog does, and the window's agent becomes the remote policy).
"""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import QDialog

from app.agent import AgentChoice, AgentKind
from app.settings_dialog import CaregiverSettingsDialog, PinDialog
from app.strings import tr
from assistant_core.errors import SettingsError
from assistant_core.history import HistoryError
from assistant_core.settings import SETTINGS_KEY, AppsState, PinGuard, SettingsStore
from speech.recognisers import DEFAULT as DEFAULT_RECOGNISER
from speech.recognisers import TEXT as REC_TEXT
from speech.recognisers import load_choice, save_choice

if TYPE_CHECKING:  # pragma: no cover
    from app.setup_wizard import SetupActions, SetupWizard

log = logging.getLogger(__name__)

# app.main_window.MainWindow, which imports this module: named, not imported, so the app has no import cycle.
MainWindow = Any

AGENT_KEY = "app_agent_choice"


def load_agent(history) -> AgentChoice | None:
    raw = history.get_setting(AGENT_KEY)
    if not raw:
        return None
    try:
        data = json.loads(raw)
        return AgentChoice(AgentKind(data["kind"]), server_address=str(data.get("server", "")),
                           profile=str(data.get("profile", "")))
    except (ValueError, KeyError, TypeError):
        log.warning("stored agent choice is damaged; ignoring it")
        return None


def save_agent(history, choice: AgentChoice) -> None:
    history.put_setting(AGENT_KEY, json.dumps({"kind": choice.kind.value, "server": choice.server_address,
                                               "profile": choice.profile}))


def ask_pin(window: MainWindow, guard: PinGuard) -> bool:
    """True once the caregiver has typed the right PIN (or set a first one)."""
    lang = window.lang
    refused = guard.refusal()
    if refused is not None:  # the PIN record was removed or damaged outside the app: no PIN, old or new
        window.announcer.announce(refused.get(lang))
        return False
    if not guard.has_pin:
        dialog = PinDialog(lang=lang, new=True, parent=window)
        dialog.check = lambda pin: _set(guard, pin, lang)
    else:
        dialog = PinDialog(lang=lang, parent=window)

        def check(pin: str) -> str | None:
            result = guard.check(pin)
            return None if result.ok else (result.message.get(lang) if result.message else tr("pin_wrong", lang))

        dialog.check = check
    window.announcer.announce(dialog.prompt.text())
    window.pin_dialog = dialog
    return dialog.exec() == QDialog.DialogCode.Accepted


def model_names() -> list[str]:
    try:
        from assistant_core.policy.profiles import load_profiles

        return sorted(load_profiles().profiles)
    except (ImportError, OSError, ValueError, KeyError):
        log.exception("could not read model profiles")
        return []


def open_caregiver_settings(window: MainWindow) -> bool:
    """PIN, then the settings dialog; on OK the settings are saved and applied. True when saved."""
    history = window.services.history
    if history is None:
        window.announcer.announce(tr("wiz_not_available", window.lang, what=tr("cs_title", window.lang)))
        return False
    guard = PinGuard(history)
    if not ask_pin(window, guard):
        return False
    store = SettingsStore(history)
    loaded = store.load()
    if loaded.tampered:  # changed outside the app: the caregiver hears it before checking and saving again
        window.announcer.announce(loaded.problems[-1].get(window.lang))
    installed = window.phone.device.installed_apps() if window.phone is not None else {}
    voices = window.services.extra.get("voices", ())
    # The session's language (chosen with --lang, F8 or the wizard) is the one shown and kept.
    shown = replace(loaded.settings, language=window.lang)
    dialog = CaregiverSettingsDialog(shown, window.agent, installed, lang=window.lang, voices=voices,
                                     model_names=model_names(), announce=window.announcer.announce,
                                     recogniser=load_choice(history), download_recogniser=download_recogniser,
                                     recogniser_present=recogniser_present, parent=window)
    window.settings_dialog = dialog
    if dialog.exec() != QDialog.DialogCode.Accepted:
        return False
    settings, agent = dialog.result_settings(), dialog.result_agent()
    try:
        store.save(settings, app_labels=installed)
        save_agent(history, agent)
        save_choice(history, dialog.result_recogniser() or DEFAULT_RECOGNISER)
    except HistoryError as error:  # a full disk or a lock: nothing half-saved is used, and the caregiver hears why
        window.announcer.announce(error.message.get(window.lang))
        return False
    settings = replace(settings, apps_state=AppsState.SAVED)  # the caregiver's list binds, even an empty one
    window.apply_settings(settings, agent)
    window.announcer.announce(tr("cs_saved", window.lang))
    use_recogniser(window, dialog.result_recogniser() or DEFAULT_RECOGNISER)
    if dialog.change_pin_requested:
        new = PinDialog(lang=window.lang, new=True, parent=window)
        new.check = lambda pin: _set(guard, pin, window.lang)
        new.exec()
    if dialog.setup_requested:
        make_setup_wizard(window).exec()
    if dialog.privacy_requested:
        from app.profile_dialog import open_profile_dialog

        open_profile_dialog(window)
    return True


def download_recogniser(name: str, progress) -> str:
    """Fetch Whisper `name` into the model cache (speech.models, resuming, sizes checked), reporting the
    fraction done; a failure raises speech.messages.ModelMissingError with plain words ("press Download again")."""
    from speech.models import ModelLocator

    return str(ModelLocator(allow_download=True, progress=lambda p: progress(p.fraction), again="button").whisper(name))


def recogniser_present(name: str) -> bool:
    from speech.messages import ModelMissingError
    from speech.models import ModelLocator

    try:
        ModelLocator().whisper(name)
    except ModelMissingError:
        return False
    return True


def use_recogniser(window: MainWindow, name: str) -> None:
    """The window listens with `name` from the next recording (app.voice.WhisperTranscription.use_model)."""
    transcription = window.services.transcriber
    if hasattr(transcription, "use_model") and transcription.use_model(name):
        window.announcer.announce(REC_TEXT.get("switched", window.lang, name=name))


def save_language(history, lang: str) -> bool:
    """Store `lang` in the caregiver settings record (creating it with the safe defaults when there is
    none yet). A damaged record is left alone for the caregiver to see: False then."""
    store = SettingsStore(history)
    loaded = store.load()
    if loaded.needs_setup and history.get_setting(SETTINGS_KEY) is not None:
        log.warning("stored settings are damaged; the language choice is not saved over them")
        return False
    try:
        store.save(replace(loaded.settings, language=lang), app_labels=history.allowed_apps())
    except HistoryError:  # a full disk: the choice holds for this session only (the start-up note said why)
        log.warning("the language choice could not be saved")
        return False
    return True


def apply_language(window: MainWindow, lang: str) -> None:
    """The setup wizard's language choice: F8's switch on the window (the wizard says it), then saved."""
    window.set_language(lang, announce=False, persist=False)  # saved just below
    if window.caregiver_settings is not None:
        window.caregiver_settings = replace(window.caregiver_settings, language=lang)
    history = window.services.history
    if history is not None:
        save_language(history, lang)


class PinRequiredError(PermissionError):
    """The caregiver's PIN was not given, so a guarded choice was not changed."""


def use_server(window: MainWindow, address: str) -> AgentChoice:
    """The setup wizard's server address: saved where the settings dialog keeps it, and the window's
    agent becomes the remote policy on that server. The server receives the phone's screenshots, so once
    a caregiver PIN is set it must be typed first (the wizard opens whenever its marker file is missing):
    PinRequiredError otherwise, and nothing changes."""
    history = window.services.history
    if history is not None:
        guard = PinGuard(history)
        if guard.has_pin and not ask_pin(window, guard):
            raise PinRequiredError("the caregiver PIN is needed to change the model server")
    settings = window.caregiver_settings
    if settings is None and window.services.history is not None:
        settings = SettingsStore(window.services.history).load().settings
    choice = AgentChoice(AgentKind.SERVER, server_address=address, profile=settings.model if settings is not None else "")
    if window.services.history is not None:
        save_agent(window.services.history, choice)
    window.set_agent(choice)
    return choice


def make_setup_wizard(window: MainWindow, *, actions: SetupActions | None = None) -> SetupWizard:
    """The setup wizard in the window's language, speaking through its announcer, listening through its
    push-to-talk, and applying the language and server choices to the window and the settings."""
    from app.setup_wizard import SetupWizard

    wizard = SetupWizard(lang=window.lang, announce=window.announcer.announce, actions=actions, parent=window,
                         on_language=lambda lang: apply_language(window, lang),
                         on_server=lambda address: use_server(window, address),
                         listen=window.listen_for)
    window.setup_wizard = wizard
    return wizard


def _set(guard: PinGuard, pin: str, lang: str = "en") -> str | None:
    try:
        guard.set_pin(pin)
    except SettingsError as error:
        return str(error)
    except HistoryError as error:  # a full disk or a lock: the PIN is not set, and the dialog says why
        return error.message.get(lang)
    return None
