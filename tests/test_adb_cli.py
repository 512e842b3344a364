"""The real `adb` command-line client (adb 36, the binary adbutils ships) against the simulated phone."""

from __future__ import annotations

import io

from PIL import Image, ImageChops

pytest_plugins = ("tests.adb_fixtures",)


def adb(server, phone, *args, **kw):
    return server.cli("-s", phone.address, *args, **kw)


def test_devices_lists_the_phone_with_its_banner(adb_server, sim_phone):
    out = adb_server.cli("devices", "-l").stdout.decode()
    line = next(ln for ln in out.splitlines() if ln.startswith(sim_phone.address))
    assert line.split()[1] == "device"
    assert "model:PhoneWorld_Lite" in line and "device:phoneworld" in line
    features = adb(adb_server, sim_phone, "features").stdout.decode().split()
    assert {"shell_v2", "cmd", "stat_v2"} <= set(features)


def test_shell_echo_and_exit_status(adb_server, sim_phone):
    r = adb(adb_server, sim_phone, "shell", "echo", "hello", "世界")
    assert r.returncode == 0 and r.stdout == "hello 世界\n".encode()
    assert adb(adb_server, sim_phone, "shell", "false").returncode == 1
    r = adb(adb_server, sim_phone, "shell", "frobnicate --now")
    assert r.returncode == 127
    assert b"/system/bin/sh: frobnicate: inaccessible or not found" in r.stderr
    r = adb(adb_server, sim_phone, "shell", "echo a && false || echo b; echo $?")
    assert r.stdout.decode().split() == ["a", "b", "0"]


def test_exec_out_screencap_is_the_world_as_png(adb_server, sim_phone):
    r = adb(adb_server, sim_phone, "exec-out", "screencap", "-p")
    assert r.returncode == 0 and r.stdout.startswith(b"\x89PNG\r\n\x1a\n")
    image = Image.open(io.BytesIO(r.stdout))
    assert image.size == (1080, 2400)
    assert ImageChops.difference(image.convert("RGB"), sim_phone.world.screenshot()).getbbox() is None


def test_shell_input_tap_changes_the_world(adb_server, sim_phone):
    world = sim_phone.world
    icon = world.find("Settings")
    assert icon is not None and world.foreground[0] == "com.android.launcher3"
    x, y = icon.center
    r = adb(adb_server, sim_phone, "shell", "input", "tap", str(x), str(y))
    assert r.returncode == 0
    assert world.foreground[0] == "com.android.settings"
    focus = adb(adb_server, sim_phone, "shell", "dumpsys window | grep mCurrentFocus").stdout.decode()
    assert "com.android.settings/" in focus


def test_uiautomator_dump_then_pull(adb_server, sim_phone, tmp_path):
    r = adb(adb_server, sim_phone, "shell", "uiautomator", "dump", "/sdcard/ui.xml")
    assert r.stdout.decode().strip() == "UI hierchary dumped to: /sdcard/ui.xml"
    target = tmp_path / "ui.xml"
    r = adb(adb_server, sim_phone, "pull", "/sdcard/ui.xml", str(target))
    assert r.returncode == 0, r.stderr
    from harness.phoneworld.shell import window_dump  # a default dump is the active window only

    assert target.read_text(encoding="utf-8") == window_dump(sim_phone.world)


def test_push_then_read_back(adb_server, sim_phone, tmp_path):
    payload = ("第一行 line one\n" * 5000).encode()  # larger than one sync DATA chunk and one WRTE
    source = tmp_path / "notes.txt"
    source.write_bytes(payload)
    r = adb(adb_server, sim_phone, "push", str(source), "/sdcard/Download/notes.txt")
    assert r.returncode == 0, r.stderr
    assert sim_phone.fs.read("/sdcard/Download/notes.txt") == payload
    assert adb(adb_server, sim_phone, "exec-out", "cat /sdcard/Download/notes.txt").stdout == payload
    listing = adb(adb_server, sim_phone, "shell", "ls", "/sdcard/Download").stdout.decode().split()
    assert "notes.txt" in listing
    back = tmp_path / "back.txt"
    assert adb(adb_server, sim_phone, "pull", "/sdcard/Download/notes.txt", str(back)).returncode == 0
    assert back.read_bytes() == payload
    r = adb(adb_server, sim_phone, "pull", "/sdcard/nothing-here", str(tmp_path / "x"))
    assert r.returncode != 0


def test_world_serve_and_the_devices_commands(adb_server, capsys):
    import json
    import threading

    from harness import cli as devices_cli
    from harness.adbserver import free_port
    from harness.phoneworld import serve

    port = free_port()
    ready, stop = threading.Event(), threading.Event()
    argv = ["--port", str(port), "--task", "SettingsTurnOnAirplaneMode", "--seed", "1", "--lang", "zh"]
    thread = threading.Thread(target=serve.main, args=(argv,), kwargs={"ready": ready, "stop": stop}, daemon=True)
    thread.start()
    assert ready.wait(10)
    address = f"127.0.0.1:{port}"
    base = ["--adb-port", str(adb_server.port)]
    try:
        assert devices_cli.main([*base, "connect", address]) == 0
        assert f"connected to {address}" in capsys.readouterr().out
        assert adb_server.wait_state(address) == "device"
        assert devices_cli.main([*base, "list"]) == 0
        assert any(ln.split("\t")[:3] == [address, "device", "tcp"] for ln in capsys.readouterr().out.splitlines())
        assert devices_cli.main([*base, "--json", "info", "--serial", address]) == 0
        info = json.loads(capsys.readouterr().out)
        assert info["model"] == "PhoneWorld_Lite" and info["screen"] == "1080x2400"
        assert info["apps"]["com.android.settings"] == "设置"  # the task's phone speaks Chinese
    finally:
        stop.set()
        thread.join(5)
        adb_server.client().disconnect(address)
    assert not thread.is_alive()


def test_devices_commands_explain_a_missing_server(capsys):
    from harness import cli as devices_cli
    from harness.adbserver import free_port

    assert devices_cli.main(["--adb-port", str(free_port()), "list"]) == 1
    assert "adb server" in capsys.readouterr().err
    assert devices_cli.main(["--adb-port", str(free_port()), "--lang", "zh", "list"]) == 1
    assert "adb 服务" in capsys.readouterr().err
    assert devices_cli.main(["bogus"]) == 2


def test_system_commands_answer_from_the_world(adb_server, sim_phone):
    def sh(cmd: str) -> str:
        return adb(adb_server, sim_phone, "shell", cmd).stdout.decode()

    assert sh("wm size").strip() == "Physical size: 1080x2400"
    assert sh("getprop ro.build.version.sdk").strip() == "34"
    assert sh("settings put global airplane_mode_on 1; settings get global airplane_mode_on").strip() == "1"
    assert sim_phone.world.settings_get("global", "airplane_mode_on") == "1"
    with sim_phone.lock:
        sim_phone.world.notify("com.android.messaging", "Li Wei", "见面 at 5")
    assert "android.text=String (见面 at 5)" in sh("dumpsys notification")
    assert "com.android.deskclock.ALARM_ALERT" in sh("dumpsys alarm")
    assert "package:com.android.settings" in sh("pm list packages").splitlines()
    r = adb(adb_server, sim_phone, "shell", "am start -n com.nope/.Main")
    assert r.returncode == 0 and b"does not exist" in r.stderr  # `am start` exits 0 on errors, as on a phone
    r = adb(adb_server, sim_phone, "shell", "monkey -p com.android.settings -c android.intent.category.LAUNCHER 1")
    assert r.returncode == 0 and sim_phone.world.foreground[0] == "com.android.settings"
    assert sh("ime set com.android.adbkeyboard/.AdbIME").startswith("Unknown input method")  # not enabled yet
    sh("ime enable com.android.adbkeyboard/.AdbIME")
    assert "selected" in sh("ime set com.android.adbkeyboard/.AdbIME")
    assert sh("settings get secure default_input_method").strip() == "com.android.adbkeyboard/.AdbIME"


def test_a_stopped_adb_server_leaves_no_process(tmp_path):
    import os
    from pathlib import Path

    from harness.adbserver import AdbServer

    server = AdbServer(home=tmp_path).start()
    pid = server.proc.pid
    assert server.cli("devices").returncode == 0
    server.stop()
    status = f"/proc/{pid}/status"
    assert not os.path.exists(status) or "zombie" in Path(status).read_text().lower()
