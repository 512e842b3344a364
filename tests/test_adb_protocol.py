"""Units of the ADB layer that need no adb server: the wire format, the phone's shell and file system,
dumpsys parsing, PNG validation, app names, and the guard against adbutils starting a server."""

from __future__ import annotations

import io
import socket
import stat
import time

import pytest
from PIL import Image

from harness.adb import parse_screen_state, validate_png
from harness.adbserver import AdbServer, AdbServerUnavailable, GuardedAdbClient, free_port
from harness.appnames import resolve_app
from harness.phoneworld.adbd import A_VERSION, Adbd, Cmd, Packet, read_packet
from harness.phoneworld.adbservices import PhoneServices
from harness.phoneworld.shell import parse
from harness.phoneworld.vfs import FsError, VirtualFS


def test_shell_parsing():
    (j1, p1), (j2, p2), (j3, p3) = parse("rm -f /x; uiautomator dump /x && echo 'ok now' $?")[0:1] + parse(
        "a && b || c"
    )[1:]
    assert p1[0].argv == ["rm", "-f", "/x"]
    assert j2 == "&&" and p2[0].argv == ["b"] and j3 == "||"
    (_, pipe), = parse("CLASSPATH=/data/local/tmp/s.jar app_process / Main 3.3.4 a=b 2>/dev/null | grep -i x > /f")
    assert pipe[0].env == {"CLASSPATH": "/data/local/tmp/s.jar"} and pipe[0].argv[:2] == ["app_process", "/"]
    assert pipe[0].drop_err and pipe[1].argv == ["grep", "-i", "x"] and pipe[1].stdout_file == "/f"
    (_, simple), = parse("wc -c < /data/local/tmp/x.jar")
    assert simple[0].stdin_file == "/data/local/tmp/x.jar"


def test_virtual_fs():
    fs = VirtualFS(clock=lambda: 1000)
    fs.write("/sdcard/a/b.txt", b"hi", mode=0o600)
    info = fs.stat("/sdcard/a/b.txt")
    assert stat.S_ISREG(info.mode) and info.size == 2 and info.mtime == 1000
    assert fs.stat("/sdcard/a").is_dir and list(fs.listdir("/sdcard/a")) == ["b.txt"]
    with pytest.raises(FsError, match="Is a directory"):
        fs.remove("/sdcard/a")
    fs.remove("/sdcard/a", recursive=True)
    assert fs.stat("/sdcard/a/b.txt") is None
    with pytest.raises(FsError, match="No such file"):
        fs.read("/nope")


def _png(size=(1080, 2400)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, (10, 20, 30)).save(buf, format="PNG")
    return buf.getvalue()


def test_png_validation():
    data = _png()
    assert validate_png(data) == (1080, 2400)
    for bad in (data[: len(data) // 2], data[:-5], b"", b"/system/bin/sh: screencap: not found\n",
                data[:40] + bytes([data[40] ^ 0xFF]) + data[41:]):
        with pytest.raises(ValueError):
            validate_png(bad)


REAL_DUMPSYS = """WINDOW MANAGER WINDOWS (dumpsys window windows)
  Window #5 Window{aa11 u0 com.bank.app/com.bank.app.PinActivity}:
    mAttrs={(0,0)(fillxfill) ty=BASE_APPLICATION fmt=TRANSPARENT
      fl=LAYOUT_IN_SCREEN SECURE HARDWARE_ACCELERATED}
  Window #4 Window{bb22 u0 com.android.settings/com.android.settings.Settings}:
    mAttrs={(0,0)(fillxfill) ty=BASE_APPLICATION fmt=TRANSPARENT
      fl=LAYOUT_IN_SCREEN HARDWARE_ACCELERATED}

  mCurrentFocus=Window{bb22 u0 com.android.settings/com.android.settings.Settings}
    mShowingLockscreen=false mShowingDream=false
"""


def test_screen_state_reads_the_focused_windows_flags_only():
    state = parse_screen_state(REAL_DUMPSYS, "  mWakefulness=Awake\n")
    assert state.foreground == "com.android.settings" and state.activity == "com.android.settings.Settings"
    assert not state.secure and not state.locked and state.screen_on
    bank = REAL_DUMPSYS.replace("mCurrentFocus=Window{bb22 u0 com.android.settings/com.android.settings.Settings}",
                                "mCurrentFocus=Window{aa11 u0 com.bank.app/com.bank.app.PinActivity}")
    assert parse_screen_state(bank, "").secure
    locked = parse_screen_state("  mCurrentFocus=Window{cc33 u0 NotificationShade}\n mShowingLockscreen=true",
                                "mWakefulness=Asleep")
    assert locked.locked and not locked.screen_on and locked.foreground == "com.android.systemui"


def test_app_names_in_both_languages():
    installed = {"com.android.settings": "Settings", "com.phoneworld.chat": "WeChat", "com.android.browser": "Browser"}
    assert resolve_app("设置", installed) == "com.android.settings"
    assert resolve_app("  wechat ", installed) == "com.phoneworld.chat"
    assert resolve_app("微信", installed) == "com.phoneworld.chat"
    assert resolve_app("com.android.browser", installed) == "com.android.browser"
    assert resolve_app("支付宝", installed) is None
    assert resolve_app("", installed) is None
    assert resolve_app("支付宝", {}) == "com.eg.android.AlipayGphone"


def test_the_guarded_client_never_starts_a_server(tmp_path, monkeypatch):
    marker = tmp_path / "spawned"
    fake_adb = tmp_path / "adb"
    fake_adb.write_text(f"#!/bin/sh\ntouch {marker}\n")
    fake_adb.chmod(0o755)
    monkeypatch.setenv("ADBUTILS_ADB_PATH", str(fake_adb))
    monkeypatch.setenv("HOME", str(tmp_path))
    start = time.monotonic()
    with pytest.raises(AdbServerUnavailable):
        GuardedAdbClient(port=free_port()).list()
    assert time.monotonic() - start < 3
    assert not marker.exists() and not (tmp_path / ".android").exists()
    with pytest.raises(ValueError, match="5037"):
        AdbServer(port=5037)


class _Null:
    def run(self, command, io):
        io.out(command)
        return 0


def _raw(adbd: Adbd) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", adbd.port), timeout=3)
    return s


def test_adbd_handshake_streams_and_garbage():
    with Adbd(PhoneServices(_Null(), VirtualFS())) as adbd:
        s = _raw(adbd)
        s.sendall(Packet(Cmd.OPEN, 1, 0, b"shell:echo\0").encode())  # before CNXN: refused
        assert read_packet(s).command == Cmd.CLSE
        s.sendall(Packet(Cmd.CNXN, A_VERSION, 256 * 1024, b"host::features=shell_v2\0").encode())
        reply = read_packet(s)
        assert reply.command == Cmd.CNXN and reply.payload.startswith(b"device::ro.product.name=phoneworld;")
        s.sendall(Packet(Cmd.OPEN, 7, 0, b"no-such-service:\0").encode())
        assert (read_packet(s).command, ) == (Cmd.CLSE,)
        s.sendall(Packet(Cmd.OPEN, 8, 0, b"exec:hello\0").encode())
        okay = read_packet(s)
        assert okay.command == Cmd.OKAY and okay.arg1 == 8
        data = read_packet(s)
        assert data.command == Cmd.WRTE and data.payload == b"hello"
        s.sendall(Packet(Cmd.OKAY, 8, data.arg0).encode())
        assert read_packet(s).command == Cmd.CLSE
        s.sendall(b"\x00" * 24)  # bad magic: the phone hangs up, and keeps serving others
        s.settimeout(3)
        assert s.recv(10) == b""
        s.close()
        other = _raw(adbd)
        other.sendall(Packet(Cmd.CNXN, A_VERSION, 4096, b"host::\0").encode())
        assert read_packet(other).command == Cmd.CNXN
        other.close()
