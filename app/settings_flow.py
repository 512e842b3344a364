"""Opening the caregiver settings: PIN first (set one on first use), then the dialog, then save.

The PIN check and back-off are assistant_core.settings.PinGuard's; the settings record is
assistant_core.settings.SettingsStore's. The app's own choice of agent (local 4-bit / CPU / server
address / demo) is kept beside them in the history store's settings under `AGENT_KEY`, as JSON.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QDialog

from app.agent import AgentChoice, AgentKind
from app.settings_dialog import CaregiverSettingsDialog, PinDialog
from app.strings import tr
from assistant_core.errors import SettingsError
from assistant_core.settings import PinGuard, SettingsStore

if TYPE_CHECKING:  # pragma: no cover
    from app.main_window import MainWindow

log = logging.getLogger(__name__)

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
    if not guard.has_pin:
        dialog = PinDialog(lang=lang, new=True, parent=window)
        dialog.check = lambda pin: _set(guard, pin)
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
    installed = window.phone.device.installed_apps() if window.phone is not None else {}
    voices = window.services.extra.get("voices", ())
    dialog = CaregiverSettingsDialog(loaded.settings, window.agent, installed, lang=window.lang, voices=voices,
                                     model_names=model_names(), announce=window.announcer.announce, parent=window)
    window.settings_dialog = dialog
    if dialog.exec() != QDialog.DialogCode.Accepted:
        return False
    settings, agent = dialog.result_settings(), dialog.result_agent()
    store.save(settings, app_labels=installed)
    save_agent(history, agent)
    window.apply_settings(settings, agent)
    window.announcer.announce(tr("cs_saved", window.lang))
    if dialog.change_pin_requested:
        new = PinDialog(lang=window.lang, new=True, parent=window)
        new.check = lambda pin: _set(guard, pin)
        new.exec()
    if dialog.setup_requested:
        from app.setup_wizard import SetupWizard

        SetupWizard(lang=window.lang, announce=window.announcer.announce, parent=window).exec()
    return True


def _set(guard: PinGuard, pin: str) -> str | None:
    try:
        guard.set_pin(pin)
    except SettingsError as error:
        return str(error)
    return None
