"""The World's input: focus and typing, gestures (tap, long press, swipe, drag) and keys, as a mixin.

`Gestures` is one base of `harness.phoneworld.world.World` (split out to keep modules short); its methods
use the World's state (`self.sys`, `self.focus`, `self.screen()`, the apps' back stacks) and are documented
with the World's contract in world.py's docstring.
"""

from __future__ import annotations

import logging
import re

from assistant_core.hittest import LONG_PRESS, LONG_PRESS_TIMEOUT_MS, TAP, dispatch_gesture, within_slop
from harness.phoneworld import system
from harness.phoneworld.screen import (
    HEIGHT,
    NAV_H,
    STATUS_H,
    WIDTH,
    Focus,
    keycode,
)
from harness.phoneworld.ui import Box, Node, find_scrollable, hit_test
from harness.phoneworld.ui import to_elements as _to_elements

log = logging.getLogger(__name__)


class Gestures:
    """Input for the World (see the module docstring)."""

    # --- focus and text --------------------------------------------------------------------------------

    def focus_field(self, node: Node) -> None:
        if node.bind is None or self.fg is None:
            return
        self.focus = Focus(self.fg, self.route_of(self.fg), node.rid, node.bind, node.on_submit)
        self.sys.keyboard_visible = True
        self.version += 1

    def _focus_valid(self) -> Focus | None:
        f = self.focus
        if f is None or self.fg != f.package or self.route_of(f.package) != f.route or self.sys.locked:
            return None
        return f

    def input_text(self, text: str) -> bool:
        """Type `text` into the focused field (any Unicode). False when nothing has the focus.

        A line break is the ENTER key, as on a phone (adb's `input text` cannot type one, so text entry
        sends KEYCODE_ENTER; an IME commits it as the editor action): it submits a field that has a submit
        action (a composer sends, a dial pad calls) and is a new line in a multi-line field."""
        self.steps += 1
        self.clock.advance(300 + 20 * len(text))
        f = self._focus_valid()
        if f is None:
            log.info("input_text with no focused field: ignored")
            return False
        for i, line in enumerate(re.split(r"\r\n|[\n\r\u2028\u2029\x85]", text)):
            if i:
                self._submit()
            f = self._focus_valid()
            if f is None:  # the submit left the field (a sent message, a started call)
                break
            if line:
                f.bind.set(f.bind.get() + line)
        self.version += 1
        return True

    def clear_text(self) -> bool:
        f = self._focus_valid()
        if f is None:
            return False
        f.bind.set("")
        self.version += 1
        return True

    def _type_key(self, ch: str) -> None:
        f = self._focus_valid()
        if f is None:
            return
        if self.sys.keyboard_shift:
            ch = ch.upper()
            self.sys.keyboard_shift = False
        f.bind.set(f.bind.get() + ch)
        self.version += 1

    def _delete_char(self) -> None:
        f = self._focus_valid()
        if f is not None:
            f.bind.set(f.bind.get()[:-1])
            self.version += 1

    def _submit(self) -> None:
        """ENTER in the focused field: its submit action, or a new line where it has none."""
        f = self._focus_valid()
        if f is None:
            return
        if f.on_submit is not None:
            f.on_submit()
        else:
            f.bind.set(f.bind.get() + "\n")
        self.version += 1

    # --- gestures --------------------------------------------------------------------------------------

    def _begin(self, ms: int) -> None:
        self.steps += 1
        self.clock.advance(ms)
        if self.toast_text:
            self.toast_text = ""
            self.version += 1

    def _check_point(self, x: int, y: int) -> None:
        if not (0 <= x < WIDTH and 0 <= y < HEIGHT):
            raise ValueError(f"point ({x}, {y}) is outside the {WIDTH}x{HEIGHT} screen")

    def tap(self, x: int, y: int) -> None:
        x, y = int(x), int(y)
        self._check_point(x, y)
        self._begin(400)
        if not self.sys.screen_on:
            return
        box = hit_test(self.screen().roots, x, y)
        if box is None:
            return
        self._activate(box, x, y)

    def _activate(self, box: Box, x: int, y: int) -> None:
        n = box.node
        if not n.enabled:
            return
        if n.on_slide is not None:
            left, _, right, _ = box.rect
            value = min(1.0, max(0.0, (x - left - 40) / max(1, right - left - 80)))
            n.on_slide(value)
        elif n.bind is not None:
            self.focus_field(n)
            if n.on_tap:
                n.on_tap()
        elif n.on_tap is not None:
            n.on_tap()
        self.version += 1

    def double_tap(self, x: int, y: int) -> None:
        x, y = int(x), int(y)
        self._check_point(x, y)
        box = hit_test(self.screen().roots, x, y) if self.sys.screen_on else None
        if box is not None and box.node.on_double is not None:
            self._begin(300)
            box.node.on_double()
            self.version += 1
            return
        self.tap(x, y)
        self.tap(x, y)

    def long_press(self, x: int, y: int, duration_ms: int = 800) -> None:
        x, y = int(x), int(y)
        self._check_point(x, y)
        self._begin(duration_ms)
        if not self.sys.screen_on:
            return
        roots = self.screen().roots
        box = hit_test(roots, x, y)
        if box is None:
            box = _copyable_at(roots, x, y)
            if box is None:
                return
        n = box.node
        if n.on_long is not None:
            n.on_long()
        elif n.bind is not None:
            self.focus_field(n)
            system.edit_menu(self, n, box.rect[3])
        elif n.copyable:
            system.copy_menu(self, n.text, box.rect[3])
        else:
            cp = _copyable_at(roots, x, y)
            if cp is not None:
                system.copy_menu(self, cp.node.text, cp.rect[3])
            else:
                self._activate(box, x, y)  # a long press on a plain button is a click
        self.version += 1

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300, *, hold_ms: int = 0) -> None:
        x1, y1, x2, y2 = int(x1), int(y1), int(x2), int(y2)
        self._check_point(x1, y1)
        self._check_point(x2, y2)
        dx, dy = x2 - x1, y2 - y1
        if within_slop(x1, y1, x2, y2):
            if hold_ms + duration_ms >= LONG_PRESS_TIMEOUT_MS:
                self.long_press(x1, y1, hold_ms + duration_ms)
            else:
                self.tap(x1, y1)
            return
        if self._swipe_presses(x1, y1, x2, y2, duration_ms, hold_ms):
            return
        self._begin(duration_ms + 100)
        if not self.sys.screen_on:
            return
        s = self.sys
        if s.locked:
            if dy < -300:
                self.unlock()
            return
        if s.shade_open:
            if dy < -150:
                s.shade_open = False
                self.version += 1
            return
        if y1 < STATUS_H and dy > 200:
            s.shade_open = True
            s.keyboard_visible = False
            self.version += 1
            return
        if y1 >= HEIGHT - NAV_H and dy < -250:
            self.go_home()
            return
        roots = self.screen().roots
        hit = hit_test(roots, x1, y1)
        if hit is not None and hit.node.on_slide is not None:
            self._activate(hit, x2, y2)
            return
        if s.recents_open and dy < -300 and hit is not None and hit.node.rid.startswith("recents:"):
            self.force_stop(hit.node.rid.split(":", 1)[1])
            s.recents_open = True
            return
        if abs(dx) > abs(dy) and abs(dx) >= 150:
            fling = _fling_target(roots, x1, y1)
            if fling is not None and fling.node.on_fling is not None:
                fling.node.on_fling(-1 if dx < 0 else 1)
                self.version += 1
            return
        if abs(dy) >= abs(dx):
            lst = find_scrollable(roots, x1, y1)
            if lst is not None and lst.scroll_max > 0:
                cur = min(self.scroll.get(lst.scroll_id, 0), lst.scroll_max)
                self.scroll[lst.scroll_id] = min(lst.scroll_max, max(0, cur - dy))
                self.version += 1

    def _swipe_presses(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int, hold_ms: int = 0) -> bool:
        """An app's view under the start that Android's touch dispatch clicks or long-presses, though the
        pointer moved (assistant_core.hittest.dispatch_gesture, the gate's own rule): done, True. System
        gestures (keyguard, shade, navigation bar, recents) come first, as SystemUI takes them."""
        s, dy = self.sys, y2 - y1
        if (not s.screen_on or s.locked or s.shade_open or (y1 < STATUS_H and dy > 200)
                or (y1 >= HEIGHT - NAV_H and dy < -250) or s.recents_open):
            return False
        d = dispatch_gesture(_to_elements(self.screen().roots), x1, y1, x2, y2, duration_ms, hold_ms=hold_ms)
        if d.kind == TAP:
            self.tap(x1, y1)
        elif d.kind == LONG_PRESS:
            self.long_press(x1, y1, hold_ms + duration_ms)
        return d.kind in (TAP, LONG_PRESS)

    def drag(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 1000) -> None:
        """`input draganddrop`: the pointer rests on its start for the long-press timeout, then moves."""
        self.swipe(x1, y1, x2, y2, duration_ms, hold_ms=LONG_PRESS_TIMEOUT_MS)

    def key(self, code: int | str) -> None:
        k = keycode(code)
        self._begin(150)
        s = self.sys
        if k == 26:  # power
            if s.screen_on:
                s.screen_on = False
                s.locked = True
            else:
                s.screen_on = True
            self.version += 1
            return
        if k == 224:
            s.screen_on = True
            self.version += 1
            return
        if k == 223:
            s.screen_on, s.locked = False, True
            self.version += 1
            return
        if not s.screen_on:
            return
        if s.locked:
            if k == 82:  # MENU dismisses a keyguard without a secure lock, as on Android
                settings_app = self.apps.get("com.android.settings")
                if settings_app is None or not settings_app.state.screen_lock:  # type: ignore[attr-defined]
                    self.unlock()
            return
        if k == 4:
            self._back()
        elif k == 3:
            s.shade_open = False
            self.go_home()
        elif k == 187:
            s.shade_open = False
            s.recents_open = not s.recents_open
            self._navigated()
        elif k in (66, 160, 23):  # ENTER, NUMPAD_ENTER, DPAD_CENTER: the field's editor action
            self._submit()
        elif k in (67, 112):
            self._delete_char()
        elif k == 62:
            self._type_key(" ")
        elif k == 83:
            s.shade_open = True
            self.version += 1
        else:
            log.debug("key %d: no effect", k)

    def _back(self) -> None:
        s = self.sys
        if s.shade_open:
            s.shade_open = False
        elif self.overlays:
            top = self.overlays[-1]
            if top.cancelable:
                self.cancel_overlay(top)
        elif s.keyboard_visible and self._focus_valid():
            s.keyboard_visible = False
        elif s.recents_open:
            s.recents_open = False
        elif self.fg is not None:
            app = self.apps[self.fg]
            if not app.on_back(self.route_of(self.fg)):
                self.pop(self.fg)
        self.version += 1

    def wait(self, duration_ms: int = 1000) -> None:
        self.clock.advance(duration_ms)
        self.version += 1


def _copyable_at(roots: list[Box], x: int, y: int) -> Box | None:
    from harness.phoneworld.ui import walk

    found = None
    for root in roots:
        for b in walk(root):
            left, top, right, bottom = b.clip
            if b.node.copyable and left <= x < right and top <= y < bottom:
                found = b
    return found


def _fling_target(roots: list[Box], x: int, y: int) -> Box | None:
    """The topmost box under the point that takes horizontal swipes."""
    from harness.phoneworld.ui import walk

    found = None
    for root in roots:
        for b in walk(root):
            left, top, right, bottom = b.clip
            if left <= x < right and top <= y < bottom and (b.node.on_fling is not None or b.node.blocking):
                found = b
    return found
