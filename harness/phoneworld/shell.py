"""The simulated phone's `sh`: the command lines adb sends, answered by the World.

`Shell.run(line, io)` parses a small subset of POSIX sh (`;`, `&&`, `||`, `|` into grep/head/wc,
`> file`, `< file`, `2>/dev/null`, `2>&1`, `$?`, `NAME=value` prefixes, quotes) and runs each command
against the phone. Commands answered (output formats and error texts follow Android 14, so clients
written for real phones see what they see there): input (incl. keycombination), screencap, uiautomator
(the active window; --windows all), dumpsys (window, display, power, activity, input, input_method,
package, ...), wm, getprop, am (start with components or implicit intents via harness.phoneworld.amstart,
force-stop, broadcast incl. ADBKeyboard, stack list, task lock), ime, monkey, pm, settings (incl. list),
content, cmd (package, clipboard, ...), app_process (the scrcpy server), md5sum, toybox, ip, ifconfig
(harness.phoneworld.syscmds), and the toybox basics echo, cat, ls, rm, mkdir, stat, wc, sleep, true,
false. Anything else prints `/system/bin/sh: NAME: inaccessible or not found` and exits 127, as on a
phone. docs/phoneworld-conformance.md lists it all with the real phone's answers.

Every world access holds `phone.lock` (adb streams run in parallel threads; the World is not
thread-safe).
"""

from __future__ import annotations

import base64
import io as iolib
import logging
import re
import struct
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from assistant_core.hittest import LONG_PRESS_TIMEOUT_MS
from harness.phoneworld import amstart, providers, toolservices
from harness.phoneworld.adbservices import ShellIO
from harness.phoneworld.shparse import (  # noqa: F401 (parse, window_dump and quote re-exported)
    _CaptureIO,
    _is_toast,
    _Simple,
    decode_input_text,
    parse,
    quote,
    window_dump,
)
from harness.phoneworld.syscmds import MODIFIER_KEYCODES, SysCommands, android_keycode
from harness.phoneworld.vfs import FsError

if TYPE_CHECKING:
    from harness.phoneworld.host import PhoneHost

log = logging.getLogger(__name__)

ADB_IME = "com.android.adbkeyboard/.AdbIME"
LATIN_IME = "com.android.inputmethod.latin/.LatinIME"
DEFAULT_DUMP = "/sdcard/window_dump.xml"
LONG_PRESS_MS = LONG_PRESS_TIMEOUT_MS  # the gate's and World.swipe's (assistant_core.hittest)
NOT_FOUND = 127


class Shell:
    """Runs command lines for one SimPhone. Thread-safe: world access is serialized by phone.lock."""

    def __init__(self, phone: PhoneHost):
        self.phone = phone
        self.commands: dict[str, Callable[[list[str], ShellIO], int]] = {
            "echo": self._echo,
            "true": lambda a, io: 0,
            "false": lambda a, io: 1,
            "sleep": self._sleep,
            "cat": self._cat,
            "ls": self._ls,
            "rm": self._rm,
            "mkdir": self._mkdir,
            "stat": self._stat,
            "wc": self._wc,
            "grep": self._grep,
            "head": self._head,
            "id": lambda a, io: self._say(io, "uid=2000(shell) gid=2000(shell) groups=2000(shell)"),
            "whoami": lambda a, io: self._say(io, "shell"),
            "input": self._input,
            "screencap": self._screencap,
            "uiautomator": self._uiautomator,
            "dumpsys": self._dumpsys,
            "wm": self._wm,
            "getprop": self._getprop,
            "am": self._am,
            "ime": self._ime,
            "monkey": self._monkey,
            "pm": self._pm,
            "settings": self._settings,
            "cmd": self._cmd,
            "app_process": self._app_process,
            "svc": self._svc,
            "pidof": self._pidof,
            # Read by outcome checks (harness.verify); answered from world state by providers.py.
            "content": self._content,
            "date": self._date,
            # Package, network and file tools other clients use (harness.phoneworld.syscmds).
            "md5sum": lambda a, io: self.sys.md5sum(a, io, self._stdin),
            "sha1sum": lambda a, io: self.sys.md5sum(a, io, self._stdin, "sha1"),
            "sha256sum": lambda a, io: self.sys.md5sum(a, io, self._stdin, "sha256"),
            "ip": lambda a, io: self.sys.ip(a, io),
            "ifconfig": lambda a, io: self.sys.ifconfig(a, io),
            "toybox": lambda a, io: self.sys.toybox(lambda argv, aio: self._simple(argv, self._env, aio, self._stdin), a, io),
        }
        self.sys = SysCommands(phone)

    # --- the interpreter -------------------------------------------------------------------------------
    def run(self, line: str, io: ShellIO) -> int:
        try:
            parsed = parse(line)
        except ValueError as exc:
            io.err(f"/system/bin/sh: syntax error: {exc}\n")
            return 2
        with self.phone.lock:
            providers.sync_files(self.phone)  # notes and Files-app files as files on shared storage
        if self._is_double_tap(parsed):
            x, y = (int(v) for v in parsed[0][1][0].argv[2:4])
            with self.phone.lock:
                self.phone.world.double_tap(x, y)
            return 0
        status = 0
        for joiner, pipeline in parsed:
            if (joiner == "&&" and status != 0) or (joiner == "||" and status == 0):
                continue
            status = self._pipeline(pipeline, io, status)
            if io.cancelled():
                break
        return status

    @staticmethod
    def _is_double_tap(parsed: list[tuple[str, list[_Simple]]]) -> bool:
        """`input tap X Y; [sleep S;] input tap X Y` in one line: two taps inside the double-tap timeout."""
        cmds = [p[0].argv for _, p in parsed if len(p) == 1]
        if len(cmds) != len(parsed):
            return False
        taps = [c for c in cmds if c[:2] == ["input", "tap"] and len(c) == 4]
        rest = [c for c in cmds if c not in taps and not (c and c[0] == "sleep" and len(c) == 2 and float(c[1]) <= 0.3)]
        return len(taps) == 2 and not rest and len(cmds) <= 3 and taps[0] == taps[1]

    def _pipeline(self, pipeline: list[_Simple], io: ShellIO, last_status: int) -> int:
        data: bytes | None = None
        status = 0
        for i, simple in enumerate(pipeline):
            argv = [a.replace("$?", str(last_status)) for a in simple.argv]
            is_last = i == len(pipeline) - 1
            capture = not is_last or simple.stdout_file is not None
            target: ShellIO = _CaptureIO(io, drop_err=simple.drop_err, err_to_out=simple.err_to_out) if (
                capture or simple.drop_err or simple.err_to_out
            ) else io
            stdin = data
            if simple.stdin_file:
                try:
                    stdin = self.phone.fs.read(simple.stdin_file)
                except FsError as exc:
                    io.err(f"/system/bin/sh: {exc}\n")
                    return 1
            status = self._simple(argv, simple.env, target, stdin)
            if isinstance(target, _CaptureIO):
                if simple.stdout_file and simple.stdout_file != "/dev/null":
                    try:
                        self.phone.fs.write(simple.stdout_file, bytes(target.buffer))
                    except FsError as exc:
                        io.err(f"/system/bin/sh: {exc}\n")
                        status = 1
                    data = b""
                elif not is_last:
                    data = bytes(target.buffer)
                elif not simple.stdout_file:
                    io.out(bytes(target.buffer))
        return status

    def _simple(self, argv: list[str], env: dict[str, str], io: ShellIO, stdin: bytes | None) -> int:
        if not argv:
            return 0
        name = argv[0].rsplit("/", 1)[-1] if argv[0].startswith("/system/bin/") else argv[0]
        handler = self.commands.get(name)
        if handler is None:
            io.err(f"/system/bin/sh: {argv[0]}: inaccessible or not found\n")
            return NOT_FOUND
        self._stdin = stdin
        self._env = env
        try:
            return handler(argv[1:], io)
        except (ValueError, IndexError) as exc:
            io.err(f"{name}: {exc or 'bad arguments'}\n")
            return 1

    @staticmethod
    def _say(io: ShellIO, text: str) -> int:
        io.out(text + "\n")
        return 0

    # --- toybox ---------------------------------------------------------------------------------------
    def _echo(self, args: list[str], io: ShellIO) -> int:
        newline = True
        if args and args[0] == "-n":
            newline, args = False, args[1:]
        io.out(" ".join(args) + ("\n" if newline else ""))
        return 0

    def _sleep(self, args: list[str], io: ShellIO) -> int:
        end = time.monotonic() + float(args[0] if args else 0)
        while time.monotonic() < end and not io.cancelled():
            time.sleep(min(0.05, max(0.0, end - time.monotonic())))
        return 0

    def _cat(self, args: list[str], io: ShellIO) -> int:
        if not args:
            io.out(self._stdin or b"")
            return 0
        status = 0
        for path in args:
            try:
                io.out(self.phone.fs.read(path))
            except FsError as exc:
                io.err(f"cat: {exc}\n")
                status = 1
        return status

    def _ls(self, args: list[str], io: ShellIO) -> int:
        flags = {a for a in args if a.startswith("-")}
        paths = [a for a in args if not a.startswith("-")] or ["/"]
        status = 0
        for path in paths:
            info = self.phone.fs.stat(path)
            if info is None:
                io.err(f"ls: {path}: No such file or directory\n")
                status = 1
                continue
            if not info.is_dir:
                io.out(path + "\n")
                continue
            entries = self.phone.fs.listdir(path)
            if "-l" in flags:
                for name, e in entries.items():
                    kind = "d" if e.is_dir else "-"
                    io.out(f"{kind}rw-rw---- 1 shell shell {e.size:>8} 2026-03-02 08:00 {name}\n")
            else:
                io.out("".join(name + "\n" for name in entries))
        return status

    def _rm(self, args: list[str], io: ShellIO) -> int:
        flags = "".join(a[1:] for a in args if a.startswith("-"))
        status = 0
        for path in (a for a in args if not a.startswith("-")):
            try:
                self.phone.fs.remove(path, recursive="r" in flags or "R" in flags)
            except FsError as exc:
                if "f" not in flags or "No such file" not in str(exc):
                    io.err(f"rm: {exc}\n")
                    status = 1
        return status

    def _mkdir(self, args: list[str], io: ShellIO) -> int:
        for path in (a for a in args if not a.startswith("-")):
            try:
                self.phone.fs.mkdir(path)
            except FsError as exc:
                if "-p" not in args:
                    io.err(f"mkdir: {exc}\n")
                    return 1
        return 0

    def _stat(self, args: list[str], io: ShellIO) -> int:
        fmt = None
        if len(args) >= 2 and args[0] == "-c":
            fmt, args = args[1], args[2:]
        status = 0
        for path in args:
            info = self.phone.fs.stat(path)
            if info is None:
                io.err(f"stat: '{path}': No such file or directory\n")
                status = 1
                continue
            if fmt:
                io.out(fmt.replace("%s", str(info.size)).replace("%n", path).replace("%Y", str(info.mtime)) + "\n")
            else:
                io.out(f"  File: {path}\n  Size: {info.size}\n")
        return status

    def _wc(self, args: list[str], io: ShellIO) -> int:
        files = [a for a in args if not a.startswith("-")]
        data = self.phone.fs.read(files[0]) if files else (self._stdin or b"")
        count = len(data) if "-c" in args else data.count(b"\n")
        io.out(f"{count}{' ' + files[0] if files else ''}\n")
        return 0

    def _grep(self, args: list[str], io: ShellIO) -> int:
        flags = {a for a in args if a.startswith("-")}
        words = [a for a in args if not a.startswith("-")]
        if not words:
            raise ValueError("usage: grep PATTERN")
        pattern = re.compile(words[0], re.IGNORECASE if "-i" in flags else 0)
        lines = (self._stdin or b"").decode("utf-8", "replace").splitlines()
        hits = [ln for ln in lines if bool(pattern.search(ln)) != ("-v" in flags)]
        io.out("".join(h + "\n" for h in hits))
        return 0 if hits else 1

    def _head(self, args: list[str], io: ShellIO) -> int:
        count = 10
        if len(args) >= 2 and args[0] == "-n":
            count = int(args[1])
        lines = (self._stdin or b"").decode("utf-8", "replace").splitlines(keepends=True)
        io.out("".join(lines[:count]))
        return 0

    # --- input ----------------------------------------------------------------------------------------
    def _input(self, args: list[str], io: ShellIO) -> int:
        if args[:1] == ["-d"]:
            args = args[2:]
        if args and args[0] in ("touchscreen", "touchpad", "keyboard", "mouse", "dpad", "stylus"):
            args = args[1:]
        if not args:
            io.err("Usage: input [<source>] [-d DISPLAY_ID] <command> [<arg>...]\n")
            return 1
        sub, rest = args[0], args[1:]
        world = self.phone.world
        with self.phone.lock:
            if sub == "tap":
                x, y = (int(float(v)) for v in rest[:2])
                world.tap(x, y)
            elif sub in ("swipe", "draganddrop"):
                x1, y1, x2, y2 = (int(float(v)) for v in rest[:4])
                ms = int(rest[4]) if len(rest) > 4 else 300
                if sub == "draganddrop":
                    world.drag(x1, y1, x2, y2, duration_ms=ms)
                elif abs(x2 - x1) < 10 and abs(y2 - y1) < 10 and ms >= LONG_PRESS_MS:
                    world.long_press(x1, y1, duration_ms=ms)
                else:
                    world.swipe(x1, y1, x2, y2, duration_ms=ms)
            elif sub == "text":
                text = decode_input_text(" ".join(rest))
                if any(ord(c) > 126 for c in text):
                    # Android's `input text` maps characters through the virtual keyboard's key map and
                    # cannot produce CJK or emoji.
                    io.err("Exception occurred while executing 'text':\njava.lang.IllegalArgumentException: "
                           "text contains characters the virtual keyboard cannot type\n")
                    return 1
                world.input_text(text)
            elif sub == "keyevent":
                for code in (c for c in rest if not c.startswith("--")):
                    name = code.removeprefix("KEYCODE_")
                    if self.sys.key_blocked(android_keycode(code) or -1):
                        continue  # a pinned task (`am task lock`) ignores Home and Recents
                    world.key(int(name) if name.isdigit() else name)
            elif sub == "keycombination":
                return self._keycombination(rest, io)
            elif sub in ("press", "roll", "motionevent"):
                return 0
            else:
                io.err(f"Error: Unknown command: {sub}\n")
                return 1
        return 0

    def _keycombination(self, args: list[str], io: ShellIO) -> int:
        """`input keycombination [-t MS] KEY KEY...` (Android 13+): the keys go down together, then up.

        As AOSP InputShellCommand.runKeyCombination: fewer than two keys or an unknown name is an
        IllegalArgumentException. What the world acts on is the combination's one non-modifier key (a
        modifier alone has no effect on these apps); keys the world has no behaviour for do nothing.
        """
        if args[:1] == ["-t"]:
            args = args[2:]
        codes = []
        for name in args:
            code = android_keycode(name)
            if code is None:
                io.err(f"Exception occurred while executing 'keycombination':\n"
                       f"java.lang.IllegalArgumentException: Unknown keycode: {name}\n")
                return 255
            codes.append(code)
        if len(codes) < 2:
            io.err("Exception occurred while executing 'keycombination':\n"
                   "java.lang.IllegalArgumentException: keycombination requires at least 2 keycodes\n")
            return 255
        plain = [c for c in codes if c not in MODIFIER_KEYCODES]
        with self.phone.lock:
            if set(codes) == {26, 25}:  # Power + Volume down: a screenshot; nothing on screen changes
                return 0
            if len(plain) == 1 and not self.sys.key_blocked(plain[0]):
                try:
                    self.phone.world.key(plain[0])
                except ValueError:
                    pass
        return 0

    # --- screen ---------------------------------------------------------------------------------------
    def _screencap(self, args: list[str], io: ShellIO) -> int:
        png = "-p" in args
        files = [a for a in args if not a.startswith("-") and not a.isdigit()]
        faults = self.phone.faults
        if faults.take_hang():
            log.info("screencap: hanging (fault)")
            end = time.monotonic() + faults.hang_s
            while time.monotonic() < end and not io.cancelled():
                time.sleep(0.05)
            return 1
        if self.phone.capture_fails():
            io.err("[SurfaceControl] Failed to capture display: Permission denial (FLAG_SECURE)\n")
            return 1
        with self.phone.lock:
            image = self.phone.capture_image()
        if png or (files and files[0].endswith(".png")):
            buf = iolib.BytesIO()
            image.save(buf, format="PNG", compress_level=1)
            data = buf.getvalue()
        else:
            fmt, header = self.phone.raw_format, self.phone.raw_header
            if fmt == 4:  # RGB_565, two bytes a pixel
                import numpy as np

                rgb = np.asarray(image.convert("RGB"), np.uint16)
                pixels = (((rgb[..., 0] >> 3) << 11) | ((rgb[..., 1] >> 2) << 5) | (rgb[..., 2] >> 3)).astype("<u2").tobytes()
            else:
                pixels = image.convert("RGBA").tobytes("raw", "BGRA" if fmt == 5 else "RGBA")
            head = struct.pack("<III", image.width, image.height, fmt) + (struct.pack("<I", 0) if header == 16 else b"")
            data = head + pixels
        if faults.take_truncate():
            log.info("screencap: truncating (fault)")
            data = data[: len(data) // 3]
        if files:
            self.phone.fs.write(files[0], data)
        else:
            io.out(data)
        return 0

    def _uiautomator(self, args: list[str], io: ShellIO) -> int:
        if not args or args[0] != "dump":
            io.err("Usage: uiautomator <subcommand> [options]\n\nAvailable subcommands:\n\n    dump\n")
            return 1
        paths = [a for a in args[1:] if not a.startswith("--")]
        path = paths[0] if paths else DEFAULT_DUMP
        with self.phone.lock:
            xml = window_dump(self.phone.world, all_windows="--windows" in args)
        if xml is None:
            # The screen is off: no active window (AOSP DumpCommand prints this and writes no file).
            io.err("ERROR: null root node returned by UiTestAutomationBridge.\n")
            return 0
        if path == "/dev/tty":
            io.out(xml)
            io.out("UI hierchary dumped to: /dev/tty\n")
            return 0
        self.phone.fs.write(path, xml.encode("utf-8"))
        io.out(f"UI hierchary dumped to: {path}\n")
        return 0

    def _wm(self, args: list[str], io: ShellIO) -> int:
        w = self.phone.world
        if args[:1] == ["size"]:
            return self._say(io, f"Physical size: {w.width}x{w.height}")
        if args[:1] == ["density"]:
            return self._say(io, "Physical density: 420")
        io.err("usage: wm [size|density]\n")
        return 1

    # --- dumpsys ---------------------------------------------------------------------------------------
    def _dumpsys(self, args: list[str], io: ShellIO) -> int:
        service = args[0] if args else ""
        if service == "input":
            io.out(self.sys.dumpsys_input())
            return 0
        with self.phone.lock:
            answer = providers.DUMPSYS.get(service)
            text = answer(self.phone.world, args[1:]) if answer else self.phone.dumpsys(service, args[1:])
        if text is None:
            io.out(f"Can't find service: {service}\n")
            return 0
        io.out(text)
        return 0

    def _getprop(self, args: list[str], io: ShellIO) -> int:
        props = self.phone.props()
        if not args:
            io.out("".join(f"[{k}]: [{v}]\n" for k, v in sorted(props.items())))
        else:
            io.out(props.get(args[0], args[1] if len(args) > 1 else "") + "\n")
        return 0

    # --- activities and packages -----------------------------------------------------------------------
    def _am(self, args: list[str], io: ShellIO) -> int:
        sub, rest = (args[0], args[1:]) if args else ("", [])
        if sub in ("start", "start-activity"):
            return self._am_start(rest, io)
        if sub == "force-stop":
            pkgs = [a for a in rest if not a.startswith("-")]
            with self.phone.lock:
                for pkg in pkgs:
                    self.phone.world.force_stop(pkg)
            return 0
        if sub == "broadcast":
            return self._am_broadcast(rest, io)
        if sub == "kill-all" or sub == "kill":
            return 0
        if sub == "stack":
            return self.sys.am_stack(rest, io)
        if sub == "task":
            return self.sys.am_task(rest, io)
        io.err(f"Unknown command: {sub}\n")
        return 1

    def _am_start(self, args: list[str], io: ShellIO) -> int:
        """`am start` with a component or an implicit intent (harness.phoneworld.amstart's table).

        As AOSP ActivityManagerShellCommand.runStartActivity: "Starting: Intent {...}" on stdout, errors on
        stderr, and exit status 0 even when nothing started (clients must read the text).
        """
        try:
            intent = amstart.parse_am_intent(args)
        except ValueError as exc:
            io.err(f"Exception occurred while executing 'start':\njava.lang.IllegalArgumentException: {exc}\n")
            return 255
        io.out(f"Starting: Intent {intent.short()}\n")
        with self.phone.lock:
            world = self.phone.world
            installed = {p for p in world.installed_apps() if self.sys.launchable(p)}
            cold = False
            if intent.component:
                pkg = intent.component.split("/", 1)[0]
                if pkg == "com.android.launcher3":
                    world.go_home()
                elif pkg not in installed:
                    io.err(f"Error type 3\nError: Activity class {{{amstart.expand_component(intent.component)}}} does not exist.\n")
                    return 0
                else:
                    if "-S" in args:  # force-stop the app first
                        world.force_stop(pkg)
                    cold = pkg not in world.stacks
                    world.launch(pkg)
                    if not cold:  # START_TASK_TO_FRONT: the running task comes back as it was
                        io.err("Warning: Activity not started, its current task has been brought to the front\n")
            else:
                target = amstart.resolve(world, intent, installed)
                if target is None:
                    io.err(f"Error: Activity not started, unable to resolve Intent {intent.short(with_flags=True)}\n")
                    return 0
                denial = toolservices.permission_denial(self.phone, intent, f"{target.package}/{target.activity}")
                if denial:  # a handler that requires a permission this phone's shell user lacks
                    io.err(denial)
                    return 255
                pkg = target.package
                cold = pkg not in world.stacks
                target.open(world, intent)
            fg_pkg, fg_act = world.foreground
        if "-W" in args:
            io.out(f"Status: ok\nLaunchState: {'COLD' if cold else 'WARM'}\nActivity: {fg_pkg}/{fg_act}\n"
                   "TotalTime: 412\nWaitTime: 415\nComplete\n")
        return 0

    def _am_broadcast(self, args: list[str], io: ShellIO) -> int:
        action = None
        extras: dict[str, str] = {}
        it = iter(args)
        for a in it:
            if a == "-a":
                action = next(it, None)
            elif a in ("--es", "--ez", "--ei", "--el", "--ef", "--eu"):
                key, value = next(it, ""), next(it, "")
                extras[key] = value
            elif a in ("-n", "-p", "--user", "-f", "-c"):
                next(it, None)
        io.out(f"Broadcasting: Intent {{ act={action} flg=0x400000{' (has extras)' if extras else ''} }}\n")
        with self.phone.lock:
            self.phone.broadcast(action or "", extras)
        io.out("Broadcast completed: result=0\n")
        return 0

    def _ime(self, args: list[str], io: ShellIO) -> int:
        sub, rest = (args[0], args[1:]) if args else ("", [])
        ime = self.phone.ime
        if sub == "list":
            ids = ime.available if "-a" in rest else ime.enabled
            if "-s" in rest:
                io.out("".join(i + "\n" for i in ids))
            else:
                for i in ids:
                    pkg, _, cls = i.partition("/")
                    io.out(f"{i}:\n  mId={i} mSettingsActivity=null\n  mIsDefaultResourceId=0x0\n  Service:\n    packageName={pkg}\n    name={cls}\n")
            return 0
        if sub in ("set", "enable", "disable"):
            if not rest:
                raise ValueError(f"ime {sub}: missing IME id")
            result = getattr(ime, sub)(rest[0])
            io.out(result.message + "\n")
            return 0 if result.ok else 1
        if sub == "reset":
            ime.reset()
            return 0
        io.err("ime <command>:\n  list [-a] [-s]\n  enable ID\n  disable ID\n  set ID\n  reset\n")
        return 1

    def _monkey(self, args: list[str], io: ShellIO) -> int:
        pkg = None
        it = iter(args)
        for a in it:
            if a == "-p":
                pkg = next(it, None)
            elif a in ("-c", "--pct-syskeys", "-s", "--throttle"):
                next(it, None)
        if pkg is None:
            io.err("** Error: no package given\n")
            return 1
        with self.phone.lock:
            ok = (pkg in self.phone.world.installed_apps() and self.sys.launchable(pkg)
                  and self.phone.world.launch(pkg))
        if not ok:
            io.out("  bash arg: -p\n  bash arg: " + pkg + "\n")
            io.err("** No activities found to run, monkey aborted.\n")
            return 252
        io.out(f"  bash arg: -p\n  bash arg: {pkg}\nEvents injected: 1\n## Network stats: elapsed time=12ms (0ms mobile, 0ms wifi, 12ms not connected)\n")
        return 0

    def _pm(self, args: list[str], io: ShellIO) -> int:
        sub = args[0] if args else ""
        answered = self.sys.pm(args, io)  # list packages, path, grant, revoke, (un)install, clear, enable
        if answered is not None:
            return answered
        # PackageManagerShellCommand.handleDefaultCommands: unknown command, status -1.
        io.err(f"Unknown command: {sub}\n")
        return 255

    def _settings(self, args: list[str], io: ShellIO) -> int:
        if args[:1] == ["--user"]:  # `settings --user <id>|current get ...`: one user here; a value of 0 is data
            args = args[2:]
        sub, rest = (args[0], args[1:]) if args else ("", [])
        with self.phone.lock:
            if sub == "get" and len(rest) >= 2:
                value = self.sys.setting(rest[0], rest[1])
                return self._say(io, "null" if value is None else value)
            if sub == "list" and len(rest) == 1:  # SettingsService: `settings list NAMESPACE`, key=value lines
                return self.sys.settings_list(rest[0], io)
            if sub == "put" and len(rest) >= 3:
                self.phone.settings_put(rest[0], rest[1], " ".join(rest[2:]))
                return 0
            if sub == "delete" and len(rest) >= 2:
                self.phone.settings_put(rest[0], rest[1], "")
                return self._say(io, "Deleted 1 rows")
        io.err("usage:  settings [--user <USER_ID> | current] get namespace key\n        settings put namespace key value\n")
        return 1

    def _cmd(self, args: list[str], io: ShellIO) -> int:
        if args[:2] == ["package", "resolve-activity"] and "-a" in args:
            with self.phone.lock:
                return toolservices.resolve_activity(self.phone, args[2:], io)
        if args[:1] and args[0] in toolservices.SERVICES:
            with self.phone.lock:
                answered = toolservices.service(self.phone, args[0], args[1:], io)
            if answered is not None:
                return answered
        if args[:2] == ["package", "resolve-activity"]:
            rest = [a for a in args[2:] if not a.startswith("-")]
            brief = "--brief" in args
            pkg = rest[-1] if rest else ""
            with self.phone.lock:
                activity = self.phone.launcher_activity(pkg)
            if activity is None:
                return self._say(io, "No activity found")
            head = "priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=true"
            return self._say(io, f"{head}\n{pkg}/{activity}" if brief else f"Activity Resolver:\n  {pkg}/{activity}")
        if args[:2] == ["package", "install"] and "-S" in args:  # `adb install` streams the APK on stdin
            return self.sys.stream_install(args[2:], io, io.read_stdin)
        if args[:1] == ["package"] and len(args) > 1:
            answered = self.sys.pm(args[1:], io)
            if answered is not None:
                return answered
        if args[:1] == ["clipboard"]:
            with self.phone.lock:
                if args[1:2] == ["get"]:
                    return self._say(io, self.phone.world.clipboard)
                if args[1:2] == ["set"]:
                    self.phone.world.clipboard = " ".join(args[2:])
                    return 0
        if args[:1] == ["input_method"]:
            return self._ime(args[1:], io)
        if args[:1] == ["settings"]:
            return self._settings(args[1:], io)
        io.err(f"cmd: Can't find service: {args[0] if args else ''}\n")
        return 20

    def _content(self, args: list[str], io: ShellIO) -> int:
        if args[:1] and args[0] in ("insert", "update", "delete"):
            return self.sys.content_write(args, io)
        sub, uri, projection, where, sort = providers.parse_content_args(args)
        if sub != "query" or not uri:
            io.err("usage: content query --uri <URI> [--projection <PROJECTION>] [--where <WHERE>] [--sort <SORT>]\n")
            return 1
        try:
            with self.phone.lock:
                io.out(providers.content_query(self.phone.world, uri, projection, where, sort))
        except providers.ProviderError as exc:
            io.err(f"{exc}\n")
            return 1
        return 0

    def _date(self, args: list[str], io: ShellIO) -> int:
        with self.phone.lock:
            io.out(providers.date_text(self.phone.world, args))
        return 0

    def _svc(self, args: list[str], io: ShellIO) -> int:
        with self.phone.lock:
            return toolservices.svc(self.phone, args, io)

    def _pidof(self, args: list[str], io: ShellIO) -> int:
        return 1

    # --- the scrcpy server ----------------------------------------------------------------------------
    def _app_process(self, args: list[str], io: ShellIO) -> int:
        classpath = self._env.get("CLASSPATH", "")
        main_class = next((a for a in args if a.startswith("com.") or a.startswith("org.")), "")
        if main_class != "com.genymobile.scrcpy.Server":
            io.err(f"Error: Could not find class '{main_class}'\n")
            return 1
        if not classpath or not self.phone.fs.exists(classpath):
            io.err(f"Error: Could not find or load main class {main_class} (no {classpath or 'CLASSPATH'})\n")
            return 1
        rest = args[args.index(main_class) + 1 :]
        version = rest[0] if rest else ""
        options = dict(a.split("=", 1) for a in rest[1:] if "=" in a)
        return self.phone.run_scrcpy_server(version, options, io)

    # --- helpers for decoding ADBKeyboard payloads ----------------------------------------------------
    @staticmethod
    def b64_text(value: str) -> str:
        return base64.b64decode(value.encode("ascii"), validate=False).decode("utf-8")
