"""SimDevice: the assistant_core.types.Device protocol over an in-process World (the fast path for
tests, evaluation and RL; the ADB path goes through the simulated adbd instead)."""

from __future__ import annotations

import logging
from typing import Any

from assistant_core.i18n import Text
from assistant_core.types import Action, ActionKind, ActionOutOfBounds, Button, DeviceError, Observation
from harness.keycodes import BUTTON_KEYS
from harness.phoneworld.strings import SYSTEM
from harness.phoneworld.world import HEIGHT, WIDTH, World

log = logging.getLogger(__name__)


class UnknownAppError(DeviceError):
    """open_app/close_app named an app this phone does not have."""


class SimDevice:
    """A Device backed by a World.

    `screenshots=False` leaves Observation.screenshot as None (no drawing at all: the fast RL path);
    `ui_xml=False` skips the XML string (elements are still given).
    """

    def __init__(self, world: World, *, screenshots: bool = True, ui_xml: bool = True):
        self.world = world
        self.screenshots = screenshots
        self.want_xml = ui_xml
        self.closed = False
        self._runner: Any = None

    def observe(self) -> Observation:
        w = self.world
        package, activity = w.foreground
        elements = tuple(w.elements())
        return Observation(
            width=WIDTH,
            height=HEIGHT,
            foreground=package,
            activity=activity,
            screenshot=w.screenshot() if self.screenshots else None,
            elements=elements,
            ui_xml=w.ui_xml() if self.want_xml else None,
            is_secure=w.is_secure,
            is_locked=w.locked,
            timestamp=w.now.timestamp(),
            source="sim",
        )

    def _check(self, x: int | None, y: int | None) -> None:
        if x is None or y is None or not (0 <= x < WIDTH and 0 <= y < HEIGHT):
            raise ActionOutOfBounds(
                SYSTEM["out_of_bounds"].format(x=x, y=y), detail=f"screen is {WIDTH}x{HEIGHT}"
            )

    def _package(self, name: str) -> str:
        app = self.world.find_app(name)
        if app is None:
            raise UnknownAppError(
                SYSTEM["unknown_app"].format(app=name),
                detail=f"installed: {', '.join(sorted(self.world.apps))}",
            )
        return app.package

    def _tool_runner(self) -> Any:
        """The simulated phone's own shell, in-process: tools run the same command lines as over adb."""
        if self._runner is None:
            from harness.phoneworld.phone import SimPhone
            from harness.tools import InProcessRunner

            self._runner = InProcessRunner(SimPhone(self.world))
        return self._runner

    def act(self, action: Action) -> Any:
        """Carry out one action; a tool action returns its harness.tools.ToolResult (or raises ToolRefused)."""
        w = self.world
        k = action.kind
        if action.is_tool:
            from harness.tools import carry_out

            return carry_out(action, self._tool_runner())
        if k in (ActionKind.CLICK, ActionKind.DOUBLE_CLICK, ActionKind.LONG_PRESS):
            self._check(action.x, action.y)
            if k is ActionKind.CLICK:
                w.tap(action.x, action.y)
            elif k is ActionKind.DOUBLE_CLICK:
                w.double_tap(action.x, action.y)
            else:
                w.long_press(action.x, action.y, action.duration_ms or 800)
        elif k in (ActionKind.SCROLL, ActionKind.DRAG):
            self._check(action.x, action.y)
            self._check(action.x2, action.y2)
            if k is ActionKind.SCROLL:
                w.swipe(action.x, action.y, action.x2, action.y2, action.duration_ms or 400)
            else:
                w.drag(action.x, action.y, action.x2, action.y2, action.duration_ms or 1000)
        elif k is ActionKind.TYPE:
            w.input_text(action.text or "")
        elif k is ActionKind.BUTTON_PRESS:
            w.key(BUTTON_KEYS[Button(action.button)])
        elif k is ActionKind.OPEN_APP:
            w.launch(self._package(action.app or ""))
        elif k is ActionKind.CLOSE_APP:
            w.force_stop(self._package(action.app or ""))
        elif k is ActionKind.WAIT:
            w.wait(action.duration_ms or 1000)
        else:
            log.debug("passive action %s: nothing to do on the phone", k)
        return None

    def installed_apps(self) -> dict[str, str]:
        return self.world.installed_apps()

    def foreground(self) -> str:
        return self.world.foreground[0]

    def reset(self) -> None:
        self.world.reset()

    def close(self) -> None:
        self.closed = True


__all__ = ["SimDevice", "UnknownAppError", "Text"]
