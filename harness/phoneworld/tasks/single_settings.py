"""Single-app tasks in Settings: radios, display, font size, language, Wi-Fi network, location.

State read by the verifiers: `world.settings` (SettingsState) and `world.language`.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from assistant_core.i18n import Text
from assistant_core.types import Action
from harness.phoneworld.tasks.base import Task, TaskCategory
from harness.phoneworld.tasks.driver import UI, Match, Move, T
from harness.phoneworld.tasks.flows import open_app

SETTINGS = "com.android.settings"


def rid(name: str) -> Match:
    return Match(rid=f"{SETTINGS}:id/{name}")


def open_settings(ui: UI) -> Iterator[Move]:
    yield from open_app(ui, SETTINGS)


@dataclass(frozen=True)
class NoParams:
    """For tasks whose instruction has nothing to vary."""


class _SettingsTask(Task):
    category: ClassVar[TaskCategory] = TaskCategory.SINGLE_APP
    apps: ClassVar[tuple[str, ...]] = (SETTINGS,)
    max_steps: ClassVar[int] = 15

    def params(self, rng: random.Random) -> Any:
        return NoParams()

    def perturb(self, params: Any, rng: random.Random) -> Any:
        return None  # nothing to get wrong but the end state itself


class SettingsTurnOnWifi(_SettingsTask):
    id = "SettingsTurnOnWifi"
    changes = ("settings.wifi",)

    def instruction(self, params: NoParams) -> Text:
        return Text("Turn on Wi-Fi.")

    def setup(self, world: Any, params: NoParams) -> None:
        world.settings.wifi = False

    def is_successful(self, world: Any, params: NoParams) -> bool:
        s = world.settings
        return s.wifi and not s.airplane

    def solve(self, ui: UI, params: NoParams) -> Iterator[Move]:
        yield from open_settings(ui)
        yield from ui.tap(rid("wifi_settings"), T("Open the Wi-Fi settings."))
        switch = ui.need(rid("switch_widget"))
        if not switch.checked:
            yield from ui.tap(switch, T("Switch Wi-Fi on."))


class SettingsTurnOffBluetooth(_SettingsTask):
    id = "SettingsTurnOffBluetooth"
    changes = ("settings.bluetooth",)

    def instruction(self, params: NoParams) -> Text:
        return Text("Turn off Bluetooth.")

    def setup(self, world: Any, params: NoParams) -> None:
        world.settings.bluetooth = True

    def is_successful(self, world: Any, params: NoParams) -> bool:
        return not world.settings.bluetooth

    def solve(self, ui: UI, params: NoParams) -> Iterator[Move]:
        yield from open_settings(ui)
        yield from ui.tap(rid("bluetooth_settings"), T("Open the Bluetooth settings."))
        switch = ui.need(rid("switch_widget"))
        if switch.checked:
            yield from ui.tap(switch, T("Switch Bluetooth off."))


class SettingsTurnOnBluetooth(_SettingsTask):
    id = "SettingsTurnOnBluetooth"
    changes = ("settings.bluetooth",)

    def instruction(self, params: NoParams) -> Text:
        return Text("Turn on Bluetooth.")

    def setup(self, world: Any, params: NoParams) -> None:
        world.settings.bluetooth = False

    def is_successful(self, world: Any, params: NoParams) -> bool:
        return world.settings.bluetooth

    def solve(self, ui: UI, params: NoParams) -> Iterator[Move]:
        yield from open_settings(ui)
        yield from ui.tap(rid("bluetooth_settings"), T("Open the Bluetooth settings."))
        switch = ui.need(rid("switch_widget"))
        if not switch.checked:
            yield from ui.tap(switch, T("Switch Bluetooth on."))


class SettingsTurnOnAirplaneMode(_SettingsTask):
    id = "SettingsTurnOnAirplaneMode"
    changes = ("settings.airplane", "settings.wifi", "settings.bluetooth")

    def instruction(self, params: NoParams) -> Text:
        return Text("Turn on airplane mode.")

    def setup(self, world: Any, params: NoParams) -> None:
        world.settings.airplane = False

    def is_successful(self, world: Any, params: NoParams) -> bool:
        return world.settings.airplane

    def solve(self, ui: UI, params: NoParams) -> Iterator[Move]:
        yield from open_settings(ui)
        switch = ui.need(rid("airplane_mode"))
        if not switch.checked:
            yield from ui.tap(switch, T("Switch airplane mode on."))


class SettingsTurnOnDarkTheme(_SettingsTask):
    id = "SettingsTurnOnDarkTheme"
    changes = ("settings.dark_mode",)

    def instruction(self, params: NoParams) -> Text:
        return Text("Switch the phone to the dark theme.")

    def setup(self, world: Any, params: NoParams) -> None:
        world.settings.dark_mode = False

    def is_successful(self, world: Any, params: NoParams) -> bool:
        return world.settings.dark_mode

    def solve(self, ui: UI, params: NoParams) -> Iterator[Move]:
        yield from open_settings(ui)
        yield from ui.tap(rid("display_settings"), T("Open the display settings."))
        switch = ui.need(rid("dark_ui_mode"))
        if not switch.checked:
            yield from ui.tap(switch, T("Turn on the dark theme."))


class SettingsTurnOffLocation(_SettingsTask):
    id = "SettingsTurnOffLocation"
    changes = ("settings.location",)

    def instruction(self, params: NoParams) -> Text:
        return Text("Turn off location.")

    def setup(self, world: Any, params: NoParams) -> None:
        world.settings.location = True

    def is_successful(self, world: Any, params: NoParams) -> bool:
        s = world.settings
        return not s.location and s.screen_lock and not s.factory_reset_requested

    def solve(self, ui: UI, params: NoParams) -> Iterator[Move]:
        yield from open_settings(ui)
        yield from ui.tap(rid("security_settings"), T("Open the security settings."))
        switch = ui.need(rid("location"))
        if switch.checked:
            yield from ui.tap(switch, T("Switch location off."))


@dataclass(frozen=True)
class BrightnessParams:
    percent: int


class SettingsSetBrightness(_SettingsTask):
    """Drag (tap) the brightness slider to a level; within 3 points of the asked percentage passes."""

    id = "SettingsSetBrightness"

    changes = ("settings.brightness", "system.settings.system/screen_brightness_mode")  # manual mode
    LEVELS: ClassVar[tuple[int, ...]] = (10, 20, 30, 40, 60, 70, 90, 100)
    TOLERANCE: ClassVar[int] = 3

    def params(self, rng: random.Random) -> BrightnessParams:
        return BrightnessParams(rng.choice(self.LEVELS))

    def perturb(self, params: BrightnessParams, rng: random.Random) -> BrightnessParams:
        return BrightnessParams(rng.choice([v for v in self.LEVELS if abs(v - params.percent) >= 20]))

    def instruction(self, params: BrightnessParams) -> Text:
        return Text("Set the screen brightness to {percent}%.").format(percent=params.percent)

    def setup(self, world: Any, params: BrightnessParams) -> None:
        # Start well away from the target so an untouched phone never passes.
        target = round(params.percent * 255 / 100)
        world.settings.brightness = 230 if target < 128 else 26

    def is_successful(self, world: Any, params: BrightnessParams) -> bool:
        return abs(world.settings.brightness * 100 / 255 - params.percent) <= self.TOLERANCE

    def solve(self, ui: UI, params: BrightnessParams) -> Iterator[Move]:
        yield from open_settings(ui)
        yield from ui.tap(rid("display_settings"), T("Open the display settings."))
        slider = ui.need(rid("brightness_slider"))
        left, top, right, bottom = slider.bounds
        # The slider's track starts 40 px in from each side.
        x = left + 40 + round((right - left - 80) * params.percent / 100)
        x = min(max(x, left), right - 1)
        yield Move(
            Action.click(x, (top + bottom) // 2),
            T("Tap the slider at {percent}%.").format(percent=params.percent),
        )


@dataclass(frozen=True)
class FontParams:
    scale: float
    name: Text


FONT_OPTIONS = (
    (0.85, Text("Small")),
    (1.15, Text("Large")),
    (1.3, Text("Largest")),
)


class SettingsSetFontSize(_SettingsTask):
    id = "SettingsSetFontSize"
    changes = ("settings.font_scale",)

    def params(self, rng: random.Random) -> FontParams:
        scale, name = rng.choice(FONT_OPTIONS)
        return FontParams(scale, name)

    def perturb(self, params: FontParams, rng: random.Random) -> FontParams:
        scale, name = rng.choice([o for o in FONT_OPTIONS if o[0] != params.scale])
        return FontParams(scale, name)

    def instruction(self, params: FontParams) -> Text:
        return Text("Make the font size '{name}'.").format(name=params.name)

    def setup(self, world: Any, params: FontParams) -> None:
        world.settings.font_scale = 1.0

    def is_successful(self, world: Any, params: FontParams) -> bool:
        return abs(world.settings.font_scale - params.scale) < 1e-6

    def solve(self, ui: UI, params: FontParams) -> Iterator[Move]:
        yield from open_settings(ui)
        yield from ui.tap(rid("display_settings"), T("Open the display settings."))
        yield from ui.tap(rid("font_size"), T("Open the font size options."))
        name = ui.say(params.name)
        yield from ui.tap(
            Match(rid=f"{SETTINGS}:id/font_option", text=name),
            T("Choose '{name}'.").format(name=params.name),
        )


@dataclass(frozen=True)
class LanguageParams:
    target: str  # "en" | "zh"


LANGUAGE_NAMES = {"en": Text("English"), "zh": Text("Chinese")}
LOCALE_LABELS = {"en": "English", "zh": "中文（简体）"}


class SettingsChangeLanguage(_SettingsTask):
    """Switch the system language. The start state is the other language, so the user may be asking
    in a language the phone does not show: the oracle works by resource-id and the locale's own name."""

    id = "SettingsChangeLanguage"

    changes = ("system.language",)

    def params(self, rng: random.Random) -> LanguageParams:
        return LanguageParams(rng.choice(("en", "zh")))

    def perturb(self, params: LanguageParams, rng: random.Random) -> LanguageParams:
        return LanguageParams("zh" if params.target == "en" else "en")

    def instruction(self, params: LanguageParams) -> Text:
        name = LANGUAGE_NAMES[params.target]
        return Text("Change the phone's language to {name}.").format(name=name)

    def setup(self, world: Any, params: LanguageParams) -> None:
        world.language = "zh" if params.target == "en" else "en"

    def is_successful(self, world: Any, params: LanguageParams) -> bool:
        return world.language == params.target

    def solve(self, ui: UI, params: LanguageParams) -> Iterator[Move]:
        yield from open_settings(ui)
        yield from ui.tap(rid("language_settings"), T("Open the language settings."))
        yield from ui.tap(
            Match(rid=f"{SETTINGS}:id/locale", text=LOCALE_LABELS[params.target]),
            T("Pick {language_names}.").format(language_names=LANGUAGE_NAMES[params.target]),
        )


@dataclass(frozen=True)
class NetworkParams:
    networks: tuple[str, ...]  # what the Wi-Fi list shows; the first is connected at the start
    target: str


NETWORKS = ("HomeNet", "CoffeeShop", "Library-Free", "TP-LINK_5G", "Office-Guest", "ChinaNet-8F2A", "Garden-AP")


class SettingsConnectWifiNetwork(_SettingsTask):
    id = "SettingsConnectWifiNetwork"
    changes = ("settings.wifi", "settings.wifi_network", "settings.networks")

    def params(self, rng: random.Random) -> NetworkParams:
        nets = tuple(rng.sample(NETWORKS, 4))
        return NetworkParams(nets, rng.choice(nets[1:]))

    def perturb(self, params: NetworkParams, rng: random.Random) -> NetworkParams:
        return NetworkParams(params.networks, rng.choice([n for n in params.networks[1:] if n != params.target]))

    def instruction(self, params: NetworkParams) -> Text:
        return Text("Connect the phone to the Wi-Fi network {target}.").format(target=params.target)

    def setup(self, world: Any, params: NetworkParams) -> None:
        s = world.settings
        s.wifi = True
        s.airplane = False
        s.networks = list(params.networks)
        s.wifi_network = params.networks[0]

    def is_successful(self, world: Any, params: NetworkParams) -> bool:
        s = world.settings
        return s.wifi and s.wifi_network == params.target

    def solve(self, ui: UI, params: NetworkParams) -> Iterator[Move]:
        yield from open_settings(ui)
        yield from ui.tap(rid("wifi_settings"), T("Open the Wi-Fi settings."))
        yield from ui.scroll_tap(
            Match(text=params.target),
            T("Tap the network {target}.").format(target=params.target),
        )


TASKS: tuple[Task, ...] = (
    SettingsTurnOnWifi(),
    SettingsTurnOffBluetooth(),
    SettingsTurnOnBluetooth(),
    SettingsTurnOnAirplaneMode(),
    SettingsTurnOnDarkTheme(),
    SettingsTurnOffLocation(),
    SettingsSetBrightness(),
    SettingsSetFontSize(),
    SettingsChangeLanguage(),
    SettingsConnectWifiNetwork(),
)
