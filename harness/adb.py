"""AdbDevice: the assistant_core.types.Device protocol over adbutils and a real adb server.

    client = GuardedAdbClient(port=5037)             # harness.adbserver: never spawns a server itself
    connect(client, "192.168.1.20:5555")             # Wi-Fi debugging (or the simulated phone)
    device = open_device(client, serial=None)        # the only device, or NoDeviceError/...
    obs = device.observe(); device.act(Action.click(540, 1200))

Observation (two round trips, or one while mirroring):
- one shell call gets `dumpsys window` (foreground, FLAG_SECURE on the focused window, keyguard),
  `dumpsys power` (screen on/off) and the UI tree (`uiautomator dump` + `cat`);
- the screenshot is the mirror's freshest frame when a Mirror is attached and connected (one decoded at
  least `mirror_settle_s` after the last action, waiting up to `mirror_wait_s` for it), else raw
  `exec:screencap` (no encoding on the phone; checked for its full length and the screen's size), or
  `exec:screencap -p` validated as a complete PNG where the raw pixel format is one we do not read. A
  hung or truncated capture is retried once; both attempts fit in `capture_budget_s` (5 s), then
  ScreenCaptureError. A black or failed capture on a FLAG_SECURE window gives `is_secure=True` and no
  screenshot: never a black picture passed off as the screen.

Actions map to shell commands (phone-agent-formats §3.2): click `input tap`, double_click two taps
100 ms apart in one command line, long_press `input swipe x y x y ms`, scroll `input swipe`, drag
`input draganddrop`, type through harness.textentry, button_press `input keyevent`, open_app by name
(harness.appnames) then `cmd package resolve-activity --brief` + `am start -n` (monkey as fallback),
close_app `am force-stop`, wait sleeps on the injected clock; output/call_user/finish do nothing.

Errors are DeviceError subclasses with bilingual, speakable messages: NoDeviceError, DeviceUnauthorized
(with guidance), DeviceOffline (never came online), DeviceDisconnected (went away mid-run; transient
offline/authorizing states are waited out for `reconnect_grace_s` first), ScreenCaptureError,
ScreenLockedError (checked before the first action), AppNotFoundError, ActionOutOfBounds.
"""

from __future__ import annotations

import io
import logging
import re
import struct
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from adbutils.errors import AdbError, AdbTimeout

from assistant_core.i18n import Catalog
from assistant_core.types import (
    Action,
    ActionKind,
    ActionOutOfBounds,
    Button,
    DeviceDisconnected,
    DeviceError,
    DeviceOffline,
    DeviceUnauthorized,
    NoDeviceError,
    Observation,
    ScreenCaptureError,
)
from harness.adbserver import AdbServerUnavailable, GuardedAdbClient
from harness.appnames import label_for, resolve_app
from harness.keycodes import BUTTON_KEYS
from harness.screenparse import (  # noqa: F401 (re-exported: the parsers live in screenparse, issue 26)
    PNG_SIGNATURE,
    RAW_FORMATS,
    RawFormatUnsupported,
    ScreenState,
    _all_black,
    decode_raw_screencap,
    parse_screen_state,
    parse_ui_xml,
    validate_png,
)
from harness.textentry import TextEntry

log = logging.getLogger(__name__)

TEXT = Catalog(
    "adb",
    {
        "no_server": ("I can't reach the phone connection helper (the adb server). PhoneBuddy starts it by itself; if you "
            "hear this again, ask a caregiver to run \"phonebuddy devices list\" in a terminal to see why."),
        "no_device": "No phone is connected. Plug the phone in with a USB cable, or connect it over Wi-Fi, and turn on USB debugging.",
        "many_devices": "More than one phone is connected. Choose which one to use.",
        "unauthorized": ("The phone has not allowed this computer yet. On the phone, open Settings, then Developer options, "
            "and turn on USB debugging. When the phone asks \"Allow USB debugging?\", tick \"Always allow from this "
            "computer\" and tap Allow. If no question appears, unplug the cable and plug it in again."),
        "offline": "The phone is connected but not answering. Unlock it, check the cable or Wi-Fi, and try again.",
        "disconnected": "The phone disconnected. Check the cable or Wi-Fi connection, then start again.",
        "unresponsive": "it gave no answer for {seconds} seconds; restart it or check the cable or Wi-Fi",
        "capture_failed": "I couldn't take a picture of the phone's screen, even after trying again.",
        "locked": "The phone's screen is locked or off. Please unlock the phone, then I'll continue.",
        "unknown_app": "I couldn't find an app called {app} on the phone.",
        "out_of_bounds": "That spot ({x}, {y}) is outside the phone's screen.",
        "connect_failed": "I couldn't connect to the phone at {address}. Check that it is on the same Wi-Fi and that wireless debugging is on.",
    },
)

UI_DUMP_PATH = "/data/local/tmp/pb_ui.xml"
MARK = "__PB_SECTION__"
DOUBLE_TAP_GAP_S = 0.1
_TRANSIENT = ("offline", "authorizing", "connecting")


class DeviceUnresponsive(DeviceError):
    """The phone is still listed by adb but stopped answering (a hung phone or adbd): waiting for it to
    "come back" would keep the run hanging, so the run ends with this message instead."""


class ScreenLockedError(DeviceError):
    """The screen is locked or off: the user must unlock it before the assistant acts."""


class AppNotFoundError(DeviceError):
    """open_app/close_app named an app this phone does not have."""


class Clock(Protocol):
    def monotonic(self) -> float: ...

    def sleep(self, seconds: float) -> None: ...


class SystemClock:
    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


@dataclass(frozen=True)
class DeviceInfo:
    serial: str
    state: str  # device, offline, unauthorized, authorizing, ...
    transport: str  # "usb" or "tcp"
    model: str = ""
    product: str = ""


@dataclass(frozen=True)
class ShellResult:
    stdout: bytes
    stderr: bytes
    exit_code: int

    @property
    def text(self) -> str:
        return self.stdout.decode("utf-8", "replace")


class _StreamCut(ConnectionError):
    """A shell stream ended without its exit status: the connection dropped mid-command."""


# --- the device ---------------------------------------------------------------------------------------


class AdbDevice:
    """One phone through the adb server. See the module docstring for the contract.

    `mirror` (a harness.mirror.Mirror, optional) supplies screenshots and the clipboard typing path.
    `clock` is injected for waits and time budgets. `ui_tree=False` skips uiautomator (faster).
    """

    def __init__(
        self,
        client: GuardedAdbClient,
        serial: str,
        *,
        mirror: Any = None,
        clock: Clock | None = None,
        ui_tree: bool = True,
        capture_timeout_s: float = 2.4,
        capture_budget_s: float = 5.0,
        reconnect_grace_s: float = 10.0,
        command_timeout_s: float = 20.0,
        silent_timeout_s: float = 3.0,
        mirror_wait_s: float = 0.6,
        mirror_settle_s: float = 0.15,
        capture: str = "raw",
    ):
        self.client = client
        self.serial = serial
        self._mirror = mirror
        self.clock = clock or SystemClock()
        self.ui_tree = ui_tree
        self.capture_timeout_s = capture_timeout_s
        self.capture_budget_s = capture_budget_s
        self.reconnect_grace_s = reconnect_grace_s
        self.command_timeout_s = command_timeout_s
        # After a call went unanswered (DeviceUnresponsive), later calls wait at most this long until the
        # phone answers again, so a hung phone ends a run within command_timeout_s + a few seconds.
        self.silent_timeout_s = silent_timeout_s
        self._silent = False
        self._silent_since: float | None = None
        self.mirror_wait_s = mirror_wait_s
        self.mirror_settle_s = mirror_settle_s
        self.text_entry = TextEntry(self._act_shell, mirror=mirror, sleep=self.clock.sleep)
        self._was_online = False
        self._features: set[str] | None = None
        self._size: tuple[int, int] | None = None
        self._apps: dict[str, str] | None = None
        self._acted = False
        self._last_action_at = 0.0
        self._last_state: ScreenState | None = None
        self.capture_retries = 0
        if capture not in ("raw", "png"):
            raise ValueError(f"capture must be 'raw' or 'png', not {capture!r}")
        self.capture = capture  # switches to "png" for good if the phone's raw format is one we do not read
        self.timings: dict[str, float] = {}

    @property
    def mirror(self) -> Any:
        """The attached harness.mirror.Mirror (or None). Setting it also gives typing its clipboard path."""
        return self._mirror

    @mirror.setter
    def mirror(self, value: Any) -> None:
        self._mirror = value
        self.text_entry.mirror = value

    # --- transport ------------------------------------------------------------------------------------
    def _open(self, service: str, timeout: float) -> Any:
        """A connection to `service` on this device (one TCP connection, no extra host:version)."""
        c = self.client.make_connection(timeout=timeout)
        try:
            c.send_command(f"host:tport:serial:{self.serial}")
            c.check_okay()
            c.read(8)
            c.send_command(service)
            c.check_okay()
        except BaseException:
            c.conn.close()
            raise
        return c

    def _classify(self, exc: BaseException) -> DeviceError:
        if isinstance(exc, DeviceError):
            return exc
        message = str(exc)
        low = message.lower()
        if isinstance(exc, AdbServerUnavailable):
            return NoDeviceError(TEXT["no_server"], detail=message)
        if "unauthorized" in low:
            return DeviceUnauthorized(TEXT["unauthorized"], detail=message)
        if any(word in low for word in _TRANSIENT):
            if self._was_online:
                return DeviceDisconnected(TEXT["disconnected"], detail=message)
            return DeviceOffline(TEXT["offline"], detail=message)
        if "not found" in low or "no devices" in low:
            if self._was_online:
                return DeviceDisconnected(TEXT["disconnected"], detail=message)
            return NoDeviceError(TEXT["no_device"], detail=message)
        return DeviceDisconnected(TEXT["disconnected"], detail=f"{type(exc).__name__}: {message}")

    def state(self) -> str:
        """The adb server's view of this device: device, offline, unauthorized, authorizing, ... or "gone"."""
        try:
            for info in self.client.list():
                if info.serial == self.serial:
                    return info.state
        except AdbServerUnavailable as exc:
            raise NoDeviceError(TEXT["no_server"], detail=str(exc)) from exc
        return "gone"

    def _state_or_gone(self) -> str:
        """state(), with a vanished adb server (killed mid-run; the device watcher restarts it) as "gone"
        once this phone has been online, so the run pauses and reconnects instead of failing."""
        try:
            return self.state()
        except NoDeviceError:
            if self._was_online:
                return "gone"
            raise

    def _await_online(self) -> bool:
        """Wait out offline/authorizing/connecting for up to reconnect_grace_s. True when back."""
        deadline = self.clock.monotonic() + self.reconnect_grace_s
        while True:
            state = self._state_or_gone()
            if state == "device":
                return True
            if state == "unauthorized":
                raise DeviceUnauthorized(TEXT["unauthorized"], detail="adb reports the phone as unauthorized")
            if state not in _TRANSIENT or self.clock.monotonic() >= deadline:
                return False
            self.clock.sleep(0.1)

    def _call(self, fn: Callable[[], Any], *, timeouts_raise: bool = False, idempotent: bool = True) -> Any:
        """Run fn. When the phone is offline/authorizing, wait for it (reconnect_grace_s) and try once more;
        a stream cut mid-command is retried only for idempotent calls (a tap might have happened).
        A timeout is re-raised as is when `timeouts_raise` (the caller retries), else the phone stopped
        answering (DeviceDisconnected)."""
        started = self.clock.monotonic()
        try:
            result = fn()
        except (AdbTimeout, TimeoutError) as exc:
            if timeouts_raise:
                raise
            # Listed but silent: a hung phone. Ending here keeps a run from waiting minutes (a reconnect
            # loop would poll the same silent phone, each poll waiting out its own timeout).
            if self._silent_since is None:
                self._silent_since = started
            waited = max(1, round(self.clock.monotonic() - self._silent_since))  # silent since its first miss
            self._silent = True  # until the phone answers again, each call waits only silent_timeout_s
            raise DeviceUnresponsive(TEXT["unresponsive"].format(seconds=waited), detail=f"no answer: {exc}") from exc
        except (AdbError, OSError, _StreamCut) as exc:
            cut = isinstance(exc, _StreamCut)
            error = self._classify(exc)
            fatal = isinstance(error, DeviceUnauthorized) or (isinstance(error, NoDeviceError) and not self._was_online)
            if fatal and not cut:
                raise error from exc
            log.info("adb: %s; waiting up to %.1f s for the phone", exc, self.reconnect_grace_s)
            back = self._await_online()
            if not back or (cut and not idempotent):
                if self._state_or_gone() == "unauthorized":
                    raise DeviceUnauthorized(TEXT["unauthorized"], detail="unauthorized") from exc
                if self._was_online or cut:
                    raise DeviceDisconnected(TEXT["disconnected"], detail=str(exc)) from exc
                raise error from exc
            try:
                result = fn()
            except (AdbError, OSError, _StreamCut) as again:
                if isinstance(again, _StreamCut):
                    raise DeviceDisconnected(TEXT["disconnected"], detail=str(again)) from again
                raise self._classify(again) from again
        self._was_online = True
        self._silent, self._silent_since = False, None
        return result

    def features(self) -> set[str]:
        if self._features is None:
            def get() -> str:
                c = self.client.make_connection(timeout=5)
                try:
                    c.send_command(f"host-serial:{self.serial}:features")
                    c.check_okay()
                    return c.read_string_block()
                finally:
                    c.conn.close()

            self._features = set(self._call(get).strip().split(","))
        return self._features

    def _read_all(self, c: Any, timeout: float) -> bytes:
        """Everything until the stream closes, within `timeout` in all (a phone that trickles a byte now
        and then cannot stretch one call past it)."""
        deadline = time.monotonic() + timeout
        chunks = []
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no end of output within {timeout:.0f} s")
                c.conn.settimeout(left)
                chunk = c.conn.recv(1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
        finally:
            c.conn.close()
        return b"".join(chunks)

    def run(self, command: str, *, timeout: float | None = None, idempotent: bool = True) -> ShellResult:
        """Run a shell command line; stdout, stderr and exit status (shell protocol v2). Pass
        idempotent=False for commands that change the phone (they are not repeated after a cut)."""
        timeout = timeout or self.command_timeout_s
        if self._silent:  # it just left a call unanswered: do not wait the full timeout again
            timeout = min(timeout, self.silent_timeout_s)

        def go() -> ShellResult:
            if "shell_v2" not in self.features():
                data = self._read_all(self._open(f"shell:{command}", timeout), timeout)
                return ShellResult(data, b"", 0)
            raw = self._read_all(self._open(f"shell,v2,raw:{command}", timeout), timeout)
            out, err, code = bytearray(), bytearray(), None
            pos = 0
            while pos + 5 <= len(raw):
                kind, length = struct.unpack("<BI", raw[pos : pos + 5])
                payload = raw[pos + 5 : pos + 5 + length]
                if len(payload) < length:
                    break
                pos += 5 + length
                if kind == 1:
                    out += payload
                elif kind == 2:
                    err += payload
                elif kind == 3:
                    code = payload[0] if payload else 0
            if code is None:
                raise _StreamCut(f"shell stream for {command[:60]!r} ended without an exit status")
            return ShellResult(bytes(out), bytes(err), code)

        return self._call(go, idempotent=idempotent)

    def shell(self, command: str, timeout: float | None = None, *, idempotent: bool = True) -> str:
        """stdout (and stderr, appended) of a command line as text."""
        result = self.run(command, timeout=timeout, idempotent=idempotent)
        return (result.stdout + result.stderr).decode("utf-8", "replace")

    def exec_out(self, command: str, timeout: float) -> bytes:
        """Raw stdout of `exec:` (like `adb exec-out`); AdbTimeout/socket.timeout when it hangs."""
        return self._read_all(self._open(f"exec:{command}", timeout), timeout)

    def _act_shell(self, command: str) -> str:
        return self.shell(command, idempotent=False)

    # --- screen ---------------------------------------------------------------------------------------
    def window_size(self) -> tuple[int, int]:
        if self._size is None:
            text = self.shell("wm size")
            m = re.search(r"Override size: (\d+)x(\d+)", text) or re.search(r"Physical size: (\d+)x(\d+)", text)
            if not m:
                raise DeviceDisconnected(TEXT["offline"], detail=f"unexpected `wm size` output {text!r}")
            self._size = (int(m.group(1)), int(m.group(2)))
        return self._size

    def screen_state(self) -> ScreenState:
        text = self.shell(f"dumpsys window; echo {MARK}; dumpsys power")
        window, _, power = text.partition(MARK)
        state = parse_screen_state(window, power)
        self._last_state = state
        return state

    def capture_png(self) -> bytes | None:
        """A validated PNG of the screen (`screencap -p`), or None when the capture failed twice."""
        return self._capture("screencap -p", lambda data: (validate_png(data), data))

    def capture_image(self) -> Any:
        """The screen as an RGB picture, or None when the capture failed twice (see module docs).

        Raw `screencap` first (no PNG encoding on the phone); a phone whose raw pixel format we do not
        read is switched to `screencap -p` for good."""
        from PIL import Image

        if self.capture == "raw":
            try:
                return self._capture("screencap", lambda data: ((image := decode_raw_screencap(data)).size, image))
            except RawFormatUnsupported as exc:
                log.info("%s; using screencap -p from now on", exc)
                self.capture = "png"

        def decode_png(data: bytes) -> tuple[tuple[int, int], Any]:
            size = validate_png(data)
            image = Image.open(io.BytesIO(data))
            image.load()
            return size, image.convert("RGB")

        return self._capture("screencap -p", decode_png)

    def _capture(self, command: str, decode: Callable[[bytes], tuple[tuple[int, int], Any]]) -> Any:
        """Run `command` through exec: and decode it; one retry for a hung or malformed capture, both
        within `capture_budget_s`. None when both failed (the reason is kept for the error)."""
        width, height = self.window_size()
        start = self.clock.monotonic()
        last_error = ""
        for attempt in range(2):
            left = self.capture_budget_s - (self.clock.monotonic() - start)
            if left <= 0.2:
                break
            timeout = min(self.capture_timeout_s, left)
            try:
                data = self._call(lambda t=timeout: self.exec_out(command, t), timeouts_raise=True)
                size, result = decode(data)
                if size != (width, height):
                    raise ValueError(f"screenshot is {size}, the screen {width}x{height}")
                return result
            except RawFormatUnsupported:
                raise
            except (AdbTimeout, TimeoutError) as exc:
                last_error = f"capture hung for {timeout:.1f} s ({exc})"
            except ValueError as exc:
                last_error = str(exc)
            if attempt == 0:
                self.capture_retries += 1
                log.info("screencap attempt failed (%s); retrying once", last_error)
        self._last_capture_error = last_error
        return None

    _last_capture_error = ""

    def _mirror_frame(self) -> Any:
        mirror = self.mirror
        if mirror is None or not getattr(mirror, "connected", False):
            return None
        # A frame decoded at least `mirror_settle_s` after the last action: frames already in the
        # pipeline (encoded before the phone reacted) do not count.
        frame = mirror.wait_frame(after=self._last_action_at + self.mirror_settle_s, timeout=self.mirror_wait_s)
        if frame is None:
            frame = mirror.latest()
            # No new frame since the action: the screen did not change, unless the stream is stale.
            if frame is None or time.monotonic() - frame.monotonic > 5.0:
                return None
        return frame

    def observe(self) -> Observation:
        t0 = time.perf_counter()
        tree_cmd = f"; echo {MARK}; rm -f {UI_DUMP_PATH}; uiautomator dump --windows {UI_DUMP_PATH} >/dev/null && cat {UI_DUMP_PATH}"
        text = self.shell(f"dumpsys window; echo {MARK}; dumpsys power" + (tree_cmd if self.ui_tree else ""))
        parts = text.split(MARK)
        state = parse_screen_state(parts[0], parts[1] if len(parts) > 1 else "")
        self._last_state = state
        xml = None
        elements = None
        if self.ui_tree and len(parts) > 2:
            candidate = parts[2].strip()
            if candidate.startswith("<?xml"):
                xml = candidate
                try:
                    elements = parse_ui_xml(xml)
                except ET.ParseError as exc:
                    log.warning("uiautomator dump is not valid XML: %s", exc)
                    xml = None
        t1 = time.perf_counter()
        width, height = self.window_size()
        image = None
        source = "screencap"
        captured = False
        frame = self._mirror_frame()
        t_frame = time.perf_counter()
        if frame is not None:
            image = frame.image
            source = "mirror"
            captured = True
        else:
            image = self.capture_image()
            captured = image is not None
        t2 = time.perf_counter()
        black = image is not None and _all_black(image)
        # FLAG_SECURE on the focused window blocks capture (the picture is black or missing); a black
        # capture of a screen whose accessibility tree shows content is a blocked capture too. A failed
        # capture without FLAG_SECURE is an error (ScreenCaptureError), not a protected screen.
        has_content = bool(elements) and any(e.label for e in elements if e.package != "com.android.systemui")
        is_secure = state.screen_on and not state.locked and (state.secure or (captured and black and has_content))
        if is_secure:
            image = None
        if not captured and not is_secure and state.screen_on:
            raise ScreenCaptureError(TEXT["capture_failed"], detail=self._last_capture_error)
        self.timings = {
            "state_tree_s": t1 - t0,
            "capture_s": t2 - t1,
            "frame_wait_s": (t_frame - t1) if frame is not None else 0.0,
            "observe_s": time.perf_counter() - t0,
        }
        return Observation(
            width=width,
            height=height,
            foreground=state.foreground,
            activity=state.activity,
            screenshot=image,
            elements=elements,
            ui_xml=xml,
            is_secure=is_secure,
            is_locked=state.locked or not state.screen_on,
            source=source,
        )

    # --- apps -----------------------------------------------------------------------------------------
    def installed_apps(self) -> dict[str, str]:
        """package -> label for apps a person can open: labels the phone reports (`dumpsys package`), else
        the names we know (harness.appnames)."""
        if self._apps is None:
            packages = [line.removeprefix("package:").strip() for line in self.shell("pm list packages").splitlines()]
            packages = [p for p in packages if p]
            labels: dict[str, str] = {}
            current = None
            for line in self.shell("dumpsys package packages").splitlines():
                m = re.match(r"\s*Package \[([^\]]+)\]", line)
                if m:
                    current = m.group(1)
                    continue
                m = re.match(r"\s*nonLocalizedLabel=(.*)", line)
                if m and current and m.group(1).strip() not in ("", "null"):
                    labels[current] = m.group(1).strip()
            apps = {}
            for pkg in packages:
                label = labels.get(pkg) or label_for(pkg)
                if label:
                    apps[pkg] = label
            self._apps = apps
        return dict(self._apps)

    def foreground(self) -> str:
        return self.screen_state().foreground

    def _package(self, name: str) -> str:
        installed = self.installed_apps()
        package = resolve_app(name, installed)
        if package is None or package not in installed:
            raise AppNotFoundError(TEXT["unknown_app"].format(app=name), detail=f"installed: {', '.join(sorted(installed))}")
        return package

    def _launch(self, package: str) -> None:
        answer = self.shell(f"cmd package resolve-activity --brief {package}")
        component = answer.strip().splitlines()[-1].strip() if answer.strip() else ""
        if "/" in component and " " not in component:
            result = self.run(f"am start -n {component}", idempotent=False)
            if result.exit_code == 0 and b"Error" not in result.stderr + result.stdout:
                return
        result = self.run(f"monkey -p {package} -c android.intent.category.LAUNCHER 1", idempotent=False)
        if result.exit_code != 0:
            raise AppNotFoundError(TEXT["unknown_app"].format(app=package), detail=result.stderr.decode(errors="replace"))

    # --- actions --------------------------------------------------------------------------------------
    def _check(self, x: int | None, y: int | None) -> None:
        width, height = self.window_size()
        if x is None or y is None or not (0 <= x < width and 0 <= y < height):
            raise ActionOutOfBounds(TEXT["out_of_bounds"].format(x=x, y=y), detail=f"screen is {width}x{height}")

    def _tool_shell(self, command: str) -> Any:
        """harness.tools' Runner: one command line, stdout/stderr/status; only reads are retried after a cut."""
        from harness.tools import READ_ONLY_PREFIXES, Ran

        result = self.run(command, idempotent=command.startswith(READ_ONLY_PREFIXES))
        return Ran(command, result.stdout.decode("utf-8", "replace"), result.stderr.decode("utf-8", "replace"),
                   result.exit_code)

    def act(self, action: Action) -> Any:
        """Carry out one action; a tool action returns its harness.tools.ToolResult (or raises ToolRefused)."""
        if action.is_passive and action.kind is not ActionKind.WAIT:
            return None
        k = action.kind
        if k is ActionKind.WAIT:
            self.clock.sleep((action.duration_ms or 1000) / 1000)
            return
        if not self._acted or (self._last_state is not None and (self._last_state.locked or not self._last_state.screen_on)):
            state = self.screen_state()
            if state.locked or not state.screen_on:
                raise ScreenLockedError(TEXT["locked"], detail="keyguard showing" if state.screen_on else "screen off")
        if k in (ActionKind.CLICK, ActionKind.DOUBLE_CLICK, ActionKind.LONG_PRESS):
            self._check(action.x, action.y)
            x, y = action.x, action.y
            if k is ActionKind.CLICK:
                self._act_shell(f"input tap {x} {y}")
            elif k is ActionKind.DOUBLE_CLICK:
                self._act_shell(f"input tap {x} {y}; sleep {DOUBLE_TAP_GAP_S}; input tap {x} {y}")
            else:
                self._act_shell(f"input swipe {x} {y} {x} {y} {action.duration_ms or 800}")
        elif k in (ActionKind.SCROLL, ActionKind.DRAG):
            self._check(action.x, action.y)
            self._check(action.x2, action.y2)
            if k is ActionKind.SCROLL:
                self._act_shell(f"input swipe {action.x} {action.y} {action.x2} {action.y2} {action.duration_ms or 400}")
            else:
                self._act_shell(f"input draganddrop {action.x} {action.y} {action.x2} {action.y2} {action.duration_ms or 1000}")
        elif k is ActionKind.TYPE:
            self.text_entry.type(action.text or "")
        elif k is ActionKind.BUTTON_PRESS:
            self._act_shell(f"input keyevent {BUTTON_KEYS[Button(action.button)]}")
        elif k is ActionKind.OPEN_APP:
            self._launch(self._package(action.app or ""))
        elif k is ActionKind.CLOSE_APP:
            self._act_shell(f"am force-stop {self._package(action.app or '')}")
        elif action.is_tool:
            from harness.tools import carry_out

            try:
                return carry_out(action, self._tool_shell)
            finally:
                self._acted = True
                self._last_action_at = time.monotonic()
        self._acted = True
        self._last_action_at = time.monotonic()
        return None

    def reset(self) -> None:
        raise NotImplementedError("a phone over ADB cannot be reset to a start state")

    def close(self) -> None:
        if self.mirror is not None:
            self.mirror.stop()


# --- listing and connecting ---------------------------------------------------------------------------

_TCP_SERIAL = re.compile(r"^[\w.\-\[\]:]+:\d+$")


def list_devices(client: GuardedAdbClient) -> list[DeviceInfo]:
    """Every device the adb server knows, USB and TCP, whatever its state."""
    try:
        infos = client.list(extended=True)
    except AdbServerUnavailable as exc:
        raise NoDeviceError(TEXT["no_server"], detail=str(exc)) from exc
    out = []
    for info in infos:
        tcp = bool(_TCP_SERIAL.match(info.serial)) or info.serial.startswith("adb-")
        out.append(
            DeviceInfo(
                info.serial,
                info.state,
                "tcp" if tcp else "usb",
                model=info.tags.get("model", ""),
                product=info.tags.get("product", ""),
            )
        )
    return out


def connect(client: GuardedAdbClient, address: str, *, timeout: float = 10.0) -> str:
    """`adb connect HOST:PORT`; returns the serial. DeviceError (bilingual) when it fails."""
    if ":" not in address:
        address = f"{address}:5555"
    try:
        answer = client.connect(address, timeout=timeout)
    except AdbServerUnavailable as exc:
        raise NoDeviceError(TEXT["no_server"], detail=str(exc)) from exc
    except AdbError as exc:
        raise DeviceOffline(TEXT["connect_failed"].format(address=address), detail=str(exc)) from exc
    if "connected to" not in answer:
        raise DeviceOffline(TEXT["connect_failed"].format(address=address), detail=answer.strip())
    return address


def open_device(client: GuardedAdbClient, serial: str | None = None, *, wait_s: float = 5.0, **kwargs: Any) -> AdbDevice:
    """An AdbDevice for `serial` (or the only device), once it is ready; raises the speakable errors."""
    clock: Clock = kwargs.get("clock") or SystemClock()
    deadline = clock.monotonic() + wait_s
    while True:
        devices = list_devices(client)
        candidates = [d for d in devices if serial is None or d.serial == serial]
        if serial is None and len(candidates) > 1:
            ready = [d for d in candidates if d.state == "device"]
            if len(ready) == 1:
                candidates = ready
            else:
                raise NoDeviceError(TEXT["many_devices"], detail=", ".join(d.serial for d in candidates))
        if candidates:
            info = candidates[0]
            if info.state == "device":
                return AdbDevice(client, info.serial, **kwargs)
            if info.state == "unauthorized":
                raise DeviceUnauthorized(TEXT["unauthorized"], detail=info.serial)
            if info.state not in _TRANSIENT or clock.monotonic() >= deadline:
                raise DeviceOffline(TEXT["offline"], detail=f"{info.serial} is {info.state}")
        elif clock.monotonic() >= deadline:
            raise NoDeviceError(TEXT["no_device"], detail=f"looking for {serial or 'any phone'}")
        clock.sleep(0.2)
