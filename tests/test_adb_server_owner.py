"""The product owns the adb server and the phone's lifecycle, through the real adb binary (issue 13).

Every test here runs the product as a user's machine would, but on a free port of its own (never 5037)
and with HOME / ANDROID_USER_HOME in a temporary folder, so the user's server and ~/.android are never
touched; each server it started is killed by its process id at the end.

- `phonebuddy devices connect` with no server starts exactly one, says so once, and later calls reuse it;
- the port held by something that is not adb, and a phone that never allows debugging, are explained in
  English and Chinese;
- the device watcher announces unplug / replug, offline, unauthorized and a killed server (restarted,
  the Wi-Fi phone reconnected) in both languages;
- a run whose adb server is killed mid-way pauses and resumes, and the task still ends done.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from harness.adbserver import AdbServerOwner, free_port, probe_server, server_adb, server_address
from harness.devicewatch import DeviceWatcher, PhoneEvent, PhoneEventKind, parse_devices_l
from harness.phonestates import STATES, UDEV_COMMAND, instruction_for, state_instruction
from tests.app_xvfb import ROOT

pytest_plugins = ("tests.adb_owner_fixtures",)


def phonebuddy(env: dict[str, str], *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app", *args], env=env, capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, stdin=subprocess.DEVNULL)


@pytest.fixture
def world_serve(user_env):
    """`phonebuddy world serve` as its own process; yields a function starting one (extra args allowed)."""
    procs: list[subprocess.Popen] = []

    def serve(*extra: str) -> str:
        port = free_port()
        proc = subprocess.Popen([sys.executable, "-m", "app", "world", "serve", "--port", str(port), *extra],
                                env=user_env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        procs.append(proc)
        line = proc.stdout.readline()
        assert "listening on" in line, line
        return f"127.0.0.1:{port}"

    yield serve
    for proc in procs:
        proc.terminate()
        proc.wait(10)


# --- the guard ------------------------------------------------------------------------------------------


def test_no_test_can_reach_port_5037():
    """conftest points the standard address away from 5037, turns server starting off, and makes any
    connection to 5037 from the test process fail loudly."""
    touched = "a test tried to connect to 127.0.0.1:5037"  # conftest's TouchedDefaultAdbPort
    assert os.environ["ANDROID_ADB_SERVER_PORT"] != "5037"
    assert server_address().port != 5037
    assert os.environ["PHONEBUDDY_ADB_START"] == "never"
    assert AdbServerOwner().autostart is False
    with pytest.raises(AssertionError, match=touched):
        socket.create_connection(("127.0.0.1", 5037), timeout=1)
    with pytest.raises(AssertionError, match=touched):
        probe_server("127.0.0.1", 5037)
    # A subprocess (the adb binary, `phonebuddy ...`) inherits the environment: its standard address is
    # the dead port above, and it may not start a server there either.
    env = subprocess.run([sys.executable, "-c", "from harness.adbserver import AdbServerOwner as O; o = O(); "
                          "print(o.address.port, o.autostart)"], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert env.stdout.split() == [os.environ["ANDROID_ADB_SERVER_PORT"], "False"], env.stderr


def test_the_standard_address_follows_adbs_own_variables():
    assert server_address({}).port == 5037 and server_address({}).host == "127.0.0.1"
    address = server_address({"ANDROID_ADB_SERVER_PORT": "5123", "ANDROID_ADB_SERVER_ADDRESS": "10.0.0.2"})
    assert (address.host, address.port, address.local) == ("10.0.0.2", 5123, False)
    assert server_address({"ANDROID_ADB_SERVER_PORT": "nonsense"}).port == 5037


# --- starting one server, once ----------------------------------------------------------------------------


def test_devices_connect_starts_one_server_and_every_later_call_finds_it(user_env, world_serve, server_pids):
    port = int(user_env["ANDROID_ADB_SERVER_PORT"])
    phone = world_serve()
    first = phonebuddy(user_env, "devices", "connect", phone)
    assert first.returncode == 0, first.stderr
    assert f"connected to {phone} (device)" in first.stdout
    assert first.stderr.count("Starting the phone connection helper") == 1
    servers = server_pids(port)
    assert len(servers) == 1, servers  # adb's usual background server, on our port
    assert (Path(user_env["HOME"]) / ".android" / "adbkey").is_file()  # the key lives in the user's ~/.android

    listed = phonebuddy(user_env, "devices", "list")
    assert listed.returncode == 0, listed.stderr
    assert any(ln.split("\t")[:3] == [phone, "device", "tcp"] for ln in listed.stdout.splitlines()), listed.stdout
    assert "PhoneWorld Lite" in listed.stdout and "connected and ready" in listed.stdout
    assert "Starting" not in listed.stderr  # found, not started again
    again = phonebuddy(user_env, "devices", "--lang", "zh", "connect", phone)
    assert again.returncode == 0 and "正在启动" not in again.stderr
    assert server_pids(port) == servers  # the same single process


def test_run_and_verify_use_the_same_server_and_start_it_when_needed(user_env, world_serve, server_pids):
    """Every entry point that reaches a real phone goes through the owner: `phonebuddy run --device` with
    no server starts it (said once), `phonebuddy devices connect` and `verify before` then find it."""
    port = int(user_env["ANDROID_ADB_SERVER_PORT"])
    phone = world_serve()
    run = phonebuddy(user_env, "run", "Turn on Wi-Fi", "--device", phone, "--policy", "noop", "--confirm", "no",
                     "--no-history", "--json")
    assert "Starting the phone connection helper." in run.stderr  # the phone is not connected yet: no run
    assert run.returncode != 0 and phone in run.stderr
    assert len(server_pids(port)) == 1
    assert phonebuddy(user_env, "devices", "connect", phone).returncode == 0
    before = phonebuddy(user_env, "verify", "before", "Turn on Wi-Fi", "--serial", phone, "--save",
                        str(Path(user_env["HOME"]) / "before.json"))
    assert before.returncode == 0, before.stderr
    assert "Starting" not in before.stderr and len(server_pids(port)) == 1


def test_a_port_held_by_another_program_is_explained(user_env, server_pids):
    port = int(user_env["ANDROID_ADB_SERVER_PORT"])
    squatter = socket.socket()
    squatter.bind(("127.0.0.1", port))
    squatter.listen(4)
    stop = threading.Event()

    def answer_nonsense() -> None:
        while not stop.is_set():
            try:
                conn, _ = squatter.accept()
            except OSError:
                return
            with conn:
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")

    threading.Thread(target=answer_nonsense, daemon=True).start()
    try:
        en = phonebuddy(user_env, "devices", "list")
        zh = phonebuddy(user_env, "devices", "--lang", "zh", "list")
    finally:
        stop.set()
        squatter.close()
    assert en.returncode == 1 and zh.returncode == 1
    assert f"Another program is using the phone connection port {port}" in en.stderr
    assert f"另一个程序占用了手机连接端口 {port}" in zh.stderr
    assert server_pids(port) == []  # nothing was started beside it


def test_a_phone_that_never_allows_debugging_is_explained_in_both_languages(user_env, world_serve):
    phone = world_serve("--auth", "refuse")
    en = phonebuddy(user_env, "devices", "connect", phone)
    assert en.returncode == 1
    assert f"connected to {phone} (unauthorized)" in en.stdout
    assert "swipe right until you hear \"Always allow from this computer\"" in en.stdout
    listed = phonebuddy(user_env, "devices", "--lang", "zh", "list")
    assert f"{phone}\tunauthorized" in listed.stdout
    assert "一律允许使用这台计算机进行调试" in listed.stdout and "TalkBack" in listed.stdout


def test_pairing_with_a_wrong_code_says_how_to_pair(user_env, world_serve):
    """`devices pair` goes through the real server's pairing (SPAKE2 over TLS), which the simulated phone
    does not speak: exactly what a wrong code looks like. The user hears where to find the right one."""
    phone = world_serve()
    en = phonebuddy(user_env, "devices", "pair", phone, "123456")
    zh = phonebuddy(user_env, "devices", "--lang", "zh", "pair", phone, "123456")
    assert en.returncode == 1 and zh.returncode == 1
    assert f"Pairing with {phone} failed" in en.stderr and "Pair device with pairing code" in en.stderr
    assert "使用配对码配对设备" in zh.stderr
    mdns = phonebuddy(user_env, "devices", "--json", "mdns")
    assert mdns.returncode == 0 and isinstance(json.loads(mdns.stdout), list)


# --- the watcher ------------------------------------------------------------------------------------------


class Events:
    def __init__(self) -> None:
        self.q: queue.Queue[PhoneEvent] = queue.Queue()

    def __call__(self, event: PhoneEvent) -> None:
        self.q.put(event)

    def wait_for(self, test, timeout: float = 10.0) -> tuple[PhoneEvent, float]:
        t0 = time.monotonic()
        deadline = t0 + timeout
        seen = []
        while time.monotonic() < deadline:
            try:
                event = self.q.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                break
            seen.append(event)
            if test(event):
                return event, time.monotonic() - t0
        raise AssertionError(f"no matching event in {timeout} s; saw {[(e.kind, e.serial, e.message.en) for e in seen]}")


def _state(state: str):
    return lambda e: e.device is not None and e.device.state == state


def test_the_watcher_announces_every_phone_state_and_a_killed_server(user_env, server_pids):
    from harness.phoneworld.adbd import AuthMode
    from harness.phoneworld.phone import SimPhone
    from harness.phoneworld.world import World

    announced: list = []
    owner = AdbServerOwner(env=user_env, announce=announced.append)
    events = Events()
    watcher = DeviceWatcher(owner, events).start()
    phone = SimPhone(World(seed=0)).start()
    try:
        assert watcher.wait_synced(30)
        assert [t.en for t in announced] == ["Starting the phone connection helper."]
        owner.ensure().connect(phone.address)
        owner.remember(phone.address)
        event, _ = events.wait_for(_state("device"))
        assert event.message.en == f"A phone was connected: PhoneWorld Lite ending in {str(phone.port)[-4:]}."
        assert event.message.zh.startswith("有手机连上了：PhoneWorld Lite")

        phone.adbd.stop()  # pulled out (a Wi-Fi phone: adb keeps it listed, offline)
        event, _ = events.wait_for(_state("offline"), timeout=5)
        assert event.message == STATES["unplugged"] and "请重新插上或重新连接" in event.message.zh
        phone.adbd.restart()  # plugged back in
        event, _ = events.wait_for(_state("device"), timeout=15)
        assert event.message.en.endswith("is back.") and event.message.zh.endswith("回来了。")

        phone.adbd.go_offline(1.5, 0.5)
        event, _ = events.wait_for(_state("offline"), timeout=5)
        events.wait_for(_state("device"), timeout=15)

        server = server_pids(owner.address.port)
        assert len(server) == 1
        os.kill(server[0], signal.SIGKILL)  # the adb server killed
        event, _ = events.wait_for(lambda e: e.kind is PhoneEventKind.SERVER_LOST, timeout=5)
        assert "正在重新启动" in event.message.zh
        events.wait_for(lambda e: e.kind is PhoneEventKind.SERVER_BACK, timeout=30)
        event, _ = events.wait_for(_state("device"), timeout=15)  # the remembered Wi-Fi phone, reconnected
        assert event.serial == phone.address
        assert len(server_pids(owner.address.port)) == 1 and len(announced) == 1  # said once, never a second
        os.kill(server_pids(owner.address.port)[0], signal.SIGKILL)  # and killed again: said again
        events.wait_for(lambda e: e.kind is PhoneEventKind.SERVER_LOST, timeout=5)
        events.wait_for(lambda e: e.kind is PhoneEventKind.SERVER_BACK, timeout=30)
        events.wait_for(_state("device"), timeout=15)

        phone.adbd.faults.auth = AuthMode.REFUSE  # the phone forgets this computer; its owner never allows
        phone.adbd.drop_connections()
        event, _ = events.wait_for(_state("unauthorized"), timeout=15)
        assert "TalkBack" in event.message.en and "TalkBack" in event.message.zh
    finally:
        watcher.stop()
        phone.stop()


def test_messages_for_states_a_simulated_phone_cannot_play():
    from harness.adb import DeviceInfo

    perms = state_instruction("no permissions (user in plugdev group; are your udev rules wrong?)")
    assert UDEV_COMMAND in perms.en and UDEV_COMMAND in perms.zh and "udevadm" in perms.en
    two = [DeviceInfo("R58M123456", "device", "usb", model="SM_A515F"), DeviceInfo("0A281FDD4001", "device", "usb", model="Pixel_7")]
    several = instruction_for(two)
    assert "number 1, SM A515F ending in 3456" in several.en and "number 2, Pixel 7 ending in 4001" in several.en
    assert "第 2 部，Pixel 7，序列号尾号 4001" in several.zh
    assert instruction_for(two, chosen="0A281FDD4001").en == "Pixel 7 ending in 4001 is connected and ready."
    none = instruction_for([])
    assert "USB debugging" in none.en and "USB 调试" in none.zh and "Step 3" in none.en
    assert "PIN" in STATES["locked"].en and "密码" in STATES["locked"].zh
    parsed = parse_devices_l(
        "R58M123456 no permissions (missing udev rules? user is in the plugdev group); see [http://d.android.com/r/x] usb:1-1\n"
        "127.0.0.1:5601 device product:phoneworld model:PhoneWorld_Lite device:phoneworld transport_id:3\n")
    assert parsed[0].state.startswith("no permissions (missing udev rules?") and parsed[0].transport == "usb"
    assert (parsed[1].state, parsed[1].model, parsed[1].transport) == ("device", "PhoneWorld_Lite", "tcp")


def test_an_old_adb_on_path_is_passed_over_for_the_bundled_one(tmp_path):
    old = tmp_path / "adb"
    old.write_text("#!/bin/sh\necho 'Android Debug Bridge version 1.0.39'\necho 'Version 0.0.1-4500957'\n")
    old.chmod(0o755)
    chosen = server_adb(which=lambda name: str(old))
    assert chosen != str(old) and chosen.endswith("binaries/adb")
    new = tmp_path / "new" / "adb"
    new.parent.mkdir()
    new.write_text("#!/bin/sh\necho 'Android Debug Bridge version 1.0.41'\necho 'Version 35.0.2-12147458'\n")
    new.chmod(0o755)
    assert server_adb(which=lambda name: str(new)) == str(new)


# --- a run survives its server being killed -------------------------------------------------------------


def test_a_run_pauses_when_the_server_is_killed_and_resumes_when_it_is_back(user_env, server_pids):
    from assistant_core.confirm import FixedConfirmer, Patience
    from assistant_core.events import Paused, PauseReason, Resumed
    from assistant_core.loop import LoopConfig, ScriptedUser, run_episode
    from assistant_core.policies import ScriptedPolicy, action_to_reply
    from assistant_core.safety import GateContext
    from assistant_core.types import ConfirmAnswer
    from harness.adb import AdbDevice
    from harness.phoneworld.oracle import solve
    from harness.phoneworld.phone import SimPhone
    from harness.phoneworld.tasks import make_world, registry

    task_id = "SettingsTurnOnBluetooth"
    task = registry.get(task_id)
    world, params = make_world(task_id, 0, "en")
    replies = [action_to_reply(a, 1080, 2400) for a in solve(task_id, 0, "en").actions()]
    owner = AdbServerOwner(env=user_env)
    events = Events()
    watcher = DeviceWatcher(owner, events).start()
    phone = SimPhone(world).start()
    try:
        assert watcher.wait_synced(30)
        owner.ensure().connect(phone.address)
        owner.remember(phone.address)
        events.wait_for(_state("device"))
        device = AdbDevice(owner.client(), phone.address, reconnect_grace_s=1.0)

        class KillsTheServerOnce:
            """The device, with the adb server killed right after the second action (a scripted policy
            cannot redo an action lost in flight; a model would see the screen and do it again)."""

            def __init__(self) -> None:
                self.acts = 0

            def __getattr__(self, name):
                return getattr(device, name)

            def act(self, action):
                device.act(action)
                self.acts += 1
                if self.acts == 2:
                    for pid in server_pids(owner.address.port):
                        os.kill(pid, signal.SIGKILL)

        ctx = GateContext(allowed_apps=frozenset(task.apps), app_labels=device.installed_apps(), lang="en")
        gen = run_episode(task.instruction(params).en, device=KillsTheServerOnce(),
                          policy=ScriptedPolicy.from_replies(replies), confirmer=FixedConfirmer(ConfirmAnswer.YES),
                          context=ctx, user=ScriptedUser(["continue"]),
                          config=LoopConfig(step_budget=30, lang="en", reconnect_delay_s=1.0, reconnect_attempts=30,
                                            patience=Patience(window_s=1, reminders=0)))
        seen = []
        while True:
            try:
                seen.append(next(gen))
            except StopIteration as stop:
                result = stop.value
                break
        device.close()
    finally:
        watcher.stop()
        phone.stop()
    paused = [e for e in seen if isinstance(e, Paused) and e.reason is PauseReason.DEVICE_LOST]
    resumed = [e for e in seen if isinstance(e, Resumed) and e.reason is PauseReason.DEVICE_LOST]
    assert paused and resumed, [type(e).__name__ for e in seen]
    assert str(result.outcome) == "finished", result
    assert task.is_successful(world, params)  # nothing the user asked for was lost
