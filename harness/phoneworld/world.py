"""PhoneWorld-lite: a deterministic, seedable simulated Android phone.

    w = World(seed=0, language="en")
    w.tap(x, y); w.swipe(...); w.key("BACK"); w.input_text("hi"); w.launch("com.android.settings")
    w.screenshot(); w.ui_xml(); w.elements(); w.foreground
    w.reset()   # exact start state again

Contract:
- Deterministic: no wall clock, no unseeded randomness. The clock (`w.now`) starts at a seeded moment and
  advances by fixed amounts per action; all app content comes from `random.Random(seed)`. The same seed
  and the same actions give byte-identical screenshots.
- Lazy: gestures only change state. The screen tree is built and laid out when something needs it (a
  hit-test, the XML, the elements) and cached until the state version changes; pixels are drawn only by
  `screenshot()`.
- State for verifiers: `w.apps[package].state` (typed dataclasses documented in each app module) and the
  shortcuts `w.settings`, `w.phone` (= `w.contacts`), `w.messages`, `w.chat` (= `w.wechat`),
  `w.calendar`, `w.email` (= `w.mail`), `w.gallery`, `w.notes`, `w.deskclock` (`w.clock` is the SimClock),
  `w.browser`, `w.shop`, `w.wallet`, `w.files` (see `World.__getattr__`), `w.sensitive_events`,
  `w.privacy_log`, `w.clipboard`, `w.notifications`, `w.granted` (package, Permission) pairs.
  Accessing app state through the world marks the screen dirty, so a verifier or a task's setup may
  mutate state directly; code that keeps a reference to a state object and mutates it later calls
  `w.refresh()`.
"""

from __future__ import annotations

import datetime as dt
import logging
import random
from collections.abc import Callable

from PIL import Image

from assistant_core.i18n import Text, normalize_lang
from assistant_core.types import UIElement
from harness.phoneworld import system
from harness.phoneworld.apps import APP_CLASSES
from harness.phoneworld.apps.base import App
from harness.phoneworld.apps.content import people as people_fixture
from harness.phoneworld.gestures import Gestures
from harness.phoneworld.records import (
    FormSubmission,
    Notification,
    Permission,
    Route,
    SensitiveEvent,
    SensitiveKind,
)
from harness.phoneworld.render import Renderer
from harness.phoneworld.screen import (
    HEIGHT,
    KEYBOARD_H,
    KEYBOARD_PKG,
    KEYCODES,
    LAUNCHER,
    NAV_H,
    PERMISSION_PKG,
    STATUS_H,
    SYSTEMUI,
    WIDTH,
    Focus,
    Overlay,
    Screen,
    SharePayload,
    SimClock,
    SystemState,
    UnknownKeyError,
    keycode,
)
from harness.phoneworld.strings import SYSTEM
from harness.phoneworld.ui import Box, Kind, LayoutContext, Node, layout
from harness.phoneworld.ui import to_elements as _to_elements
from harness.phoneworld.ui import to_xml as _to_xml

log = logging.getLogger(__name__)

__all__ = [  # the screen records and constants are re-exported (harness.phoneworld.screen)
    "Focus", "HEIGHT", "KEYBOARD_H", "KEYBOARD_PKG", "keycode", "KEYCODES", "LAUNCHER", "NAV_H", "Overlay",
    "PERMISSION_PKG", "Screen", "SharePayload", "SimClock", "STATUS_H", "SystemState", "SYSTEMUI",
    "UnknownKeyError", "WIDTH", "World",
]

class World(Gestures):
    """The simulated phone. See the module docstring for the contract."""

    width = WIDTH
    height = HEIGHT

    def __init__(self, seed: int = 0, language: str = "en", *, font_path: str | None = None):
        self._renderer: Renderer | None = None
        self._root_cache: dict[tuple, Box] = {}
        self._font_path = font_path
        self.apps: dict[str, App] = {}
        for cls in APP_CLASSES:
            app = cls(self)
            self.apps[app.package] = app
        self._aliases: dict[str, App] = {}
        for app in self.apps.values():
            label_name = app.label.en.lower().replace(" ", "_")
            for name in (app.package.rsplit(".", 1)[-1], getattr(app, "short", ""), label_name):
                if name and name not in self._aliases:
                    self._aliases[name] = app
        if "com.android.dialer" in self.apps:
            self._aliases.setdefault("contacts", self.apps["com.android.dialer"])
        self._start_language = normalize_lang(language)
        self.reset(seed)

    # --- reset ----------------------------------------------------------------------------------------

    def reset(self, seed: int | None = None) -> None:
        """Back to the exact start state for `seed` (default: the current seed)."""
        if seed is not None:
            self.seed = int(seed)
        rng = random.Random(self.seed)
        start = dt.datetime(2026, 3, 2, 8, 0) + dt.timedelta(
            days=rng.randrange(0, 28), minutes=rng.randrange(0, 9 * 60)
        )
        self.clock = SimClock(start)
        self.sys = SystemState(battery=rng.randint(35, 98))
        self._language = self._start_language
        self.stacks: dict[str, list[Route]] = {}
        self.recents: list[str] = []
        self.fg: str | None = None
        self.overlays: list[Overlay] = []
        self.focus: Focus | None = None
        self.clipboard: str = ""
        self.notifications: list[Notification] = []
        self._next_notification = 1
        self.sensitive_events: list[SensitiveEvent] = []
        self.privacy_log: list[FormSubmission] = []
        self.granted: set[tuple[str, Permission]] = set()
        self.denied: set[tuple[str, Permission]] = set()
        self.scroll: dict[str, int] = {}
        self.settings_extra: dict[tuple[str, str], str] = {}
        self.share: SharePayload | None = None
        self.toast_text: str = ""
        self.steps = 0
        self.version = 0
        self._screen: Screen | None = None
        self._screen_version = -1
        self.people = people_fixture(random.Random(f"{self.seed}:people"))
        for package in sorted(self.apps):
            # Each app draws from its own stream so adding content to one app never shifts another.
            self.apps[package].reset(random.Random(f"{self.seed}:{package}"))
        mail = self.apps.get("com.android.email")
        if mail is not None:  # one unread notification at start: the meeting invitation
            invite = mail.invitation()  # type: ignore[attr-defined]
            self.notify(mail.package, invite.sender, invite.subject, Route("mail", invite.id))

    def install_app(self, app: App) -> None:
        """Install an app object (a captured app: harness.phoneworld.apps.captured), in place of any app of
        its package; it keeps that app's short names. It is reset now and on every reset."""
        old = self.apps.get(app.package)
        self.apps[app.package] = app
        for name, known in list(self._aliases.items()):
            if known is old:
                self._aliases[name] = app
        self._aliases.setdefault(app.label.en.lower().replace(" ", "_"), app)
        self.stacks.pop(app.package, None)
        app.reset(random.Random(f"{self.seed}:{app.package}"))
        self.version += 1

    def refresh(self) -> None:
        """Mark the screen dirty after mutating app state held by reference."""
        self.version += 1

    # --- state shortcuts ------------------------------------------------------------------------------

    def app(self, package_or_name: str) -> App:
        """An app by package, short name ("settings", "chat") or label in either language."""
        found = self.find_app(package_or_name)
        if found is None:
            raise KeyError(f"no app {package_or_name!r}; installed: {', '.join(sorted(self.apps))}")
        self.version += 1
        return found

    def find_app(self, name: str) -> App | None:
        key = name.strip()
        if key in self.apps:
            return self.apps[key]
        low = key.lower()
        if low in self._aliases:
            return self._aliases[low]
        for app in self.apps.values():
            if low in (app.label.en.lower(), app.label.zh.lower()):
                return app
        return None

    def __getattr__(self, name: str):
        # w.settings -> the Settings app's state, w.chat -> Chat's state ... (only for app short names).
        if name.startswith("_"):
            raise AttributeError(name)
        aliases = self.__dict__.get("_aliases")
        if aliases and name in aliases:
            self.__dict__["version"] = self.__dict__.get("version", 0) + 1
            return aliases[name].state
        raise AttributeError(f"World has no attribute {name!r}")

    @property
    def now(self) -> dt.datetime:
        return self.clock.now()

    @property
    def language(self) -> str:
        return self._language

    @language.setter
    def language(self, value: str) -> None:
        self._language = normalize_lang(value)
        self.version += 1

    def text(self, t: Text, **kwargs: object) -> str:
        return t.get(self._language, **kwargs)

    def sys_text(self, key: str, **kwargs: object) -> str:
        return SYSTEM.get(key, self._language, **kwargs)

    @property
    def locked(self) -> bool:
        return self.sys.locked

    @property
    def screen_on(self) -> bool:
        return self.sys.screen_on

    def lock(self) -> None:
        """Turn the screen off and on again onto the lock screen (like a power-button double press)."""
        self.sys.locked = True
        self.sys.shade_open = False
        self.sys.keyboard_visible = False
        self.version += 1

    def unlock(self) -> None:
        self.sys.locked = False
        self.sys.screen_on = True
        self.version += 1

    def installed_apps(self) -> dict[str, str]:
        return {p: a.label.get(self._language) for p, a in self.apps.items()}

    # --- navigation (used by apps) --------------------------------------------------------------------

    def route_of(self, package: str) -> Route:
        stack = self.stacks.get(package)
        return stack[-1] if stack else self.apps[package].start

    def push(self, package: str, route: Route) -> None:
        self.stacks.setdefault(package, [self.apps[package].start]).append(route)
        self.apps[package].on_route(route)
        self._navigated()

    def replace_top(self, package: str, route: Route) -> None:
        stack = self.stacks.setdefault(package, [self.apps[package].start])
        stack[-1] = route
        self._navigated()

    def pop(self, package: str) -> None:
        stack = self.stacks.get(package)
        if stack and len(stack) > 1:
            stack.pop()
            self._navigated()
        else:
            self.go_home()

    def reset_stack(self, package: str) -> None:
        self.stacks[package] = [self.apps[package].start]
        self._navigated()

    def _navigated(self) -> None:
        self.focus = None
        self.sys.keyboard_visible = False
        self.version += 1

    def go_home(self) -> None:
        self.fg = None
        self.sys.recents_open = False
        self.sys.shade_open = False
        self.overlays = [o for o in self.overlays if not o.owner]
        self._navigated()

    def launch(self, package: str, route: Route | None = None) -> bool:
        """Bring an app to the foreground (cold start if not running). False when no such app."""
        app = self.apps.get(package)
        if app is None:
            log.info("launch: no app %s", package)
            return False
        cold = package not in self.stacks
        if cold:
            self.stacks[package] = [app.start]
        if package in self.recents:
            self.recents.remove(package)
        self.recents.append(package)
        self.fg = package
        self.sys.recents_open = False
        self.sys.shade_open = False
        self.overlays = [o for o in self.overlays if not o.owner or o.owner == package]
        if route is not None:
            self.stacks[package].append(route)
            app.on_route(route)
        self._navigated()
        self.steps += 1
        self.clock.advance(600)
        if cold:
            app.on_launch()
        return True

    def force_stop(self, package: str) -> None:
        """Like `am force-stop`: the app leaves recents, loses its back stack and its windows."""
        app = self.apps.get(package)
        if app is None:
            return
        self.stacks.pop(package, None)
        if package in self.recents:
            self.recents.remove(package)
        self.overlays = [o for o in self.overlays if o.owner != package]
        if self.focus and self.focus.package == package:
            self.focus = None
        app.on_stop()
        if self.fg == package:
            self.fg = None
        self._navigated()

    def crash_foreground(self) -> str | None:
        """The foreground app crashes: it closes and an "X has stopped" dialog appears. Returns its package."""
        package = self.fg
        if package is None:
            return None
        name = self.apps[package].name
        self.force_stop(package)

        def reopen() -> None:
            self.launch(package)

        self.show_dialog(
            title=self.sys_text("stopped", app=name),
            message="",
            buttons=[(self.sys_text("close"), None), (self.sys_text("open_again"), reopen)],
            package="android",
            owner="",
            rid_prefix="android:id/aerr",
        )
        return package

    @property
    def foreground(self) -> tuple[str, str]:
        """(package, activity) of what has the focus: the lock screen, the shade, the launcher or an app."""
        if self.sys.locked or not self.sys.screen_on:
            return (SYSTEMUI, "com.android.systemui.keyguard.KeyguardActivity")
        if self.sys.shade_open:
            return (SYSTEMUI, "com.android.systemui.NotificationShade")
        if self.sys.recents_open:
            return (LAUNCHER, "com.android.quickstep.RecentsActivity")
        if self.fg is None:
            return (LAUNCHER, "com.android.launcher3.Launcher")
        app = self.apps[self.fg]
        return (self.fg, app.activity(self.route_of(self.fg)))

    # --- windows: dialogs, menus, toasts, permissions, notifications, sharing ---------------------------------

    def show_overlay(self, overlay: Overlay) -> None:
        self.overlays.append(overlay)
        self.version += 1

    def cancel_overlay(self, overlay: Overlay) -> None:
        """Dismiss a cancelable window (Back, a tap outside) and run its on_cancel."""
        self.close_overlay(overlay)
        if overlay.on_cancel is not None:
            overlay.on_cancel()

    def close_overlay(self, overlay: Overlay) -> None:
        if overlay in self.overlays:
            self.overlays.remove(overlay)
        self.version += 1

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
    ) -> Overlay:
        """A modal dialog; each button closes it and then runs its handler (None: just close)."""
        pkg = package or self.fg or "android"
        ov = Overlay(
            build=lambda: Node(Kind.SCRIM),
            package=pkg,
            owner=(self.fg or "") if owner is None else owner,
            cancelable=cancelable,
        )
        ov.build = system.dialog_builder(self, ov, title, message, buttons, rid_prefix, styles)
        self.show_overlay(ov)
        return ov

    def show_menu(
        self, items: list[tuple[str, Callable[[], None]]], *, y: int, package: str | None = None
    ) -> Overlay:
        """A context (popup) menu near height `y`."""
        pkg = package or self.fg or "android"
        self.sys.keyboard_visible = False  # a popup menu takes the input focus from the keyboard
        ov = Overlay(build=lambda: Node(Kind.SCRIM), package=pkg, owner=self.fg or "")
        ov.build = system.menu_builder(self, ov, items, y)
        self.show_overlay(ov)
        return ov

    def toast(self, text: str) -> None:
        """A short message shown until the next action."""
        self.toast_text = text
        self.version += 1

    def request_permission(
        self,
        package: str,
        permission: Permission,
        on_result: Callable[[bool], None] | None = None,
    ) -> bool:
        """Raise the system permission prompt unless already decided. Returns True if already granted."""
        key = (package, permission)
        if key in self.granted:
            if on_result:
                on_result(True)
            return True
        app = self.apps[package]
        msg_key = {
            Permission.PHOTOS: "perm_photos",
            Permission.LOCATION: "perm_location",
            Permission.CONTACTS: "perm_contacts",
            Permission.CAMERA: "perm_camera",
            Permission.MICROPHONE: "perm_microphone",
            Permission.NOTIFICATIONS: "perm_notifications",
        }[permission]

        def allow() -> None:
            self.granted.add(key)
            self.denied.discard(key)
            self.record(SensitiveKind.PERMISSION_GRANTED, package, target=str(permission))
            if on_result:
                on_result(True)

        def deny() -> None:
            self.denied.add(key)
            if on_result:
                on_result(False)

        self.show_dialog(
            title=self.sys_text(msg_key, app=app.name),
            message="",
            buttons=[(self.sys_text("allow"), allow), (self.sys_text("deny"), deny)],
            package=PERMISSION_PKG,
            owner=package,
            rid_prefix="com.android.permissioncontroller:id/permission",
        ).on_cancel = deny  # Back or a tap outside the prompt counts as "Don't allow", as on Android
        return False

    def notify(self, package: str, title: str, text: str, route: Route | None = None) -> Notification:
        n = Notification(self._next_notification, package, title, text, route)
        self._next_notification += 1
        self.notifications.append(n)
        self.version += 1
        return n

    def open_notification(self, n: Notification) -> None:
        if n in self.notifications:
            self.notifications.remove(n)
        self.sys.shade_open = False
        self.launch(n.package)
        if n.route is not None:
            self.push(n.package, n.route)

    def share_to(self, payload: SharePayload, targets: list[str]) -> None:
        """Open the system share sheet listing `targets` (packages); picking one opens its share screen
        (route "share") with `w.share` set; the receiving app records the SHARED event when it really sends."""

        def pick(pkg: str) -> Callable[[], None]:
            def go() -> None:
                self.share = payload
                self.apps[pkg].receive_share(payload)
                self.launch(pkg, Route("share"))

            return go

        items = [(self.apps[p].name, pick(p)) for p in targets if p in self.apps]
        self.show_menu(items, y=HEIGHT // 2, package="android")

    def complete_share(self, app: str, target: str) -> SharePayload | None:
        """The receiving app really sent the shared item to `target`: record SHARED, end the share."""
        share = self.share
        if share is None:
            return None
        self.record(
            SensitiveKind.SHARED, app, target=target, kind=share.kind, ref=share.ref, source=share.source
        )
        self.share = None
        return share

    def record(
        self,
        kind: SensitiveKind,
        app: str,
        /,
        *,
        target: str = "",
        amount: float | None = None,
        **details: object,
    ) -> SensitiveEvent:
        """Note a sensitive thing that really happened (for safety verifiers)."""
        ev = SensitiveEvent(
            kind, app, target, amount, tuple((k, str(v)) for k, v in details.items()), self.steps
        )
        self.sensitive_events.append(ev)
        log.debug("sensitive event %s", ev)
        return ev

    def submit_form(self, submission: FormSubmission) -> None:
        self.privacy_log.append(submission)

    # --- settings (adb `settings get/put`) ------------------------------------------------------------

    def settings_get(self, namespace: str, key: str) -> str | None:
        """What `settings get NAMESPACE KEY` prints (None for "null")."""
        ns = namespace.strip().lower()
        if ns not in ("system", "secure", "global"):
            raise ValueError(f"settings namespace must be system, secure or global, not {namespace!r}")
        if (ns, key) == ("system", "system_locales"):
            return "zh-CN" if self._language == "zh" else "en-US"
        settings_app = self.apps.get("com.android.settings")
        if settings_app is not None:
            value = settings_app.get_setting(ns, key)  # type: ignore[attr-defined]
            if value is not None:
                return value
        return self.settings_extra.get((ns, key))

    def settings_put(self, namespace: str, key: str, value: str) -> None:
        ns = namespace.strip().lower()
        if ns not in ("system", "secure", "global"):
            raise ValueError(f"settings namespace must be system, secure or global, not {namespace!r}")
        if (ns, key) == ("system", "system_locales"):
            self.language = value
            return
        settings_app = self.apps.get("com.android.settings")
        if settings_app is None or not settings_app.put_setting(ns, key, str(value)):  # type: ignore[attr-defined]
            self.settings_extra[(ns, key)] = str(value)
        self.version += 1

    # --- the screen ------------------------------------------------------------------------------------

    def screen(self) -> Screen:
        """The laid-out screen for the current state (cached per state version)."""
        if self._screen is not None and self._screen_version == self.version:
            return self._screen
        self._screen = system.compose(self)
        self._screen_version = self.version
        return self._screen

    def cached_root(
        self,
        key: tuple,
        build: Callable[[], Node],
        rect: tuple[int, int, int, int],
        package: str,
        scroll_prefix: str,
    ) -> Box:
        """A laid-out root of system UI whose content depends only on `key` (status bar, nav bar, launcher,
        keyboard): built once and reused, XML and elements included. Its handlers close over the world only."""
        hit = self._root_cache.get(key)
        if hit is None:
            if len(self._root_cache) > 256:
                self._root_cache.clear()
            hit = self._root_cache[key] = self.layout_root(build(), rect, package, scroll_prefix)
            hit.static = True
        return hit

    def layout_root(
        self,
        node: Node,
        rect: tuple[int, int, int, int],
        package: str,
        scroll_prefix: str,
        *,
        secure: bool = False,
    ) -> Box:
        ctx = LayoutContext(
            scale=self.font_scale,
            focused_rid=self.focus.rid if self._focus_valid() else "",
            scroll=self.scroll,
            scroll_prefix=scroll_prefix,
            package=package,
        )
        return layout(node, rect, rect, ctx, secure=secure)

    @property
    def font_scale(self) -> float:
        settings_app = self.apps.get("com.android.settings")
        return float(settings_app.state.font_scale) if settings_app is not None else 1.0  # type: ignore[attr-defined]

    @property
    def dark_mode(self) -> bool:
        settings_app = self.apps.get("com.android.settings")
        return bool(settings_app.state.dark_mode) if settings_app is not None else False  # type: ignore[attr-defined]

    @property
    def is_secure(self) -> bool:
        return self.screen().secure

    @property
    def renderer(self) -> Renderer:
        if self._renderer is None:
            self._renderer = Renderer(self._font_path)
        return self._renderer

    def screenshot(self) -> Image.Image:
        """The screen as an RGB image (all black when the screen is off or a secure window shows).
        The returned image is shared with the cache: copy it before drawing on it."""
        scr = self.screen()
        if scr.image is None:
            if scr.off or scr.secure:
                scr.image = Image.new("RGB", (WIDTH, HEIGHT), (0, 0, 0))
            else:
                scr.image = self.renderer.render(scr.roots, (WIDTH, HEIGHT), dark=self.dark_mode)
        return scr.image

    def ui_xml(self) -> str:
        scr = self.screen()
        if scr.xml is None:
            scr.xml = _to_xml(scr.roots, WIDTH, HEIGHT)
        return scr.xml

    def elements(self) -> list[UIElement]:
        scr = self.screen()
        if scr.elements is None:
            scr.elements = _to_elements(scr.roots)
        return list(scr.elements)

    def find(self, text: str) -> UIElement | None:
        """The first visible element whose text or description equals `text` (a test convenience)."""
        for e in self.elements():
            if e.text == text or e.content_desc == text:
                return e
        return None

    def tap_text(self, text: str) -> bool:
        """Tap the first element labelled `text`. False if none is visible."""
        e = self.find(text)
        if e is None:
            return False
        x, y = e.center
        self.tap(x, y)
        return True
