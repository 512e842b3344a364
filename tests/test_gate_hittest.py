"""Issue 19: the gate and the phone agree on what is under every point.

The property: over oracle states of every PhoneWorld-lite task, in English and Chinese, at every point of
a coarse grid and at the corners and just-outside edges of every element that takes touches, the element
the safety gate judges (`Observation.element_at`, from the observation the loop sees and from the
uiautomator XML as the adb device parses it) is the element whose box the simulated phone activates
(`ui.hit_test`, what `World.tap` dispatches to). Where the phone activates nothing, the gate sees no
touch receiver.

Kept fast for CI: a 6 x 12 grid plus element edges, on every third state of each oracle run (its first
and last always), about 1,500 states in all. Through the real adb server (the UI dump the adb device
reads, which may leave windows out, as on a phone) every fourth readable state of seven safety tasks, in
both languages.
"""

from __future__ import annotations

import pytest

from assistant_core.hittest import takes_touch, touch_target
from assistant_core.types import UIElement
from harness.adb import parse_ui_xml
from harness.phoneworld import SimDevice
from harness.phoneworld.oracle import iter_solve, observe_fast
from harness.phoneworld.tasks import make_world, registry
from harness.phoneworld.ui import element_boxes, hit_test, to_elements
from harness.phoneworld.world import HEIGHT, WIDTH

pytest_plugins = ("tests.adb_fixtures",)

GRID = [(int(WIDTH * (i + 0.5) / 6), int(HEIGHT * (j + 0.5) / 12)) for i in range(6) for j in range(12)]


def _key(e: UIElement | None):
    return None if e is None else (e.bounds, e.resource_id, e.text, e.content_desc, e.clickable, e.package)


def probe_points(elements) -> list[tuple[int, int]]:
    points = list(GRID)
    for e in elements:
        if not takes_touch(e) or e.area <= 0:
            continue
        left, top, right, bottom = e.bounds
        points += [(left, top), (right - 1, bottom - 1), (right, (top + bottom) // 2), ((left + right) // 2, bottom),
                   (left - 1, top - 1)]
    return [(x, y) for x, y in points if 0 <= x < WIDTH and 0 <= y < HEIGHT]


def disagreements(world) -> list[str]:
    roots = world.screen().roots
    phone_elements = to_elements(roots)
    boxes = element_boxes(roots)
    assert len(boxes) == len(phone_elements)
    obs = observe_fast(world)
    parsed = parse_ui_xml(world.ui_xml())
    out = []
    for x, y in probe_points(obs.elements or ()):
        box = hit_test(roots, x, y)
        expected = None
        if box is not None:
            expected = next(e for e, b in zip(phone_elements, boxes, strict=True) if b is box)
        for source, elements in (("observation", obs.elements or ()), ("adb xml", parsed)):
            seen = touch_target(elements, x, y)
            if _key(seen) != _key(expected):
                out.append(f"{source} ({x},{y}): gate {_key(seen)} phone {_key(expected)}")
        # The gate's element_at names the receiver when there is one (what it judges).
        if expected is not None and _key(obs.element_at(x, y)) != _key(expected):
            out.append(f"element_at ({x},{y}): {_key(obs.element_at(x, y))} vs {_key(expected)}")
        if expected is None and obs.element_at(x, y) is not None and takes_touch(obs.element_at(x, y)):
            out.append(f"element_at ({x},{y}) names a receiver the phone does not activate")
    return out


TASK_IDS = [t.id for t in registry.TASKS]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_gate_and_phone_agree_on_every_point_of_every_oracle_state(lang):
    states = 0
    problems: list[str] = []
    for task_id in TASK_IDS:
        world, params = make_world(task_id, 0, lang)
        problems += [f"{task_id} start: {p}" for p in disagreements(world)]
        states += 1
        gen = iter_solve(task_id, 0, lang, SimDevice(world, screenshots=False), world=world, params=params)
        steps = 0
        while True:
            try:
                next(gen)
            except StopIteration:
                break
            steps += 1
            if steps % 3 == 0:  # every third state after an action (the start and the end always)
                problems += [f"{task_id} step {steps}: {p}" for p in disagreements(world)]
                states += 1
        if steps % 3:
            problems += [f"{task_id} end: {p}" for p in disagreements(world)]
            states += 1
    assert problems == [], problems[:10]
    assert states >= 3 * len(TASK_IDS)


# --- through the real adb server --------------------------------------------------------------------------

ADB_TASKS = ["ShopPayOrder", "ContactsExportAll", "GalleryDeleteAllPhotos", "MessagesSendToUnknownNumber",
             "SettingsFactoryReset", "GalleryPermissionDialog", "ChatInjectedTransfer"]


def adb_disagreements(world, device) -> list[str]:
    """The gate's view through adb (the adb device's `uiautomator dump`) against the box the phone activates: where the gate sees a receiver it is the phone's; where it sees none, the
    phone's target lies in a window the dump does not show (status or navigation bar, keyboard)."""
    roots = world.screen().roots
    phone_elements = to_elements(roots)
    boxes = element_boxes(roots)
    obs = device.observe()
    dumped = {_key(e) for e in obs.elements or ()}
    out = []
    for x, y in probe_points(list(obs.elements or ()) + phone_elements):
        box = hit_test(roots, x, y)
        expected = None if box is None else next(e for e, b in zip(phone_elements, boxes, strict=True) if b is box)
        seen = touch_target(obs.elements or (), x, y)
        if seen is not None and _key(seen) != _key(expected):
            out.append(f"({x},{y}): gate {_key(seen)} phone {_key(expected)}")
        if seen is None and expected is not None and _key(expected) in dumped:
            out.append(f"({x},{y}): the gate sees nothing, the phone activates {_key(expected)}")
    return out


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_over_adb_the_gate_sees_what_the_phone_activates(adb_server, phone, lang):
    from harness.adb import AdbDevice

    device = AdbDevice(adb_server.client(), phone.address, reconnect_grace_s=3.0)
    problems: list[str] = []
    states = 0
    try:
        for task_id in ADB_TASKS:
            world, params = make_world(task_id, 0, lang)
            gen = iter_solve(task_id, 0, lang, SimDevice(world, screenshots=False), world=world, params=params)
            steps = 0
            while True:
                if steps % 4 == 0 and not world.is_secure and not world.locked:
                    with phone.lock:
                        phone.world = world
                    problems += [f"{task_id} step {steps}: {p}" for p in adb_disagreements(world, device)]
                    states += 1
                try:
                    next(gen)
                except StopIteration:
                    break
                steps += 1
    finally:
        device.close()
    assert problems == [], problems[:10]
    assert states >= 2 * len(ADB_TASKS)


# --- what a swipe becomes (issue 28): dispatch_gesture on hand-built trees ---------------------------------


def _tree(*specs):
    """(bounds, depth, class, clickable, scrollable, long_clickable) -> UIElements in document order."""
    return [UIElement(bounds=b, depth=d, class_name=c, clickable=cl, scrollable=sc, long_clickable=lc)
            for b, d, c, cl, sc, lc in specs]


LIST = ((0, 0, 1080, 2000), 0, "androidx.recyclerview.widget.RecyclerView", False, True, False)
PAY = ((0, 1800, 1080, 1932), 1, "android.widget.Button", True, False, False)


def test_a_sideways_swipe_on_a_button_in_a_vertical_list_is_a_click_and_a_vertical_one_scrolls():
    from assistant_core.hittest import LONG_PRESS, MOVE, TAP, dispatch_gesture

    els = _tree(LIST, PAY)
    assert dispatch_gesture(els, 162, 1866, 918, 1866, 100).kind == TAP  # the list never takes a sideways move
    assert dispatch_gesture(els, 162, 1866, 918, 1866, 900) == dispatch_gesture(els, 162, 1866, 918, 1866, 900)
    assert dispatch_gesture(els, 162, 1866, 918, 1866, 900).kind == LONG_PRESS
    assert dispatch_gesture(els, 540, 1920, 540, 1840, 100).kind == MOVE  # 80 px up: the list takes it
    assert dispatch_gesture(els, 540, 1866, 540, 1500, 100).kind == MOVE  # leaves the button
    # Out of the button by less than the slop is still on it (View.pointInView(x, y, touchSlop)).
    assert dispatch_gesture(_tree(PAY), 540, 1866, 1079, 1900, 100).kind == TAP
    assert dispatch_gesture(_tree(PAY), 540, 1820, 540, 1975, 100).kind == TAP
    assert dispatch_gesture(_tree(PAY), 540, 1820, 540, 1990, 100).kind == MOVE


def test_a_horizontal_scroller_takes_a_sideways_move_and_not_a_vertical_one():
    from assistant_core.hittest import MOVE, TAP, dispatch_gesture

    pager = ((0, 0, 1080, 1200), 0, "androidx.viewpager.widget.ViewPager", False, True, False)
    card = ((0, 0, 1080, 1200), 1, "android.widget.FrameLayout", True, False, False)
    els = _tree(pager, card)
    assert dispatch_gesture(els, 900, 600, 200, 600, 100).kind == MOVE
    assert dispatch_gesture(els, 540, 200, 540, 1000, 100).kind == TAP
    assert dispatch_gesture(els, 540, 200, 700, 1000, 100).kind == TAP  # ViewPager: xDiff * 0.5 > yDiff only


def test_an_overlay_that_is_not_inside_the_list_is_not_taken_by_it():
    """A floating button drawn over a list is the list's sibling (the dump's nesting says so): a vertical
    move on it is not the list's, so it clicks the button."""
    from assistant_core.hittest import MOVE, TAP, dispatch_gesture

    root = ((0, 0, 1080, 2400), 0, "android.widget.FrameLayout", False, False, False)
    lst = ((0, 0, 1080, 2400), 1, "android.widget.ListView", False, True, False)
    row = ((0, 1700, 1080, 1900), 2, "android.widget.LinearLayout", True, False, False)
    fab = ((800, 1650, 1000, 1850), 1, "android.widget.ImageButton", True, False, False)
    els = _tree(root, lst, row, fab)
    assert dispatch_gesture(els, 900, 1700, 900, 1790, 100).kind == TAP
    assert dispatch_gesture(els, 300, 1710, 300, 1890, 100).kind == MOVE  # the row is in the list


def test_a_long_clickable_view_held_long_enough_before_the_move_leaves_it_is_long_pressed():
    from assistant_core.hittest import LONG_PRESS, MOVE, dispatch_gesture

    held = ((0, 1000, 1080, 1200), 1, "android.widget.LinearLayout", True, False, True)
    els = _tree(LIST, held)
    # 2 s from the row 900 px up: the list takes it after 48/900 of the way (about 107 ms): no long press.
    assert dispatch_gesture(els, 540, 1100, 540, 200, 2000).kind == MOVE
    # 10 s: taken after 533 ms, past the long-press timeout.
    assert dispatch_gesture(els, 540, 1100, 540, 200, 10_000).kind == LONG_PRESS
