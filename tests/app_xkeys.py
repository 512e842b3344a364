"""Real X key events for tests under Xvfb: the XTEST extension (libXtst, which Xvfb serves) through
ctypes, on a connection of its own, so a key reaches the app exactly as a keyboard's would: through the X
server, to whichever window has the input focus, with the server's own auto-repeat while it is held."""

from __future__ import annotations

import ctypes
import ctypes.util
import time


def _lib(name: str, soname: str) -> ctypes.CDLL:
    return ctypes.CDLL(ctypes.util.find_library(name) or soname)


class XKeyboard:
    """`press(name)`, `release(name)`, `tap(name)`, `hold(name, seconds)`, `type_text(text)`; names are X
    keysym names ("Escape", "space", "y", "F4", "Return")."""

    def __init__(self, display: str):
        self._x11 = _lib("X11", "libX11.so.6")
        self._xtst = _lib("Xtst", "libXtst.so.6")
        self._x11.XOpenDisplay.restype = ctypes.c_void_p
        self._x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
        self._x11.XStringToKeysym.restype = ctypes.c_ulong
        self._x11.XStringToKeysym.argtypes = [ctypes.c_char_p]
        self._x11.XKeysymToKeycode.restype = ctypes.c_ubyte
        self._x11.XKeysymToKeycode.argtypes = [ctypes.c_void_p, ctypes.c_ulong]
        self._x11.XFlush.argtypes = [ctypes.c_void_p]
        self._x11.XSync.argtypes = [ctypes.c_void_p, ctypes.c_int]
        self._x11.XCloseDisplay.argtypes = [ctypes.c_void_p]
        self._xtst.XTestFakeKeyEvent.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_int, ctypes.c_ulong]
        self._dpy = self._x11.XOpenDisplay(display.encode())
        if not self._dpy:
            raise RuntimeError(f"cannot open X display {display}")

    def _code(self, name: str) -> int:
        sym = self._x11.XStringToKeysym(name.encode())
        code = self._x11.XKeysymToKeycode(self._dpy, sym) if sym else 0
        if not code:
            raise ValueError(f"no key for {name!r}")
        return code

    def _event(self, name: str, down: bool) -> None:
        self._xtst.XTestFakeKeyEvent(self._dpy, self._code(name), 1 if down else 0, 0)
        self._x11.XSync(self._dpy, 0)

    def press(self, name: str) -> None:
        self._event(name, True)

    def release(self, name: str) -> None:
        self._event(name, False)

    def tap(self, name: str, *, shift: bool = False) -> None:
        if shift:
            self.press("Shift_L")
        self.press(name)
        time.sleep(0.02)
        self.release(name)
        if shift:
            self.release("Shift_L")

    def hold(self, name: str, seconds: float) -> None:
        self.press(name)
        time.sleep(seconds)
        self.release(name)

    def type_text(self, text: str) -> None:
        """ASCII letters, digits and spaces."""
        for ch in text:
            if ch == " ":
                self.tap("space")
            elif ch.isalnum() and ch.isascii():
                self.tap(ch.lower(), shift=ch.isupper())
            else:
                raise ValueError(f"cannot type {ch!r}")
            time.sleep(0.01)

    def close(self) -> None:
        if self._dpy:
            self._x11.XCloseDisplay(self._dpy)
            self._dpy = None
