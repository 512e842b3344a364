"""A tool action is one registered object (issue 26): the prompt's tool list, the parser's accepted names,
Action's kinds, the gate's rules, the read-back and the harness's shell paths and outcome checks all come
from the registry (assistant_core.toolbox + harness.tools.shell_tool), and a tool missing any part is
refused at registration. The new read-only tool, ringer_mode, runs end to end on the simulated phone:
model reply -> parser -> gate -> the phone's shell -> what the user hears."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from assistant_core.confirm import FixedConfirmer
from assistant_core.errors import PolicyOutputError
from assistant_core.events import ConfirmationRequested
from assistant_core.i18n import Text
from assistant_core.loop import LoopConfig, run_episode
from assistant_core.policies import ScriptedPolicy
from assistant_core.policy.parsing import TOOL_ACTIONS, parse_reply
from assistant_core.policy.prompt import prompt_text, tool_action_schemas
from assistant_core.safety import Category, GateContext, SafetyGate
from assistant_core.toolbox import TOOLS
from assistant_core.toolgate import HANDLERS, handler_for
from assistant_core.toolspec import ALIASES, GateRule, ToolSpec, ToolSpecError, register, spec_problems
from assistant_core.types import (
    READ_ONLY_KINDS,
    TOOL_KINDS,
    Action,
    ActionKind,
    ConfirmAnswer,
    Observation,
    Verdict,
)
from harness import tools as harness_tools
from harness.phoneworld import SimDevice, World
from harness.verify.checks import CHECKS
from harness.verify.probe import ShellProbe
from harness.verify.verifier import read

ALL = frozenset({"com.android.dialer", "com.android.messaging", "com.android.browser", "com.android.deskclock",
                 "com.android.settings"})


def reply(name: str, **arguments) -> str:
    return f"<think></think><tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"


def screen(*, locked: bool = False) -> Observation:
    return Observation(width=1080, height=2400, foreground="com.android.launcher3", elements=(), is_locked=locked)


def run(world: World, replies: list[str], *, allowed=ALL, answer=ConfirmAnswer.NO, lang="en", always=frozenset()):
    device = SimDevice(world, screenshots=False)
    context = GateContext(allowed_apps=frozenset(allowed), app_labels=device.installed_apps(), lang=lang,
                          always_confirm=frozenset(always))
    gen = run_episode("Do what the model says", device=device, policy=ScriptedPolicy.from_replies(replies),
                      confirmer=FixedConfirmer(answer), context=context,
                      config=LoopConfig(step_budget=len(replies) + 2, lang=lang), sleep=lambda s: None)
    events = []
    while True:
        try:
            events.append(next(gen))
        except StopIteration as done:
            return done.value, events


# --- one source ---------------------------------------------------------------------------------------


def test_every_part_of_the_system_lists_exactly_the_registered_tools():
    names = set(TOOLS)
    assert "ringer_mode" in names and len(names) >= 8
    assert {str(k) for k in TOOL_KINDS} == names  # Action's kinds
    assert {str(k) for k in READ_ONLY_KINDS} == {n for n, s in TOOLS.items() if s.gate.read_only}
    assert set(TOOL_ACTIONS) == names  # the parser's tool names
    assert {s["function"]["name"] for s in tool_action_schemas()} == names  # the prompt's list
    assert set(harness_tools.SHELL_TOOLS) == names  # the harness's shell paths
    assert {str(k) for k in HANDLERS} <= names  # the gate's handler apps, from each GateRule
    for name, spec in TOOLS.items():
        if spec.gate.handlers and not callable(spec.gate.handlers):
            assert HANDLERS[ActionKind(name)] == spec.gate.handlers
        tool = harness_tools.SHELL_TOOLS[name]
        assert (tool.check is None) == spec.gate.read_only  # only a read-only tool has nothing to check
        assert tool.check is None or tool.check in CHECKS


def test_the_prompt_offers_each_tool_from_its_spec_and_the_parser_reads_it_back():
    text = prompt_text("phonebuddy", "en", tool_actions=True)
    listed = [json.loads(line) for line in text.split("<tools>\n")[1].split("\n</tools>")[0].splitlines()]
    offered = {t["function"]["name"]: t["function"] for t in listed}
    assert "click" in offered and set(TOOLS) <= set(offered)
    assert "ringer_mode" not in prompt_text("phonebuddy", "en")  # the trained prompt stays as trained
    examples = {"call": {"number": "+1 555 0100"}, "send_text": {"number": "5550100", "text": "hi"},
                "set_alarm": {"time": "7:05"}, "set_timer": {"seconds": 90},
                "set_setting": {"setting": "wifi", "value": "off"}, "open_link": {"url": "https://example.com"},
                "query": {"query": "battery"}, "ringer_mode": {}}
    for name, spec in TOOLS.items():
        fn = offered[name]
        assert fn["description"] == spec.description
        assert set(fn["parameters"]["properties"]) >= {i.name for i in spec.inputs}
        # Every registered tool has an example here, written with the argument names the prompt shows.
        args = examples[name]
        assert set(args) <= set(fn["parameters"]["properties"])
        parsed = parse_reply(reply(name, **args), 1080, 2400)
        assert parsed.action.kind is ActionKind(name)
        for alias in spec.aliases:
            assert parse_reply(reply(alias, **args), 1080, 2400).action.kind is ActionKind(name)
    assert parse_reply(reply("set_alarm", time="7:05"), 1080, 2400).action.clock == "07:05"


def test_a_name_that_is_not_registered_is_not_a_tool():
    with pytest.raises(PolicyOutputError, match="unknown tool"):
        parse_reply(reply("factory_reset"), 1080, 2400)
    with pytest.raises(ValueError, match="unknown action kind"):
        Action.from_dict({"kind": "factory_reset"})


# --- registration refuses a tool with a missing part ------------------------------------------------


def _spec(**changes) -> ToolSpec:
    base = ToolSpec("read_volume", "Read the volume", (), GateRule(read_only=True), lambda a: Text("x", "x"),
                    lambda f: f)
    return replace(base, **changes)


@pytest.mark.parametrize("changes, problem", [
    ({"description": " "}, "description"),
    ({"gate": None}, "GateRule"),
    ({"read_back": None}, "read_back"),
    ({"validate": None}, "validate"),
    ({"name": "Read Volume"}, "snake_case"),
    ({"gate": GateRule()}, "changes the phone needs handler apps"),  # a writing tool nobody judges
    ({"gate": GateRule(read_only=True, confirm="call")}, "nothing to confirm"),
    ({"gate": GateRule(handlers=("x",), secret_text=True)}, "secret_text needs a text input"),
])
def test_a_tool_missing_a_part_is_refused(changes, problem):
    spec = _spec(**changes)
    assert any(problem in p for p in spec_problems(spec))
    before = dict(TOOLS)
    with pytest.raises(ToolSpecError, match=problem):
        register(spec)
    assert before == TOOLS and "read_volume" not in ALIASES  # nothing half-registered


def test_a_name_or_alias_is_registered_once():
    with pytest.raises(ToolSpecError, match="already registered"):
        register(_spec(name="call"))
    with pytest.raises(ToolSpecError, match="already names the tool"):
        register(_spec(aliases=("send_sms",)))


def test_the_harness_half_is_required_and_attached_once(monkeypatch):
    with pytest.raises(ToolSpecError, match="no tool named"):
        harness_tools.shell_tool("read_volume", lambda runner, action: None)
    with pytest.raises(ToolSpecError, match="attached once"):
        harness_tools.shell_tool("ringer_mode", lambda runner, action: None)
    monkeypatch.setitem(TOOLS, "read_volume", _spec())
    with pytest.raises(ToolSpecError, match="read_volume: no shell path"):
        harness_tools.check_registry()
    # A tool that changes the phone needs an outcome check that exists.
    monkeypatch.setitem(TOOLS, "lock_screen", _spec(name="lock_screen", gate=GateRule(confirm="security")))
    with pytest.raises(ToolSpecError, match="needs an outcome check"):
        harness_tools.shell_tool("lock_screen", lambda runner, action: None)
    with pytest.raises(ToolSpecError, match="not in harness.verify.checks.CHECKS"):
        harness_tools.shell_tool("lock_screen", lambda runner, action: None, "screen_locked", lambda a, r: None)
    assert "lock_screen" not in harness_tools.SHELL_TOOLS


# --- the gate and the read-back follow each tool's spec -------------------------------------------


def test_the_gate_judges_each_tool_by_its_rule():
    gate, obs = SafetyGate(), screen()
    context = GateContext(allowed_apps=ALL, app_labels={p: p for p in ALL})
    examples = {"call": Action.call("5550100"), "send_text": Action.send_text("5550100", "hi"),
                "set_alarm": Action.set_alarm("07:00"), "set_timer": Action.set_timer(60),
                "set_setting": Action.set_setting("bluetooth", "on"), "open_link": Action.open_link("https://a.b"),
                "query": Action.ask_phone("battery"), "ringer_mode": Action(ActionKind.RINGER_MODE)}
    assert set(examples) == set(TOOLS)
    for name, action in examples.items():
        rule = TOOLS[name].gate
        decision = gate.check(action, obs, context)
        if rule.confirm:
            assert decision.verdict is Verdict.CONFIRM and decision.details["category"] == rule.confirm
        elif rule.read_only:
            assert decision.verdict is Verdict.ALLOW and decision.rule == "allow.read_only"
        else:
            assert decision.verdict is Verdict.ALLOW
        # Nothing allowed: a tool that needs an app is refused; one that only reads the shell still reads.
        none = gate.check(action, obs, GateContext(allowed_apps=frozenset(), app_labels={p: p for p in ALL}))
        needs_app = handler_for(action, context) != ""
        assert (none.verdict is Verdict.DENY) == needs_app, name
        # A locked phone is handed over, whatever the tool.
        assert gate.check(action, screen(locked=True), context).verdict is Verdict.DENY


@pytest.mark.parametrize("lang, said", [("en", "turn off Bluetooth"), ("zh", "关闭蓝牙")])
def test_a_caregiver_confirmation_reads_back_what_the_tool_will_do(lang, said):
    world = World(seed=0, language=lang)
    _, events = run(world, [reply("set_setting", setting="bluetooth", value="off")], lang=lang,
                    always={Category.SETTINGS_CHANGE})
    asked = [e for e in events if isinstance(e, ConfirmationRequested)]
    assert len(asked) == 1 and said in asked[0].question.get(lang)


# --- the new tool, end to end -------------------------------------------------------------------------


@pytest.mark.parametrize("mode, en, zh", [("0", "on silent", "静音"), ("1", "on vibrate", "振动"),
                                          ("2", "will ring", "响铃")])
def test_ringer_mode_reads_the_phone_through_the_model_the_gate_and_the_shell(mode, en, zh):
    for lang, words in (("en", en), ("zh", zh)):
        world = World(seed=1, language=lang)
        world.settings_put("global", "mode_ringer", mode)
        version = world.version
        # Even with no app allowed: it only reads the phone's own settings.
        result, _ = run(world, [reply("get_ringer_mode"), reply("finish", text="ok")], allowed=frozenset(), lang=lang)
        step = result.steps[0]
        assert step.action.kind is ActionKind.RINGER_MODE and step.executed and step.decision.verdict is Verdict.ALLOW
        assert en in step.result  # what the model reads next turn (English)
        assert world.version == version  # nothing changed on the phone
        done = harness_tools.carry_out(Action(ActionKind.RINGER_MODE), SimDevice(world, screenshots=False)._tool_runner())
        assert words in done.said.get(lang) and done.commands == ("settings get global mode_ringer",)


def test_ringer_mode_that_cannot_be_read_is_said_plainly():
    world = World(seed=1)  # this phone never stored a ringer mode: `settings get` prints "null"
    done = harness_tools.carry_out(Action(ActionKind.RINGER_MODE), SimDevice(world, screenshots=False)._tool_runner())
    assert done.said.en.startswith("I could not read that from the phone") and "null" in done.said.en
    assert "Exception" not in done.said.en and done.said.zh.startswith("没能从手机上读到")


def test_the_outcome_check_of_a_tool_that_changes_the_phone_proves_it():
    world = World(seed=2)
    device = SimDevice(world, screenshots=False)
    action = Action.set_setting("wifi", "off")
    probe = ShellProbe(device._tool_runner().phone)
    check, params = harness_tools.outcome_check(action, harness_tools.ToolResult(action, Text("", ""), ""))
    before = read(probe, tuple(check.commands(params)))
    done = device.act(action)
    after = read(probe, tuple(check.commands(params)))
    assert check.name == "setting" and check.judge(params, before, after).status.value == "verified"
    assert harness_tools.outcome_check(Action(ActionKind.RINGER_MODE), done) is None
