"""The history store: one SQLite database per user, through sqlite-utils.

Where: `default_db_path()` (the platform's user data folder via platformdirs); any path can be injected.

Durability: WAL mode. Ordinary rows (events, conversation) commit with `synchronous=NORMAL`, which in
WAL mode survives a killed process; consent and audit rows commit with `synchronous=FULL` (fsync'd)
and every caller writes them *before* dispatching the action they record. A step row is written with
`executed=0` before its action runs and marked executed afterwards, so a process killed mid-run loses at
most the step in flight.

Schema: `PRAGMA user_version` holds the schema version; `MIGRATIONS[i]` takes version i to i+1 and each
runs in one transaction. A database from a newer app version is refused with a clear message (never
downgraded). A file that is not a readable database is set aside (renamed `<name>.corrupt-<UTC time>`,
with its -wal/-shm) and a fresh one created; `store.set_aside` names the old file and the settings
loader then starts deny-all until the caregiver sets the app up again.

Tables: runs, steps (action, decision, confirmation answer, timings, raw model text, the observed
screen's width and height in device pixels, a small JPEG thumbnail), events, conversation, settings,
allowed_apps, audit. Full-text search over conversation and steps uses the trigram tokenizer so Chinese
matches (queries shorter than three characters fall back to LIKE, which trigram cannot serve).
`export_training` writes chosen runs as JSON lines (with each step's `width`, `height` and thumbnail as
base64 `screenshot` where recorded) and refuses unless the user's consent is on record.

Thread-safe (one connection behind a lock) so the Qt worker thread and the UI thread can share it.
"""

from __future__ import annotations

import base64
import io
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import IO, Any

import sqlite_utils

from assistant_core.i18n import Catalog, Text

log = logging.getLogger(__name__)

APP_NAME = "PhoneBuddy"
DB_NAME = "phonebuddy.db"

MSG = Catalog(
    "history",
    {
        "set_aside": ("The history file was damaged and has been put aside as {name}. The caregiver needs to set the assistant up again; until then nothing is allowed.",
                      "历史记录文件已损坏，已另存为 {name}。需要照护人重新设置助手；在此之前不允许任何操作。"),
        "newer": ("This history file was made by a newer version of PhoneBuddy (schema {found}, this version knows {known}). Update the app; the file was not changed.",
                  "这个历史记录文件来自更新版本的 PhoneBuddy（结构版本 {found}，本版本支持 {known}）。请更新应用；文件没有被修改。"),
        "not_a_file": ("{path} is not a history file (it is a folder or a device). Choose a file name; nothing "
                       "was changed there.",
                       "{path} 不是历史记录文件（它是文件夹或设备）。请选择一个文件名；那里没有任何改动。"),
        "no_consent": ("Exporting runs as training data needs the user's consent, and none is on record.",
                       "把记录导出为训练数据需要用户同意，目前没有同意记录。"),
        "unknown_run": ("There is no run with id {run_id}.", "没有编号为 {run_id} 的记录。"),
    },
)


class HistoryError(RuntimeError):
    """A history problem a person must act on; `message` says what in both languages."""

    def __init__(self, message: Text):
        self.message = message
        super().__init__(message.en)


class ConsentRequiredError(HistoryError):
    """Exporting training data without the user's recorded consent."""


class ConsentPurpose(StrEnum):
    TRAINING_EXPORT = "training_export"


def default_db_path() -> Path:
    """The database in the platform's per-user data folder (created if missing)."""
    import platformdirs

    folder = Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))
    folder.mkdir(parents=True, exist_ok=True)
    return folder / DB_NAME


# --- schema ---------------------------------------------------------------------------------------------


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

class HistoryStore:
    """The per-user database. `HistoryStore(path)`; `HistoryStore.in_memory()` for tests."""

    def __init__(self, path: str | Path | None = None, *, clock: Callable[[], float] = time.time):
        self.clock = clock
        self.path = Path(path) if path is not None else default_db_path()
        self.set_aside: Path | None = None
        self._lock = threading.RLock()
        self.db = self._open()

    @classmethod
    def in_memory(cls, *, clock: Callable[[], float] = time.time) -> HistoryStore:
        return cls(":memory:", clock=clock)

    # --- opening, corruption, migrations ---------------------------------------------------------------

    def _connect(self) -> sqlite_utils.Database:
        conn = sqlite3.connect(str(self.path), check_same_thread=False, timeout=10)
        # A text cell with bytes that are not UTF-8 (a damaged or hand-edited file) reads with U+FFFD in
        # their place instead of making every read of its row raise.
        conn.text_factory = _lenient_text
        db = sqlite_utils.Database(conn)
        if str(self.path) != ":memory:":
            db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA foreign_keys=ON")
        return db

    def _open(self) -> sqlite_utils.Database:
        if str(self.path) != ":memory:":
            if self.path.exists() and not self.path.is_file():
                # A folder is never "set aside" as a damaged database: that would move the user's files.
                raise HistoryError(MSG["not_a_file"].format(path=str(self.path)))
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            db = self._connect()
            check = db.execute("PRAGMA quick_check").fetchone()[0]
            if check != "ok":
                raise sqlite3.DatabaseError(f"quick_check: {check}")
            version = db.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.DatabaseError as error:
            if str(self.path) == ":memory:":
                raise
            log.warning("history database %s is unreadable (%s); setting it aside", self.path, error)
            try:
                db.conn.close()
            except (NameError, UnboundLocalError, sqlite3.Error):
                pass
            self.set_aside = self._set_aside()
            db = self._connect()
            version = 0
        if version > SCHEMA_VERSION:
            db.conn.close()
            raise HistoryError(MSG["newer"].format(found=version, known=SCHEMA_VERSION))
        self._migrate(db, version)
        return db

    def _set_aside(self) -> Path:
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(self.clock()))
        target = self.path.with_name(f"{self.path.name}.corrupt-{stamp}")
        n = 1
        while target.exists():
            target = self.path.with_name(f"{self.path.name}.corrupt-{stamp}-{n}")
            n += 1
        self.path.rename(target)
        for suffix in ("-wal", "-shm"):
            side = self.path.with_name(self.path.name + suffix)
            if side.exists():
                side.rename(target.with_name(target.name + suffix))
        return target

    def _migrate(self, db: sqlite_utils.Database, version: int) -> None:
        for target in range(version, SCHEMA_VERSION):
            with db.atomic():
                MIGRATIONS[target](db)
                db.execute(f"PRAGMA user_version={target + 1}")
            log.info("history database migrated to schema %d", target + 1)

    @property
    def schema_version(self) -> int:
        return int(self.db.execute("PRAGMA user_version").fetchone()[0])

    def set_aside_message(self) -> Text | None:
        return MSG["set_aside"].format(name=self.set_aside.name) if self.set_aside else None

    def close(self) -> None:
        with self._lock:
            self.db.conn.close()

    # --- writing ----------------------------------------------------------------------------------------

    @contextmanager
    def _tx(self, *, durable: bool = False) -> Iterator[sqlite_utils.Database]:
        """One transaction; `durable` commits it with synchronous=FULL."""
        with self._lock:
            if durable:
                self.db.execute("PRAGMA synchronous=FULL")
            try:
                # sqlite-utils' atomic() opens a real BEGIN..COMMIT; its own writes nest as savepoints, so
                # everything here commits once (the connection's own context manager would not BEGIN).
                with self.db.atomic():
                    yield self.db
            finally:
                if durable:
                    self.db.execute("PRAGMA synchronous=NORMAL")

    def start_run(self, goal: str, *, lang: str = "en", device: str = "", policy: str = "") -> int:
        with self._tx(durable=True) as db:
            table = db["runs"]
            table.insert({"goal": goal, "lang": lang, "device": device, "policy": policy,
                          "started": self.clock(), "steps": 0})
            run_id = int(table.last_pk)
            self._audit(db, "run_started", run_id, None, {"goal": goal, "device": device, "policy": policy})
        return run_id

    def finish_run(self, run_id: int, *, outcome: str, steps: int, summary: str = "",
                   verification: str | None = None, evidence: str | None = None) -> None:
        with self._tx(durable=True) as db:
            db["runs"].update(run_id, {"ended": self.clock(), "outcome": outcome, "steps": steps,
                                       "summary": summary, "verification": verification, "evidence": evidence})
            self._audit(db, "run_finished", run_id, None, {"outcome": outcome, "steps": steps})

    def record_step(self, run_id: int, index: int, *, action: dict[str, Any], thought: str = "",
                    raw_text: str = "", verdict: str = "", rule: str = "", reason: Text | None = None,
                    confirmation: str | None = None, foreground: str = "", timings: dict[str, float] | None = None,
                    thumbnail: bytes | None = None, error: str = "", width: int | None = None,
                    height: int | None = None) -> int:
        """The step and its gate decision, committed durably before the action is dispatched.

        `width` x `height` is the observed screen in device pixels (the frame the action's coordinates
        are in); the thumbnail alone cannot say it, since a mirrored frame may be scaled down.
        """
        with self._tx(durable=True) as db:
            table = db["steps"]
            table.insert({"run_id": run_id, "idx": index, "action": json.dumps(action, ensure_ascii=False),
                          "thought": thought, "raw_text": raw_text, "verdict": verdict, "rule": rule,
                          "reason_en": reason.en if reason else "", "reason_zh": reason.zh if reason else "",
                          "confirmation": confirmation, "executed": 0, "error": error, "foreground": foreground,
                          "timings": json.dumps(timings or {}), "thumbnail": thumbnail, "created": self.clock(),
                          "width": width, "height": height})
            step_id = int(table.last_pk)
            self._audit(db, "decision", run_id, index, {"verdict": verdict, "rule": rule, "confirmation": confirmation})
            db["runs"].update(run_id, {"steps": index + 1})
        return step_id

    def update_step(self, step_id: int, *, executed: bool | None = None, confirmation: str | None = None,
                    error: str | None = None, timings: dict[str, float] | None = None) -> None:
        changes: dict[str, Any] = {}
        if executed is not None:
            changes["executed"] = int(executed)
        if confirmation is not None:
            changes["confirmation"] = confirmation
        if error is not None:
            changes["error"] = error
        if timings is not None:
            changes["timings"] = json.dumps(timings)
        if changes:
            with self._tx() as db:
                db["steps"].update(step_id, changes)

    def record_confirmation(self, run_id: int, index: int, step_id: int | None, *, answer: str,
                            by_default: bool, question: str) -> None:
        """The user's answer (consent), fsync'd before the action it allows or refuses."""
        with self._tx(durable=True) as db:
            if step_id is not None:
                db["steps"].update(step_id, {"confirmation": answer})
            self._audit(db, "confirmation", run_id, index,
                        {"answer": answer, "by_default": by_default, "question": question})

    def audit(self, kind: str, *, run_id: int | None = None, step: int | None = None,
              detail: dict[str, Any] | None = None) -> None:
        with self._tx(durable=True) as db:
            self._audit(db, kind, run_id, step, detail or {})

    def _audit(self, db: sqlite_utils.Database, kind: str, run_id: int | None, step: int | None,
               detail: dict[str, Any]) -> None:
        db["audit"].insert({"ts": self.clock(), "kind": kind, "run_id": run_id, "step": step,
                            "detail": json.dumps(detail, ensure_ascii=False, default=str)})

    def record_event(self, run_id: int, seq: int, *, step: int, kind: str, payload: dict[str, Any]) -> None:
        with self._tx() as db:
            db["events"].insert({"run_id": run_id, "seq": seq, "step": step, "kind": kind,
                                 "payload": json.dumps(payload, ensure_ascii=False, default=str), "ts": self.clock()})

    def record_batch(self, events: list[EventRow], messages: list[MessageRow]) -> None:
        """Several events and conversation messages in one transaction (the loop flushes before it acts)."""
        if not events and not messages:
            return
        with self._tx() as db:
            if events:
                db["events"].insert_all([{"run_id": e.run_id, "seq": e.seq, "step": e.step, "kind": e.kind,
                                          "payload": json.dumps(e.payload, ensure_ascii=False, default=str),
                                          "ts": e.ts} for e in events])
            for m in messages:
                db["conversation"].insert({"run_id": m.run_id, "role": m.role, "text": m.text, "lang": m.lang,
                                           "ts": m.ts})

    def add_message(self, role: str, text: str, *, lang: str = "en", run_id: int | None = None) -> int:
        with self._tx() as db:
            table = db["conversation"]
            table.insert({"run_id": run_id, "role": role, "text": text, "lang": lang, "ts": self.clock()})
            return int(table.last_pk)

    # --- settings and allowed apps (raw; settings.py gives them meaning) ---------------------------------

    def get_setting(self, key: str) -> str | None:
        with self._lock:
            rows = list(self.db.execute("SELECT value FROM settings WHERE key = ?", [key]).fetchall())
        return rows[0][0] if rows else None

    def put_setting(self, key: str, value: str) -> None:
        with self._tx(durable=True) as db:
            db["settings"].upsert({"key": key, "value": value, "updated": self.clock()}, pk="key")
            self._audit(db, "setting_changed", None, None, {"key": key})

    def all_settings(self) -> dict[str, str]:
        with self._lock:
            return {k: v for k, v in self.db.execute("SELECT key, value FROM settings").fetchall()}

    def allowed_apps(self) -> dict[str, str]:
        with self._lock:
            return {p: lbl or "" for p, lbl in self.db.execute("SELECT package, label FROM allowed_apps").fetchall()}

    def set_allowed_apps(self, apps: dict[str, str]) -> None:
        with self._tx(durable=True) as db:
            db.execute("DELETE FROM allowed_apps")
            if apps:
                db["allowed_apps"].insert_all(
                    [{"package": p, "label": lbl, "added": self.clock()} for p, lbl in sorted(apps.items())], pk="package")
            self._audit(db, "allowed_apps_changed", None, None, {"packages": sorted(apps)})

    # --- consent and export --------------------------------------------------------------------------------

    def record_consent(self, purpose: ConsentPurpose, granted: bool, *, by: str = "user") -> None:
        with self._tx(durable=True) as db:
            self._audit(db, "consent", None, None, {"purpose": str(purpose), "granted": granted, "by": by})

    def has_consent(self, purpose: ConsentPurpose) -> bool:
        """The latest consent record for this purpose says yes."""
        with self._lock:
            rows = self.db.execute(
                "SELECT detail FROM audit WHERE kind = 'consent' ORDER BY id DESC").fetchall()
        for (detail,) in rows:
            data = json.loads(detail)
            if data.get("purpose") == str(purpose):
                return bool(data.get("granted"))
        return False

    def export_training(self, run_ids: Iterable[int], out: IO[str]) -> int:
        """Write the chosen runs' steps as JSON lines (one step a line); returns the line count.

        A line carries `width` and `height` (the observed screen) when the step recorded them, and the
        step's thumbnail as `screenshot` (base64 JPEG) when it has one.

        Raises ConsentRequiredError unless the user's consent to training export is on record.
        """
        if not self.has_consent(ConsentPurpose.TRAINING_EXPORT):
            raise ConsentRequiredError(MSG["no_consent"])
        run_ids = list(run_ids)
        count = 0
        for run_id in run_ids:
            run = self.get_run(run_id)
            for step in self.steps(run_id):
                line = {"run_id": run.id, "goal": run.goal, "lang": run.lang, "outcome": run.outcome,
                        "verification": run.verification, "step": step.index, "action": step.action,
                        "thought": step.thought, "raw_text": step.raw_text, "verdict": step.verdict,
                        "rule": step.rule, "confirmation": step.confirmation, "executed": step.executed,
                        "foreground": step.foreground}
                if step.width and step.height:
                    line["width"], line["height"] = step.width, step.height
                if step.thumbnail:
                    line["screenshot"] = base64.b64encode(step.thumbnail).decode("ascii")
                out.write(json.dumps(line, ensure_ascii=False) + "\n")
                count += 1
        with self._tx(durable=True) as db:
            self._audit(db, "training_export", None, None, {"runs": run_ids, "lines": count})
        return count

    # --- reading -------------------------------------------------------------------------------------------

    # Audit kinds that carry no request, screen or message content: kept by delete_user_data, because the
    # caregiver's consent and the PIN's record of wrong tries must survive the user deleting their data.
    KEPT_AUDIT_KINDS = ("consent", "setting_changed", "allowed_apps_changed", "pin_ok", "pin_wrong",
                        "pin_guard_tampered")

    def delete_user_data(self) -> dict[str, int]:
        """Delete every run, step, event and conversation message, and the audit rows that may quote them
        (assistant_core.profile_store / `phonebuddy privacy delete`); settings and allowed apps stay. The
        file is vacuumed so deleted text does not linger in free pages. Returns the rows deleted per table."""
        kept = ",".join("?" * len(self.KEPT_AUDIT_KINDS))
        counts: dict[str, int] = {}
        with self._tx(durable=True) as db:
            for table in ("events", "steps", "conversation", "runs"):
                counts[table] = db.execute(f"DELETE FROM {table}").rowcount
            counts["audit"] = db.execute(f"DELETE FROM audit WHERE kind NOT IN ({kept})",
                                         list(self.KEPT_AUDIT_KINDS)).rowcount
        with self._lock:
            if str(self.path) != ":memory:":
                self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self.db.execute("VACUUM")
        return counts

    def get_run(self, run_id: int) -> RunRecord:
        with self._lock:
            try:
                row = self.db["runs"].get(run_id)
            except sqlite_utils.db.NotFoundError:
                raise HistoryError(MSG["unknown_run"].format(run_id=run_id)) from None
        return RunRecord(id=row["id"], goal=row["goal"], lang=row["lang"], device=row["device"] or "",
                         policy=row["policy"] or "", started=row["started"], ended=row["ended"],
                         outcome=row["outcome"], steps=row["steps"] or 0, summary=row["summary"],
                         verification=row.get("verification"))

    def runs(self) -> list[RunRecord]:
        with self._lock:
            ids = [r[0] for r in self.db.execute("SELECT id FROM runs ORDER BY id").fetchall()]
        return [self.get_run(i) for i in ids]

    def steps(self, run_id: int) -> list[StepRecord]:
        with self._lock:
            rows = list(self.db["steps"].rows_where("run_id = ?", [run_id], order_by="idx, id"))
        return [StepRecord(id=r["id"], run_id=r["run_id"], index=r["idx"], action=_json_cell(r["action"]),
                           thought=r["thought"] or "", raw_text=r["raw_text"] or "", verdict=r["verdict"] or "",
                           rule=r["rule"] or "", reason=Text(r["reason_en"] or "", r["reason_zh"] or ""),
                           confirmation=r["confirmation"], executed=bool(r["executed"]), error=r["error"] or "",
                           foreground=r["foreground"] or "", timings=_json_cell(r["timings"]),
                           thumbnail=r["thumbnail"], width=r.get("width"), height=r.get("height")) for r in rows]

    def events(self, run_id: int) -> list[tuple[int, str, dict[str, Any]]]:
        """(step, kind, payload) in order."""
        with self._lock:
            rows = self.db.execute("SELECT step, kind, payload FROM events WHERE run_id = ? ORDER BY seq",
                                   [run_id]).fetchall()
        return [(s, k, json.loads(p)) for s, k, p in rows]

    def audit_rows(self, kind: str | None = None) -> list[tuple[str, int | None, int | None, dict[str, Any]]]:
        with self._lock:
            sql = "SELECT kind, run_id, step, detail FROM audit"
            rows = self.db.execute(sql + (" WHERE kind = ?" if kind else "") + " ORDER BY id",
                                   [kind] if kind else []).fetchall()
        return [(k, r, s, json.loads(d)) for k, r, s, d in rows]

    def search(self, query: str, *, limit: int = 50) -> list[SearchHit]:
        """Conversation and steps matching `query`, in either language."""
        query = query.strip()
        if not query:
            return []
        hits: list[SearchHit] = []
        with self._lock:
            if len(query) >= 3:
                quoted = '"' + query.replace('"', '""') + '"'
                for row in self.db["conversation"].search(quoted, limit=limit):
                    hits.append(SearchHit("conversation", row["id"], row["run_id"], row["text"]))
                for row in self.db["steps"].search(quoted, limit=limit, columns=["id", "run_id", "thought", "action"]):
                    hits.append(SearchHit("steps", row["id"], row["run_id"], f"{row['thought']} {row['action']}".strip()))
            else:
                like = f"%{query}%"
                for rid, run, text in self.db.execute(
                        "SELECT id, run_id, text FROM conversation WHERE text LIKE ? LIMIT ?", [like, limit]):
                    hits.append(SearchHit("conversation", rid, run, text))
                for rid, run, thought, action in self.db.execute(
                        "SELECT id, run_id, thought, action FROM steps WHERE thought LIKE ? OR action LIKE ? OR raw_text LIKE ? LIMIT ?",
                        [like, like, like, limit]):
                    hits.append(SearchHit("steps", rid, run, f"{thought} {action}".strip()))
        return hits
