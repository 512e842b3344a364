"""PhoneWorld-lite answers the commands and services other ADB clients use as a real phone does
(issue 17): each test goes through the real adb server and CLI (tests/adb_fixtures.py) or, for the
device protocol itself, through adb-shell (an independent implementation with no adb server).

The expected texts are Android 14's (see docs/phoneworld-conformance.md for the sources)."""

from __future__ import annotations

import hashlib
import socket
import time
import xml.etree.ElementTree as ET

import pytest

from harness.adbserver import free_port
from harness.phoneworld.phone import SimPhone
from harness.phoneworld.records import Permission
from harness.phoneworld.world import World

pytest_plugins = ("tests.adb_fixtures",)


def adb(server, phone, *args, **kw):
    return server.cli("-s", phone.address, *args, **kw)


def sh(server, phone, cmd: str):
    r = adb(server, phone, "shell", cmd)
    return r.returncode, r.stdout.decode(), r.stderr.decode()


# --- 1. the device answers a host CLSE (adb-shell waits for it) ---------------------------------------


@pytest.fixture
def bare_phone():
    """A simulated phone on its own port, no adb server in between (adb-shell speaks to it directly)."""
    with SimPhone(World(seed=0, language="en")) as phone:
        yield phone


def test_a_host_close_is_answered_so_adb_shell_sync_does_not_hang(bare_phone, tmp_path):
    from adb_shell.adb_device import AdbDeviceTcp

    device = AdbDeviceTcp("127.0.0.1", bare_phone.port, default_transport_timeout_s=5.0)
    assert device.connect(auth_timeout_s=2.0, transport_timeout_s=5.0)
    try:
        assert device.shell("echo hi", timeout_s=5.0, read_timeout_s=5.0).strip() == "hi"
        source = tmp_path / "a.txt"
        source.write_bytes(b"conformance\n" * 100)
        device.push(str(source), "/sdcard/Download/a.txt", read_timeout_s=5.0)
        mode, size, _mtime = device.stat("/sdcard/Download/a.txt")
        assert size == 1200 and mode & 0o100000
        names = {entry.filename.decode() for entry in device.list("/sdcard/Download", read_timeout_s=5.0)}
        assert "a.txt" in names
        back = tmp_path / "back.txt"
        device.pull("/sdcard/Download/a.txt", str(back), read_timeout_s=5.0)
        assert back.read_bytes() == source.read_bytes()
        # The connection still works after four closed sync streams.
        assert device.shell("echo again", timeout_s=5.0, read_timeout_s=5.0).strip() == "again"
    finally:
        device.close()


# --- 2. pm ------------------------------------------------------------------------------------------------


def test_pm_list_packages_honours_its_filters(adb_server, sim_phone):
    def listed(flags: str) -> list[str]:
        code, out, _ = sh(adb_server, sim_phone, f"pm list packages {flags}")
        assert code == 0
        return [ln.removeprefix("package:") for ln in out.splitlines()]

    third = listed("-3")
    system = listed("-s")
    assert "com.phoneworld.chat" in third and "com.android.settings" not in third
    assert "com.android.settings" in system and "com.phoneworld.chat" not in system
    assert set(third) | set(system) == set(listed(""))
    with_paths = listed("-f settings")
    assert with_paths == ["/system/priv-app/Settings/Settings.apk=com.android.settings"]
    assert listed("-3 -f chat")[0].startswith("/data/app/") and listed("-3 -f chat")[0].endswith("/base.apk=com.phoneworld.chat")
    assert listed("-d") == []
    code, out, _ = sh(adb_server, sim_phone, "pm disable-user --user 0 com.phoneworld.shop")
    assert (code, out.strip()) == (0, "Package com.phoneworld.shop new state: disabled-user")
    assert listed("-d") == ["com.phoneworld.shop"] and "com.phoneworld.shop" not in listed("-e")
    sh(adb_server, sim_phone, "pm enable com.phoneworld.shop")
    assert listed("-d") == []
    assert "feature:android.hardware.touchscreen" in sh(adb_server, sim_phone, "pm list features")[1].split()
    code, _, err = sh(adb_server, sim_phone, "pm list widgets")
    assert (code, err.strip()) == (255, "Error: unknown list type 'widgets'")


def test_pm_grant_revoke_uninstall_install_and_clear(adb_server, sim_phone):
    world = sim_phone.world
    key = ("com.phoneworld.chat", Permission.LOCATION)
    assert sh(adb_server, sim_phone, "pm grant com.phoneworld.chat android.permission.ACCESS_FINE_LOCATION")[0] == 0
    assert key in world.granted
    assert sh(adb_server, sim_phone, "pm revoke com.phoneworld.chat android.permission.ACCESS_FINE_LOCATION")[0] == 0
    assert key not in world.granted
    code, _, err = sh(adb_server, sim_phone, "pm grant com.nope android.permission.CAMERA")
    assert code == 255
    assert err == "Exception occurred while executing 'grant':\njava.lang.IllegalArgumentException: Unknown package: com.nope\n"
    code, _, err = sh(adb_server, sim_phone, "pm grant com.phoneworld.chat android.permission.INTERNET")
    assert code == 255 and "is not a changeable permission type" in err

    code, out, _ = sh(adb_server, sim_phone, "pm uninstall com.phoneworld.shop")
    assert (code, out.strip()) == (0, "Success")
    assert "package:com.phoneworld.shop" not in sh(adb_server, sim_phone, "pm list packages")[1]
    code, out, _ = sh(adb_server, sim_phone, "monkey -p com.phoneworld.shop -c android.intent.category.LAUNCHER 1")
    assert code != 0 and world.foreground[0] != "com.phoneworld.shop"
    assert sh(adb_server, sim_phone, "pm uninstall com.android.settings")[1].strip() == "Failure [DELETE_FAILED_INTERNAL_ERROR]"
    assert sh(adb_server, sim_phone, "pm install-existing com.phoneworld.shop")[1].strip() == (
        "Package com.phoneworld.shop installed for user: 0")
    assert "package:com.phoneworld.shop" in sh(adb_server, sim_phone, "pm list packages shop")[1]

    code, _, err = sh(adb_server, sim_phone, "pm install /data/local/tmp/none.apk")
    assert code == 255 and "Error: Can't open file: /data/local/tmp/none.apk" in err
    sh(adb_server, sim_phone, "echo not-an-apk > /data/local/tmp/bad.apk")
    code, out, _ = sh(adb_server, sim_phone, "pm install /data/local/tmp/bad.apk")
    assert code == 1 and out.startswith("Failure [INSTALL_PARSE_FAILED_NOT_APK")

    notes = world.apps["com.phoneworld.notes"]
    before = repr(notes.state)
    notes.state.notes.clear()
    assert repr(notes.state) != before
    code, out, _ = sh(adb_server, sim_phone, "pm clear com.phoneworld.notes")
    assert (code, out.strip()) == (0, "Success") and repr(notes.state) == before
    code, _, err = sh(adb_server, sim_phone, "pm clear com.nope")
    assert (code, err.strip()) == (1, "Failed")


def test_adb_install_of_a_file_that_is_no_apk_fails_like_a_phone(adb_server, sim_phone, tmp_path):
    apk = tmp_path / "fake.apk"
    apk.write_bytes(b"not a zip at all")
    r = adb(adb_server, sim_phone, "install", str(apk))
    assert r.returncode != 0
    assert b"INSTALL_PARSE_FAILED_NOT_APK" in r.stdout + r.stderr


# --- 3. input keycombination --------------------------------------------------------------------------------


def test_input_keycombination(adb_server, sim_phone):
    world = sim_phone.world
    world.launch("com.android.settings")
    assert sh(adb_server, sim_phone, "input keycombination KEYCODE_CTRL_LEFT KEYCODE_A")[0] == 0
    assert sh(adb_server, sim_phone, "input keycombination -t 100 KEYCODE_SHIFT_LEFT KEYCODE_HOME")[0] == 0
    assert world.foreground[0] == "com.android.launcher3"
    code, _, err = sh(adb_server, sim_phone, "input keycombination KEYCODE_NOPE KEYCODE_A")
    assert code == 255 and "java.lang.IllegalArgumentException: Unknown keycode: KEYCODE_NOPE" in err
    code, _, err = sh(adb_server, sim_phone, "input keycombination KEYCODE_A")
    assert code == 255 and "keycombination requires at least 2 keycodes" in err


# --- 4. am start with only an action, category or data --------------------------------------------------------


def test_am_start_resolves_implicit_intents(adb_server, sim_phone):
    world = sim_phone.world
    world.launch("com.android.settings")
    code, out, err = sh(adb_server, sim_phone, "am start -a android.intent.action.MAIN -c android.intent.category.HOME")
    assert code == 0 and err == ""
    assert out == "Starting: Intent { act=android.intent.action.MAIN cat=[android.intent.category.HOME] }\n"
    assert world.foreground[0] == "com.android.launcher3"

    code, out, _ = sh(adb_server, sim_phone, "am start -a android.intent.action.VIEW -d https://www.example.com/page")
    assert code == 0 and "dat=https://www.example.com/..." in out
    assert world.foreground[0] == "com.android.browser"
    assert world.apps["com.android.browser"].state.query == "https://www.example.com/page"

    sh(adb_server, sim_phone, "am start -a android.intent.action.DIAL -d tel:5550147")
    assert world.foreground[0] == "com.android.dialer" and world.apps["com.android.dialer"].state.dial == "5550147"
    assert world.route_of("com.android.dialer").screen == "keypad"

    sh(adb_server, sim_phone, "am start -a android.intent.action.SENDTO -d 'smsto:5550147?body=running%20late'")
    messages = world.apps["com.android.messaging"].state
    assert world.foreground[0] == "com.android.messaging"
    assert (messages.draft_to, messages.draft_body) == ("5550147", "running late")

    code, out, _ = sh(adb_server, sim_phone, "am start -a android.intent.action.SENDTO -d mailto:ann@example.com "
                      "--es android.intent.extra.SUBJECT Hello")
    mail = world.apps["com.android.email"].state
    assert world.foreground[0] == "com.android.email" and (mail.draft_to, mail.draft_subject) == ("ann@example.com", "Hello")
    assert "dat=mailto:xxx@xxxxxxx.xxx (has extras)" in out

    # What a phone says when nothing answers, and its exit status 0 (clients must read the text).
    code, out, err = sh(adb_server, sim_phone, "am start -a android.intent.action.VIEW -d foo:bar")
    assert code == 0 and err == ("Error: Activity not started, unable to resolve Intent "
                                 "{ act=android.intent.action.VIEW dat=foo:bar flg=0x10000000 }\n")
    code, out, err = sh(adb_server, sim_phone, "am start -n com.nope/.Main")
    assert code == 0 and err == "Error type 3\nError: Activity class {com.nope/com.nope.Main} does not exist.\n"
    # A running app comes back as it was; -S force-stops it first (a cold start on its first screen).
    code, _, err = sh(adb_server, sim_phone, "am start -n com.android.dialer/.MainActivity")
    assert code == 0 and err == "Warning: Activity not started, its current task has been brought to the front\n"
    assert world.route_of("com.android.dialer").screen == "keypad"
    code, out, err = sh(adb_server, sim_phone, "am start -W -S -n com.android.dialer/.MainActivity")
    assert code == 0 and err == "" and "LaunchState: COLD" in out
    assert world.route_of("com.android.dialer").screen == "main"


# --- 5. am stack list, am task lock ---------------------------------------------------------------------------


def test_am_stack_list_and_task_lock(adb_server, sim_phone):
    world = sim_phone.world
    world.launch("com.android.settings")
    code, out, _ = sh(adb_server, sim_phone, "am stack list")
    assert code == 0
    visible = [ln for ln in out.splitlines() if "visible=true" in ln]
    assert len(visible) == 1 and "topActivity=ComponentInfo{com.android.settings/" in visible[0]
    task = int(visible[0].split("taskId=")[1].split(":")[0])
    assert out.count("RootTask id=") == 2  # Settings and the launcher

    code, out, _ = sh(adb_server, sim_phone, f"am task lock {task}")
    assert (code, out.strip()) == (0, "Activity manager is in lockTaskMode")
    sh(adb_server, sim_phone, "input keyevent KEYCODE_HOME")
    assert world.foreground[0] == "com.android.settings"  # pinned: Home does nothing
    assert sh(adb_server, sim_phone, "am task lock stop")[1].strip() == "Activity manager is not in lockTaskMode"
    sh(adb_server, sim_phone, "input keyevent KEYCODE_HOME")
    assert world.foreground[0] == "com.android.launcher3"


# --- 6. dumpsys input, rotation, settings list -------------------------------------------------------------------


def test_dumpsys_input_rotation_and_settings_list(adb_server, sim_phone):
    sim_phone.world.launch("com.android.settings")
    code, out, _ = sh(adb_server, sim_phone, "dumpsys input")
    assert code == 0 and "Can't find service" not in out
    assert "SurfaceOrientation: 0" in out and "X: min=0, max=1079" in out
    focused = out.split("FocusedWindows:")[1].splitlines()[1]
    assert "com.android.settings/" in focused
    assert "mCurrentRotation=ROTATION_0" in sh(adb_server, sim_phone, "dumpsys window displays")[1]

    code, out, _ = sh(adb_server, sim_phone, "settings list global")
    assert code == 0 and "wifi_on=1" in out.splitlines() and "airplane_mode_on=0" in out.splitlines()
    sh(adb_server, sim_phone, "settings put global wifi_on 0")
    assert "wifi_on=0" in sh(adb_server, sim_phone, "settings list global")[1].splitlines()
    assert "screen_brightness=" in sh(adb_server, sim_phone, "settings list system")[1]
    code, _, err = sh(adb_server, sim_phone, "settings list bogus")
    assert code == 255 and err.strip() == "Invalid namespace 'bogus'"


# --- 7. forwarded sockets: tcp:, localreserved:, localfilesystem: ----------------------------------------------


def _echo(stream) -> None:
    while True:
        data = stream.read(timeout=5)
        if not data:
            return
        stream.write(data.upper())


def _talk(port: int, payload: bytes, want: int = 0, timeout: float = 5.0) -> bytes:
    """Send payload through the forward and read until `want` bytes came or the phone closed.
    (No half-close: adb ends the whole stream when the local side shuts down its writing.)"""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(payload)
        data = b""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and (not want or len(data) < want):
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        return data


@pytest.mark.parametrize("remote", ["tcp:7001", "localreserved:pw_echo", "localfilesystem:/dev/socket/pw_echo"])
def test_adb_forward_reaches_a_listener_on_the_phone(adb_server, sim_phone, remote):
    stop = sim_phone.services.listen(remote, _echo)
    local = free_port()
    try:
        r = adb(adb_server, sim_phone, "forward", f"tcp:{local}", remote)
        assert r.returncode == 0, r.stderr
        assert _talk(local, b"hello phone", want=11) == b"HELLO PHONE"
        listed = adb(adb_server, sim_phone, "forward", "--list").stdout.decode()
        assert f"tcp:{local} {remote}" in listed
    finally:
        stop()
        adb(adb_server, sim_phone, "forward", "--remove", f"tcp:{local}")


def test_adb_forward_to_a_port_nobody_listens_on_closes_at_once(adb_server, sim_phone):
    local = free_port()
    assert adb(adb_server, sim_phone, "forward", f"tcp:{local}", "tcp:7999").returncode == 0
    try:
        started = time.monotonic()
        assert _talk(local, b"anyone?", timeout=5.0) == b""
        assert time.monotonic() - started < 4.0  # refused, not hanging
    finally:
        adb(adb_server, sim_phone, "forward", "--remove", f"tcp:{local}")


# --- 8. content insert/update/delete -------------------------------------------------------------------------------


def test_content_insert_update_delete_settings(adb_server, sim_phone):
    world = sim_phone.world
    run = lambda c: sh(adb_server, sim_phone, c)  # noqa: E731
    assert run("content insert --uri content://settings/global --bind name:s:pw_test --bind value:s:7")[0] == 0
    assert world.settings_get("global", "pw_test") == "7"
    assert run("content update --uri content://settings/global --bind value:s:8 --where \"name='pw_test'\"")[0] == 0
    assert run("settings get global pw_test")[1].strip() == "8"
    assert run("content insert --uri content://settings/global --bind name:s:wifi_on --bind value:i:0")[0] == 0
    assert world.apps["com.android.settings"].state.wifi is False
    assert run("content delete --uri content://settings/global --where \"name='pw_test'\"")[0] == 0
    assert run("settings get global pw_test")[1].strip() == "null"
    code, _, err = run("content insert --uri content://sms --bind address:s:5550147 --bind body:s:hi")
    assert code == 1 and "java.lang.SecurityException: Permission Denial: writing" in err and "WRITE_SMS" in err


# --- 9. md5sum, toybox, ip, ifconfig ----------------------------------------------------------------------------------


def test_md5sum_toybox_ip_and_ifconfig(adb_server, sim_phone, tmp_path):
    source = tmp_path / "blob.bin"
    source.write_bytes(bytes(range(256)) * 40)
    assert adb(adb_server, sim_phone, "push", str(source), "/data/local/tmp/blob.bin").returncode == 0
    digest = hashlib.md5(source.read_bytes()).hexdigest()
    assert sh(adb_server, sim_phone, "md5sum /data/local/tmp/blob.bin")[1] == f"{digest}  /data/local/tmp/blob.bin\n"
    assert sh(adb_server, sim_phone, "toybox md5sum /data/local/tmp/blob.bin")[1].split()[0] == digest
    code, _, err = sh(adb_server, sim_phone, "md5sum /data/local/tmp/none")
    assert code == 1 and "No such file or directory" in err
    assert sh(adb_server, sim_phone, "toybox --version")[1].startswith("toybox 0.8")
    assert "md5sum" in sh(adb_server, sim_phone, "toybox")[1].split()

    code, out, _ = sh(adb_server, sim_phone, "ip addr show wlan0")
    assert code == 0 and "inet 192.168.1." in out and "state UP" in out
    assert "inet addr:192.168.1." in sh(adb_server, sim_phone, "ifconfig wlan0")[1]
    sh(adb_server, sim_phone, "settings put global wifi_on 0")
    out = sh(adb_server, sim_phone, "ip addr show wlan0")[1]
    assert "inet " not in out and "state DOWN" in out
    code, _, err = sh(adb_server, sim_phone, "ip addr show eth9")
    assert code == 1 and 'Device "eth9" does not exist.' in err


# --- 10. uiautomator dump: the active window, or every window with --windows -------------------------------------------


def test_uiautomator_dump_is_the_active_window_rooted_at_the_foreground_app(adb_server, sim_phone):
    world = sim_phone.world
    world.launch("com.android.settings")
    code, out, _ = sh(adb_server, sim_phone, "uiautomator dump /sdcard/w.xml >/dev/null && cat /sdcard/w.xml")
    root = ET.fromstring(out.encode())
    assert root.tag == "hierarchy" and len(root) == 1
    top = root[0]
    assert top.get("package") == "com.android.settings" and top.get("index") == "0"
    packages = {n.get("package") for n in root.iter("node")}
    assert packages == {"com.android.settings"}  # no status bar, navigation bar or "android" wrapper

    code, out, _ = sh(adb_server, sim_phone, "uiautomator dump --windows /sdcard/all.xml >/dev/null && cat /sdcard/all.xml")
    displays = ET.fromstring(out.encode())
    assert displays.tag == "displays"
    windows = list(displays.iter("window"))
    assert {w.get("title") for w in windows} >= {"com.android.settings", "com.android.systemui"}
    active = [w for w in windows if w.get("active") == "true"]
    assert len(active) == 1 and active[0].find("hierarchy/node").get("package") == "com.android.settings"

    with sim_phone.lock:  # a permission prompt over the app is the active window; the keyboard never is
        world.launch("com.phoneworld.chat")
        world.request_permission("com.phoneworld.chat", Permission.LOCATION)
    out = sh(adb_server, sim_phone, "uiautomator dump /dev/tty")[1]
    prompt = ET.fromstring(out[: out.rindex("</hierarchy>") + len("</hierarchy>")].encode())
    assert prompt[0].get("package") == "com.android.permissioncontroller"
    with sim_phone.lock:
        world.key(4)  # dismiss it
        world.launch("com.android.browser")
        world.tap(*_center_of(world, "com.android.browser:id/url_bar"))
        assert world.sys.keyboard_visible
    out = sh(adb_server, sim_phone, "uiautomator dump /dev/tty")[1]
    assert 'package="com.android.inputmethod.latin"' not in out and 'package="com.android.browser"' in out

    with sim_phone.lock:
        world.key(26)  # screen off: no window to dump
    code, out, err = sh(adb_server, sim_phone, "uiautomator dump /sdcard/off.xml")
    assert "ERROR: null root node returned by UiTestAutomationBridge." in err
    assert sh(adb_server, sim_phone, "ls /sdcard/off.xml")[0] == 1


def _center_of(world, resource_id: str) -> tuple[int, int]:
    return next(e for e in world.elements() if e.resource_id == resource_id).center


# --- what must stay as on real phones ---------------------------------------------------------------------------------


def test_upstream_behaviours_stay(adb_server, sim_phone):
    code, out, _ = sh(adb_server, sim_phone, "ime set com.android.adbkeyboard/.AdbIME")
    assert code == 1 and out.startswith("Unknown input method")  # not enabled yet
    code, _, err = sh(adb_server, sim_phone, "input text 你好")
    assert code == 1 and "IllegalArgumentException" in err
