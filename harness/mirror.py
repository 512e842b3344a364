"""Live mirroring over the scrcpy protocol, through muti-scrcpy-client (scrcpy server 3.3.4).

    mirror = Mirror(adb_device).start()        # pushes the server, connects, waits for the first frame
    frame = mirror.latest()                     # MirrorFrame: .image (PIL RGB), .timestamp, .index
    mirror.tap(540, 1200); mirror.paste_text("你好")
    mirror.stop()

Frames are decoded on a background thread; `latest()` is the freshest decoded frame and costs no
round trip, which is why an observation from the mirror is many times cheaper than `screencap`.
After a drop (the server died, Wi-Fi blinked) the thread reconnects with a growing back-off until
`stop()`; `reconnects` counts successful reconnections and `connected` says whether frames flow now.

muti-scrcpy-client gives the wire protocol, the decoder and the control messages. What it lacks and we
add here: frame timestamps, waiting for a frame newer than a moment, reconnecting, thread-safe
controls, and being handed an adbutils device bound to our own adb server (it would otherwise use the
module-level `adbutils.adb`, i.e. port 5037).
"""

from __future__ import annotations

import functools
import logging
import struct
import threading
import time
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)


@dataclass(frozen=True, eq=False)
class MirrorFrame:
    """One decoded video frame. `array` is BGR (what the decoder gives); `image` converts to PIL RGB."""

    array: Any  # numpy.ndarray, height x width x 3, BGR
    timestamp: float  # time.time() when decoded
    monotonic: float  # time.monotonic() when decoded
    index: int

    @property
    def width(self) -> int:
        return int(self.array.shape[1])

    @property
    def height(self) -> int:
        return int(self.array.shape[0])

    @functools.cached_property
    def image(self):
        """The frame as a PIL RGB image (converted once, on first use; treat it as read-only)."""
        import cv2  # muti-scrcpy-client's dependency; cvtColor releases the GIL the decoder thread needs
        from PIL import Image

        return Image.fromarray(cv2.cvtColor(self.array, cv2.COLOR_BGR2RGB), "RGB")


class MirrorError(ConnectionError):
    """Mirroring could not start (no server, the phone refused, no frame in time)."""


class Mirror:
    """A scrcpy session kept alive on a background thread. Not started until start()."""

    def __init__(
        self,
        device: Any,
        *,
        max_size: int = 0,
        max_fps: int = 0,
        bitrate: int = 8_000_000,
        reconnect: bool = True,
        connection_timeout_ms: int = 3000,
    ):
        self.device = device  # an adbutils AdbDevice bound to our own server
        self.max_size = max_size
        self.max_fps = max_fps
        self.bitrate = bitrate
        self.reconnect = reconnect
        self.connection_timeout_ms = connection_timeout_ms
        self._client: Any = None
        self._latest: MirrorFrame | None = None
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._control_lock = threading.Lock()
        self.frames_decoded = 0
        self.reconnects = 0
        self.sessions = 0
        self.last_error: str = ""
        self.resolution: tuple[int, int] | None = None

    # --- lifecycle ------------------------------------------------------------------------------------
    def start(self, timeout: float = 15.0) -> Mirror:
        """Start the background session and wait for the first frame (MirrorError if none in time)."""
        if self._thread is not None:
            return self
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="scrcpy-mirror", daemon=True)
        self._thread.start()
        if self.wait_frame(after=0.0, timeout=timeout) is None:
            error = self.last_error or "no video frame arrived"
            self.stop()
            raise MirrorError(f"mirroring did not start: {error}")
        return self

    def stop(self) -> None:
        self._stop.set()
        client = self._client
        if client is not None:
            client.stop()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        self._client = None

    @property
    def connected(self) -> bool:
        client = self._client
        return bool(client is not None and client.alive)

    def __enter__(self) -> Mirror:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _new_client(self):
        import scrcpy  # muti-scrcpy-client; imports cv2 and av, so only when mirroring

        return scrcpy.Client(
            device=self.device,
            max_width=self.max_size,
            bitrate=self.bitrate,
            max_fps=self.max_fps,
            block_frame=True,
            connection_timeout=self.connection_timeout_ms,
        )

    def _run(self) -> None:
        backoff = 0.25
        while not self._stop.is_set():
            client = self._new_client()
            client.add_listener("frame", self._on_frame)
            self._client = client
            try:
                started = time.monotonic()
                self.sessions += 1
                if self.sessions > 1:
                    log.info("mirror: reconnecting (session %d)", self.sessions)
                client.start(threaded=False)  # returns or raises when the stream ends
            except (ConnectionError, OSError, RuntimeError) as exc:
                self.last_error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                log.info("mirror: session ended: %s", self.last_error)
            except Exception as exc:  # adbutils raises its own AdbError family here
                self.last_error = f"{type(exc).__name__}: {exc}"
                log.info("mirror: session failed: %s", self.last_error)
            finally:
                client.stop()
            if self._stop.is_set() or not self.reconnect:
                break
            if time.monotonic() - started > 5:
                backoff = 0.25
            self._stop.wait(backoff)
            backoff = min(backoff * 2, 4.0)

    def _on_frame(self, array: Any) -> None:
        if array is None:
            return
        with self._cond:
            if self._latest is not None and self._latest_session != self.sessions:
                self.reconnects += 1
            self._latest_session = self.sessions
            self.frames_decoded += 1
            self._latest = MirrorFrame(array, time.time(), time.monotonic(), self.frames_decoded)
            self.resolution = (int(array.shape[1]), int(array.shape[0]))
            self._cond.notify_all()

    _latest_session = 0

    # --- frames ---------------------------------------------------------------------------------------
    def latest(self) -> MirrorFrame | None:
        """The freshest decoded frame, or None before the first one."""
        with self._cond:
            return self._latest

    def wait_frame(self, *, after: float, timeout: float) -> MirrorFrame | None:
        """The first frame decoded after `after` (a time.monotonic() value), or None on timeout."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._latest is None or self._latest.monotonic <= after:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._cond.wait(left)
            return self._latest

    # --- control ----------------------------------------------------------------------------------------
    def _control(self):
        client = self._client
        if client is None or not client.alive or client.control_socket is None:
            raise MirrorError("mirroring is not connected")
        return client.control

    def screen_size(self) -> tuple[int, int]:
        """The phone's screen in device pixels (`wm size`), which is what tap() coordinates are in."""
        if self._screen_size is None:
            size = self.device.window_size()
            self._screen_size = (int(size.width), int(size.height))
        return self._screen_size

    _screen_size: tuple[int, int] | None = None

    def _touch(self, action: int, x: int, y: int) -> None:
        # muti-scrcpy-client's touch() states the *video* size as the screen size, so device-pixel
        # coordinates land in the wrong place once the video is scaled (max_size). We send the same
        # 31-byte message with the device's own size, which the server scales from.
        width, height = self.screen_size()
        action_button = 1 if action in (0, 1) else 0
        message = struct.pack(">BBqiiHHHii", 2, action, -1, int(x), int(y), width, height, 0xFFFF, action_button, 1)
        client = self._client
        if client is None or client.control_socket is None:
            raise MirrorError("mirroring is not connected")
        with client.control_socket_lock:
            client.control_socket.sendall(message)

    def tap(self, x: int, y: int, *, hold_s: float = 0.05) -> None:
        """Tap at device pixel (x, y)."""
        with self._control_lock:
            self._control()
            self._touch(0, x, y)
            time.sleep(hold_s)
            self._touch(1, x, y)

    def swipe(self, x1: int, y1: int, x2: int, y2: int, *, duration_s: float = 0.3, steps: int = 10) -> None:
        with self._control_lock:
            self._control()
            self._touch(0, x1, y1)
            for i in range(1, steps + 1):
                time.sleep(duration_s / steps)
                self._touch(2, x1 + (x2 - x1) * i // steps, y1 + (y2 - y1) * i // steps)
            self._touch(1, x2, y2)

    def key(self, keycode: int) -> None:
        from scrcpy import const

        with self._control_lock:
            control = self._control()
            control.keycode(keycode, const.ACTION_DOWN)
            control.keycode(keycode, const.ACTION_UP)

    def inject_text(self, text: str) -> None:
        with self._control_lock:
            self._control().text(text)

    def paste_text(self, text: str) -> None:
        """Put text on the phone's clipboard and paste it into the focused field (any Unicode)."""
        with self._control_lock:
            self._control().set_clipboard(text, paste=True)

    def set_clipboard(self, text: str) -> None:
        with self._control_lock:
            self._control().set_clipboard(text, paste=False)

    def get_clipboard(self) -> str:
        with self._control_lock:
            return self._control().get_clipboard()
