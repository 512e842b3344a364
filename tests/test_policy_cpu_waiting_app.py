"""The window's "still thinking" hook (issue 25): during a long working state the announcer says
"Still thinking." through the user's voice channel, and says nothing while a question is open."""

from __future__ import annotations

from app.main_window import State
from tests.app_fixtures import make_window, process


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def thinking_lines(window) -> list:
    return [a for a in window.announcer.log if a.text in ("Still thinking.", "还在想。")]


def test_long_step_hears_still_thinking_on_the_chosen_channel_and_never_over_a_question(qtbot):
    window = make_window(qtbot)
    clock = Clock()
    window.thinking_cue._clock = clock
    window.announcer.set_channel("screen_reader")
    window._set_state(State.WORKING)
    clock.now += 2.0
    process(1200)
    assert thinking_lines(window) == []  # a short wait: nothing
    clock.now += 1.5
    qtbot.waitUntil(lambda: len(thinking_lines(window)) == 1, timeout=5000)
    said = thinking_lines(window)[0]
    assert said.to_screen_reader and not said.spoken  # the screen-reader channel only
    process(1200)
    assert len(thinking_lines(window)) == 1  # not again within 5 s
    window._set_state(State.WAITING)  # a question is open
    clock.now += 30
    process(1200)
    assert len(thinking_lines(window)) == 1
    window._set_state(State.IDLE)
    clock.now += 30
    process(1200)
    assert len(thinking_lines(window)) == 1
