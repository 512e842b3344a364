"""The services a simulated phone offers over its adbd streams.

`PhoneServices.route(name)` understands:
- `shell:CMD` (v1: stdout and stderr merged, no exit code), `shell,v2[,opts]:CMD` (frames of
  `[id u8][length u32 LE]`: 1 stdout, 2 stderr, 3 exit; the host may send 0 stdin, 4 close-stdin,
  5 window size), an empty CMD for an interactive shell;
- `exec:CMD` (raw stdout, as `adb exec-out`);
- `sync:` (STAT/STA2/LST2, LIST/LIS2, SEND, RECV, QUIT) over a VirtualFS;
- `localabstract:NAME` for sockets a program on the phone listens on (the scrcpy server registers one),
  and likewise `tcp:PORT` / `tcp:HOST:PORT`, `localreserved:NAME`, `localfilesystem:PATH` (and
  `local:PATH`, the same namespace): what `adb forward` opens. A real adbd connects to the socket
  (AOSP packages/modules/adb socket_spec.cpp `socket_spec_connect`); when nothing listens the connect
  fails and adbd closes the stream at once, so the host's forwarded connection ends at once;
- `root:`, `unroot:`, `remount:`: the answers of a production build.
Commands themselves are run by a `CommandRunner` (harness.phoneworld.shell.Shell for the world).
"""

from __future__ import annotations

import logging
import queue
import stat as stat_mod
import struct
import threading
from collections.abc import Callable
from typing import Protocol

from harness.phoneworld.adbd import AdbStream, StreamClosed, StreamRunner
from harness.phoneworld.vfs import FsError, VirtualFS

log = logging.getLogger(__name__)

SYNC_DATA_MAX = 64 * 1024
ENOENT = 2


class ShellIO(Protocol):
    """What a running command can do: write out/err, read stdin, and learn the caller went away."""

    def out(self, data: bytes | str) -> None: ...

    def err(self, data: bytes | str) -> None: ...

    def read_stdin(self, timeout: float | None = None) -> bytes | None:
        """Next stdin chunk; b"" at end of input; None on timeout."""
        ...

    def cancelled(self) -> bool: ...


class CommandRunner(Protocol):
    def run(self, command: str, io: ShellIO) -> int:
        """Run one command line; return its exit status."""
        ...


def _as_bytes(data: bytes | str) -> bytes:
    return data.encode("utf-8") if isinstance(data, str) else data


class _StreamIO:
    """Shell v1 / exec: everything goes to the stream as is."""

    def __init__(self, stream: AdbStream, *, with_stderr: bool):
        self.stream = stream
        self.with_stderr = with_stderr

    def out(self, data: bytes | str) -> None:
        data = _as_bytes(data)
        if data:
            self.stream.write(data)

    def err(self, data: bytes | str) -> None:
        if self.with_stderr:
            self.out(data)

    def read_stdin(self, timeout: float | None = None) -> bytes | None:
        try:
            return self.stream.read(timeout)
        except queue.Empty:
            return None

    def cancelled(self) -> bool:
        return self.stream.closed


class ShellV2:
    """Shell protocol v2 framing over a stream."""

    STDIN, STDOUT, STDERR, EXIT, CLOSE_STDIN, WINDOW_SIZE = range(6)
    FRAME = struct.Struct("<BI")

    def __init__(self, stream: AdbStream):
        self.stream = stream
        self._stdin_done = False

    def _frame(self, kind: int, data: bytes) -> None:
        self.stream.write(self.FRAME.pack(kind, len(data)) + data)

    def out(self, data: bytes | str) -> None:
        data = _as_bytes(data)
        if data:
            self._frame(self.STDOUT, data)

    def err(self, data: bytes | str) -> None:
        data = _as_bytes(data)
        if data:
            self._frame(self.STDERR, data)

    def exit(self, code: int) -> None:
        self._frame(self.EXIT, bytes([code & 0xFF]))

    def read_stdin(self, timeout: float | None = None) -> bytes | None:
        while not self._stdin_done:
            try:
                header = self.stream.read_exactly(self.FRAME.size, timeout)
            except queue.Empty:
                return None
            except StreamClosed:
                self._stdin_done = True
                break
            kind, length = self.FRAME.unpack(header)
            payload = self.stream.read_exactly(length) if length else b""
            if kind == self.STDIN:
                return payload
            if kind == self.CLOSE_STDIN:
                self._stdin_done = True
        return b""

    def cancelled(self) -> bool:
        return self.stream.closed


class PhoneServices:
    """The router behind a simulated phone's adbd: shell, exec, sync and abstract sockets."""

    def __init__(self, runner: CommandRunner, fs: VirtualFS):
        self.runner = runner
        self.fs = fs
        self._abstract: dict[str, StreamRunner] = {}
        self._lock = threading.Lock()

    # --- abstract sockets (what a process on the phone listens on) -------------------------------------
    def listen_abstract(self, name: str, handler: StreamRunner) -> Callable[[], None]:
        """Serve `localabstract:NAME` with handler; returns a function that stops listening."""
        return self.listen(f"localabstract:{name}", handler)

    def abstract_names(self) -> list[str]:
        with self._lock:
            return sorted(self._abstract)

    def listen(self, spec: str, handler: StreamRunner) -> Callable[[], None]:
        """Serve a socket spec (`tcp:8080`, `localabstract:x`, `localreserved:x`, `localfilesystem:/p`) with
        handler, as a process on the phone listening there would; returns a function that stops it."""
        key = _socket_key(spec)
        if key is None:
            raise ValueError(f"not a socket spec this phone listens on: {spec!r}")
        with self._lock:
            self._abstract[key] = handler

        def unlisten() -> None:
            with self._lock:
                if self._abstract.get(key) is handler:
                    del self._abstract[key]

        return unlisten

    # --- routing ---------------------------------------------------------------------------------------
    def route(self, service: str) -> StreamRunner | None:
        head, sep, rest = service.partition(":")
        if not sep:
            return None
        options = head.split(",")
        if options[0] == "shell":
            v2 = "v2" in options[1:]
            return lambda stream: self._shell(stream, rest, v2=v2)
        if head == "exec":
            return lambda stream: self._exec(stream, rest)
        if head == "sync":
            return lambda stream: SyncSession(stream, self.fs).run()
        if head == "localabstract":
            with self._lock:
                return self._abstract.get(rest)
        key = _socket_key(service)
        if key is not None:
            with self._lock:
                return self._abstract.get(key)  # nobody listening: refused, the host sees the stream close
        if head in ("root", "unroot", "remount", "reboot", "disable-verity", "enable-verity"):
            message = "adbd cannot run as root in production builds\n" if head == "root" else f"{head} is not allowed on this device\n"
            return lambda stream: stream.write(message.encode())
        return None

    def _exec(self, stream: AdbStream, command: str) -> None:
        self.runner.run(command, _StreamIO(stream, with_stderr=False))

    def _shell(self, stream: AdbStream, command: str, *, v2: bool) -> None:
        io: ShellV2 | _StreamIO = ShellV2(stream) if v2 else _StreamIO(stream, with_stderr=True)
        if command.strip():
            code = self.runner.run(command, io)
        else:
            code = self._interactive(io)
        if isinstance(io, ShellV2) and not stream.closed:
            io.exit(code)

    def _interactive(self, io: ShellV2 | _StreamIO) -> int:
        """A line-at-a-time shell for `adb shell` without a command."""
        buffer = b""
        code = 0
        io.out(b"phoneworld:/ $ ")
        while not io.cancelled():
            chunk = io.read_stdin(timeout=0.5)
            if chunk is None:
                continue
            if chunk == b"":
                break
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                text = line.decode("utf-8", "replace").strip()
                if text == "exit":
                    return code
                if text:
                    code = self.runner.run(text, io)
                io.out(b"phoneworld:/ $ ")
        return code


def _socket_key(spec: str) -> str | None:
    """A socket spec as the phone's socket namespaces key it: abstract names bare (as listen_abstract
    registers them), the others with their namespace; `tcp:HOST:PORT` for this phone is `tcp:PORT`."""
    head, sep, rest = spec.partition(":")
    if not sep or not rest:
        return None
    if head == "localabstract":
        return rest
    if head == "tcp":
        host, _, port = rest.rpartition(":")
        if not port.isdigit() or host not in ("", "localhost", "127.0.0.1", "::1"):
            return None
        return f"tcp:{int(port)}"
    if head in ("localreserved", "localfilesystem"):
        return f"{head}:{rest}"
    if head == "local":  # the older name of localfilesystem
        return f"localfilesystem:{rest}"
    return None


class SyncSession:
    """The `sync:` file-transfer protocol, device side."""

    REQ = struct.Struct("<4sI")
    STAT_V1 = struct.Struct("<4sIII")
    STAT_V2 = struct.Struct("<4sIQQIIIIQqqq")
    DENT_V1 = struct.Struct("<4sIIII")
    DENT_V2 = struct.Struct("<4sIQQIIIIQqqqI")

    def __init__(self, stream: AdbStream, fs: VirtualFS):
        self.stream = stream
        self.fs = fs

    def run(self) -> None:
        while True:
            try:
                header = self.stream.read_exactly(self.REQ.size)
            except StreamClosed:
                return
            ident, length = self.REQ.unpack(header)
            body = self.stream.read_exactly(length) if length else b""
            path = body.decode("utf-8", "replace")
            if ident == b"QUIT":
                return
            handler = {
                b"STAT": self._stat_v1,
                b"STA2": self._stat_v2,
                b"LST2": self._stat_v2,
                b"LIST": self._list_v1,
                b"LIS2": self._list_v2,
                b"SEND": self._send,
                b"RECV": self._recv,
            }.get(ident)
            if handler is None:
                self._fail(f"unknown sync command {ident!r}")
                return
            log.debug("sync %s %s", ident.decode(errors="replace"), path)
            handler(path, ident)

    def _fail(self, message: str) -> None:
        data = message.encode()
        self.stream.write(b"FAIL" + struct.pack("<I", len(data)) + data)

    def _stat_v1(self, path: str, _ident: bytes) -> None:
        info = self.fs.stat(path)
        if info is None:
            self.stream.write(self.STAT_V1.pack(b"STAT", 0, 0, 0))
        else:
            self.stream.write(self.STAT_V1.pack(b"STAT", info.mode, info.size & 0xFFFFFFFF, info.mtime))

    def _stat_v2(self, path: str, ident: bytes) -> None:
        info = self.fs.stat(path)
        if info is None:
            self.stream.write(self.STAT_V2.pack(ident, ENOENT, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        else:
            t = info.mtime
            self.stream.write(self.STAT_V2.pack(ident, 0, 1, abs(hash(path)) & 0xFFFFFFFF, info.mode, 1, 2000, 2000, info.size, t, t, t))

    def _entries(self, path: str):
        try:
            return self.fs.listdir(path)
        except FsError:
            return {}

    def _list_v1(self, path: str, _ident: bytes) -> None:
        out = bytearray()
        for name, info in self._entries(path).items():
            raw = name.encode()
            out += self.DENT_V1.pack(b"DENT", info.mode, info.size & 0xFFFFFFFF, info.mtime, len(raw)) + raw
        out += self.DENT_V1.pack(b"DONE", 0, 0, 0, 0)
        self.stream.write(bytes(out))

    def _list_v2(self, path: str, _ident: bytes) -> None:
        out = bytearray()
        for name, info in self._entries(path).items():
            raw = name.encode()
            t = info.mtime
            out += self.DENT_V2.pack(b"DNT2", 0, 1, 0, info.mode, 1, 2000, 2000, info.size, t, t, t, len(raw)) + raw
        out += self.DENT_V2.pack(b"DONE", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        self.stream.write(bytes(out))

    def _send(self, spec: str, _ident: bytes) -> None:
        path, _, mode_text = spec.rpartition(",")
        if not path:
            path, mode_text = spec, "33188"
        try:
            mode = int(mode_text)
        except ValueError:
            mode = 0o100644
        data = bytearray()
        mtime = 0
        while True:
            ident, length = self.REQ.unpack(self.stream.read_exactly(self.REQ.size))
            if ident == b"DATA":
                data += self.stream.read_exactly(length) if length else b""
            elif ident == b"DONE":
                mtime = length
                break
            else:
                self._fail(f"unexpected {ident!r} during SEND")
                return
        if stat_mod.S_ISLNK(mode):
            self._fail("symbolic links are not supported on this device")
            return
        try:
            self.fs.write(path, bytes(data), mode=mode & 0o7777, mtime=mtime or None)
        except FsError as exc:
            self._fail(f"couldn't create file: {exc}")
            return
        self.stream.write(b"OKAY" + struct.pack("<I", 0))

    def _recv(self, path: str, _ident: bytes) -> None:
        try:
            data = self.fs.read(path)
        except FsError as exc:
            self._fail(str(exc))
            return
        out = bytearray()
        for start in range(0, len(data), SYNC_DATA_MAX):
            chunk = data[start : start + SYNC_DATA_MAX]
            out += b"DATA" + struct.pack("<I", len(chunk)) + chunk
        out += b"DONE" + struct.pack("<I", 0)
        self.stream.write(bytes(out))
