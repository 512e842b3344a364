"""The history store: one SQLite database per user, through sqlite-utils.

Where: `default_db_path()` (the platform's user data folder via platformdirs); any path can be injected.

Durability: WAL mode. Ordinary rows (events, conversation) commit with `synchronous=NORMAL`, which in
WAL mode survives a killed process; consent and audit rows commit with `synchronous=FULL` (fsync'd)
and every caller writes them *before* dispatching the action they record. A step row is written with
`executed=0` before its action runs and marked executed afterwards, so a process killed mid-run loses at
most the step in flight.

Schema: `PRAGMA user_version` holds the schema version; `MIGRATIONS[i]` takes version i to i+1 and each
runs in one transaction. A database from a newer app version is refused with a clear message (never
downgraded). Errors are told apart by SQLite's result code (`error_kind`, from `sqlite_errorcode`):
- damaged (SQLITE_CORRUPT, SQLITE_NOTADB, or a failed quick_check): set aside (renamed
  `<name>.corrupt-<UTC time>`, with its -wal/-shm) only after a full `integrity_check` on a separate
  read-only connection also fails, and a fresh one created; `store.set_aside` names the old file and the
  settings loader then starts deny-all until the caregiver sets the app up again;
- a full disk (SQLITE_FULL, or SQLITE_IOERR with under 1 MiB free: opening a WAL database on a full disk
  fails creating its -shm), or another disk error: the file is kept and opened read-only with
  `locking_mode=EXCLUSIVE` (no -shm), so the PIN check, the settings and the history still work;
  `degraded` is set, nothing more is written, and `take_notices()` says "the disk is full" and what to do;
- locked (SQLITE_BUSY/LOCKED): waited for up to `lock_wait_s` (`on_wait` hears "another PhoneBuddy is
  using the history"), then HistoryUnavailableError; never set aside;
- cannot open (SQLITE_CANTOPEN, PERM, READONLY): HistoryUnavailableError; nothing touched.
A full disk during a run ends the history, not the run: the run-record writes (`_soft`) are skipped, and
the loop says the notice once. At each start, runs left without an outcome are marked "interrupted".

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
import functools
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import IO, Any

import sqlite_utils

from assistant_core.history_schema import (  # noqa: F401  (re-exported: where callers have always found them)
    APP_NAME,
    DB_NAME,
    MIGRATIONS,
    SCHEMA_VERSION,
    EventRow,
    MessageRow,
    RunRecord,
    SearchHit,
    StepRecord,
    _json_cell,
    _lenient_text,
    default_db_path,
    make_thumbnail,
)
from assistant_core.i18n import Catalog, Text

log = logging.getLogger(__name__)

# How long a store waits for a database another process holds locked (a module constant so that a test
# can shorten the wait of code paths that open their own store, such as `phonebuddy run`).
LOCK_WAIT_S = 30.0

MSG = Catalog(
    "history",
    {
        "set_aside": "The history file was damaged and has been put aside as {name}. The caregiver needs to set the assistant up again; until then nothing is allowed.",
        "newer": "This history file was made by a newer version of PhoneBuddy (schema {found}, this version knows {known}). Update the app; the file was not changed.",
        "not_a_file": ("{path} is not a history file (it is a folder or a device). Choose a file name; nothing "
                       "was changed there."),
        "no_consent": "Exporting runs as training data needs the user's consent, and none is on record.",
        "unknown_run": "There is no run with id {run_id}.",
        "full": ("The disk is full, so PhoneBuddy cannot write its history. Nothing was deleted: the caregiver "
                 "settings and the history are kept. Please free some space (delete large files or empty the "
                 "trash), then start PhoneBuddy again."),
        "io": ("The history file could not be read or written (a disk problem). Nothing was deleted or put aside. "
               "Please check the disk, then start PhoneBuddy again."),
        "busy": "Another PhoneBuddy is using the history. Waiting for it to finish.",
        "locked": ("Another PhoneBuddy (or another program, such as a backup) is still using the history, so "
                   "this one cannot use it. Nothing was changed. Close the other one and try again."),
        "cantopen": ("The history file {path} cannot be opened (no permission, or its folder is missing). "
                     "Nothing was changed there."),
        "without_history": "This run goes on, but nothing more of it is written to the history.",
    },
)


class HistoryError(RuntimeError):
    """A history problem a person must act on; `message` says what in both languages."""

    def __init__(self, message: Text):
        self.message = message
        super().__init__(message.en)


class HistoryUnavailableError(HistoryError):
    """The history file is healthy but cannot be used now: `kind` is "full", "io", "locked" or "cantopen"
    (never set aside for that)."""

    def __init__(self, message: Text, kind: str):
        self.kind = kind
        super().__init__(message)


# SQLite's primary result codes (https://www.sqlite.org/rescode.html): the low byte of an extended code.
_FULL, _IOERR, _BUSY, _LOCKED, _CANTOPEN, _PERM, _READONLY = 13, 10, 5, 6, 14, 3, 8
_CORRUPT, _NOTADB = 11, 26


def error_kind(error: BaseException, path: Path | None = None) -> str:
    """"full", "io", "locked", "cantopen", "corrupt" or "other" for an sqlite3 error, from its result code
    (Python 3.11's `sqlite_errorcode`). A disk I/O error on a disk with almost no space left is "full"
    (opening a WAL database on a full disk fails creating its -shm file: SQLITE_IOERR_SHMSIZE)."""
    code = getattr(error, "sqlite_errorcode", None)
    if code is None:
        return "other"
    primary = code & 0xFF
    if primary == _FULL:
        return "full"
    if primary == _IOERR:
        if path is not None:
            try:
                import shutil

                if shutil.disk_usage(path.parent).free < 1 << 20:
                    return "full"
            except OSError:
                pass
        return "io"
    if primary in (_BUSY, _LOCKED):
        return "locked"
    if primary in (_CANTOPEN, _PERM, _READONLY):
        return "cantopen"
    if primary in (_CORRUPT, _NOTADB):
        return "corrupt"
    return "other"


def _soft(default: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A run-record write that must not stop the run: on a full disk (or a lock held too long) it is
    skipped, `default` is returned, and the store's notices say so."""

    def wrap(method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def inner(self: HistoryStore, *args: Any, **kwargs: Any) -> Any:
            try:
                return method(self, *args, **kwargs)
            except HistoryUnavailableError:
                return default

        return inner

    return wrap


class _Damaged(Exception):
    """quick_check found damage (confirmed by a full integrity check before anything is set aside)."""


class ConsentRequiredError(HistoryError):
    """Exporting training data without the user's recorded consent."""


class ConsentPurpose(StrEnum):
    TRAINING_EXPORT = "training_export"


# --- schema ---------------------------------------------------------------------------------------------


class HistoryStore:
    """The per-user database. `HistoryStore(path)`; `HistoryStore.in_memory()` for tests."""

    def __init__(self, path: str | Path | None = None, *, clock: Callable[[], float] = time.time,
                 lock_wait_s: float | None = None, on_wait: Callable[[Text], None] | None = None):
        """`lock_wait_s`: how long to wait for a database another process holds locked (`on_wait` hears
        "another PhoneBuddy is using the history" once, when the wait starts); LOCK_WAIT_S by default."""
        self.clock = clock
        self.path = Path(path) if path is not None else default_db_path()
        self.set_aside: Path | None = None
        # "full" or "io" once a write failed for lack of space (or a disk error): nothing more is written,
        # and `notices` holds what the user must hear (take_notices()).
        self.degraded: str | None = None
        self.notices: list[Text] = []
        self.lock_wait_s = LOCK_WAIT_S if lock_wait_s is None else lock_wait_s
        self.on_wait = on_wait
        self._lock = threading.RLock()
        self.db = self._open()

    @classmethod
    def in_memory(cls, *, clock: Callable[[], float] = time.time) -> HistoryStore:
        return cls(":memory:", clock=clock)

    # --- opening, corruption, migrations ---------------------------------------------------------------

    BUSY_TIMEOUT_S = 10.0

    def _connect(self, *, timeout: float | None = None, exclusive: bool = False) -> sqlite_utils.Database:
        conn = sqlite3.connect(str(self.path), check_same_thread=False,
                               timeout=self.BUSY_TIMEOUT_S if timeout is None else timeout)
        # A text cell with bytes that are not UTF-8 (a damaged or hand-edited file) reads with U+FFFD in
        # their place instead of making every read of its row raise.
        conn.text_factory = _lenient_text
        db = sqlite_utils.Database(conn)
        try:
            if exclusive:
                # No -shm file (it cannot be created on a full disk): SQLite keeps the WAL index in memory.
                db.execute("PRAGMA locking_mode=EXCLUSIVE")
            elif str(self.path) != ":memory:":
                db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("PRAGMA foreign_keys=ON")
        except BaseException:
            conn.close()  # an open half-set-up connection would keep its locks
            raise
        return db

    def _open(self) -> sqlite_utils.Database:
        if str(self.path) == ":memory:":
            db = self._connect()
            self._migrate(db, db.execute("PRAGMA user_version").fetchone()[0])
            return db
        if self.path.exists() and not self.path.is_file():
            # A folder is never "set aside" as a damaged database: that would move the user's files.
            raise HistoryError(MSG["not_a_file"].format(path=str(self.path)))
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError:
            raise HistoryUnavailableError(MSG["cantopen"].format(path=str(self.path)), "cantopen") from None
        deadline = time.monotonic() + self.lock_wait_s
        told = False
        while True:
            try:
                return self._open_once()
            except HistoryUnavailableError as error:
                if error.kind != "locked":
                    raise
                if time.monotonic() >= deadline:
                    raise
                if not told:
                    log.warning("the history database is locked by another process; waiting")
                    if self.on_wait is not None:
                        self.on_wait(MSG["busy"])
                told = True
                time.sleep(0.5)

    def _open_once(self) -> sqlite_utils.Database:
        """One try: the database, or HistoryUnavailableError (kept as it is), or a damaged file set aside
        after a full integrity check failed."""
        db: sqlite_utils.Database | None = None
        try:
            db = self._connect(timeout=1.0)
            check = db.execute("PRAGMA quick_check").fetchone()[0]
            if check != "ok":
                raise _Damaged(str(check))
            version = db.execute("PRAGMA user_version").fetchone()[0]
            db.execute(f"PRAGMA busy_timeout={int(self.BUSY_TIMEOUT_S * 1000)}")
        except (sqlite3.Error, _Damaged) as error:
            if db is not None:
                try:
                    db.conn.close()
                except sqlite3.Error:
                    pass
            kind = "corrupt" if isinstance(error, _Damaged) else error_kind(error, self.path)
            if kind == "corrupt":
                verdict = self._integrity()  # never set aside on an error from opening alone
                if verdict != "corrupt":
                    kind = "io" if verdict in ("ok", "other") else verdict
            if kind == "corrupt":
                log.warning("history database %s failed its integrity check (%s); setting it aside", self.path, error)
                self.set_aside = self._set_aside()
                db = self._connect()
                version = 0
            elif kind in ("full", "io"):
                return self._open_read_only(kind)
            else:
                log.info("history database %s cannot be used now (%s)", self.path, getattr(error, "sqlite_errorname", error))
                message = MSG["cantopen"].format(path=str(self.path)) if kind == "cantopen" else MSG.entries.get(kind, MSG["io"])
                raise HistoryUnavailableError(message, kind if kind in ("locked", "cantopen") else "io") from None
        if version > SCHEMA_VERSION:
            db.conn.close()
            raise HistoryError(MSG["newer"].format(found=version, known=SCHEMA_VERSION))
        try:
            self._migrate(db, version)
            self._mark_interrupted(db)
        except sqlite3.Error as error:
            db.conn.close()
            kind = error_kind(error, self.path)
            if kind in ("full", "io"):
                return self._open_read_only(kind)
            raise
        return db

    INTERRUPTED = "interrupted"

    def _mark_interrupted(self, db: sqlite_utils.Database) -> None:
        """Runs left without an outcome (the process was killed or the power went) are "interrupted"
        (a run still going in another PhoneBuddy writes its real outcome over this when it ends)."""
        with db.atomic():
            cursor = db.execute("UPDATE runs SET outcome = ? WHERE outcome IS NULL", [self.INTERRUPTED])
        if cursor.rowcount:
            log.info("%d run(s) left without an outcome marked interrupted", cursor.rowcount)

    def _integrity(self) -> str:
        """A full integrity check on a separate read-only connection: "ok", "corrupt", or why it could not run."""
        try:
            conn = sqlite3.connect(self.path.resolve().as_uri() + "?mode=ro", uri=True, timeout=1.0)
            try:
                result = conn.execute("PRAGMA integrity_check(1)").fetchone()[0]
            finally:
                conn.close()
        except sqlite3.Error as error:
            return error_kind(error, self.path)
        return "ok" if result == "ok" else "corrupt"

    def _open_read_only(self, kind: str) -> sqlite_utils.Database:
        """A full disk: the file is kept and read (PIN, settings, history) with no -shm, and nothing is
        written (`degraded`). HistoryUnavailableError when even that fails."""
        try:
            db = self._connect(exclusive=True)
            version = db.execute("PRAGMA user_version").fetchone()[0]
            db.execute("SELECT count(*) FROM settings").fetchone()
        except sqlite3.Error:
            raise HistoryUnavailableError(MSG[kind], kind) from None
        if version != SCHEMA_VERSION:
            db.conn.close()
            raise HistoryUnavailableError(MSG[kind], kind)
        log.warning("history database %s opened read-only: %s", self.path, kind)
        self.degraded = kind
        self.notices.append(Text(f"{MSG[kind].en} {MSG['without_history'].en}",
                                 f"{MSG[kind].zh}{MSG['without_history'].zh}"))
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
        """One transaction; `durable` commits it with synchronous=FULL. A full disk, a disk error or a lock
        held too long raise HistoryUnavailableError (the run-record writes below swallow it: `_soft`); after
        a full disk or a disk error nothing more is written by this store (`degraded`)."""
        with self._lock:
            if self.degraded is not None:
                raise HistoryUnavailableError(MSG[self.degraded], self.degraded)
            try:
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
            except sqlite3.Error as error:
                kind = error_kind(error, self.path)
                if kind not in ("full", "io", "locked"):
                    raise
                if self.db.conn.in_transaction:
                    try:
                        self.db.conn.rollback()
                    except sqlite3.Error:
                        pass
                log.warning("a history write failed: %s", getattr(error, "sqlite_errorname", kind))
                if kind != "locked":
                    self.degraded = kind
                    self.notices.append(Text(f"{MSG[kind].en} {MSG['without_history'].en}",
                                             f"{MSG[kind].zh}{MSG['without_history'].zh}"))
                elif MSG["locked"] not in self.notices:
                    self.notices.append(MSG["locked"])
                raise HistoryUnavailableError(MSG[kind], kind) from None

    def take_notices(self) -> list[Text]:
        """What the user must hear about the history since the last call (a full disk: the run goes on
        without history), each said once."""
        with self._lock:
            notices, self.notices = self.notices, []
        return notices

    @_soft(0)
    def start_run(self, goal: str, *, lang: str = "en", device: str = "", policy: str = "") -> int:
        with self._tx(durable=True) as db:
            table = db["runs"]
            table.insert({"goal": goal, "lang": lang, "device": device, "policy": policy,
                          "started": self.clock(), "steps": 0})
            run_id = int(table.last_pk)
            self._audit(db, "run_started", run_id, None, {"goal": goal, "device": device, "policy": policy})
        return run_id

    @_soft(None)
    def finish_run(self, run_id: int, *, outcome: str, steps: int, summary: str = "",
                   verification: str | None = None, evidence: str | None = None) -> None:
        with self._tx(durable=True) as db:
            db["runs"].update(run_id, {"ended": self.clock(), "outcome": outcome, "steps": steps,
                                       "summary": summary, "verification": verification, "evidence": evidence})
            self._audit(db, "run_finished", run_id, None, {"outcome": outcome, "steps": steps})

    @_soft(0)
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

    @_soft(None)
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

    @_soft(None)
    def record_confirmation(self, run_id: int, index: int, step_id: int | None, *, answer: str,
                            by_default: bool, question: str) -> None:
        """The user's answer (consent), fsync'd before the action it allows or refuses."""
        with self._tx(durable=True) as db:
            if step_id is not None:
                db["steps"].update(step_id, {"confirmation": answer})
            self._audit(db, "confirmation", run_id, index,
                        {"answer": answer, "by_default": by_default, "question": question})

    @_soft(None)
    def audit(self, kind: str, *, run_id: int | None = None, step: int | None = None,
              detail: dict[str, Any] | None = None) -> None:
        with self._tx(durable=True) as db:
            self._audit(db, kind, run_id, step, detail or {})

    def _audit(self, db: sqlite_utils.Database, kind: str, run_id: int | None, step: int | None,
               detail: dict[str, Any]) -> None:
        db["audit"].insert({"ts": self.clock(), "kind": kind, "run_id": run_id, "step": step,
                            "detail": json.dumps(detail, ensure_ascii=False, default=str)})

    @_soft(None)
    def record_event(self, run_id: int, seq: int, *, step: int, kind: str, payload: dict[str, Any]) -> None:
        with self._tx() as db:
            db["events"].insert({"run_id": run_id, "seq": seq, "step": step, "kind": kind,
                                 "payload": json.dumps(payload, ensure_ascii=False, default=str), "ts": self.clock()})

    @_soft(None)
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

    @_soft(0)
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

        A line carries `width` and `height` (the observed screen) when the step recorded them, the
        step's thumbnail as `screenshot` (base64 JPEG) when it has one, and `exchanges`: the questions the
        user had answered before that step, as the policy saw them (`types.Exchange.to_dict`, in order).
        `goal` is the request as the user said it.

        Raises ConsentRequiredError unless the user's consent to training export is on record.
        """
        if not self.has_consent(ConsentPurpose.TRAINING_EXPORT):
            raise ConsentRequiredError(MSG["no_consent"])
        run_ids = list(run_ids)
        count = 0
        exchanges: dict[int | None, list[tuple[int, dict[str, Any]]]] = {}
        for _, run_of, at, detail in self.audit_rows("exchange"):
            exchanges.setdefault(run_of, []).append((at if at is not None else -1, detail))
        for run_id in run_ids:
            run = self.get_run(run_id)
            for step in self.steps(run_id):
                line = {"run_id": run.id, "goal": run.goal, "lang": run.lang, "outcome": run.outcome,
                        "verification": run.verification, "step": step.index, "action": step.action,
                        "thought": step.thought, "raw_text": step.raw_text, "verdict": step.verdict,
                        "rule": step.rule, "confirmation": step.confirmation, "executed": step.executed,
                        "foreground": step.foreground,
                        "exchanges": [d for at, d in exchanges.get(run.id, []) if at < step.index]}
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

    def audit_mentions(self, kind: str, text: str) -> bool:
        """Whether any audit row of `kind` has `text` in its detail (matched literally)."""
        escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        with self._lock:
            row = self.db.execute("SELECT 1 FROM audit WHERE kind = ? AND detail LIKE ? ESCAPE '\\' LIMIT 1",
                                  [kind, f"%{escaped}%"]).fetchone()
        return row is not None

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
