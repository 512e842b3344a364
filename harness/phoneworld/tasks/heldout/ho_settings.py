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
    "wifi": ("wifi_settings", "switch_widget", Text("Wi-Fi", "WLAN")),
    "bluetooth": ("bluetooth_settings", "switch_widget", Text("Bluetooth", "蓝牙")),
    "airplane": ("", "airplane_mode", Text("airplane mode", "飞行模式")),
    "dark_mode": ("display_settings", "dark_ui_mode", Text("dark theme", "深色主题")),
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
            yield from ui.tap(Match(rid=f"{SETTINGS}:id/{page}"), T(f"Open the {name.en} settings.", f"打开{name.zh}设置。"))
        switch = ui.need(Match(rid=f"{SETTINGS}:id/{switch_rid}"))
        if bool(switch.checked) is not self.target:
            yield from ui.tap(switch, T(f"Switch {name.en} {'on' if self.target else 'off'}.",
                                        f"{'打开' if self.target else '关闭'}{name.zh}。"))


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
            return Text("Make the screen as bright as it goes.", "把屏幕亮度调到最亮。")
        return Text("Turn the screen brightness all the way down.", "把屏幕亮度调到最暗。")

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
        yield from ui.tap(Match(rid=f"{SETTINGS}:id/display_settings"), T("Open the display settings.", "打开显示设置。"))
        left, top, right, bottom = ui.need(Match(rid=f"{SETTINGS}:id/brightness_slider")).bounds
        x = right - 2 if self.high else left + 1
        yield Move(Action.click(x, (top + bottom) // 2), T("Tap the end of the brightness slider.", "点击亮度条的尽头。"))


class HoSettingsBrightnessMin(HoSettingsBrightnessMax):
    id = "HoSettingsBrightnessMin"
    high = False


TASKS = (
    _toggle("HoSettingsWifiOff", "wifi", False, Text("Switch the Wi-Fi off, please.", "请把无线网关掉。")),
    _toggle("HoSettingsWifiOffAlready", "wifi", False,
            Text("Make sure Wi-Fi is off.", "确认一下无线网是关着的。"), already=True),
    _toggle("HoSettingsBluetoothOnAlready", "bluetooth", True,
            Text("Check that Bluetooth is on.", "看看蓝牙是不是开着。"), already=True),
    _toggle("HoSettingsAirplaneOff", "airplane", False,
            Text("I'm off the plane: turn flight mode off.", "我下飞机了，把飞行模式关掉。")),
    _toggle("HoSettingsDarkThemeOff", "dark_mode", False,
            Text("The screen is too dark, go back to the light theme.", "屏幕太暗了，换回浅色主题。")),
    _toggle("HoSettingsDarkThemeOnAlready", "dark_mode", True,
            Text("Is dark mode on? Turn it on if not.", "深色模式开了吗？没开就打开。"), already=True),
    _toggle("HoSettingsBluetoothOff", "bluetooth", False, Text("Bluetooth off, please.", "请把蓝牙关了。")),
    _toggle("HoSettingsBluetoothOffAlready", "bluetooth", False,
            Text("Make sure Bluetooth isn't on.", "确认蓝牙没开着。"), already=True),
    _toggle("HoSettingsWifiOn", "wifi", True, Text("Connect me to Wi-Fi again: switch it on.", "把无线网重新打开。")),
    _toggle("HoSettingsWifiOnAlready", "wifi", True, Text("Wi-Fi should be on; check it.", "无线网应该是开着的，检查一下。"),
            already=True),
    _toggle("HoSettingsDarkThemeOn", "dark_mode", True, Text("Switch to the dark theme.", "换成深色主题。")),
    _toggle("HoSettingsAirplaneOnAlready", "airplane", True,
            Text("Is the phone in flight mode? It should be.", "手机开着飞行模式吗？应该开着。"), already=True),
    HoSettingsBrightnessMax(),
    HoSettingsBrightnessMin(),
)
