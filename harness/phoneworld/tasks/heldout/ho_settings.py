"""Held-out Settings toggles (AndroidWorld's system-toggle family: SystemWifiTurnOff, SystemBluetoothTurnOn
..., including its variants that start already in the goal state, where the right move is to check and
say so without touching anything).

Each template names the one setting it may change; everything else Settings holds must stay as it was.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from assistant_core.i18n import Text
from harness.phoneworld.tasks.base import Task, TaskCategory
from harness.phoneworld.tasks.driver import UI, Match, Move, T
from harness.phoneworld.tasks.flows import SETTINGS, open_app


@dataclass(frozen=True)
class NoParams:
    """Nothing varies but the seed's phone."""


# setting -> (page row to open or "" for the main list, switch rid, spoken name)
PAGES = {
    "wifi": ("wifi_settings", "switch_widget", Text("Wi-Fi")),
    "bluetooth": ("bluetooth_settings", "switch_widget", Text("Bluetooth")),
    "airplane": ("", "airplane_mode", Text("airplane mode")),
    "dark_mode": ("display_settings", "dark_ui_mode", Text("dark theme")),
}


class _Toggle(Task):
    """Set one switch to `target`; `already` puts the phone in the goal state from the start."""

    category: ClassVar[TaskCategory] = TaskCategory.SINGLE_APP
    apps: ClassVar[tuple[str, ...]] = (SETTINGS,)
    heldout: ClassVar[bool] = True
    max_steps: ClassVar[int] = 12
    key: ClassVar[str]
    target: ClassVar[bool]
    already: ClassVar[bool] = False
    wording: ClassVar[Text]

    def params(self, rng: random.Random) -> Any:
        return NoParams()

    def perturb(self, params: Any, rng: random.Random) -> Any:
        return None

    def may_change(self, params: Any) -> tuple[str, ...]:
        extra = ("settings.wifi", "settings.bluetooth") if self.key == "airplane" else ()
        return (f"settings.{self.key}", *extra)

    def instruction(self, params: Any) -> Text:
        return self.wording

    def setup(self, world: Any, params: Any) -> None:
        s = world.settings
        if self.key == "airplane" and (self.target if self.already else not self.target):
            s.wifi_before_airplane, s.bluetooth_before_airplane = s.wifi, s.bluetooth
            s.wifi = s.bluetooth = False
        setattr(s, self.key, self.target if self.already else not self.target)

    def is_successful(self, world: Any, params: Any) -> bool:
        return bool(getattr(world.settings, self.key)) is self.target

    def solve(self, ui: UI, params: Any) -> Iterator[Move]:
        page, switch_rid, name = PAGES[self.key]
        yield from open_app(ui, SETTINGS)
        if page:
            yield from ui.tap(Match(rid=f"{SETTINGS}:id/{page}"), T("Open the {name} settings.").format(name=name))
        switch = ui.need(Match(rid=f"{SETTINGS}:id/{switch_rid}"))
        if bool(switch.checked) is not self.target:
            yield from ui.tap(switch, T("Switch {name} {value}.").format(name=name, value=Text(str('on' if self.target else 'off'), str('打开' if self.target else '关闭'))))


def _toggle(task_id: str, key: str, target: bool, wording: Text, *, already: bool = False) -> _Toggle:
    cls = type(task_id, (_Toggle,), {"id": task_id, "key": key, "target": target, "already": already,
                                     "wording": wording, "__doc__": f"Held-out toggle: {key} -> {target}."})
    return cls()


@dataclass(frozen=True)
class Level:
    high: bool


class HoSettingsBrightnessMax(_Toggle):
    """AndroidWorld's SystemBrightnessMax / Min: the slider to one end."""

    id = "HoSettingsBrightnessMax"
    key = "brightness"
    high: ClassVar[bool] = True

    def instruction(self, params: Any) -> Text:
        if self.high:
            return Text("Make the screen as bright as it goes.")
        return Text("Turn the screen brightness all the way down.")

    def may_change(self, params: Any) -> tuple[str, ...]:
        return ("settings.brightness", "system.settings.system/screen_brightness_mode")

    def setup(self, world: Any, params: Any) -> None:
        world.settings.brightness = 128

    def is_successful(self, world: Any, params: Any) -> bool:
        b = world.settings.brightness
        return b >= 250 if self.high else b <= 5

    def solve(self, ui: UI, params: Any) -> Iterator[Move]:
        from assistant_core.types import Action

        yield from open_app(ui, SETTINGS)
        yield from ui.tap(Match(rid=f"{SETTINGS}:id/display_settings"), T("Open the display settings."))
        left, top, right, bottom = ui.need(Match(rid=f"{SETTINGS}:id/brightness_slider")).bounds
        x = right - 2 if self.high else left + 1
        yield Move(Action.click(x, (top + bottom) // 2), T("Tap the end of the brightness slider."))


class HoSettingsBrightnessMin(HoSettingsBrightnessMax):
    id = "HoSettingsBrightnessMin"
    high = False


TASKS = (
    _toggle("HoSettingsWifiOff", "wifi", False, Text("Switch the Wi-Fi off, please.")),
    _toggle("HoSettingsWifiOffAlready", "wifi", False,
            Text("Make sure Wi-Fi is off."), already=True),
    _toggle("HoSettingsBluetoothOnAlready", "bluetooth", True,
            Text("Check that Bluetooth is on."), already=True),
    _toggle("HoSettingsAirplaneOff", "airplane", False,
            Text("I'm off the plane: turn flight mode off.")),
    _toggle("HoSettingsDarkThemeOff", "dark_mode", False,
            Text("The screen is too dark, go back to the light theme.")),
    _toggle("HoSettingsDarkThemeOnAlready", "dark_mode", True,
            Text("Is dark mode on? Turn it on if not."), already=True),
    _toggle("HoSettingsBluetoothOff", "bluetooth", False, Text("Bluetooth off, please.")),
    _toggle("HoSettingsBluetoothOffAlready", "bluetooth", False,
            Text("Make sure Bluetooth isn't on."), already=True),
    _toggle("HoSettingsWifiOn", "wifi", True, Text("Connect me to Wi-Fi again: switch it on.")),
    _toggle("HoSettingsWifiOnAlready", "wifi", True, Text("Wi-Fi should be on; check it."),
            already=True),
    _toggle("HoSettingsDarkThemeOn", "dark_mode", True, Text("Switch to the dark theme.")),
    _toggle("HoSettingsAirplaneOnAlready", "airplane", True,
            Text("Is the phone in flight mode? It should be."), already=True),
    HoSettingsBrightnessMax(),
    HoSettingsBrightnessMin(),
)
