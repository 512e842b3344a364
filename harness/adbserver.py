"""A private, real adb server, and an adbutils client that can never start one behind our back.

adbutils, when it cannot reach a server, silently runs `adb start-server` (port 5037, a key in
~/.android). `GuardedAdbClient` removes that fallback: an unreachable server raises
`AdbServerUnavailable` instead. `AdbServer` starts the real adb binary (the one adbutils ships, or
`adb` on PATH) in the foreground (`server nodaemon`) on a port of our choosing, with its own HOME so its
key and state stay in a folder we own, and stops it by its process id.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import adbutils
from adbutils._adb import AdbConnection
from adbutils.errors import AdbConnectionError, AdbError, AdbTimeout

log = logging.getLogger(__name__)

DEFAULT_ADB_PORT = 5037


class AdbServerUnavailable(AdbConnectionError):
    """The adb server we were told to use does not answer (and we refuse to start one silently)."""


class _NoSpawnConnection(AdbConnection):
    """adbutils' connection without the `adb start-server` fallback."""

    def _safe_connect(self):  # adbutils hook name
        try:
            return self._create_socket()
        except (AdbTimeout, AdbConnectionError) as exc:
            raise AdbServerUnavailable(str(exc)) from exc


class GuardedAdbClient(adbutils.AdbClient):
    """An adbutils client bound to one server address that never spawns a server."""

    def __init__(self, host: str = "127.0.0.1", port: int = DEFAULT_ADB_PORT, socket_timeout: float | None = None):
        super().__init__(host=host, port=port, socket_timeout=socket_timeout)
        self._timeout = socket_timeout

    def make_connection(self, timeout: float | None = None) -> AdbConnection:
        conn = _NoSpawnConnection(self.host, self.port)
        timeout = timeout or self._timeout
        if timeout:
            conn.conn.settimeout(timeout)
        return conn


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Linux: the adb server gets SIGTERM when the process that started it dies (no orphans after a
    killed test run or a crashed app)."""
    import ctypes
    import signal

    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def bundled_adb() -> str:
    """Path of the adb binary adbutils ships (version 36), else `adb` on PATH."""
    candidate = Path(adbutils.__file__).parent / "binaries" / "adb"
    if candidate.is_file() and os.access(candidate, os.X_OK):
        return str(candidate)
    found = shutil.which("adb")
    if found:
        return found
    raise FileNotFoundError("no adb binary: install adbutils (it ships one) or Debian's adb")


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


class AdbServer:
    """A real adb server process we own. `start()` waits until it answers; `stop()` ends it.

    port=None picks a free port. 5037 (everyone's default server) is refused unless `allow_default=True`.
    home=None uses a fresh temporary folder (removed on stop) for the server's key and state.
    """

    def __init__(
        self,
        port: int | None = None,
        *,
        adb_path: str | None = None,
        home: Path | None = None,
        allow_default: bool = False,
        host: str = "127.0.0.1",
    ):
        if port == DEFAULT_ADB_PORT and not allow_default:
            raise ValueError("refusing to run a private adb server on 5037, the shared default port")
        self.host = host
        self.port = port or free_port(host)
        self.adb_path = adb_path or bundled_adb()
        self._own_home = home is None
        self.home = Path(home) if home else Path(tempfile.mkdtemp(prefix="pb-adb-home-"))
        self.proc: subprocess.Popen | None = None
        self.log_path = self.home / "adb-server.log"

    def env(self) -> dict[str, str]:
        """The environment for adb processes bound to this server (also for `adb` CLI calls)."""
        env = dict(os.environ)
        env.update(
            HOME=str(self.home),
            ANDROID_USER_HOME=str(self.home / ".android"),
            ANDROID_ADB_SERVER_PORT=str(self.port),
            ADB_MDNS_AUTO_CONNECT="",
            ADB_MDNS_OPENSCREEN="0",
            ADB_LIBUSB="0",
            ADB_LOCAL_TRANSPORT_MAX_PORT="5554",  # no emulator port scanning
        )
        return env

    def start(self, timeout: float = 15.0) -> AdbServer:
        (self.home / ".android").mkdir(parents=True, exist_ok=True)
        logfile = open(self.log_path, "ab")  # noqa: SIM115 - lives as long as the process
        self.proc = subprocess.Popen(
            [self.adb_path, "-L", f"tcp:{self.port}", "server", "nodaemon"],
            env=self.env(),
            stdin=subprocess.DEVNULL,
            stdout=logfile,
            stderr=subprocess.STDOUT,
            # PR_SET_PDEATHSIG follows the starting *thread*: only tie the server to a main-thread start.
            preexec_fn=_die_with_parent
            if sys.platform.startswith("linux") and threading.current_thread() is threading.main_thread()
            else None,
        )
        logfile.close()
        deadline = time.monotonic() + timeout
        client = self.client()
        while True:
            try:
                version = client.server_version()
                log.info("adb server %s on port %d (pid %d)", version, self.port, self.proc.pid)
                return self
            except (AdbError, OSError):
                if self.proc.poll() is not None:
                    message = f"adb server exited with {self.proc.returncode}: {self.read_log()[-2000:]}"
                    self.stop()
                    raise RuntimeError(message) from None
                if time.monotonic() > deadline:
                    self.stop()
                    raise TimeoutError(f"adb server did not answer on port {self.port}") from None
                time.sleep(0.05)

    def read_log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def client(self, socket_timeout: float | None = None) -> GuardedAdbClient:
        return GuardedAdbClient(self.host, self.port, socket_timeout=socket_timeout)

    def cli(self, *args: str, timeout: float = 30.0, input: bytes | None = None) -> subprocess.CompletedProcess:
        """Run the real `adb` command-line client against this server: `cli("devices")`. Refused when the
        server is not running (the adb CLI would otherwise start a daemon of its own on this port)."""
        if not self.running:
            raise RuntimeError("the private adb server is not running")
        return subprocess.run(
            [self.adb_path, "-P", str(self.port), *args],
            env=self.env(),
            input=input,
            stdin=None if input is not None else subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
        )

    def wait_state(self, serial: str, state: str = "device", timeout: float = 10.0) -> str:
        """Poll the device list until `serial` is in `state`; returns the last state seen ("gone" if absent)."""
        client = self.client()
        deadline = time.monotonic() + timeout
        seen = "gone"
        while time.monotonic() < deadline:
            seen = next((d.state for d in client.list() if d.serial == serial), "gone")
            if seen == state:
                return seen
            time.sleep(0.05)
        return seen

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                try:
                    self.client(socket_timeout=2).server_kill()
                except (AdbError, OSError):
                    pass
                try:
                    self.proc.wait(timeout=3)
                except subprocess.TimeoutExpired:
                    self.proc.terminate()
                    try:
                        self.proc.wait(timeout=3)
                    except subprocess.TimeoutExpired:
                        self.proc.kill()
                        self.proc.wait(timeout=3)
            self.proc = None
        if self._own_home:
            shutil.rmtree(self.home, ignore_errors=True)

    def __enter__(self) -> AdbServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
