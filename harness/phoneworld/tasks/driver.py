"""The oracle's hands: find a node on screen and act on it with ordinary Actions, like a user.

Task scripts are generators of `Move`s. A script reads `ui.obs` (the latest Observation, with its UI
tree), yields a Move, and when it resumes the runner has executed that action and refreshed `ui.obs`.
Helpers are generators too, used with `yield from`. The UI never touches the world: `ui.world` is the
read-only world state when the runner has it (in-process), None when the phone is only a Device.

Matching: `Match` selects nodes by exact text, text fragment, resource-id (full or the part after
':id/'), content-desc, package and flags. Resource-ids are language-independent, so scripts prefer them;
text matching is for content (a contact's name, a hotel).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from assistant_core.i18n import Text
from assistant_core.types import Action, Button, Observation, UIElement

log = logging.getLogger(__name__)

KEYBOARD_PKG = "com.android.inputmethod.latin"
CUT = Text("Cut")  # the text field's long-press menu (system strings)

# Rows of the screen the oracle avoids when scrolling (status bar, navigation/keyboard area).
SCROLL_TOP_FRACTION = 0.30
SCROLL_BOTTOM_FRACTION = 0.70


@dataclass(frozen=True)
class Move:
    """One oracle step: the action and the reason for it in both languages. `by_user` marks a step that
    is the user's to do, not the agent's (typing the payment PIN): runners either play the user (the
    in-process oracle) or leave it to the real user (OraclePolicy inside the agent loop)."""

    action: Action
    thought: Text
    by_user: bool = False


class OracleStuck(RuntimeError):
    """The script could not find what it needed on screen (the UI differs from what it expects)."""


@dataclass(frozen=True)
class Match:
    """A node selector. Every field given must hold; `where` is an extra predicate."""

    text: str | None = None
    contains: str | None = None
    rid: str | None = None
    desc: str | None = None
    desc_contains: str | None = None
    package: str | None = None
    clickable: bool | None = None
    checkable: bool | None = None
    where: Callable[[UIElement], bool] | None = None

    def __call__(self, el: UIElement) -> bool:
        if self.text is not None and el.text != self.text:
            return False
        if self.contains is not None and self.contains not in el.text and self.contains not in el.content_desc:
            return False
        if self.rid is not None and el.resource_id != self.rid and el.resource_id.rsplit("/", 1)[-1] != self.rid:
            return False
        if self.desc is not None and el.content_desc != self.desc:
            return False
        if self.desc_contains is not None and self.desc_contains not in el.content_desc:
            return False
        if self.package is not None and el.package != self.package:
            return False
        if self.clickable is not None and el.clickable != self.clickable:
            return False
        if self.checkable is not None and el.checkable != self.checkable:
            return False
        return not (self.where is not None and not self.where(el))

    def describe(self) -> str:
        parts = [f"{k}={v!r}" for k, v in vars(self).items() if v is not None and k != "where"]
        return "Match(" + ", ".join(parts) + ")"


def _as_match(m: Match | str) -> Match:
    return m if isinstance(m, Match) else Match(text=m)


def T(en: str, *, ctx: str | None = None) -> Text:  # a short constructor for the many thoughts in scripts
    return Text(en, ctx=ctx)


class UI:
    """What a task script sees and how it acts. The runner sets `obs` before resuming the script."""

    def __init__(self, *, world: Any = None, lang: str = "en", max_scrolls: int = 12):
        self.world = world
        self.lang = lang
        self.max_scrolls = max_scrolls
        self.obs: Observation | None = None

    # Reading ---------------------------------------------------------------------------------------

    @property
    def ui_lang(self) -> str:
        """The language the phone shows (the world's when at hand, else the run's)."""
        return self.world.language if self.world is not None else self.lang

    def say(self, text: Text) -> str:
        """A bilingual value (a name, a title) as the phone shows it."""
        return text.get(self.ui_lang)

    @property
    def keyboard_up(self) -> bool:
        return any(e.package == KEYBOARD_PKG for e in self.elements)

    @property
    def elements(self) -> tuple[UIElement, ...]:
        return tuple(self.obs.elements or ()) if self.obs is not None else ()

    @property
    def foreground(self) -> str:
        return self.obs.foreground if self.obs is not None else ""

    @property
    def width(self) -> int:
        return self.obs.width if self.obs is not None else 1080

    @property
    def height(self) -> int:
        return self.obs.height if self.obs is not None else 2400

    def visible(self, el: UIElement) -> bool:
        left, top, right, bottom = el.bounds
        return right > left and bottom > top and 0 <= (left + right) // 2 < self.width and 0 <= (top + bottom) // 2 < self.height

    def find_all(self, m: Match | str) -> list[UIElement]:
        m = _as_match(m)
        return [e for e in self.elements if m(e) and self.visible(e)]

    def find(self, m: Match | str) -> UIElement | None:
        """The first matching visible node, in tree order; a clickable match wins over a label."""
        hits = self.find_all(m)
        if not hits:
            return None
        return next((e for e in hits if e.clickable), hits[0])

    def has(self, m: Match | str) -> bool:
        return self.find(m) is not None

    def need(self, m: Match | str) -> UIElement:
        el = self.find(m)
        if el is None:
            raise OracleStuck(f"not on screen ({self.foreground}): {_as_match(m).describe()}; screen: {self.summary()}")
        return el

    def beside(self, anchor: UIElement, m: Match | str) -> UIElement | None:
        """A node matching `m` on the same row as `anchor` (their vertical spans overlap)."""
        top, bottom = anchor.bounds[1], anchor.bounds[3]
        for el in self.find_all(m):
            if el.bounds[1] < bottom and el.bounds[3] > top:
                return el
        return None

    def summary(self, limit: int = 40) -> str:
        labels = [e.label or e.resource_id for e in self.elements if e.label or e.resource_id]
        return " | ".join(labels[:limit])

    def focused(self) -> UIElement | None:
        return next((e for e in self.elements if e.focused), None)

    # Acting ----------------------------------------------------------------------------------------

    def act(self, action: Action, thought: Text) -> Iterator[Move]:
        yield Move(action, thought)

    def tap(self, target: Match | str | UIElement, thought: Text) -> Iterator[Move]:
        el = target if isinstance(target, UIElement) else self.need(target)
        x, y = self._tap_point(el)
        yield Move(Action.click(x, y), thought)

    def long_press(self, target: Match | str | UIElement, thought: Text) -> Iterator[Move]:
        el = target if isinstance(target, UIElement) else self.need(target)
        x, y = self._tap_point(el)
        yield Move(Action.long_press(x, y), thought)

    def _tap_point(self, el: UIElement) -> tuple[int, int]:
        left, top, right, bottom = el.bounds
        x = min(max((left + right) // 2, 0), self.width - 1)
        y = min(max((top + bottom) // 2, 0), self.height - 1)
        return x, y

    def type(self, text: str, thought: Text) -> Iterator[Move]:
        yield Move(Action.type_text(text), thought)

    def press(self, button: Button | str, thought: Text) -> Iterator[Move]:
        yield Move(Action.press(button), thought)

    def back(self) -> Iterator[Move]:
        yield Move(Action.press(Button.BACK), T("Go back."))

    def hide_keyboard(self) -> Iterator[Move]:
        """Back, but only while the soft keyboard is up (otherwise Back would leave the screen)."""
        if self.keyboard_up:
            yield Move(Action.press(Button.BACK), T("Hide the keyboard."))

    def home(self) -> Iterator[Move]:
        yield Move(Action.press(Button.HOME), T("Go to the home screen."))

    def open(self, package: str, name: Text | None = None) -> Iterator[Move]:
        label = name or Text(package, package)
        yield Move(Action.open_app(package), T("Open {label}.").format(label=label))

    def finish(self, thought: Text | None = None) -> Iterator[Move]:
        yield Move(Action.finish(), thought or T("The task is done."))

    def scroll(self, *, down: bool = True, within: UIElement | None = None, thought: Text | None = None) -> Iterator[Move]:
        """One swipe that moves the content up (down=True shows what is below). Hides the keyboard
        first (Back), since a swipe that starts on it would type instead of scroll."""
        if self.keyboard_up:
            yield Move(Action.press(Button.BACK), T("Hide the keyboard."))
            return
        if within is not None:
            left, top, right, bottom = within.bounds
            x = (left + right) // 2
            y_top = top + (bottom - top) * 1 // 4
            y_bottom = top + (bottom - top) * 3 // 4
        else:
            x = self.width // 2
            y_top = int(self.height * SCROLL_TOP_FRACTION)
            y_bottom = int(self.height * SCROLL_BOTTOM_FRACTION)
        start, end = (y_bottom, y_top) if down else (y_top, y_bottom)
        why = thought or (T("Scroll down to see more.") if down else T("Scroll up."))
        yield Move(Action.scroll(x, start, x, end), why)

    def scroll_to(
        self, m: Match | str, *, down: bool = True, within: Match | None = None, fully: bool = True
    ) -> Iterator[Move]:
        """Scroll until a node matching `m` is visible (and, with `fully`, clear of the screen edges)."""
        m = _as_match(m)
        last_screen: tuple[str, ...] | None = None
        for _ in range(self.max_scrolls + 1):
            el = self.find(m)
            if el is not None and (not fully or self._comfortably_visible(el, within)):
                return
            screen = tuple(e.label for e in self.elements)
            if screen == last_screen:
                break  # the list did not move: end reached
            last_screen = screen
            container = self.find(within) if within is not None else self._scroll_container()
            yield from self.scroll(down=down, within=container)
        if self.find(m) is None:
            raise OracleStuck(f"scrolled but never saw {m.describe()}; screen: {self.summary()}")

    def _scroll_container(self) -> UIElement | None:
        scrollables = [e for e in self.elements if e.scrollable and self.visible(e)]
        return max(scrollables, key=lambda e: e.area) if scrollables else None

    def _comfortably_visible(self, el: UIElement, within: Match | None) -> bool:
        container = self.find(within) if within is not None else self._scroll_container()
        top, bottom = (container.bounds[1], container.bounds[3]) if container else (0, self.height)
        return el.bounds[1] >= top and el.bounds[3] <= bottom

    def scroll_tap(self, m: Match | str, thought: Text, *, within: Match | None = None) -> Iterator[Move]:
        yield from self.scroll_to(m, within=within)
        yield from self.tap(m, thought)

    def type_into(self, field: Match | str, text: str, thought: Text, *, replace: str = "") -> Iterator[Move]:
        """Focus a text field by tapping it and type. `replace` is text the field is known to hold
        already (an empty field shows its hint, so the tree cannot tell): it is removed first with the
        field's long-press menu (Cut), as a user would, not key by key (a run of identical key presses
        looks like a stuck loop to the agent loop's guard)."""
        if replace:
            yield from self.long_press(field, T("Long-press the field to clear it."))
            yield from self.tap(Match(rid="android:id/title", text=CUT.get(self.ui_lang)), T("Choose Cut."))
        el = self.need(field)
        if not el.focused:
            yield from self.tap(el, T("Tap the text field."))
        yield Move(Action.type_text(text), thought)

    def wait_for(self, m: Match | str, *, tries: int = 3) -> Iterator[Move]:
        for _ in range(tries):
            if self.has(m):
                return
            yield Move(Action.wait(500), T("Wait for the screen to update."))
        self.need(m)
