"""Task-kind files: the built-in folder loads cleanly, a caregiver's folder adds or replaces kinds, bad
files are reported and skipped (never fatal), requests map to parameters in English and Chinese, and
a request whose details are missing says which."""

from __future__ import annotations

import json

from assistant_core.events import VerificationStatus
from assistant_core.i18n import catalogs
from harness.verify import KindRegistry, OutcomeVerifier, Params
from harness.verify.registry import parse_kind


def test_the_built_in_kinds_load_without_problems_and_their_strings_are_bilingual():
    kinds = KindRegistry.load()
    assert kinds.problems == [] and len(kinds.kinds) >= 25
    for kind in kinds.kinds:
        assert kind.describe.en and kind.describe.zh
    for name in ("verify", "verify_found", "verify_params"):
        assert catalogs()[name].problems() == []


def test_requests_become_parameters_in_both_languages():
    kinds = KindRegistry.load()
    cases = [
        ('Text Nina Song: "I will be there at six"', "send_message", Params(recipient="Nina Song", text="I will be there at six")),
        ("给宋妮娜发短信：“我六点到”", "send_message", Params(recipient="宋妮娜", text="我六点到")),
        ("Set an alarm for 4:10 pm labelled 'Walk the dog'.", "set_alarm", Params(time="16:10")),
        ("设一个下午9点50分的闹钟，标签是“给妈妈打电话”。", "set_alarm", Params(time="21:50")),
        ("Dial 15732886541 on the keypad and call it.", "call", Params(recipient="15732886541")),
        ("Add a new contact named Ruby Jiang with the number 132 5667 9904.", "add_contact",
         Params(name="Ruby Jiang", number="132 5667 9904")),
        ("开一个 8 分钟的计时器。", "start_timer", Params(minutes=8)),
    ]
    for goal, kind, params in cases:
        match = kinds.match(goal)
        assert match is not None and match.kind.name == kind and not match.missing, goal
        for field, value in params.to_dict().items():
            assert getattr(match.params, field) == value, (goal, field)
    event = kinds.match("在日历里添加“项目启动会”，时间是4月11日下午2:45。")
    assert event.kind.name == "create_event" and event.params.time == "14:45" and event.params.title == "项目启动会"


def test_a_caregiver_folder_adds_and_replaces_kinds_and_bad_files_are_reported(tmp_path):
    (tmp_path / "pills.json").write_text(json.dumps([
        {"kind": "pill_reminder", "check": "alarm_set", "describe": ["a pill reminder", "吃药提醒"], "priority": 30,
         "params": {"time": "08:00"}, "patterns": {"en": ["\\bpills?\\b"], "zh": ["吃药"]}},
        {"kind": "wifi_on", "check": "setting", "describe": ["Wi-Fi on (ours)", "打开 WLAN（我们的）"],
         "params": {"namespace": "global", "key": "wifi_on", "value": "1"}, "patterns": {"en": ["^wifi please$"]}},
    ]), encoding="utf-8")
    (tmp_path / "bad_regex.json").write_text(json.dumps({"kind": "x", "check": "alarm_set", "describe": ["a", "b"],
                                                         "patterns": {"en": ["("]}}), encoding="utf-8")
    (tmp_path / "bad_check.json").write_text(json.dumps({"kind": "y", "check": "telepathy", "describe": ["a", "b"],
                                                         "patterns": {"en": ["y"]}}), encoding="utf-8")
    (tmp_path / "bad_param.json").write_text(json.dumps({"kind": "z", "check": "setting", "describe": ["a", "b"],
                                                         "params": {"colour": "red"}, "patterns": {"en": ["z"]}}),
                                             encoding="utf-8")
    kinds = KindRegistry.load(extra=[tmp_path, tmp_path / "missing"])
    assert kinds.match("Remind me of my pills").kind.name == "pill_reminder"
    assert kinds.match("每天提醒我吃药").params.time == "08:00"
    assert kinds.get("wifi_on").describe.en == "Wi-Fi on (ours)"
    text = "\n".join(kinds.problems)
    for name in ("bad_regex.json", "bad_check.json", "bad_param.json", "missing"):
        assert name in text
    assert "telepathy" in text and "colour" in text


def test_a_kind_needs_a_name_a_check_and_something_to_match():
    for raw, message in [({"check": "setting"}, "snake_case"), ({"kind": "a", "check": "nope"}, "unknown check"),
                         ({"kind": "a", "check": "setting", "describe": ["x", "y"]}, "patterns"),
                         ({"kind": "a", "check": "setting", "describe": "x", "patterns": {"en": ["a"]}}, "describe")]:
        try:
            parse_kind(raw, "t.json")
        except ValueError as error:
            assert message in str(error)
        else:
            raise AssertionError(f"{raw} was accepted")


def test_missing_details_say_which_in_both_languages():
    verifier = OutcomeVerifier(KindRegistry.load())
    result = verifier(goal="Check the meeting invitation in my mail and put the meeting in my calendar as 'Project review'.")
    assert result.status is VerificationStatus.CANNOT_VERIFY and result.kind == "create_event"
    assert "the date" in result.summary.en and "日期" in result.summary.zh


def test_a_leading_open_the_app_clause_does_not_hide_the_request():
    from harness.verify import KindRegistry

    kinds = KindRegistry.load()
    for goal, expected in [
        ("Open the settings and turn on Wi-Fi", "wifi_on"),
        ("打开设置并打开WLAN", "wifi_on"),
        ("open the Clock app and set an alarm for 7:30", "set_alarm"),
        ("Open WeChat", "open_app"),
        ("打开设置", "open_app"),
    ]:
        match = kinds.match(goal)
        assert match is not None and match.kind.name == expected, (goal, match)
