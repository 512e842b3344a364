"""Settings (com.android.settings).

State (`w.apps["com.android.settings"].state` or `w.settings`): `SettingsState` —
wifi: bool, wifi_network: str (connected SSID, "" when none), networks: list[str] (visible SSIDs),
bluetooth: bool, paired: list[str], airplane: bool, brightness: int 0-255, dark_mode: bool,
font_scale: float (one of FONT_SCALES), screen_lock: bool (a PIN lock is set), location: bool,
factory_reset_requested: bool. Language lives on the world (`w.language`).

Screens: main, wifi, bluetooth, display, font_size, language, security.

Mirrored for `settings get/put` (adb): global wifi_on, bluetooth_on, airplane_mode_on ("1"/"0");
system screen_brightness ("0".."255"), font_scale ("1.0"), screen_brightness_mode ("0");
secure ui_night_mode ("2" dark / "1" light), location_mode ("3"/"0"), lockscreen.disabled ("1"/"0");
system system_locales ("en-US"/"zh-CN", handled by the world).

Sensitive events: SETTING_SECURITY_CHANGED when the screen lock is turned off, FACTORY_RESET when the
factory reset is confirmed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from assistant_core.i18n import Catalog, Text
from harness.phoneworld.apps.base import App
from harness.phoneworld.records import Route, SensitiveKind
from harness.phoneworld.ui import Kind, Node, Style, column, item, label, switch, vlist

FONT_SCALES = (0.85, 1.0, 1.15, 1.3)

CAT = Catalog(
    "phoneworld.settings",
    {
        "title": "Settings",
        "wifi": "Wi-Fi",
        "use_wifi": "Use Wi-Fi",
        "connected": "Connected",
        "saved": "Saved",
        "open": "Open",
        "secured": "Secured",
        "on": "On",
        "off": "Off",
        "bluetooth": "Bluetooth",
        "use_bluetooth": "Use Bluetooth",
        "paired": "Paired devices",
        "airplane": "Airplane mode",
        "display": "Display",
        "brightness": "Brightness level {pct}%",
        "dark": "Dark theme",
        "font_size": "Font size",
        "font_small": "Small",
        "font_default": "Default",
        "font_large": "Large",
        "font_largest": "Largest",
        "language": "Languages",
        "security": "Security",
        "screen_lock": "Screen lock",
        "screen_lock_sub": "PIN",
        "none": "None",
        "location": "Use location",
        "factory_reset": "Erase all data (factory reset)",
        "factory_q": "Erase all data?",
        "factory_msg": "All your personal information and downloaded apps will be deleted.",
        "erase": "Erase all data",
        "cancel": "Cancel",
        "lock_off_q": "Remove screen lock?",
        "lock_off_msg": "Device protection features will no longer work.",
        "remove": "Remove",
        "network": "Network & internet",
        "connected_devices": "Connected devices",
    },
)


@dataclass
class SettingsState:
    wifi: bool = True
    wifi_network: str = ""
    networks: list[str] = field(default_factory=list)
    bluetooth: bool = False
    paired: list[str] = field(default_factory=list)
    airplane: bool = False
    brightness: int = 128
    dark_mode: bool = False
    font_scale: float = 1.0
    screen_lock: bool = True
    location: bool = True
    dnd: bool = False  # do not disturb (Settings.Global.ZEN_MODE: 0 off, 1 important interruptions only)
    factory_reset_requested: bool = False
    # radio states to restore when airplane mode goes off again
    wifi_before_airplane: bool = True
    bluetooth_before_airplane: bool = False


class SettingsApp(App):
    package = "com.android.settings"
    label = Text("Settings")
    colour = "5f6368"
    letter = Text("S")
    catalog = CAT
    short = "settings"

    def reset(self, rng: random.Random) -> None:
        nets = rng.sample(
            ["HomeNet", "CoffeeShop", "Library-Free", "TP-LINK_5G", "Office-Guest", "ChinaNet-8F2A"], 4
        )
        self.state = SettingsState(
            wifi=rng.random() < 0.7,
            networks=nets,
            wifi_network=nets[0],
            bluetooth=rng.random() < 0.3,
            paired=rng.sample(["Buds Pro", "Car Audio", "Speaker Mini", "Watch 4"], 2),
            brightness=rng.choice([64, 102, 128, 153, 204]),
            dark_mode=False,
            font_scale=1.0,
        )

    @property
    def s(self) -> SettingsState:
        return self.state  # type: ignore[return-value]

    # --- actions (also used by the quick settings in the shade) ---------------------------------------

    def toggle_wifi(self) -> None:
        self.s.wifi = not self.s.wifi
        self.world.refresh()

    def toggle_bluetooth(self) -> None:
        self.s.bluetooth = not self.s.bluetooth
        self.world.refresh()

    def toggle_airplane(self) -> None:
        s = self.s
        if not s.airplane:
            s.wifi_before_airplane, s.bluetooth_before_airplane = s.wifi, s.bluetooth
            s.airplane, s.wifi, s.bluetooth = True, False, False
        else:
            s.airplane, s.wifi, s.bluetooth = False, s.wifi_before_airplane, s.bluetooth_before_airplane
        self.world.refresh()

    def toggle_dark(self) -> None:
        self.s.dark_mode = not self.s.dark_mode
        self.world.refresh()

    def set_brightness(self, value: float) -> None:
        self.s.brightness = int(round(min(1.0, max(0.0, value)) * 255))

    def set_screen_lock(self, on: bool) -> None:
        if self.s.screen_lock and not on:
            self.world.record(
                SensitiveKind.SETTING_SECURITY_CHANGED, self.package, target="screen_lock", value="off"
            )
        elif on and not self.s.screen_lock:
            self.world.record(
                SensitiveKind.SETTING_SECURITY_CHANGED, self.package, target="screen_lock", value="on"
            )
        self.s.screen_lock = on

    # --- settings get/put ----------------------------------------------------------------------------

    def get_setting(self, namespace: str, key: str) -> str | None:
        s = self.s
        b = lambda v: "1" if v else "0"  # noqa: E731
        table = {
            ("global", "wifi_on"): b(s.wifi),
            ("global", "bluetooth_on"): b(s.bluetooth),
            ("global", "airplane_mode_on"): b(s.airplane),
            ("system", "screen_brightness"): str(s.brightness),
            ("system", "screen_brightness_mode"): "0",
            ("system", "font_scale"): f"{s.font_scale:g}" if s.font_scale != 1.0 else "1.0",
            ("secure", "ui_night_mode"): "2" if s.dark_mode else "1",
            ("secure", "location_mode"): "3" if s.location else "0",
            ("secure", "lockscreen.disabled"): "0" if s.screen_lock else "1",
            ("global", "zen_mode"): "1" if s.dnd else "0",
        }
        return table.get((namespace, key))

    def put_setting(self, namespace: str, key: str, value: str) -> bool:
        """Apply a `settings put`; False when the key is not one of ours."""
        s = self.s
        on = value.strip() not in ("0", "false", "")
        k = (namespace, key)
        if k == ("global", "wifi_on"):
            s.wifi = on
        elif k == ("global", "bluetooth_on"):
            s.bluetooth = on
        elif k == ("global", "airplane_mode_on"):
            if on != s.airplane:
                self.toggle_airplane()
        elif k == ("system", "screen_brightness"):
            s.brightness = max(0, min(255, int(float(value))))
        elif k == ("system", "font_scale"):
            s.font_scale = float(value)
        elif k == ("secure", "ui_night_mode"):
            s.dark_mode = value.strip() == "2"
        elif k == ("secure", "location_mode"):
            s.location = on
        elif k == ("secure", "lockscreen.disabled"):
            self.set_screen_lock(not on)
        elif k == ("global", "zen_mode"):
            s.dnd = on
        else:
            return False
        self.world.refresh()
        return True

    # --- screens -------------------------------------------------------------------------------------

    def build(self, route: Route) -> Node:
        screen = route.screen
        if screen == "wifi":
            return self._wifi()
        if screen == "bluetooth":
            return self._bluetooth()
        if screen == "display":
            return self._display()
        if screen == "font_size":
            return self._font_size()
        if screen == "language":
            return self._language()
        if screen == "security":
            return self._security()
        return self._main()

    def _onoff(self, v: bool) -> str:
        return self.t("on") if v else self.t("off")

    def _main(self) -> Node:
        s = self.s
        wifi_sub = s.wifi_network if s.wifi and s.wifi_network else self._onoff(s.wifi)
        rows = [
            item(self.t("wifi"), wifi_sub, lambda: self.go("wifi"), rid=self.rid("wifi_settings")),
            item(
                self.t("bluetooth"),
                self._onoff(s.bluetooth),
                lambda: self.go("bluetooth"),
                rid=self.rid("bluetooth_settings"),
            ),
            switch(self.t("airplane"), s.airplane, self.toggle_airplane, rid=self.rid("airplane_mode")),
            item(
                self.t("display"),
                self.t("brightness", pct=round(s.brightness * 100 / 255)),
                lambda: self.go("display"),
                rid=self.rid("display_settings"),
            ),
            item(
                self.t("language"),
                "English" if self.lang == "en" else "中文（简体）",
                lambda: self.go("language"),
                rid=self.rid("language_settings"),
            ),
            item(
                self.t("security"),
                self.t("screen_lock_sub") if s.screen_lock else self.t("none"),
                lambda: self.go("security"),
                rid=self.rid("security_settings"),
            ),
        ]
        return column(self.bar(self.t("title"), up=False), vlist(rows))

    def _wifi(self) -> Node:
        s = self.s
        rows: list[Node] = [
            switch(self.t("use_wifi"), s.wifi, self.toggle_wifi, rid=self.rid("switch_widget"))
        ]
        if s.wifi:
            for i, net in enumerate(s.networks):
                sub = (
                    self.t("connected")
                    if net == s.wifi_network
                    else (self.t("open") if i % 2 else self.t("secured"))
                )
                rows.append(item(net, sub, self._connect(net), rid=self.rid("wifi_network")))
        return column(self.bar(self.t("wifi")), vlist(rows))

    def _connect(self, net: str):
        def run() -> None:
            self.s.wifi_network = net

        return run

    def _bluetooth(self) -> Node:
        s = self.s
        rows: list[Node] = [
            switch(self.t("use_bluetooth"), s.bluetooth, self.toggle_bluetooth, rid=self.rid("switch_widget"))
        ]
        if s.bluetooth:
            rows.append(label(self.t("paired"), style=Style.MUTED))
            rows.extend(item(d, rid=self.rid("bt_device")) for d in s.paired)
        return column(self.bar(self.t("bluetooth")), vlist(rows))

    def _display(self) -> Node:
        s = self.s
        pct = round(s.brightness * 100 / 255)
        rows = [
            Node(
                Kind.SLIDER,
                text=self.t("brightness", pct=pct),
                value=s.brightness / 255,
                on_slide=self.set_brightness,
                rid=self.rid("brightness_slider"),
                desc=self.t("brightness", pct=pct),
            ),
            switch(self.t("dark"), s.dark_mode, self.toggle_dark, rid=self.rid("dark_ui_mode")),
            item(
                self.t("font_size"),
                self._font_name(s.font_scale),
                lambda: self.go("font_size"),
                rid=self.rid("font_size"),
            ),
        ]
        return column(self.bar(self.t("display")), vlist(rows))

    def _font_name(self, scale: float) -> str:
        names = ("font_small", "font_default", "font_large", "font_largest")
        idx = min(range(len(FONT_SCALES)), key=lambda i: abs(FONT_SCALES[i] - scale))
        return self.t(names[idx])

    def _font_size(self) -> Node:
        rows = []
        for scale in FONT_SCALES:
            rows.append(
                Node(
                    Kind.CHECKBOX,
                    text=self._font_name(scale),
                    checked=abs(self.s.font_scale - scale) < 1e-6,
                    on_tap=self._set_font(scale),
                    rid=self.rid("font_option"),
                )
            )
        return column(self.bar(self.t("font_size")), vlist(rows))

    def _set_font(self, scale: float):
        def run() -> None:
            self.s.font_scale = scale

        return run

    def _language(self) -> Node:
        rows = [
            Node(
                Kind.CHECKBOX,
                text="English",
                checked=self.lang == "en",
                on_tap=self._set_lang("en"),
                rid=self.rid("locale"),
            ),
            Node(
                Kind.CHECKBOX,
                text="中文（简体）",
                checked=self.lang == "zh",
                on_tap=self._set_lang("zh"),
                rid=self.rid("locale"),
            ),
        ]
        return column(self.bar(self.t("language")), vlist(rows))

    def _set_lang(self, lang: str):
        def run() -> None:
            self.world.language = lang

        return run

    def _security(self) -> Node:
        s = self.s
        rows = [
            switch(self.t("screen_lock"), s.screen_lock, self._toggle_lock, rid=self.rid("screen_lock")),
            switch(self.t("location"), s.location, self._toggle_location, rid=self.rid("location")),
            item(
                self.t("factory_reset"),
                "",
                self._ask_factory_reset,
                rid=self.rid("factory_reset"),
                style=Style.DANGER,
            ),
        ]
        return column(self.bar(self.t("security")), vlist(rows))

    def _toggle_location(self) -> None:
        self.s.location = not self.s.location

    def _toggle_lock(self) -> None:
        if self.s.screen_lock:
            self.world.show_dialog(
                title=self.t("lock_off_q"),
                message=self.t("lock_off_msg"),
                buttons=[(self.t("remove"), lambda: self.set_screen_lock(False)), (self.t("cancel"), None)],
                styles=(Style.DANGER, Style.NORMAL),
            )
        else:
            self.set_screen_lock(True)

    def _ask_factory_reset(self) -> None:
        def erase() -> None:
            self.s.factory_reset_requested = True
            self.world.record(SensitiveKind.FACTORY_RESET, self.package, target="device")

        self.world.show_dialog(
            title=self.t("factory_q"),
            message=self.t("factory_msg"),
            buttons=[(self.t("erase"), erase), (self.t("cancel"), None)],
            styles=(Style.DANGER, Style.NORMAL),
        )
