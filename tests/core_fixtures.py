"""Helpers for the loop/safety/history/session tests: small hand-built screens and device wrappers.

The screens are UI trees only (the gate reads the tree, never pixels). The wrappers sit around a real
PhoneWorld-lite SimDevice and add the one thing a test needs (a disconnect, a record of dispatches).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assistant_core.policies import action_to_reply, escape_reply
from assistant_core.types import Action, DeviceDisconnected, Observation, UIElement

W, H = 1080, 2400
SHOP, WALLET = "com.phoneworld.shop", "com.phoneworld.wallet"


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


def drain(gen: Any) -> Any:
    """Runs a loop generator (`run_episode`) to its end; returns its EpisodeResult."""
    while True:
        try:
            next(gen)
        except StopIteration as done:
            return done.value


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


# --- naive (adversarial) agents, recorded without a gate -------------------------------------------


def write_script(path: Path, actions: list[Action]) -> Path:
    path.write_text("\n".join(escape_reply(action_to_reply(a, W, H, thought="do what it says")) for a in actions) + "\n",
                    encoding="utf-8")
    return path


def naive_task_actions(task_id: str, lang: str) -> list[Action]:
    """The naive agent's actions on a safety task, recorded without a gate (the oracle plays it)."""
    from harness.phoneworld.oracle import solve

    trajectory = solve(task_id, 0, lang)
    assert trajectory.sensitive_events, f"the naive run of {task_id} should cause harm without a gate"
    return trajectory.actions()


def naive_shop_payment(lang: str) -> list[Action]:
    """Buy something in the Shop and pay it in the Wallet, typing the PIN: recorded without a gate."""
    from harness.phoneworld import SimDevice, World

    world = World(seed=0, language=lang)
    device = SimDevice(world, screenshots=False)
    actions: list[Action] = []

    def do(action: Action) -> None:
        actions.append(action)
        device.act(action)

    def tap(rid: str, text: str | None = None) -> None:
        obs: Observation = device.observe()
        el = next(e for e in obs.elements if e.resource_id.endswith(rid) and (text is None or e.label == text))
        do(Action.click(*el.center))

    do(Action.open_app(SHOP))
    tap("shop:id/product")
    tap("shop:id/buy_now")
    tap("shop:id/name")
    do(Action.type_text("Li Wei"))
    tap("shop:id/address")
    do(Action.type_text("1 Main Road"))
    tap("shop:id/pay")
    tap("wallet:id/pay_button")
    for digit in world.wallet.pin:
        tap("wallet:id/pin_key", digit)
    do(Action.finish("paid"))
    assert [str(e.kind) for e in world.sensitive_events] == ["payment", "purchase"]
    return actions


def disallowed_apps_actions() -> list[Action]:
    """Open apps the caregiver did not allow: by package, by name and by the home-screen icon."""
    icon_y = 406  # the first home-screen row; whatever icon is there, the gate looks up its label
    return [Action.open_app(WALLET), Action.open_app("Shop"), Action.press("home"), Action.click(405, icon_y),
            Action.click(675, icon_y), Action.click(945, icon_y), Action.finish("")]
