"""The simulated phone's screen geometry, key codes and window records, below the World and its apps.

`WIDTH`/`HEIGHT` and the bars' heights, the system packages, `keycode()`, and the records the World keeps
(`Overlay`, `Focus`, `Screen`, `SimClock`, `SharePayload`, `SystemState`), plus `WorldAPI`: what the apps
(`apps/`) and the system UI (`system.py`) use of the World. They import this module, never `world.py`,
so the World, its apps and its system UI form no import cycle (tests/test_import_cycles.py).
`harness.phoneworld.world` re-exports every name here.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from PIL import Image

from assistant_core.i18n import Text
from assistant_core.types import UIElement
from harness.phoneworld.records import (
    FormSubmission,
    Notification,
    Permission,
    Route,
    SensitiveEvent,
    SensitiveKind,
)
from harness.phoneworld.ui import Box, FieldBind, Node

WIDTH, HEIGHT = 1080, 2400
STATUS_H = 96
NAV_H = 132
KEYBOARD_H = 740
LAUNCHER = "com.android.launcher3"
SYSTEMUI = "com.android.systemui"
KEYBOARD_PKG = "com.android.inputmethod.latin"
PERMISSION_PKG = "com.android.permissioncontroller"

KEYCODES = {
    "HOME": 3,
    "BACK": 4,
    "CALL": 5,
    "ENDCALL": 6,
    "DPAD_UP": 19,
    "DPAD_DOWN": 20,
    "VOLUME_UP": 24,
    "VOLUME_DOWN": 25,
    "POWER": 26,
    "CAMERA": 27,
    "TAB": 61,
    "SPACE": 62,
    "ENTER": 66,
    "DEL": 67,
    "MENU": 82,
    "NOTIFICATION": 83,
    "SEARCH": 84,
    "APP_SWITCH": 187,
    "SLEEP": 223,
    "WAKEUP": 224,
    "FORWARD_DEL": 112,
    "MOVE_END": 123,
    "ESCAPE": 111,
}


class UnknownKeyError(ValueError):
    """A key name or code the world does not know."""


def keycode(code: int | str) -> int:
    """An Android keycode from an int, "KEYCODE_BACK", "BACK" or "4"."""
    if isinstance(code, bool):
        raise UnknownKeyError(f"not a key code: {code!r}")
    if isinstance(code, int):
        return code
    name = str(code).strip().upper()
    if name.isdigit():
        return int(name)
    name = name.removeprefix("KEYCODE_")
    if name in KEYCODES:
        return KEYCODES[name]
    raise UnknownKeyError(f"unknown key {code!r}; known: {', '.join(sorted(KEYCODES))} or an integer keycode")


@dataclass
class Overlay:
    """A window above the app: a dialog, a context menu, the share chooser, a permission prompt.
    `build()` returns a SCRIM node (full screen) holding the window; `owner` is the app whose
    force-stop closes it; `cancelable` means Back and a tap outside dismiss it."""

    build: Callable[[], Node]
    package: str
    owner: str = ""
    cancelable: bool = True
    secure: bool = False
    on_cancel: Callable[[], None] | None = None


@dataclass
class Focus:
    package: str
    route: Route
    rid: str
    bind: FieldBind
    on_submit: Callable[[], None] | None = None


@dataclass
class Screen:
    """The laid-out screen: roots in paint order (status bar, main, nav bar, keyboard, overlays, shade)."""

    roots: list[Box]
    secure: bool
    off: bool
    xml: str | None = None
    elements: list[UIElement] | None = None
    image: Image.Image | None = None


@dataclass
class SimClock:
    """Simulated time: a seeded start plus milliseconds advanced by actions."""

    start: dt.datetime
    elapsed_ms: int = 0

    def now(self) -> dt.datetime:
        return self.start + dt.timedelta(milliseconds=self.elapsed_ms)

    def advance(self, ms: int) -> None:
        self.elapsed_ms += max(0, int(ms))


@dataclass
class SharePayload:
    """What is being shared into another app: text, or a photo/file by id."""

    kind: str  # "text" | "photo" | "file" | "contact"
    text: str = ""
    ref: str = ""
    source: str = ""


@dataclass
class SystemState:
    locked: bool = False
    screen_on: bool = True
    shade_open: bool = False
    recents_open: bool = False
    keyboard_shift: bool = False
    keyboard_visible: bool = False
    battery: int = 80


class WorldAPI(Protocol):
    """What the apps (`apps/`) and the system UI (`system.py`) use of the World (harness.phoneworld.world.World
    satisfies it). Typed here, below both, so neither imports world.py."""

    width: int
    height: int
    version: int
    focus: Focus | None

    def __getattr__(self, name: str) -> Any: ...  # w.settings, w.chat ...: an app's state by its short name

    def _back(self) -> None: ...

    def _delete_char(self) -> None: ...

    def _focus_valid(self) -> Focus | None: ...

    def _submit(self) -> None: ...

    def _type_key(self, ch: str) -> None: ...

    apps: Any

    def cached_root(
        self,
        key: tuple,
        build: Callable[[], Node],
        rect: tuple[int, int, int, int],
        package: str,
        scroll_prefix: str,
    ) -> Box: ...

    def cancel_overlay(self, overlay: Overlay) -> None: ...

    clipboard: Any

    clock: Any

    def close_overlay(self, overlay: Overlay) -> None: ...

    def complete_share(self, app: str, target: str) -> SharePayload | None: ...

    fg: Any

    @property
    def font_scale(self) -> float: ...

    def force_stop(self, package: str) -> None: ...

    granted: Any

    def install_app(self, app: Any) -> None: ...

    @property
    def is_secure(self) -> bool: ...

    def key(self, code: int | str) -> None: ...

    language: str  # a read-write property on the World

    def launch(self, package: str, route: Route | None = None) -> bool: ...

    def layout_root(
        self,
        node: Node,
        rect: tuple[int, int, int, int],
        package: str,
        scroll_prefix: str,
        *,
        secure: bool = False,
    ) -> Box: ...

    notifications: Any

    @property
    def now(self) -> dt.datetime: ...

    def open_notification(self, n: Notification) -> None: ...

    overlays: Any

    people: Any

    def pop(self, package: str) -> None: ...

    privacy_log: Any

    def push(self, package: str, route: Route) -> None: ...

    recents: Any

    def record(
        self,
        kind: SensitiveKind,
        app: str,
        /,
        *,
        target: str = "",
        amount: float | None = None,
        **details: object,
    ) -> SensitiveEvent: ...

    def refresh(self) -> None: ...

    def replace_top(self, package: str, route: Route) -> None: ...

    def request_permission(
        self,
        package: str,
        permission: Permission,
        on_result: Callable[[bool], None] | None = None,
    ) -> bool: ...

    def reset_stack(self, package: str) -> None: ...

    def route_of(self, package: str) -> Route: ...

    sensitive_events: Any

    share: Any

    def share_to(self, payload: SharePayload, targets: list[str]) -> None: ...

    def show_dialog(
        self,
        *,
        title: str,
        message: str,
        buttons: list[tuple[str, Callable[[], None] | None]],
        package: str | None = None,
        owner: str | None = None,
        cancelable: bool = True,
        rid_prefix: str = "android:id/button",
        styles: tuple = (),
    ) -> Overlay: ...

    def show_menu(
        self, items: list[tuple[str, Callable[[], None]]], *, y: int, package: str | None = None
    ) -> Overlay: ...

    stacks: Any

    steps: Any

    def submit_form(self, submission: FormSubmission) -> None: ...

    sys: Any

    def sys_text(self, key: str, **kwargs: object) -> str: ...

    def text(self, t: Text, **kwargs: object) -> str: ...

    def toast(self, text: str) -> None: ...

    toast_text: Any
