"""The one hit test: which element a touch at (x, y) reaches, by Android's touch-dispatch rules.

Shared by the safety gate (`Observation.element_at`) and the simulated phone
(`harness.phoneworld.ui.hit_test`), so the gate judges exactly the element the phone activates: they call
the same function on the same element list.

The rules (Android's window and ViewGroup dispatch, reduced to what a UI tree shows):
- Elements come in paint order: uiautomator's document order, a parent before its children, a later
  sibling or a later window drawn over an earlier one. The touch goes to the topmost element that
  contains the point (bounds are half-open, left <= x < right) and takes touches.
- A view takes a touch when it is clickable, long-clickable or checkable (`View.onTouchEvent` consumes
  the event), enabled or not (a disabled button swallows the tap and does nothing).
- A touch barrier (`blocks_touch`: a dialog panel, the keyboard, the notification shade) takes every
  touch inside it even where nothing in it acts: the window is on top, what is under it is unreachable.
- Elements with empty bounds take nothing.

Also here: the platform numbers that make a swipe a tap (`TOUCH_SLOP_PX`) or a long press
(`LONG_PRESS_TIMEOUT_MS`), set on the generous side of every phone so the gate never judges a real tap as
a scroll.

Pure and stdlib-only (the element type is duck-typed, so `assistant_core.types` can import this).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol

# Android's touch slop is 8 dp: 21 px at 420 dpi, 32 px at 640 dpi. PhoneWorld-lite uses 24 px. The gate
# treats anything within 48 px (8 dp up to 960 dpi) as not having moved.
TOUCH_SLOP_PX = 48
# Android's long-press timeout is 400 ms (500 ms before Android 12; PhoneWorld-lite uses 500 ms). A
# pointer that rests within the slop this long is a long press, whatever the gesture is called.
LONG_PRESS_TIMEOUT_MS = 400


class Touchable(Protocol):
    bounds: tuple[int, int, int, int]
    clickable: bool
    long_clickable: bool
    checkable: bool


def takes_touch(element: Touchable) -> bool:
    """A touch receiver (clickable, long-clickable, checkable) or a touch barrier."""
    return bool(element.clickable or element.long_clickable or element.checkable
                or getattr(element, "blocks_touch", False))


def _inside(bounds: tuple[int, int, int, int], x: int, y: int) -> bool:
    left, top, right, bottom = bounds
    return left <= x < right and top <= y < bottom and right > left and bottom > top


def touch_target_index(elements: Sequence[Touchable], x: int, y: int) -> int | None:
    """The index of the element a touch at (x, y) reaches (see the module rules), or None."""
    for i in range(len(elements) - 1, -1, -1):
        e = elements[i]
        if takes_touch(e) and _inside(e.bounds, x, y):
            return i
    return None


def touch_target(elements: Sequence[Touchable], x: int, y: int):
    """The element a touch at (x, y) reaches, or None (nothing under the point takes touches)."""
    i = touch_target_index(elements, x, y)
    return None if i is None else elements[i]


def within_slop(x1: int, y1: int, x2: int, y2: int) -> bool:
    """Whether a gesture from (x1, y1) to (x2, y2) never leaves the touch slop: to the phone, a tap."""
    return math.hypot(x2 - x1, y2 - y1) <= TOUCH_SLOP_PX


def rests_long_enough(x1: int, y1: int, x2: int, y2: int, duration_ms: int) -> bool:
    """Whether a straight gesture at constant speed stays within the slop for the long-press timeout
    (what `input swipe x1 y1 x2 y2 ms` does): the view under its start then sees a long press."""
    distance = math.hypot(x2 - x1, y2 - y1)
    dwell = duration_ms if distance <= TOUCH_SLOP_PX else duration_ms * TOUCH_SLOP_PX / distance
    return dwell >= LONG_PRESS_TIMEOUT_MS
