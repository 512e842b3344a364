"""The adb server: the product's own (found or started on the standard address), a private one for tests,
and an adbutils client that can never start one behind our back.

`AdbServerOwner` is how the app, the wizard and every `phonebuddy` command get a server, as scrcpy and
Android Studio do: it uses the server answering on the standard address (`server_address()`: 127.0.0.1:5037,
or ANDROID_ADB_SERVER_ADDRESS / ANDROID_ADB_SERVER_PORT), and when none answers it starts adb's usual
background server there (`adb -P PORT start-server`: an `adb` on PATH when recent enough, else the one
adbutils ships), says so once through its `announce` callback, and never starts a second (a file lock
per port guards two PhoneBuddy processes starting at once). Keys stay in the user's ~/.android.
Something other than adb on the port, a remote address, or a server that will not start raise
`AdbServerStartError` with a bilingual message that says what to do. PHONEBUDDY_ADB_START=never turns
starting off (the test suite sets it).

adbutils, when it cannot reach a server, silently runs `adb start-server` (port 5037, a key in
~/.android). `GuardedAdbClient` removes that fallback: an unreachable server raises
`AdbServerUnavailable` instead. `AdbServer` starts the real adb binary (the one adbutils ships, or
`adb` on PATH) in the foreground (`server nodaemon`) on a port of our choosing, with its own HOME so its
key and state stay in a folder we own, and stops it by its process id.
"""

from __future__ import annotations

import fcntl
import logging
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

import adbutils
from adbutils._adb import AdbConnection
from adbutils.errors import AdbConnectionError, AdbError, AdbTimeout

from assistant_core.i18n import Text
from assistant_core.types import NoDeviceError

log = logging.getLogger(__name__)

DEFAULT_ADB_PORT = 5037
MIN_PATH_ADB_VERSION = (31, 0)  # platform-tools 31: wireless pairing, mDNS, track-devices -l
START_ENV = "PHONEBUDDY_ADB_START"  # "never": do not start a server (the test suite sets it)


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


def server_pids(port: int) -> list[int]:
    """The processes serving adb on tcp:`port` (adb's `fork-server server` daemons; Linux /proc), for
    tests, benchmarks and support checks that must see exactly one."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"fork-server" in argv and f"tcp:{port}".encode() in argv:
            pids.append(int(entry.name))
    return pids


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


# --- the product's server: found or started on the standard address -----------------------------------


@dataclass(frozen=True)
class ServerAddress:
    host: str
    port: int

    @property
    def local(self) -> bool:
        return self.host in ("127.0.0.1", "localhost", "::1", "0.0.0.0")

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


def server_address(env: dict[str, str] | None = None) -> ServerAddress:
    """adb's own convention: ANDROID_ADB_SERVER_ADDRESS (host) and ANDROID_ADB_SERVER_PORT, else
    127.0.0.1:5037. ANDROID_ADB_SERVER_HOST (an older spelling) is read too."""
    env = os.environ if env is None else env
    raw = env.get("ANDROID_ADB_SERVER_PORT", "").strip()
    port = int(raw) if raw.isdigit() and 0 < int(raw) < 65536 else DEFAULT_ADB_PORT
    host = (env.get("ANDROID_ADB_SERVER_ADDRESS") or env.get("ANDROID_ADB_SERVER_HOST") or "127.0.0.1").strip()
    return ServerAddress(host or "127.0.0.1", port)


class ServerProbe(StrEnum):
    ADB = "adb"  # an adb server answers host:version
    NONE = "none"  # nothing listens there
    OTHER = "other"  # something listens but does not speak adb


def probe_server(host: str, port: int, timeout: float = 2.0) -> ServerProbe:
    """What answers on host:port: an adb server, nothing, or some other program."""
    try:
        sock = socket.create_connection((host, port), timeout=timeout)
    except (ConnectionRefusedError, socket.gaierror):
        return ServerProbe.NONE
    except OSError:
        return ServerProbe.NONE
    with sock:
        try:
            sock.sendall(b"000chost:version")
            status = sock.recv(4)
        except OSError:
            return ServerProbe.OTHER
    return ServerProbe.ADB if status in (b"OKAY", b"FAIL") else ServerProbe.OTHER


def adb_version(path: str) -> tuple[int, ...] | None:
    """The platform-tools version of an adb binary ("Version 36.0.0-..." -> (36, 0, 0)), or None."""
    try:
        out = subprocess.run([path, "version"], capture_output=True, text=True, timeout=10,
                             stdin=subprocess.DEVNULL).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"^Version (\d+)\.(\d+)(?:\.(\d+))?", out, re.MULTILINE)
    return tuple(int(g) for g in m.groups() if g is not None) if m else None


def server_adb(which: Callable[[str], str | None] = shutil.which) -> str:
    """The adb to start the product's server with: `adb` on PATH when it is platform-tools 31 or later
    (the user's own, matching what they run by hand), else the one adbutils ships."""
    found = which("adb")
    if found:
        version = adb_version(found)
        if version is not None and version >= MIN_PATH_ADB_VERSION:
            return found
        log.info("adb on PATH (%s, version %s) is too old; using adbutils' own", found, version)
    candidate = Path(adbutils.__file__).parent / "binaries" / "adb"
    if candidate.is_file() and os.access(candidate, os.X_OK):
        return str(candidate)
    if found:
        return found
    raise FileNotFoundError("no adb binary: install adbutils (it ships one) or Android platform-tools")


def product_client(host: str | None = None, port: int | None = None, *, announce: Callable[[Text], None] | None = None,
                   socket_timeout: float = 10.0) -> GuardedAdbClient:
    """A client for the server on the standard address (host/port override it), started when none answers:
    what every `phonebuddy` command that reaches a real phone uses. AdbServerStartError when it cannot."""
    default = server_address()
    address = ServerAddress(host or default.host, port or default.port)
    return AdbServerOwner(address, announce=announce, socket_timeout=socket_timeout).ensure()


class AdbServerStartError(NoDeviceError):
    """No adb server answers and none could be started; `message` says why and what to do."""


def _server_text(key: str, **kwargs: object) -> Text:
    from harness.phonestates import STATES

    return STATES[key].format(**kwargs) if kwargs else STATES[key]


class AdbServerOwner:
    """The product's adb server on the standard address: found, or started once (see the module docstring).

    `ensure()` returns a GuardedAdbClient bound to the server, starting one when none answers.
    `announce(Text)` is called once, before the first start ("Starting the phone connection helper");
    later restarts (the server killed mid-run) are announced by whoever noticed (the device watcher).
    `remember(address)` keeps Wi-Fi phones to reconnect after a restart (and at start, when
    `remembered` holds addresses from before).
    """

    def __init__(
        self,
        address: ServerAddress | None = None,
        *,
        adb_path: str | None = None,
        env: dict[str, str] | None = None,
        announce: Callable[[Text], None] | None = None,
        autostart: bool | None = None,
        socket_timeout: float = 10.0,
        start_timeout: float = 30.0,
        remembered: list[str] | None = None,
    ):
        self.env = dict(os.environ if env is None else env)
        self.address = address or server_address(self.env)
        self._adb_path = adb_path
        self.announce = announce
        self.autostart = (self.env.get(START_ENV, "").lower() != "never") if autostart is None else autostart
        self.socket_timeout = socket_timeout
        self.start_timeout = start_timeout
        self.remembered: list[str] = list(remembered or [])
        self.starts = 0  # servers this owner started (0: it found one)
        self.last_start_output = ""
        self._announced = False
        self._lock = threading.RLock()

    @property
    def adb_path(self) -> str:
        if self._adb_path is None:
            self._adb_path = server_adb()
        return self._adb_path

    def client(self, socket_timeout: float | None = None) -> GuardedAdbClient:
        return GuardedAdbClient(self.address.host, self.address.port,
                                socket_timeout=socket_timeout or self.socket_timeout)

    def running(self) -> bool:
        return probe_server(self.address.host, self.address.port) is ServerProbe.ADB

    def ensure(self) -> GuardedAdbClient:
        """A client for the server on our address, started first when none answers. AdbServerStartError
        when the port holds something else, the address is remote, starting is off, or adb fails."""
        with self._lock:
            found = probe_server(self.address.host, self.address.port)
            if found is ServerProbe.ADB:
                return self.client()
            self._refuse_or_start(found)
            self.reconnect_remembered()
            return self.client()

    def _refuse_or_start(self, found: ServerProbe) -> None:
        port = self.address.port
        if found is ServerProbe.NONE and not self.address.local:
            raise AdbServerStartError(_server_text("server_remote", address=str(self.address)),
                                      detail=f"no adb server at {self.address}")
        if found is ServerProbe.NONE and not self.autostart:
            raise AdbServerStartError(_server_text("server_off"), detail=f"no adb server at {self.address}")
        lock_path = Path(tempfile.gettempdir()) / f"phonebuddy-adb-{port}.lock"
        with open(lock_path, "a+b") as lock_file:  # one starter per port across PhoneBuddy processes
            fcntl.flock(lock_file, fcntl.LOCK_EX)
            try:
                # Another starter may have just finished, or its server may still be coming up (it listens
                # a moment before it answers): look again, for a few seconds, before calling it foreign.
                deadline = time.monotonic() + 3.0
                while True:
                    found = probe_server(self.address.host, port)
                    if found is not ServerProbe.OTHER or time.monotonic() > deadline:
                        break
                    time.sleep(0.2)
                if found is ServerProbe.ADB:
                    return
                if found is ServerProbe.OTHER:
                    raise AdbServerStartError(_server_text("server_port_taken", port=port),
                                              detail=f"{self.address} answers, but not as an adb server")
                if not self.address.local:
                    raise AdbServerStartError(_server_text("server_remote", address=str(self.address)),
                                              detail=f"no adb server at {self.address}")
                if not self.autostart:
                    raise AdbServerStartError(_server_text("server_off"), detail=f"no adb server at {self.address}")
                self._start()
            finally:
                fcntl.flock(lock_file, fcntl.LOCK_UN)

    def _start(self) -> None:
        port = self.address.port
        if not self._announced:
            self._announced = True
            if self.announce is not None:
                self.announce(_server_text("server_starting"))
        env = dict(self.env)
        env["ANDROID_ADB_SERVER_PORT"] = str(port)
        try:
            adb = self.adb_path
        except FileNotFoundError as exc:
            raise AdbServerStartError(_server_text("server_failed"), detail=str(exc)) from exc
        log.info("starting the adb server on port %d with %s", port, adb)
        # The daemon adb forks keeps whatever it inherits open: give it a file, not a pipe we would wait on.
        with tempfile.TemporaryFile() as out:
            try:
                proc = subprocess.run([adb, "-P", str(port), "start-server"], env=env, stdin=subprocess.DEVNULL,
                                      stdout=out, stderr=subprocess.STDOUT, timeout=self.start_timeout)
                code = proc.returncode
            except (OSError, subprocess.TimeoutExpired) as exc:
                code = None
                out.write(f"\n{type(exc).__name__}: {exc}".encode())
            out.seek(0)
            self.last_start_output = out.read().decode("utf-8", "replace").strip()
        deadline = time.monotonic() + 5.0
        while True:
            found = probe_server(self.address.host, port)
            if found is ServerProbe.ADB:
                self.starts += 1
                log.info("adb server started on port %d (%s)", port, self.last_start_output.replace("\n", " | "))
                return
            if found is ServerProbe.OTHER:
                raise AdbServerStartError(_server_text("server_port_taken", port=port), detail=self.last_start_output)
            if code is None or time.monotonic() > deadline:
                raise AdbServerStartError(_server_text("server_failed"),
                                          detail=f"adb start-server exited {code}: {self.last_start_output[-500:]}")
            time.sleep(0.1)

    def remember(self, address: str) -> None:
        """A Wi-Fi phone to reconnect whenever the server is (re)started."""
        if address not in self.remembered:
            self.remembered.append(address)

    def forget(self, address: str) -> None:
        """Stop reconnecting this Wi-Fi phone (the caller also drops it from RememberedPhones)."""
        self.remembered = [a for a in self.remembered if a != address]

    def reconnect_remembered(self) -> list[str]:
        """`adb connect` every remembered Wi-Fi phone; returns those that answered. One that does not
        answer is disconnected again: adb would otherwise keep it listed as `offline`, and every later
        start would tell the user to replug a cable that a Wi-Fi phone does not have. It stays
        remembered (`phonebuddy devices list` shows it as not answering; forget it to drop it)."""
        back = []
        client = self.client(socket_timeout=5.0)
        for address in list(self.remembered):
            try:
                if "connected to" in client.connect(address, timeout=5.0):
                    back.append(address)
                    continue
            except (AdbError, OSError) as exc:
                log.info("remembered phone %s did not answer: %s", address, exc)
            drop_if_dead(client, address)
        return back


DEAD_STATES = ("offline", "connecting", "gone")  # a Wi-Fi transport in these after a failed connect is dead


def drop_if_dead(client: GuardedAdbClient, address: str) -> str:
    """After a failed `adb connect`: disconnect `address` when the server keeps it as `offline` (or
    still `connecting`), so no dead entry is left in the phone list. Returns the state it had ("gone"
    when unlisted). A phone waiting for the user's "Allow" (unauthorized/authorizing) is left alone."""
    try:
        state = next((d.state for d in client.list(extended=True) if d.serial == address), "gone")
    except (AdbError, OSError):
        return "gone"
    if state in DEAD_STATES and state != "gone":
        try:
            client.disconnect(address)
        except (AdbError, OSError) as exc:
            log.info("could not disconnect %s: %s", address, exc)
    return state


class RememberedPhones:
    """Wi-Fi phones to reconnect at start, and the phone chosen among several, in a small JSON file in
    the user's data folder (`phones.json`, beside the history). Shared by the app, the wizard and
    `phonebuddy devices` (list shows the remembered phones that are not answering; `forget` drops one)."""

    def __init__(self, path: str | os.PathLike[str] | None = None):
        if path is None:
            import platformdirs

            from assistant_core.history import APP_NAME

            path = Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)) / "phones.json"
        self.path = Path(path)

    def load(self) -> dict:
        import json

        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {"wifi": [], "chosen": ""}
        if not isinstance(data, dict):
            return {"wifi": [], "chosen": ""}
        wifi = data.get("wifi", [])
        return {"wifi": [a for a in wifi if isinstance(a, str)] if isinstance(wifi, list) else [],
                "chosen": str(data.get("chosen", ""))}

    def save(self, *, wifi: list[str] | None = None, chosen: str | None = None) -> None:
        import json

        data = self.load()
        if wifi is not None:
            data["wifi"] = list(dict.fromkeys(wifi))
        if chosen is not None:
            data["chosen"] = chosen
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
        except OSError:
            log.warning("could not remember the phones in %s", self.path)

    def forget(self, address: str) -> bool:
        """Drop one Wi-Fi phone (and the choice, if it was the chosen one); True if it was remembered."""
        data = self.load()
        if address not in data["wifi"] and data["chosen"] != address:
            return False
        self.save(wifi=[a for a in data["wifi"] if a != address],
                  chosen="" if data["chosen"] == address else None)
        return True
