"""The local privacy store: the user's profile (encrypted at rest) and the log of remote requests.

    store = PrivacyStore(path)                       # default: privacy.db beside the history database
    store.save_profile(profile, pin="1234", guard=PinGuard(history))   # changing it needs the caregiver PIN
    store.load_profile()                             # -> assistant_core.privacy.Profile
    store.record_remote(host="gpu-box", nbytes=51234, masked={"shade_rows": 2})
    store.log_rows(); store.log_summary(lang)        # what left this computer, said in en or zh

Encryption: every profile value is encrypted with Fernet (AES-128-CBC + HMAC-SHA256, the `cryptography`
library). The key is kept in the operating system's keyring (the `keyring` library: Secret Service on
Linux, Keychain on macOS, Credential Manager on Windows). Where no keyring backend is usable (a server
or a bare desktop session without Secret Service), the key is written to `privacy.key` next to the
database with mode 0600, and `key_storage` is "file"; the app and `phonebuddy privacy show` say so,
because then anyone who can read this user's files can read the profile. Tiers and item kinds are
stored in clear (they say what exists, not what it is).
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import sqlite_utils

from assistant_core.i18n import Catalog, Text
from assistant_core.privacy import Kind, Profile, ProfileItem, Tier

log = logging.getLogger(__name__)

DB_NAME = "privacy.db"
KEY_FILE = "privacy.key"
KEYRING_SERVICE = "PhoneBuddy"

MSG = Catalog(
    "privacy_store",
    {
        "pin_needed": "Changing the profile needs the caregiver PIN.",
        "key_keyring": "The profile is encrypted; its key is in this computer's keyring.",
        "key_file": ("The profile is encrypted, but this computer has no keyring, so its key is in a file next "
                     "to it that only your user account can read. Anyone who can read your files can read it."),
        "key_lost": "The profile's key is missing, so the saved profile cannot be read. Enter it again.",
        "log_local": "Nothing was sent to another computer: the model runs on this computer ({runs} runs).",
        "unavailable": ("I could not open the personal profile (the disk may be full), so I will ask before "
                        "typing anything personal."),
        "log_none": "Nothing has been sent to another computer.",
        "log_remote": "{n} requests went to {hosts}, {kb} kilobytes in all; masked before sending: {masked}.",
        "masked_none": "nothing",
        "masked.secure_fields": "{n} password or secret fields",
        "masked.shade_rows": "{n} notifications of apps not allowed",
        "masked.never_items": "{n} places showing “never” profile items",
        "masked.text": "{n} pieces of text",
    },
)


class ProfileError(RuntimeError):
    def __init__(self, message: Text):
        super().__init__(message.en)
        self.message = message


def default_path() -> Path:
    from assistant_core.history import default_db_path

    return default_db_path().parent / DB_NAME


def _usable_keyring() -> Any:
    try:
        import keyring
        from keyring.backends import fail

        backend = keyring.get_keyring()
    except Exception:  # no keyring library or a broken configuration: the file fallback
        return None
    if isinstance(backend, fail.Keyring) or getattr(backend, "priority", 0) <= 0:
        return None
    return keyring


class PrivacyStore:
    """The profile and the remote-request log in one SQLite file (see the module docstring)."""

    def __init__(self, path: str | Path | None = None, *, clock: Callable[[], float] = time.time,
                 use_keyring: bool = True):
        self.path = Path(path) if path is not None else default_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.clock = clock
        self._keyring = _usable_keyring() if use_keyring else None
        self._lock = threading.RLock()  # the app writes the log from its worker thread
        self.db = sqlite_utils.Database(sqlite3.connect(str(self.path), check_same_thread=False, timeout=10))
        if "profile" not in self.db.table_names():
            self.db["profile"].create({"id": int, "kind": str, "label": str, "tier": str, "value": bytes}, pk="id")
        if "remote_log" not in self.db.table_names():
            self.db["remote_log"].create({"id": int, "ts": float, "backend": str, "host": str, "bytes": int,
                                          "masked": str, "note": str}, pk="id")

    @classmethod
    def beside(cls, history: Any) -> PrivacyStore | None:
        """The store next to a history database (None for an in-memory history: nothing is kept)."""
        path = Path(str(getattr(history, "path", ":memory:")))
        return None if str(path) == ":memory:" else cls(path.with_name(DB_NAME))

    # --- the key ------------------------------------------------------------------------------------------

    @property
    def key_storage(self) -> str:
        return "keyring" if self._keyring is not None else "file"

    @property
    def key_message(self) -> Text:
        return MSG["key_keyring" if self._keyring is not None else "key_file"]

    @property
    def _key_name(self) -> str:
        return f"profile-key:{self.path.resolve()}"

    @property
    def key_path(self) -> Path:
        return self.path.with_name(KEY_FILE)

    def _key(self, *, create: bool) -> bytes | None:
        from cryptography.fernet import Fernet

        if self._keyring is not None:
            stored = self._keyring.get_password(KEYRING_SERVICE, self._key_name)
            if stored is None and create:
                stored = Fernet.generate_key().decode()
                self._keyring.set_password(KEYRING_SERVICE, self._key_name, stored)
            return stored.encode() if stored else None
        if self.key_path.exists():
            return self.key_path.read_bytes().strip()
        if not create:
            return None
        key = Fernet.generate_key()
        fd = os.open(self.key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(key)
        return key

    def _forget_key(self) -> None:
        if self._keyring is not None:
            try:
                self._keyring.delete_password(KEYRING_SERVICE, self._key_name)
            except Exception:  # nothing stored under that name
                pass
        self.key_path.unlink(missing_ok=True)

    # --- the profile ----------------------------------------------------------------------------------

    def load_profile(self) -> Profile:
        """The saved profile (empty when none). A missing key raises ProfileError (said in both languages)."""
        from cryptography.fernet import Fernet, InvalidToken

        rows = list(self.db["profile"].rows_where(order_by="id"))
        if not rows:
            return Profile()
        key = self._key(create=False)
        if key is None:
            raise ProfileError(MSG["key_lost"])
        f = Fernet(key)
        items = []
        for row in rows:
            try:
                value = f.decrypt(row["value"]).decode()
                items.append(ProfileItem(Kind(row["kind"]), value, Tier(row["tier"]), row["label"] or ""))
            except (InvalidToken, ValueError):
                raise ProfileError(MSG["key_lost"]) from None
        return Profile(tuple(items))

    def save_profile(self, profile: Profile, *, pin: str, guard: Any) -> None:
        """Replace the profile; needs the caregiver PIN (`assistant_core.settings.PinGuard`)."""
        check = guard.check(pin)
        if not check.ok:
            raise ProfileError(check.message or MSG["pin_needed"])
        from cryptography.fernet import Fernet

        key = self._key(create=True)
        assert key is not None
        f = Fernet(key)
        with self.db.conn:
            self.db.execute("DELETE FROM profile")
            self.db["profile"].insert_all(
                [{"kind": str(i.kind), "label": i.label, "tier": str(i.tier), "value": f.encrypt(i.value.encode())}
                 for i in profile.items if i.value.strip()])

    # --- the remote log -------------------------------------------------------------------------------

    def record_remote(self, *, host: str, nbytes: int, masked: Mapping[str, int], backend: str = "remote",
                      note: str = "") -> None:
        with self._lock:
            self.db["remote_log"].insert({"ts": self.clock(), "backend": backend, "host": host, "bytes": int(nbytes),
                                          "masked": json.dumps(dict(masked), sort_keys=True), "note": note})

    def record_local_run(self) -> None:
        """A run on the local model: nothing left the computer, and the log says so."""
        self.record_remote(host="", nbytes=0, masked={}, backend="local", note="local model: nothing sent")

    def log_rows(self) -> list[dict[str, Any]]:
        return [{**r, "masked": json.loads(r["masked"] or "{}")} for r in self.db["remote_log"].rows_where(order_by="id")]

    def log_summary(self) -> Text:
        rows = self.log_rows()
        remote = [r for r in rows if r["backend"] == "remote"]
        local = [r for r in rows if r["backend"] == "local"]
        if not remote:
            return MSG["log_local"].format(runs=len(local)) if local else MSG["log_none"]
        totals: dict[str, int] = {}
        for r in remote:
            for k, v in r["masked"].items():
                totals[k] = totals.get(k, 0) + int(v)
        hosts = ", ".join(sorted({r["host"] for r in remote}))
        kb = round(sum(r["bytes"] for r in remote) / 1024)
        parts = {lang: (("; " if lang == "en" else "；").join(MSG[f"masked.{k}"].get(lang, n=v)
                                                              for k, v in sorted(totals.items()))
                        or MSG["masked_none"].get(lang)) for lang in ("en", "zh")}
        return Text(MSG["log_remote"].en.format(n=len(remote), hosts=hosts, kb=kb, masked=parts["en"]),
                    MSG["log_remote"].zh.format(n=len(remote), hosts=hosts, kb=kb, masked=parts["zh"]))

    # --- the user's rights ----------------------------------------------------------------------------

    def export(self) -> dict[str, Any]:
        profile = self.load_profile()
        return {"profile": [{"kind": str(i.kind), "label": i.label, "tier": str(i.tier), "value": i.value}
                            for i in profile.items],
                "key_storage": self.key_storage, "remote_log": self.log_rows()}

    def delete_all(self) -> None:
        with self.db.conn:
            self.db.execute("DELETE FROM profile")
            self.db.execute("DELETE FROM remote_log")
        self._forget_key()

    def close(self) -> None:
        self.db.close()


STORED = Catalog(
    "privacy_stored",
    {
        "history": "On this computer: {runs} requests with {steps} steps, and {messages} conversation messages.",
        "profile_none": "Your profile is empty.",
        "profile": "Your profile has {n} items: {items}.",
        "item": "{kind} ({tier})",
        "deleted": "Deleted: {runs} requests, {messages} messages, your profile and the record of what was sent.",
        "exported": "Saved a copy of everything stored to {path}.",
    },
)


def describe_stored(history: Any, store: PrivacyStore | None) -> Text:
    """What is stored, said in both languages: the history's size, the profile's items and tiers (never their
    values: this may be read aloud), how the key is kept, and the summary of what was sent."""
    from assistant_core.privacy import MSG as PMSG

    runs = history.runs() if history is not None else []
    messages = 0
    if history is not None:
        with history._lock:
            messages = history.db.execute("SELECT count(*) FROM conversation").fetchone()[0]
    steps = sum(r.steps for r in runs)
    parts = [STORED["history"].format(runs=len(runs), steps=steps, messages=messages)]
    if store is not None:
        try:
            profile = store.load_profile()
        except ProfileError as error:
            parts.append(error.message)
            profile = Profile()
        if profile.items:
            items = {lang: ("; " if lang == "en" else "；").join(
                STORED["item"].get(lang, kind=PMSG[f"kind.{i.kind}"].get(lang), tier=PMSG[f"tier.{i.tier}"].get(lang))
                for i in profile.items) for lang in ("en", "zh")}
            parts.append(Text(STORED["profile"].en.format(n=len(profile.items), items=items["en"]),
                              STORED["profile"].zh.format(n=len(profile.items), items=items["zh"])))
        else:
            parts.append(STORED["profile_none"])
        if profile.items:
            parts.append(store.key_message)
        parts.append(store.log_summary())
    return Text(" ".join(p.en for p in parts), "".join(p.zh for p in parts))


def export_stored(history: Any, store: PrivacyStore | None) -> dict[str, Any]:
    """Everything stored about the user as one JSON-ready dict (step thumbnails left out)."""
    out: dict[str, Any] = {"runs": [], "conversation": []}
    if history is not None:
        for run in history.runs():
            steps = [{"index": s.index, "action": s.action, "thought": s.thought, "verdict": s.verdict, "rule": s.rule,
                      "confirmation": s.confirmation, "executed": s.executed, "error": s.error,
                      "foreground": s.foreground} for s in history.steps(run.id)]
            out["runs"].append({"id": run.id, "goal": run.goal, "lang": run.lang, "started": run.started,
                                "ended": run.ended, "outcome": run.outcome, "summary": run.summary, "steps": steps})
        with history._lock:
            out["conversation"] = [{"run_id": r, "role": role, "text": t, "lang": lg, "ts": ts} for r, role, t, lg, ts in
                                   history.db.execute("SELECT run_id, role, text, lang, ts FROM conversation ORDER BY id")]
    if store is not None:
        out.update(store.export())
    return out


def delete_stored(history: Any, store: PrivacyStore | None) -> Text:
    """Delete the history's runs and messages, the profile, its key and the remote-request log."""
    runs = len(history.runs()) if history is not None else 0
    counts = history.delete_user_data() if history is not None else {}
    if store is not None:
        store.delete_all()
    return STORED["deleted"].format(runs=runs, messages=counts.get("conversation", 0))


_OPEN: dict[Path, PrivacyStore] = {}


def privacy_for(history: Any) -> tuple[PrivacyStore | None, Profile | None, Text | None]:
    """The privacy store beside a history database, its profile, and a note to say when it could not be
    read (the run then goes on with no profile: every personal-looking entry is asked about)."""
    path = Path(str(getattr(history, "path", ":memory:"))) if history is not None else None
    if path is None or str(path) == ":memory:":
        return None, None, None
    store = _OPEN.get(path)
    if store is None:  # one connection per database for the life of the process (the app runs many requests)
        try:
            store = _OPEN[path] = PrivacyStore(path.with_name(DB_NAME))
        except (sqlite3.Error, OSError) as error:  # a full disk, a read-only folder: the run goes on without it
            log.warning("privacy store beside %s unavailable (%s)", path, type(error).__name__)
            return None, None, MSG["unavailable"]
    try:
        return store, store.load_profile(), None
    except ProfileError as error:
        return store, None, error.message


__all__ = ["delete_stored", "describe_stored", "export_stored", "privacy_for", "MSG", "PrivacyStore", "ProfileError", "default_path"]
