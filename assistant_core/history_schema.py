"""The history database's shape: where it lives (`default_db_path`), its tables and migrations (`MIGRATIONS`,
`SCHEMA_VERSION`), the row types read back (runs, steps, search hits) and written in batches (events,
conversation), and the thumbnails kept with each step. The store that reads and writes them, with its
durability and error handling, is assistant_core.history.
"""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlite_utils

from assistant_core.i18n import Text

log = logging.getLogger(__name__)

APP_NAME = "PhoneBuddy"
DB_NAME = "phonebuddy.db"


def default_db_path() -> Path:
    """The database in the platform's per-user data folder (created if missing)."""
    import platformdirs

    folder = Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))
    folder.mkdir(parents=True, exist_ok=True)
    return folder / DB_NAME


def _v1(db: sqlite_utils.Database) -> None:
    db["runs"].create({"id": int, "goal": str, "lang": str, "device": str, "policy": str, "started": float,
                       "ended": float, "outcome": str, "steps": int, "summary": str}, pk="id")
    db["steps"].create({"id": int, "run_id": int, "idx": int, "action": str, "thought": str, "raw_text": str,
                        "verdict": str, "rule": str, "reason_en": str, "reason_zh": str, "confirmation": str,
                        "executed": int, "error": str, "foreground": str, "timings": str, "thumbnail": bytes,
                        "created": float}, pk="id", foreign_keys=[("run_id", "runs", "id")])
    db["steps"].create_index(["run_id", "idx"])
    db["conversation"].create({"id": int, "run_id": int, "role": str, "text": str, "lang": str, "ts": float},
                              pk="id")
    db["settings"].create({"key": str, "value": str, "updated": float}, pk="key")
    db["allowed_apps"].create({"package": str, "label": str, "added": float}, pk="package")
    db["audit"].create({"id": int, "ts": float, "kind": str, "run_id": int, "step": int, "detail": str}, pk="id")


def _v2(db: sqlite_utils.Database) -> None:
    # Events of every run, verification results, and trigram full-text search.
    db["events"].create({"id": int, "run_id": int, "seq": int, "step": int, "kind": str, "payload": str,
                         "ts": float}, pk="id")
    db["events"].create_index(["run_id", "seq"])
    db["runs"].add_column("verification", str)
    db["runs"].add_column("evidence", str)
    db["conversation"].enable_fts(["text"], tokenize="trigram", create_triggers=True)
    db["steps"].enable_fts(["thought", "raw_text", "action"], tokenize="trigram", create_triggers=True)


def _v3(db: sqlite_utils.Database) -> None:
    # The observed screen's size per step, so exported actions map to the model's grid with the real size
    # (NULL for steps recorded before this version: their size is unknown).
    db["steps"].add_column("width", int)
    db["steps"].add_column("height", int)


MIGRATIONS: tuple[Callable[[sqlite_utils.Database], None], ...] = (_v1, _v2, _v3)


SCHEMA_VERSION = len(MIGRATIONS)


@dataclass(frozen=True)
class RunRecord:
    id: int
    goal: str
    lang: str
    device: str
    policy: str
    started: float
    ended: float | None
    outcome: str | None
    steps: int
    summary: str | None
    verification: str | None


@dataclass(frozen=True)
class StepRecord:
    id: int
    run_id: int
    index: int
    action: dict[str, Any]
    thought: str
    raw_text: str
    verdict: str
    rule: str
    reason: Text
    confirmation: str | None
    executed: bool
    error: str
    foreground: str
    timings: dict[str, float]
    thumbnail: bytes | None
    width: int | None = None  # the observed screen in device pixels; None when not recorded
    height: int | None = None


@dataclass(frozen=True)
class EventRow:
    run_id: int
    seq: int
    step: int
    kind: str
    payload: dict[str, Any]
    ts: float


@dataclass(frozen=True)
class MessageRow:
    run_id: int | None
    role: str
    text: str
    lang: str
    ts: float


@dataclass(frozen=True)
class SearchHit:
    table: str  # "conversation" or "steps"
    row_id: int
    run_id: int | None
    text: str


def make_thumbnail(image: Any, *, max_side: int = 160, quality: int = 60) -> bytes | None:
    """A small JPEG of a PIL image (None when there is no image)."""
    if image is None or not hasattr(image, "convert"):
        return None
    # An integer box reduction first: ~10x faster than resampling the full 1080x2400 frame.
    factor = max(1, max(image.size) // max_side)
    thumb = image.reduce(factor) if factor > 1 and hasattr(image, "reduce") else image.copy()
    if thumb.mode != "RGB":
        thumb = thumb.convert("RGB")
    thumb.thumbnail((max_side, max_side))
    buf = io.BytesIO()
    thumb.save(buf, format="JPEG", quality=quality)
    return buf.getvalue()


def _lenient_text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def _json_cell(text: Any) -> dict[str, Any]:
    """A JSON object cell; a damaged one (not JSON, not an object) reads as {} and is logged."""
    if not text:
        return {}
    try:
        value = json.loads(text)
    except (ValueError, TypeError, RecursionError):
        value = None
    if not isinstance(value, dict):
        log.warning("a damaged JSON cell in the history reads as empty: %.60r", text)
        return {}
    return value
