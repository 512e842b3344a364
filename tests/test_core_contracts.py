import json
import subprocess
import sys

import pytest

from assistant_core.i18n import Catalog, Text, catalogs, normalize_lang
from assistant_core.types import Action, ActionError, ActionKind, Button, Observation, UIElement


def test_importing_the_core_loads_nothing_heavy():
    code = (
        "import sys, assistant_core, assistant_core.types, assistant_core.i18n, assistant_core.errors;"
        "heavy = [m for m in ('PySide6', 'torch', 'faster_whisper', 'trl', 'transformers') if m in sys.modules];"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(kind="click"), "needs a point"),
        (dict(kind="scroll", x=1, y=2), "end point"),
        (dict(kind="type"), "text to type"),
        (dict(kind="button_press", button="volume"), "button_press needs"),
        (dict(kind="open_app", app="  "), "app name"),
        (dict(kind="wait", duration_ms=-5), "negative"),
        (dict(kind="teleport"), "unknown action kind"),
        (dict(kind="click", x="left", y=3), "must be a number"),
    ],
)
def test_invalid_actions_are_refused_with_a_reason(kwargs, message):
    with pytest.raises(ActionError, match=message):
        Action(**kwargs)


def test_action_round_trips_through_json():
    actions = [
        Action.click(10.4, 20.6),
        Action.scroll(1, 2, 3, 4),
        Action.type_text("你好 world"),
        Action.press("back"),
        Action.open_app("设置"),
        Action.finish("done"),
    ]
    for action in actions:
        again = Action.from_dict(json.loads(json.dumps(action.to_dict(), ensure_ascii=False)))
        assert again == action
    assert Action.click(10.4, 20.6).point == (10, 21)
    assert Action.press("back").button is Button.BACK
    assert Action.wait().kind is ActionKind.WAIT and Action.wait().is_passive


def test_from_dict_rejects_unknown_fields():
    with pytest.raises(ActionError, match="unknown action fields"):
        Action.from_dict({"kind": "click", "x": 1, "y": 2, "why": "because"})


def test_observation_finds_the_smallest_actionable_element():
    big = UIElement(bounds=(0, 0, 1080, 2400), text="page")
    button = UIElement(bounds=(100, 100, 300, 200), text="Pay", clickable=True)
    obs = Observation(width=1080, height=2400, foreground="com.shop", elements=(big, button))
    assert obs.element_at(150, 150) is button
    assert obs.element_at(900, 900) is big
    assert obs.element_at(5000, 5) is None
    assert "Pay" in obs.screen_text and obs.in_bounds(0, 0) and not obs.in_bounds(1080, 0)


def test_bilingual_text_and_catalog_checks():
    assert normalize_lang("zh-CN") == "zh" and normalize_lang("en_US") == "en" and normalize_lang(None) == "en"
    text = Text("Hello {name}", "你好{name}")
    assert text.get("zh", name="小明") == "你好小明"
    bad = Catalog("test-bad", {"a": ("Hi {x}", "嗨"), "b": ("", "空")}, register=False)
    assert len(bad.problems()) == 2
    assert "test-bad" not in catalogs()
