"""Hostile model replies: absurd numbers and oversized replies end in PolicyOutputError, in bounded work.

Issue 20: `[[1e308, 1e308]]` raised OverflowError and an integer of more than 4,300 digits raised ValueError
from the parser, crashing the run instead of being fed back to the model as a bad reply."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assistant_core.errors import PolicyOutputError
from assistant_core.policy.parsing import MAX_REPLY_CHARS, parse_reply


def call(points) -> str:
    return "<tool_call>" + json.dumps({"name": "click", "arguments": {"points": points}}) + "</tool_call>"


@pytest.mark.parametrize("text", [
    call([[1e308, 1e308]]),
    call([[-1e308, 5]]),
    '<tool_call>{"name": "click", "arguments": {"points": [[' + "9" * 5000 + ", 1]]}}</tool_call>",
    '<tool_call>{"name": "long_press", "arguments": {"points": [[1, 1]], "duration": ' + "9" * 5000 + "}}</tool_call>",
    "click({'points': [[" + "9" * 5000 + ", 1]]})",
    'do(action="Tap", element=[' + "9" * 5000 + ", 1])",
    '<tool_call>{"name": "swipe", "arguments": {"points": [[1e300, 1], [1, -1e300]]}}</tool_call>',
    '<tool_call>{"name": "click", "arguments": {"points": [["1' + "0" * 400 + '", 1]]}}</tool_call>',
])
def test_absurd_numbers_are_a_policy_output_error(text):
    with pytest.raises(PolicyOutputError) as caught:
        parse_reply(text, 1080, 2400)
    assert str(caught.value)


def test_a_coordinate_far_outside_the_grid_says_so():
    with pytest.raises(PolicyOutputError, match="out of range"):
        parse_reply(call([[1e12, 5]]), 1080, 2400)


def test_a_reply_over_the_size_cap_is_refused_without_parsing():
    text = "<think>" + "a" * MAX_REPLY_CHARS + "</think>" + call([[500, 500]])
    with pytest.raises(PolicyOutputError, match="too long"):
        parse_reply(text, 1080, 2400)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example,
                                                                  HealthCheck.data_too_large])
@given(unit=st.sampled_from(["[", "{", '"', "9", "<tool_call>", "click(", "do(action=", "\\", "[[1e308,"]),
       prefix=st.text(max_size=40))
def test_fuzz_a_one_megabyte_reply_raises_only_policy_output_error(unit, prefix):
    text = prefix + unit * (1_000_000 // len(unit))
    with pytest.raises(PolicyOutputError):
        parse_reply(text, 1080, 2400)


_pieces = st.sampled_from(["<tool_call>", "</tool_call>", '{"name": "click", "arguments": {"points": [[',
                           "]]}}", "1e308", "-1e308", "9" * 4400, "1" * 400, ", ", "NaN", "Infinity",
                           "do(action=\"Tap\", element=[", "])", "click({'points': [[", '"duration": ',
                           '{"name": "swipe", "arguments": {"points": [[', "], [", "1e20", "0.5"])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parts=st.lists(st.one_of(_pieces, st.text(max_size=8)), max_size=12))
def test_fuzz_numbers_raise_only_policy_output_error(parts):
    text = "".join(parts)
    try:
        reply = parse_reply(text, 1080, 2400)
    except PolicyOutputError:
        return
    a = reply.action
    for value, size in ((a.x, 1080), (a.y, 2400), (a.x2, 1080), (a.y2, 2400)):
        if value is not None:
            assert 0 <= value < size
