"""A small in-memory file system for the simulated phone: what `adb push` writes, `adb pull` reads,
`uiautomator dump` writes and `cat`/`ls`/`rm` see. Paths are absolute POSIX paths; directories exist
explicitly (a few Android ones from the start) or implicitly above any file.
"""

from __future__ import annotations

import posixpath
import stat
import threading
import time
from dataclasses import dataclass

DEFAULT_DIRS = ("/", "/sdcard", "/sdcard/Download", "/sdcard/Pictures", "/data", "/data/local", "/data/local/tmp", "/system", "/system/bin")


@dataclass(frozen=True)
class FileInfo:
    mode: int  # full st_mode, including the file-type bits
    size: int
    mtime: int

    @property
    def is_dir(self) -> bool:
        return stat.S_ISDIR(self.mode)


class FsError(OSError):
    """A file-system error with a shell-like message (`No such file or directory`)."""


def normalize(path: str) -> str:
    if not path.startswith("/"):
        path = "/" + path
    norm = posixpath.normpath(path)
    return "/" if norm in ("/", "//") else norm


class VirtualFS:
    """Thread-safe files (bytes, mode, mtime) and directories."""

    def __init__(self, clock=time.time):
        self._clock = clock
        self._files: dict[str, tuple[bytes, int, int]] = {}
        self._dirs: set[str] = set(DEFAULT_DIRS)
        self._lock = threading.Lock()

    def _add_parents(self, path: str) -> None:
        parent = posixpath.dirname(path)
        while parent not in self._dirs:
            self._dirs.add(parent)
            parent = posixpath.dirname(parent)

    def write(self, path: str, data: bytes, *, mode: int = 0o644, mtime: int | None = None) -> None:
        path = normalize(path)
        with self._lock:
            if path in self._dirs:
                raise FsError(f"{path}: Is a directory")
            self._add_parents(path)
            self._files[path] = (bytes(data), mode & 0o7777, int(self._clock() if mtime is None else mtime))

    def read(self, path: str) -> bytes:
        path = normalize(path)
        with self._lock:
            if path in self._dirs:
                raise FsError(f"{path}: Is a directory")
            try:
                return self._files[path][0]
            except KeyError:
                raise FsError(f"{path}: No such file or directory") from None

    def mkdir(self, path: str) -> None:
        path = normalize(path)
        with self._lock:
            if path in self._files:
                raise FsError(f"{path}: File exists")
            self._add_parents(path)
            self._dirs.add(path)

    def remove(self, path: str, *, recursive: bool = False) -> None:
        path = normalize(path)
        with self._lock:
            if path in self._files:
                del self._files[path]
                return
            if path in self._dirs and path != "/":
                if not recursive:
                    raise FsError(f"{path}: Is a directory")
                prefix = path.rstrip("/") + "/"
                self._files = {p: v for p, v in self._files.items() if not p.startswith(prefix)}
                self._dirs = {d for d in self._dirs if d != path and not d.startswith(prefix)}
                return
            raise FsError(f"{path}: No such file or directory")

    def stat(self, path: str) -> FileInfo | None:
        path = normalize(path)
        with self._lock:
            if path in self._dirs:
                return FileInfo(stat.S_IFDIR | 0o771, 4096, int(self._clock()))
            entry = self._files.get(path)
            if entry is None:
                return None
            data, mode, mtime = entry
            return FileInfo(stat.S_IFREG | mode, len(data), mtime)

    def exists(self, path: str) -> bool:
        return self.stat(path) is not None

    def listdir(self, path: str) -> dict[str, FileInfo]:
        """Entries directly under a directory, name -> info."""
        path = normalize(path)
        with self._lock:
            if path not in self._dirs:
                if path in self._files:
                    raise FsError(f"{path}: Not a directory")
                raise FsError(f"{path}: No such file or directory")
            prefix = "/" if path == "/" else path + "/"
            names = {p[len(prefix) :] for p in self._files if p.startswith(prefix) and "/" not in p[len(prefix) :]}
            dirs = {d[len(prefix) :] for d in self._dirs if d.startswith(prefix) and d != path and "/" not in d[len(prefix) :]}
        result = {}
        for name in sorted(names | dirs):
            info = self.stat(prefix + name)
            if info is not None:
                result[name] = info
        return result
