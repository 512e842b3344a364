"""Run folders and all-or-nothing outputs.

A run folder (`<output>/<kind>-<UTC stamp>[-name]/`) holds everything one command produced:
`config.json` (what ran), `train.log` (the log), `metrics.jsonl` (one JSON object per logged step),
`checkpoints/` (resumable trainer state) and, when the run finished, `adapter/` and `result.json`.

Finished outputs appear atomically: `atomic_dir(final)` yields a hidden temporary sibling
(`.final.partial-XXXX`), and only when the block completes is it renamed onto `final`. A crash, a
Ctrl-C, a full disk or any error removes the temporary folder, so a folder named `adapter/` is always
a complete adapter. Free space is checked through an injected `free_bytes(path)` function (the real
one is `shutil.disk_usage`), so tests can simulate a full disk.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from training.errors import DiskSpaceError

log = logging.getLogger(__name__)

FreeBytes = Callable[[Path], int]

ADAPTER_DIR = "adapter"
MANIFEST = "phonebuddy_adapter.json"  # written last inside an adapter: what it is and how it was made


def disk_free_bytes(path: Path) -> int:
    """Free bytes on the filesystem holding `path` (or its nearest existing parent)."""
    path = Path(path)
    while not path.exists() and path != path.parent:
        path = path.parent
    return shutil.disk_usage(path).free


def check_free_space(path: Path, need_bytes: int, free_bytes: FreeBytes = disk_free_bytes, *, what: str) -> None:
    """Raise DiskSpaceError when fewer than `need_bytes` are free where `path` lives."""
    free = free_bytes(Path(path))
    if free < need_bytes:
        raise DiskSpaceError(
            f"not enough disk space to {what} in {path}: {free / 2**20:.0f} MB free, "
            f"{need_bytes / 2**20:.0f} MB needed. Free some space or choose another output folder."
        )


@contextlib.contextmanager
def atomic_dir(final: Path, *, need_bytes: int = 0, free_bytes: FreeBytes = disk_free_bytes,
               what: str = "write the output") -> Iterator[Path]:
    """Yield a temporary folder beside `final`; on success it replaces `final` in one rename.

    The space check runs before the block and again after it (the block may have filled the disk).
    On any exception the temporary folder is removed and `final` is left as it was.
    """
    final = Path(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    check_free_space(final.parent, need_bytes, free_bytes, what=what)
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.partial-", dir=final.parent))
    try:
        yield tmp
        check_free_space(final.parent, 0, free_bytes, what=what)
        if final.exists():
            old = final.with_name(f".{final.name}.old-{os.getpid()}")
            final.rename(old)
            tmp.rename(final)
            shutil.rmtree(old, ignore_errors=True)
        else:
            tmp.rename(final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def write_json_atomic(path: Path, data: Any) -> None:
    """Write JSON to `path` through a temporary file and a rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, ensure_ascii=False, indent=2)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


@dataclass(frozen=True)
class RunFolder:
    """One run's folder. Create with `RunFolder.create(...)` or reopen with `RunFolder(path)`."""

    path: Path

    @classmethod
    def create(cls, root: str | Path, kind: str, name: str = "", *, config: dict[str, Any] | None = None,
               clock: Callable[[], float] = time.time) -> RunFolder:
        """A new folder under `root`; with `name` it is reused when it exists (for resuming)."""
        root = Path(root)
        if name:
            path = root / f"{kind}-{name}"
        else:
            stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(clock()))
            path = root / f"{kind}-{stamp}"
            n = 1
            while path.exists():
                n += 1
                path = root / f"{kind}-{stamp}-{n}"
        path.mkdir(parents=True, exist_ok=True)
        run = cls(path)
        if config is not None:
            write_json_atomic(run.config_path, config)
        return run

    @property
    def config_path(self) -> Path:
        return self.path / "config.json"

    @property
    def log_path(self) -> Path:
        return self.path / "train.log"

    @property
    def metrics_path(self) -> Path:
        return self.path / "metrics.jsonl"

    @property
    def checkpoints(self) -> Path:
        return self.path / "checkpoints"

    @property
    def adapter(self) -> Path:
        return self.path / ADAPTER_DIR

    @property
    def result_path(self) -> Path:
        return self.path / "result.json"

    def log_metrics(self, record: dict[str, Any]) -> None:
        with self.metrics_path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")

    def metrics(self) -> list[dict[str, Any]]:
        if not self.metrics_path.exists():
            return []
        return [json.loads(line) for line in self.metrics_path.read_text(encoding="utf-8").splitlines() if line]

    def write_result(self, data: dict[str, Any]) -> None:
        write_json_atomic(self.result_path, data)

    def latest_checkpoint(self) -> Path | None:
        """The newest complete `checkpoint-N` folder (trainer state written), else None."""
        if not self.checkpoints.is_dir():
            return None
        done = [p for p in self.checkpoints.glob("checkpoint-*") if (p / "trainer_state.json").exists()]
        return max(done, key=lambda p: int(p.name.rsplit("-", 1)[-1]), default=None)

    @contextlib.contextmanager
    def logging_to_file(self, level: int = logging.INFO) -> Iterator[None]:
        """Send the `training`, `trl`, `transformers` and `peft` loggers to train.log for the block."""
        handler = logging.FileHandler(self.log_path, encoding="utf-8")
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        handler.setLevel(level)
        loggers = [logging.getLogger(n) for n in ("training", "trl", "transformers", "peft", "assistant_core")]
        saved = [(lg, lg.level) for lg in loggers]
        for lg in loggers:
            lg.addHandler(handler)
            if lg.getEffectiveLevel() > level:
                lg.setLevel(level)
        try:
            yield
        finally:
            for lg, lvl in saved:
                lg.removeHandler(handler)
                lg.setLevel(lvl)
            handler.close()


def is_complete_adapter(path: Path) -> bool:
    """True for a folder written by a finished run: the manifest is written last inside it."""
    return (Path(path) / MANIFEST).is_file()
