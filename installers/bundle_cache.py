"""Build the Linux bundle once and reuse it while nothing it is made of changed (tests and benchmarks).

    from installers.bundle_cache import cached_linux_bundle, clean_env
    built = cached_linux_bundle()        # BuiltBundle(folder, archive, key, build_seconds or None if reused)
    subprocess.run([built.executable, "--self-check"], env=clean_env(home))

The key is a hash of every source file that goes into the bundle (installers/, app/, assistant_core/,
speech/, harness/, pyproject.toml) and of the installed distributions' names and versions. Builds live
in `$PHONEBUDDY_BUNDLE_CACHE` (default `<repo>/build/bundle-cache/<key>/`); older keys are removed
when a new one is built, unless another session still holds them (a shared lock on `in-use.lock`,
held while the returned BuiltBundle lives). An exclusive file lock makes concurrent callers wait for
one build.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.metadata as md
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from installers import manifest

IN_USE = "in-use.lock"
NOT_BUNDLED = {"README.md", "bundle_cache.py", "make_icon.py"}  # tools that put nothing into the bundle
SOURCE_DIRS = ("installers", "app", "assistant_core", "speech", "harness", "phonebuddy")
SOURCE_SUFFIXES = {".py", ".spec", ".json", ".yaml", ".txt", ".md", ".jinja", ".ttf", ".png", ".wav", ".desktop",
                   ".sh", ".iss", ".plist", ".strings", ".ico", ".icns", ".po", ".pot", ".mo", ".toml", ""}


@dataclass(frozen=True)
class BuiltBundle:
    folder: Path  # .../dist/PhoneBuddy
    archive: Path  # the .tar.gz
    key: str
    build_seconds: float | None  # None when an earlier build was reused
    log: Path

    @property
    def executable(self) -> Path:
        return self.folder / manifest.EXECUTABLE

    @property
    def data_root(self) -> Path:
        return self.folder / "_internal"


def source_key(root: Path = manifest.ROOT) -> str:
    h = hashlib.sha256()
    files = [root / "pyproject.toml"]
    for d in SOURCE_DIRS:
        files += [p for p in (root / d).rglob("*") if p.is_file() and "__pycache__" not in p.parts
                  and p.suffix in SOURCE_SUFFIXES and p.name not in NOT_BUNDLED]
    for p in sorted(files):
        h.update(str(p.relative_to(root)).encode())
        h.update(p.read_bytes())
    for dist in sorted(f"{d.metadata['Name']}=={d.version}" for d in md.distributions()):
        h.update(dist.encode())
    return h.hexdigest()[:16]


def cache_root() -> Path:
    return Path(os.environ.get("PHONEBUDDY_BUNDLE_CACHE") or manifest.ROOT / "build" / "bundle-cache")


def _archive_in(dist: Path) -> Path:
    return dist / f"{manifest.APP_NAME}-{manifest.version()}-linux-x86_64.tar.gz"


def cached_linux_bundle(timeout_s: float = 1800) -> BuiltBundle:
    """The Linux bundle for the current sources, building it (python installers/build.py linux) if needed.
    Raises RuntimeError with the build log's tail when the build fails."""
    key = source_key()
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    here = root / key
    done = here / "BUILD_OK"
    log = here / "build.log"
    with (root / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.is_file():
            return _held(BuiltBundle(here / "dist" / manifest.APP_NAME, _archive_in(here / "dist"), key, None, log))
        _remove_unused(root, keep=key)
        shutil.rmtree(here, ignore_errors=True)
        here.mkdir(parents=True)
        started = time.perf_counter()
        with log.open("w") as out:
            proc = subprocess.run(
                [sys.executable, str(manifest.INSTALLERS / "build.py"), "linux", "--dist", str(here / "dist"),
                 "--work", str(here / "work")], stdout=out, stderr=subprocess.STDOUT, timeout=timeout_s,
                cwd=manifest.ROOT)
        seconds = time.perf_counter() - started
        if proc.returncode != 0:
            raise RuntimeError(f"bundle build failed (exit {proc.returncode}):\n{log.read_text()[-4000:]}")
        shutil.rmtree(here / "work", ignore_errors=True)  # PyInstaller's intermediate files (hundreds of MB)
        done.write_text(f"{seconds:.1f}\n")
        return _held(BuiltBundle(here / "dist" / manifest.APP_NAME, _archive_in(here / "dist"), key, seconds, log))


def _held(built: BuiltBundle) -> BuiltBundle:
    """Take a shared lock on the build's in-use file for as long as `built` lives, so that another
    process building a newer key never deletes a bundle a test session is still running."""
    hold = (built.folder.parent.parent / IN_USE).open("a")
    fcntl.flock(hold, fcntl.LOCK_SH)
    object.__setattr__(built, "_hold", hold)
    return built


def _remove_unused(root: Path, *, keep: str) -> None:
    """Delete older builds nobody holds (an exclusive lock on their in-use file is free)."""
    for old in root.iterdir():
        if not old.is_dir() or old.name == keep:
            continue
        lock_path = old / IN_USE
        if not lock_path.exists():
            shutil.rmtree(old, ignore_errors=True)
            continue
        with lock_path.open("a") as f:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # in use by another test session: the next build removes it
            shutil.rmtree(old, ignore_errors=True)


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """An environment like a fresh user's: no virtual environment or project on any path, HOME in `home`,
    Qt off-screen. Only the system's own PATH entries remain."""
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "LANG": "C.UTF-8",
        "QT_QPA_PLATFORM": "offscreen",
    }
    env.update(extra)
    return env


def folder_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())
