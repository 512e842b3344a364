"""Capture PhoneWorld-lite's own Settings and Shop through the real adb server, load the mock apps, and
check that they match the originals (screens and navigation edges), that capture never activates a
sensitive element, that an existing task's oracle ends on the same screen on the mock, and that a task
declared on a captured app verifies its oracle and fails a no-op."""

from __future__ import annotations

import json

import pytest

from assistant_core.i18n import Text
from assistant_core.types import Action
from harness.adb import AdbDevice
from harness.phoneworld.apps.captured import CapturedApp, CapturedAppError, CapturedTask, load_captured
from harness.phoneworld.capture import Explorer, capture_app, fold_digits, mask_text, screen_key
from harness.phoneworld.device import SimDevice
from harness.phoneworld.world import World

pytest_plugins = ("tests.adb_fixtures",)

APPS = ("com.android.settings", "com.phoneworld.shop")


class RouteExplorer(Explorer):
    """The originals' ground truth: the same walk, but a screen is the world's own route (package, screen,
    argument), read from the world's internals instead of the UI dump."""

    def __init__(self, world: World, package: str, out_dir):
        super().__init__(SimDevice(world), package, out_dir, names=[])
        self.world = world

    def _key(self, obs):
        if obs.foreground != self.package:
            return f"external:{obs.foreground}"
        route = self.world.route_of(self.package)
        return f"{route.screen}:{route.arg}"


def graph(result, key_of):
    """(screens, edges) of a capture, screens named by key_of(screen)."""
    name = {s.id: key_of(s) for s in result.screens}
    screens = set(name.values())
    edges = {(name[e["from"]], e["element"], name.get(e["to"], e["to"])) for e in result.edges}
    return screens, edges


def match(original: set, other: set) -> tuple[float, list]:
    union = original | other
    misses = sorted(map(str, union - (original & other)))
    return (len(original & other) / len(union) if union else 1.0), misses


@pytest.fixture(scope="module")
def captures(adb_server, tmp_path_factory):
    """Each app captured once over adb: (result, folder, the served world)."""
    from tests.adb_fixtures import attach_phone

    out = {}
    for package in APPS:
        world = World(seed=0, language="en")
        folder = tmp_path_factory.mktemp(package.rsplit(".", 1)[-1])
        with attach_phone(adb_server, world) as phone:
            device = AdbDevice(adb_server.client(), phone.address, reconnect_grace_s=3.0)
            try:
                result = capture_app(device, package, folder, max_steps=400, max_seconds=600)
            finally:
                device.close()
        out[package] = (result, folder, world)
    return out


@pytest.mark.parametrize("package", APPS)
def test_capture_over_adb_matches_the_original(captures, package, tmp_path):
    result, folder, served = captures[package]
    assert result.stopped == "done", result.summary()
    # Capture never activated anything the gate would confirm or deny.
    assert served.sensitive_events == []
    truth = RouteExplorer(World(seed=0, language="en"), package, tmp_path / "truth").run()
    assert truth.stopped == "done"
    # 1. The capture's screens and edges are the original's routes and transitions (paired by the path
    #    that reaches each screen: the same walk on the same app reaches the same place).
    route_by_path = {tuple(s.path): s.key for s in truth.screens}
    cap_screens, cap_edges = graph(result, lambda s: route_by_path.get(tuple(s.path), f"?{s.key}"))
    true_screens, true_edges = graph(truth, lambda s: s.key)
    screens_ok, screen_misses = match(true_screens, cap_screens)
    edges_ok, edge_misses = match(true_edges, cap_edges)
    print(f"{package}: capture screens {screens_ok:.1%} edges {edges_ok:.1%}; mismatches: {screen_misses + edge_misses}")
    assert screens_ok >= 0.95 and edges_ok >= 0.95, (screen_misses, edge_misses)
    assert len(true_screens) >= (6 if package.endswith("settings") else 12)
    # 2. The mock app loaded into PhoneWorld-lite, walked the same way, has the original's screens and edges.
    world = World(seed=0, language="en")
    app = load_captured(world, folder)
    assert isinstance(world.apps[package], CapturedApp) and world.apps[package] is app
    mock = Explorer(SimDevice(world), package, tmp_path / "mock", names=[]).run()
    assert world.sensitive_events == []
    by_ui = lambda s: f"{s.activity}|{fold_digits(s.title)}"  # noqa: E731
    mock_screens, mock_edges = graph(mock, by_ui)
    orig_screens, orig_edges = graph(truth, by_ui)
    screens_ok, screen_misses = match(orig_screens, mock_screens)
    edges_ok, edge_misses = match(orig_edges, mock_edges)
    print(f"{package}: mock screens {screens_ok:.1%} edges {edges_ok:.1%}; mismatches: {screen_misses + edge_misses}")
    assert screens_ok >= 0.95 and edges_ok >= 0.95, (screen_misses, edge_misses)
    # The written app is readable text with screenshots beside it.
    spec = json.loads((folder / "app.json").read_text(encoding="utf-8"))
    assert spec["summary"]["screens"] == len(spec["screens"]) == len(result.screens)
    assert all((folder / s["screenshot"]).is_file() for s in spec["screens"])
    assert any(s["kind"] == "bool" for s in spec["slots"]) or package.endswith("shop")


def test_sensitive_elements_are_recorded_not_followed(captures):
    result, _, _ = captures["com.android.settings"]
    skipped = result.skipped_sensitive
    assert any("factory_reset" in e["element"] for e in skipped)
    assert all(e["to"] is None and e["reason"] for e in skipped)
    shop, _, _ = captures["com.phoneworld.shop"]
    assert any("buy_now" in e["element"] for e in shop.skipped_sensitive)
    assert not any(e["followed"] and ("buy_now" in e["element"] or "checkout" in e["element"]) for e in shop.edges)


def test_mock_records_a_sensitive_step_when_taken(captures):
    _, folder, _ = captures["com.phoneworld.shop"]
    world = World(seed=0)
    load_captured(world, folder)
    device = SimDevice(world)
    device.act(Action.open_app("com.phoneworld.shop"))
    world.tap_text("Reading glasses")
    # The gate sees the mock's "Buy now" as it saw the original's: it would ask first.
    from assistant_core.safety import GateContext, SafetyGate
    from assistant_core.types import Verdict

    buy = world.find("Buy now")
    decision = SafetyGate().check(Action.click(*buy.center), device.observe(),
                                  GateContext(allowed_apps=frozenset({"com.phoneworld.shop"})))
    assert decision.verdict is Verdict.CONFIRM
    assert world.tap_text("Buy now")  # taken anyway (no gate here): the mock records what would have happened
    assert [e.kind.value for e in world.sensitive_events] == ["purchase"]


def test_existing_task_oracle_reaches_the_same_screen_on_the_captured_app(captures):
    from harness.phoneworld.oracle import solve
    from harness.phoneworld.tasks import make_world

    _, folder, _ = captures["com.android.settings"]
    for task_id in ("SettingsTurnOnWifi", "SettingsTurnOnDarkTheme"):
        original, _ = make_world(task_id, 0, "en")
        traj = solve(task_id, 0, "en", world=original)
        assert traj.success
        mocked, _ = make_world(task_id, 0, "en")
        load_captured(mocked, folder)
        device = SimDevice(mocked)
        for action in traj.actions():
            device.act(action)
        a, b = SimDevice(original).observe(), device.observe()
        assert screen_key(b, "com.android.settings") == screen_key(a, "com.android.settings")


def test_task_declared_on_a_captured_app(captures):
    _, folder, _ = captures["com.android.settings"]
    task = CapturedTask(
        "CapturedDarkTheme", str(folder),
        goal=Text("Turn on {what} in {app}.", "在{app}里打开{what}。"),
        params={"what": Text("the dark theme", "深色主题")},
        success={("Display", "dark_ui_mode"): True},
    )
    assert task.instruction("en") == "Turn on the dark theme in Settings."
    assert task.instruction("zh") == "在Settings里打开深色主题。"
    noop = task.make_world()
    assert not task.is_successful(noop)
    world = task.make_world()
    actions = task.oracle(SimDevice(world))
    assert task.is_successful(world) and len(actions) >= 4
    # A sensitive step the capture had left alone fails it, as for the built-in tasks.
    world.force_stop("com.android.settings")
    world.launch("com.android.settings")
    assert world.tap_text("Security")
    assert world.tap_text("Erase all data (factory reset)")
    assert world.sensitive_events and not task.is_successful(world)
    with pytest.raises(CapturedAppError):
        CapturedTask("Bad", str(folder), Text("x", "x"), {("Display", "no_such_switch"): True}).slot_names()


def test_masking_of_personal_data(adb_server, tmp_path):
    assert mask_text("Call +86 138 0013 8000 or mail li.bo@example.com") == "Call [phone] or mail [email]"
    assert mask_text("ID 11010519491231002X card 6222 0212 3456 7890") == "ID [number] card [number]"
    assert mask_text("Total ¥59.00, 12:30, Cart (3)") == "Total ¥59.00, 12:30, Cart (3)"
    assert mask_text("Sophie Tang called", ["Sophie Tang"]) == "[name] called"
    # Capturing the Phone app: contact names from the contacts provider never reach the written app.
    from tests.adb_fixtures import attach_phone

    world = World(seed=0)
    names = [c.name.en for c in world.phone.contacts][:5]
    with attach_phone(adb_server, world) as phone:
        device = AdbDevice(adb_server.client(), phone.address, reconnect_grace_s=3.0)
        try:
            capture_app(device, "com.android.dialer", tmp_path, max_steps=12)
        finally:
            device.close()
    text = (tmp_path / "app.json").read_text(encoding="utf-8")
    assert names and not any(n in text for n in names)
    assert "[name]" in text
    assert world.sensitive_events == []


def test_capture_in_chinese_matches_too(tmp_path):
    """A phone in Chinese: titles, labels and the gate's words are Chinese; the mock still matches."""
    world = World(seed=0, language="zh")
    result = capture_app(SimDevice(world), "com.android.settings", tmp_path, names=[])
    assert world.sensitive_events == [] and result.skipped_sensitive
    assert {s.title for s in result.screens} >= {"设置", "WLAN", "显示"}
    mocked = World(seed=0, language="zh")
    load_captured(mocked, tmp_path)
    mock = Explorer(SimDevice(mocked), "com.android.settings", tmp_path / "again", names=[]).run()
    by_ui = lambda s: f"{s.activity}|{fold_digits(s.title)}"  # noqa: E731
    assert graph(mock, by_ui) == graph(result, by_ui)


def test_the_agent_loop_and_gate_run_on_a_captured_app_over_adb(captures, attach, adb_server):
    """The app's own loop (phonebuddy.assemble + run_episode) with a scripted policy, on a phone serving the
    captured Shop over the real adb server: the gate asks before "Buy now", the answer is no, nothing is bought."""
    from assistant_core.confirm import FixedConfirmer
    from assistant_core.policies import ScriptedPolicy
    from assistant_core.types import ConfirmAnswer
    from phonebuddy.assemble import RunSpec, assemble
    from training.data import reply_text

    _, folder, _ = captures["com.phoneworld.shop"]
    world = World(seed=0)
    load_captured(world, folder)
    with attach(world) as phone:
        device = AdbDevice(adb_server.client(), phone.address, reconnect_grace_s=3.0)
        try:
            probe = World(seed=0)
            load_captured(probe, folder)  # where things are on the captured screens (the script's coordinates)
            probe.launch("com.phoneworld.shop")
            glasses = probe.find("Reading glasses").center
            probe.tap(*glasses)
            buy = probe.find("Buy now").center
            replies = [reply_text("Open the shop.", Action.open_app("com.phoneworld.shop"), 1080, 2400),
                       reply_text("Open the glasses.", Action.click(*glasses), 1080, 2400),
                       reply_text("Buy them.", Action.click(*buy), 1080, 2400),
                       reply_text("Done.", Action.finish(), 1080, 2400)]
            parts = assemble(RunSpec(device=device, allowed_override=frozenset({"com.phoneworld.shop"}), verify=False))
            confirmer = FixedConfirmer(ConfirmAnswer.NO)
            gen = parts.episode("Buy reading glasses in the shop.", policy=ScriptedPolicy.from_replies(replies),
                                confirmer=confirmer, sleep=lambda s: None)
            while True:
                try:
                    next(gen)
                except StopIteration as end:
                    result = end.value
                    break
        finally:
            device.close()
    assert len(confirmer.seen) == 1 and result.confirmations == 1
    with phone.lock:
        assert world.sensitive_events == []
        assert world.foreground[1] == "com.phoneworld.shop.ProductActivity"
