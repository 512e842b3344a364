"""The mock apps, one module each. `APP_CLASSES` lists them in home-screen order."""

from __future__ import annotations

from harness.phoneworld.apps.settings import SettingsApp

APP_CLASSES: tuple[type, ...] = (SettingsApp,)
