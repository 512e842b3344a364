"""Helpers for the PhoneWorld tests: drive a SimDevice the way a user would (find a label, tap its centre)."""

from __future__ import annotations

from assistant_core.types import Action, UIElement
from harness.phoneworld import SimDevice, World


class UI:
    """A thin user: looks at the screen's elements and acts through SimDevice.act only."""

    def __init__(self, world: World, *, screenshots: bool = False):
        self.world = world
        self.dev = SimDevice(world, screenshots=screenshots)

    def elements(self) -> tuple[UIElement, ...]:
        return self.dev.observe().elements or ()

    def texts(self) -> list[str]:
        return [e.label for e in self.elements() if e.label]

    def find(self, label: str, *, contains: bool = False) -> UIElement | None:
        """The topmost element showing `label` (later elements paint over earlier ones: dialogs win)."""
        for e in reversed(self.elements()):
            if e.label == label or (contains and label in e.label):
                return e
        return None

    def tap(self, label: str, *, contains: bool = False, scroll: bool = True) -> None:
        e = self.find(label, contains=contains)
        tries = 0
        while e is None and scroll and tries < 8:
            self.dev.act(Action.scroll(540, 1700, 540, 900))
            e = self.find(label, contains=contains)
            tries += 1
        assert e is not None, f"{label!r} not on screen: {self.texts()}"
        self.dev.act(Action.click(*e.center))

    def long_press(self, label: str) -> None:
        e = self.find(label)
        assert e is not None, f"{label!r} not on screen: {self.texts()}"
        self.dev.act(Action.long_press(*e.center))

    def type(self, text: str) -> None:
        self.dev.act(Action.type_text(text))

    def fill(self, hint: str, text: str) -> None:
        """Tap the field showing `hint` and type `text` into it."""
        self.tap(hint)
        self.type(text)

    def press(self, button: str) -> None:
        self.dev.act(Action.press(button))

    def open(self, app: str) -> None:
        self.dev.act(Action.open_app(app))
