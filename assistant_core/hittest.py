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

Also here: what a swipe or drag becomes (`dispatch_gesture`), by the same rules on both sides, and the
platform numbers that make a swipe a tap (`TOUCH_SLOP_PX`) or a long press (`LONG_PRESS_TIMEOUT_MS`), set
on the generous side of every phone so the gate never judges a real tap as a scroll. AOSP sources:
- `View.onTouchEvent` (frameworks/base/core/java/android/view/View.java): ACTION_DOWN presses the view
  under the pointer and posts the long-press check (long-clickable views only); ACTION_MOVE cancels the
  press only when the pointer leaves the view's bounds grown by the touch slop (`pointInView(x, y,
  touchSlop)`, "be lenient about moving outside of buttons"); ACTION_UP on a still-pressed view that has
  not performed a long click performs a click. So a swipe that stays on a button clicks it.
- A scrolling parent takes the gesture away with ACTION_CANCEL once the move passes the slop *in its own
  direction*: `ScrollView`/`NestedScrollView.onInterceptTouchEvent` (yDiff > touchSlop, and only when it
  can scroll), `AbsListView.onInterceptTouchEvent`/`startScrollIfNeeded` (vertical distance past the
  slop), `RecyclerView.onInterceptTouchEvent` (per its layout manager's axis), `HorizontalScrollView`
  (xDiff > touchSlop) and `ViewPager` (xDiff > touchSlop and xDiff * 0.5 > yDiff). A vertical list never
  takes a horizontal move, so a sideways swipe across a full-width "Pay" in a list is a click on Pay.
- `ViewConfiguration`: touch slop 8 dp (`config_viewConfigurationTouchSlop`), long-press timeout 400 ms
  (500 ms before Android 12), `TAP_TIMEOUT` 100 ms.
Where the dump leaves a scroller's direction unknown (a Compose `android.view.View`, a short and wide
RecyclerView that may be a carousel) it is taken not to intercept: the gate then judges a tap, the
stricter reading. SystemUI's own gestures (a pull down from the status bar, a swipe up from the
navigation bar) never reach an app's view; the gate still judges them as this dispatch would, which at
worst asks about a gesture that only pulls the shade.

Pure and stdlib-only (the element type is duck-typed, so `assistant_core.types` can import this).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

# Android's touch slop is 8 dp: 21 px at 420 dpi, 32 px at 640 dpi. The gate and PhoneWorld-lite treat
# anything within 48 px (8 dp up to 960 dpi) as not having moved, and a scroller as intercepting only a
# move past 48 px in its direction: the stricter reading (more gestures are taps) on every real phone.
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


# What a gesture becomes on the phone (`dispatch_gesture`).
TAP = "tap"  # a click on the element that took ACTION_DOWN
LONG_PRESS = "long_press"  # a long press on it (a click, for a view that is not long-clickable)
SLIDE = "slide"  # a view that takes the move itself (a SeekBar): it is set where the pointer ends
MOVE = "move"  # a scroll, a fling or nothing: no view is clicked


@dataclass(frozen=True)
class Dispatch:
    """What the phone does with one swipe or drag: `kind` (TAP, LONG_PRESS, SLIDE, MOVE) on the element
    at `index` of the element list (None for MOVE, or for a tap where nothing takes touches)."""

    kind: str
    index: int | None


_HORIZONTAL_RE = re.compile(r"Horizontal|ViewPager|TabLayout|Carousel", re.IGNORECASE)
_VERTICAL_RE = re.compile(r"ScrollView|ListView|GridView|RecyclerView|WebView|ScrollingView", re.IGNORECASE)
_SLIDER_RE = re.compile(r"SeekBar|Slider|RatingBar", re.IGNORECASE)


def scroll_axis(element: Touchable) -> str | None:
    """"x" or "y": the direction a scrollable element scrolls, from its class; None when it does not
    scroll or the dump cannot tell (then the gate assumes it takes no move: see the module docstring)."""
    if not getattr(element, "scrollable", False):
        return None
    cls = getattr(element, "class_name", "")
    if _HORIZONTAL_RE.search(cls):
        return "x"
    if _VERTICAL_RE.search(cls):
        left, top, right, bottom = element.bounds
        if "RecyclerView" in cls and (bottom - top) * 2 < (right - left):
            return None  # short and wide: may be a horizontal carousel
        return "y"
    return None


def _ancestors(elements: Sequence[Touchable], i: int) -> list[int]:
    """The indices of element i's ancestors, nearest first, from the dump's nesting (`depth`, document
    order). Elements without a depth (built by hand) have no known ancestors."""
    need = getattr(elements[i], "depth", -1)
    out = []
    for j in range(i - 1, -1, -1):
        if need <= 0:
            break
        d = getattr(elements[j], "depth", -1)
        if 0 <= d < need:
            out.append(j)
            need = d
    return out


def _intercept_fraction(axis: str, dx: int, dy: int, slop: int) -> float | None:
    """Where along a straight move a scroller on `axis` takes it (0..1], or None if it never does."""
    along, across = (abs(dx), abs(dy)) if axis == "x" else (abs(dy), abs(dx))
    if along <= slop:
        return None
    if axis == "x" and along * 0.5 <= across:  # ViewPager's rule, applied to every horizontal scroller
        return None
    return slop / along


def _leave_fraction(bounds: tuple[int, int, int, int], x1: int, y1: int, dx: int, dy: int, slop: int) -> float | None:
    """Where a straight move from (x1, y1) leaves `bounds` grown by the slop (0..1], or None."""
    left, top, right, bottom = bounds
    f = 2.0
    for p, d, lo, hi in ((x1, dx, left - slop, right + slop), (y1, dy, top - slop, bottom + slop)):
        if d > 0 and p + d >= hi:
            f = min(f, (hi - p) / d)
        elif d < 0 and p + d < lo:
            f = min(f, (p - lo) / -d)
    return None if f > 1 else max(f, 0.0)


def dispatch_gesture(elements: Sequence[Touchable], x1: int, y1: int, x2: int, y2: int, duration_ms: int,
                     *, slop: int = TOUCH_SLOP_PX, hold_ms: int = 0) -> Dispatch:
    """What a straight swipe or drag from (x1, y1) to (x2, y2) over `duration_ms` does on the phone, by
    the rules of `View.onTouchEvent` and the scrollers' `onInterceptTouchEvent` (module docstring):

    - within the slop: a tap, or a long press when it lasts the long-press timeout, on the element under
      its start;
    - on a view that takes the move itself (a SeekBar): SLIDE;
    - otherwise the view under its start is pressed; it is clicked (or long-pressed, when the gesture
      lasts the timeout) if the pointer never leaves its bounds grown by the slop and neither the view
      nor any scrollable ancestor takes the move in its direction;
    - if the press is cancelled (leaving the view, or a scroller taking the move), a long-clickable view
      that stayed pressed for the timeout has been long-pressed; else nothing is clicked (MOVE).

    `hold_ms`: how long the pointer rests on its start before moving. `input draganddrop` holds for the
    long-press timeout first (InputShellCommand.sendDragAndDrop sleeps getLongPressTimeout() after
    ACTION_DOWN), so a drag long-presses a long-clickable view it starts on.
    """
    duration_ms, hold_ms = max(0, duration_ms), max(0, hold_ms)
    i = touch_target_index(elements, x1, y1)
    if math.hypot(x2 - x1, y2 - y1) <= slop:
        return Dispatch(LONG_PRESS if hold_ms + duration_ms >= LONG_PRESS_TIMEOUT_MS else TAP, i)
    if i is None:
        return Dispatch(MOVE, None)
    e = elements[i]
    if not (e.clickable or e.long_clickable or e.checkable):  # a touch barrier: pressed is nothing
        return Dispatch(MOVE, None)
    if _SLIDER_RE.search(getattr(e, "class_name", "")):
        return Dispatch(SLIDE, i)
    dx, dy = x2 - x1, y2 - y1
    cuts = [f for j in [i, *_ancestors(elements, i)]
            if (axis := scroll_axis(elements[j])) is not None
            and (f := _intercept_fraction(axis, dx, dy, slop)) is not None]
    left = _leave_fraction(e.bounds, x1, y1, dx, dy, slop)
    if left is not None:
        cuts.append(left)
    if not cuts:
        return Dispatch(LONG_PRESS if hold_ms + duration_ms >= LONG_PRESS_TIMEOUT_MS else TAP, i)
    if e.long_clickable and hold_ms + duration_ms * min(cuts) >= LONG_PRESS_TIMEOUT_MS:
        return Dispatch(LONG_PRESS, i)
    return Dispatch(MOVE, None)
