"""The reply parser: a golden corpus of model replies (every dialect, repairs, errors) and a fuzz test
that the parser never raises anything but PolicyOutputError."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assistant_core.errors import PolicyOutputError
from assistant_core.policy.parsing import ParsedReply, parse_reply
from assistant_core.policy.prompt import action_to_call
from assistant_core.types import Action, Button

GOLDEN = json.loads((Path(__file__).with_name("policy_golden.json")).read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", GOLDEN, ids=[c["name"] for c in GOLDEN])
def test_golden_corpus(case):
    if "error" in case:
        with pytest.raises(PolicyOutputError) as info:
            parse_reply(case["reply"], case["width"], case["height"], case["profile"])
        assert case["error"] in str(info.value)
        assert info.value.raw_text == case["reply"] or not case["reply"].strip()
        return
    reply = parse_reply(case["reply"], case["width"], case["height"], case["profile"])
    assert isinstance(reply, ParsedReply)
    assert reply.action == Action.from_dict(case["action"])
    if "thought" in case:
        assert reply.thought == case["thought"]
    if "dialect" in case:
        assert reply.dialect == case["dialect"]
    if "notes" in case:
        assert list(reply.notes) == case["notes"]


def test_golden_corpus_covers_every_dialect_and_error_kind():
    dialects = {c.get("dialect") for c in GOLDEN}
    assert {"tool_json", "tool_xml", "autoglm", "mobile_use", "call", "arg_key"} <= dialects
    assert sum("error" in c for c in GOLDEN) >= 20


def test_bad_screen_size_is_a_caller_error():
    with pytest.raises(ValueError):
        parse_reply('<tool_call>{"name": "finish", "arguments": {}}</tool_call>', 0, 2400)


def test_non_text_reply_is_a_policy_error():
    with pytest.raises(PolicyOutputError):
        parse_reply(None, 1080, 2400)  # type: ignore[arg-type]


ACTIONS = [
    Action.click(0, 0), Action.click(1079, 2399), Action.click(540, 1200), Action.double_click(33, 77),
    Action.long_press(500, 600, duration_ms=1500), Action.type_text("发给妈妈：晚上回家吃饭"),
    Action.scroll(540, 1900, 540, 500, duration_ms=300), Action.drag(100, 200, 900, 2000, duration_ms=1200),
    Action.press(Button.BACK), Action.press(Button.HOME), Action.press(Button.ENTER), Action.press(Button.MENU),
    Action.open_app("com.android.settings"), Action.close_app("com.tencent.mm"), Action.wait(2500),
    Action.output("余额 12 元"), Action.call_user("Please enter the code"), Action.finish("done"),
]


@pytest.mark.parametrize("profile", ["phonebuddy-4b", "qwen3-vl-4b", "autoglm-phone-9b"])
@pytest.mark.parametrize("action", ACTIONS, ids=[a.kind.value + str(i) for i, a in enumerate(ACTIONS)])
def test_history_call_round_trips_through_the_parser(action, profile):
    """Action -> the model's own call syntax -> parser gives the same action back (within a pixel)."""
    text = action_to_call(action, 1080, 2400, profile)
    back = parse_reply(text, 1080, 2400, profile).action
    lossy = {"qwen3-vl-4b": {"double_click": "click", "close_app": "button_press", "output": "finish",
                             "drag": "scroll"},
             "autoglm-phone-9b": {"close_app": "button_press", "output": "finish", "drag": "scroll",
                                  "button_press": "button_press"}}.get(profile, {})
    if action.kind.value in lossy:
        assert back.kind.value == lossy[action.kind.value]
        return
    assert back.kind == action.kind
    for name in ("x", "y", "x2", "y2"):
        a, b = getattr(action, name), getattr(back, name)
        assert (a is None) == (b is None)
        if a is not None:
            assert abs(a - b) <= 3, (name, a, b)
    assert back.text == action.text or action.kind.value == "finish"
    if profile == "phonebuddy-4b":  # the history form keeps every field (durations, buttons, apps, text)
        assert (back.button, back.app, back.duration_ms, back.text) == (
            action.button, action.app, action.duration_ms, action.text)


@pytest.mark.parametrize("grid_x,grid_y", [(0, 0), (1, 999), (500, 500), (333, 667), (1000, 1000)])
def test_grid_to_pixels_to_grid_is_exact(grid_x, grid_y):
    """What the model said (0-1000) is what the history shows it next step, on a 1080x2400 screen."""
    action = parse_reply(f'click({{"points": [[{grid_x}, {grid_y}]]}})', 1080, 2400).action
    expected = f'click({{"points": [[{min(grid_x, 999)}, {min(grid_y, 1000)}]]}})'
    assert action_to_call(action, 1080, 2400) in (expected, f'click({{"points": [[{grid_x}, {grid_y}]]}})')


def test_history_call_keeps_non_ascii():
    assert action_to_call(Action.type_text("你好"), 1080, 2400) == 'type({"text": "你好"})'
    assert action_to_call(Action.click(540, 1200), 1080, 2400) == 'click({"points": [[500, 500]]})'


_fragments = st.sampled_from([
    "<think>", "</think>", "<tool_call>", "</tool_call>", "<answer>", "</answer>", "<function=click>",
    "<parameter=points>", "</parameter>", "</function>", '{"name": "click", "arguments": {"points": [[1, 2]]}}',
    '{"name": ', '"arguments": ', '{"points": ', "[[", "]]", "[", "]", "{", "}", ",", '"', "\u201c", "'",
    "do(action=", '"Tap"', "element=[1,2]", "finish(message=", ")", "(", "mobile_use", '"action": "click"',
    '"coordinate": [999, 999]', "NaN", "1e999", "-1", "\n", "click(", "<arg_key>", "<arg_value>", "<tool_sep>",
    '{"name": "scroll", "arguments": {"points": [[1, 2]]}}', '"direction": "up"', "\\", "\x00", "你好",
])


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parts=st.lists(st.one_of(_fragments, st.text(max_size=12)), max_size=14),
       width=st.integers(1, 5000), height=st.integers(1, 5000),
       profile=st.sampled_from(["phonebuddy-4b", "autoglm-phone-9b", "qwen3-vl-4b"]))
def test_fuzz_parser_raises_only_policy_output_error(parts, width, height, profile):
    text = "".join(parts)
    try:
        reply = parse_reply(text, width, height, profile)
    except PolicyOutputError as error:
        assert str(error)
        return
    a = reply.action
    for value, size in ((a.x, width), (a.y, height), (a.x2, width), (a.y2, height)):
        if value is not None:
            assert 0 <= value < size


@settings(max_examples=150, deadline=None)
@given(x=st.integers(-10_000, 10_000), y=st.integers(-10_000, 10_000),
       kind=st.sampled_from(["click", "long_press", "double_click"]))
def test_fuzz_coordinates_are_always_clamped_on_screen(x, y, kind):
    text = json.dumps({"name": kind, "arguments": {"points": [[x, y]]}})
    action = parse_reply(f"<tool_call>{text}</tool_call>", 1080, 2400).action
    assert 0 <= action.x <= 1079 and 0 <= action.y <= 2399
