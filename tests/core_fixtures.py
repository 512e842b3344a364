"""Helpers for the loop/safety/history/session tests: small hand-built screens and device wrappers.

The screens are UI trees only (the gate reads the tree, never pixels). The wrappers sit around a real
PhoneWorld-lite SimDevice and add the one thing a test needs (a disconnect, a record of dispatches).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from assistant_core.types import Action, DeviceDisconnected, Observation, UIElement

W, H = 1080, 2400


def el(text: str = "", bounds: tuple[int, int, int, int] = (0, 0, 10, 10), *, rid: str = "", desc: str = "",
       clickable: bool = False, package: str = "com.example.app", **kw: Any) -> UIElement:
    return UIElement(bounds=bounds, text=text, content_desc=desc, resource_id=rid, clickable=clickable,
                     package=package, **kw)


def screen(*elements: UIElement, foreground: str = "com.example.app", secure: bool = False,
           locked: bool = False) -> Observation:
    root = UIElement(bounds=(0, 0, W, H), package=foreground)
    return Observation(width=W, height=H, foreground=foreground, elements=(root, *elements), is_secure=secure,
                       is_locked=locked)


def button(text: str, y: int = 1500, *, package: str = "com.example.app", **kw: Any) -> UIElement:
    return el(text, (100, y, 980, y + 150), clickable=True, package=package, **kw)


def heading(text: str, y: int = 200, *, package: str = "com.example.app") -> UIElement:
    return el(text, (40, y, 1040, y + 100), package=package)


def tap(element: UIElement) -> Action:
    return Action.click(*element.center)


def tool_call(name: str, **arguments: Any) -> str:
    """One reply in PhoneBuddy's output format (0-1000 grid for points)."""
    body = json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)
    return f"<think>step</think>\n<tool_call>\n{body}\n</tool_call>"


def grid(x: int, y: int) -> list[list[int]]:
    """Device pixels to PhoneBuddy's 0-1000 grid (rounding back lands on the same pixel or next to it)."""
    return [[round(x * 1000 / W), round(y * 1000 / H)]]


@dataclass
class RecordingDevice:
    """Wraps a device: records every dispatched action; can raise DeviceDisconnected for a while."""

    inner: Any
    dispatched: list[Action] = field(default_factory=list)
    disconnect_after_acts: int | None = None  # after this many acts, the next calls fail
    down_calls: int = 0  # how many calls fail once the disconnect happens
    on_act: Any = None  # callable(action) run before dispatch (checks)
    on_observe: Any = None  # callable(n) -> None, run before each observe

    observes: int = 0

    def _maybe_down(self) -> None:
        if self.down_calls > 0 and self.disconnect_after_acts is not None and len(self.dispatched) >= self.disconnect_after_acts:
            self.down_calls -= 1
            raise DeviceDisconnected("The phone disconnected.", detail="test")

    def observe(self) -> Observation:
        self._maybe_down()
        self.observes += 1
        if self.on_observe is not None:
            self.on_observe(self.observes)
        return self.inner.observe()

    def act(self, action: Action) -> None:
        self._maybe_down()
        if self.on_act is not None:
            self.on_act(action)
        self.dispatched.append(action)
        self.inner.act(action)

    def installed_apps(self) -> dict[str, str]:
        return self.inner.installed_apps()

    def foreground(self) -> str:
        self._maybe_down()
        return self.inner.foreground()

    def reset(self) -> None:
        self.inner.reset()

    def close(self) -> None:
        self.inner.close()
