"""The caregiver's settings and the PIN that guards them.

`CaregiverSettings` (frozen): allowed apps, extra categories that always ask, step budget, speech rate and
voice, language, model choice, confirmation patience. `SAFE_DEFAULTS` allow no app at all (deny-all):
a missing or damaged settings record never means "everything allowed".

`SettingsStore(history)` keeps them in the history database (`settings` and `allowed_apps` tables).
`load()` returns a `SettingsLoad`: the settings plus the problems found, each a bilingual message for a
person ("the settings were damaged, safe defaults are in use"), and `needs_setup` when the caregiver must
set the app up (first run, damaged record, database set aside).

The PIN: a salted scrypt hash (`hashlib.scrypt`, n=2**14, r=8, p=1). `PinGuard` slows guessing down:
after `free_tries` wrong PINs each further wrong try locks the PIN for an exponentially growing time
(30 s, 60 s, 120 s ... capped at an hour), measured on an injected clock and persisted, so restarting the
app does not reset it. Secrets are never logged.

Validation: every field is checked against a pydantic schema (`_Schema`: strict types and ranges, so
`"language": 5`, `"step_budget": true` or `"confirm_window_s": NaN` are refused, not coerced). A stored
record with bad fields is loaded with the safe default for each bad field and no app allowed, with a note
naming the fields (`needs_setup`, as for any damaged record).

Tamper evidence: once a PIN is set, the settings (record and allowed-apps table) and the PIN guard's state
each carry an HMAC keyed from the stored PIN hash (`caregiver_seal_settings`, `caregiver_seal_guard`),
written only by the app's own save paths. A change made outside the app (allowed apps widened in the
database, the lockout row deleted) no longer matches: `load()` then says so (`tampered`), and uses no
allowed app until the caregiver saves the settings again; a missing or unsealed guard counts as locked.
The seal fails closed (issue 28): a removed seal, or a deleted or damaged PIN record (`PinState`: a
deleted row is told from "never set" by the seals and the audit row of the PIN being set) is tampered
too; `settings_tamper()` says what changed in words (apps added or removed, against the apps the seal
recorded; the record edited), the PIN is locked for `base_delay_s` once per tampered state, and with the
PIN record gone no PIN is accepted and none can be set. The settings then carry `AppsState.LOCKED`, which
`phonebuddy.assemble` honours on every phone (an emptied list never reads as "not set").
The key lives in the same database, so this is evidence against edits by programs or people who do not
know the PIN, not a cryptographic lock: anyone who can read the file and this code can forge a seal.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import math
import os
import sqlite3
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from enum import StrEnum
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError

from assistant_core.errors import SettingsError
from assistant_core.history import HistoryError, HistoryStore
from assistant_core.i18n import Catalog, Lang, Text, normalize_lang
from assistant_core.safety import OPTIONAL_CONFIRM, Category

log = logging.getLogger(__name__)

MSG = Catalog(
    "settings",
    {
        "missing": "The assistant has not been set up yet. Until the caregiver sets it up, no app is allowed.",
        "corrupt": "The saved settings were damaged ({detail}). Safe settings are in use and no app is allowed until the caregiver sets them again.",
        "set_aside": "The history file was damaged and put aside. The caregiver needs to set the assistant up again.",
        "pin_short": "The PIN must be 4 to 12 digits.",
        "pin_wrong": "That PIN is not right. {left} tries left before a pause.",
        "pin_wrong_wait": "That PIN is not right. Please wait {seconds} seconds before trying again.",
        "pin_locked": "Too many wrong PINs. Please wait {seconds} seconds.",
        "pin_missing": "No caregiver PIN is set yet.",
        "bad_value": "{name} must be {what}.",
        "bad_fields": ("Some saved settings were not valid ({detail}). Safe values are in use for them and no app "
                       "is allowed until the caregiver checks the settings and saves them again."),
        "tampered": ("The caregiver settings were changed outside the app. No app is allowed until the caregiver "
                     "opens the settings with the PIN, checks them and saves them again."),
        "pin_removed": ("The caregiver PIN was deleted outside the app. No app is allowed, and no new PIN can be "
                        "set here. To start over, move the history file {name} out of its folder: PhoneBuddy then "
                        "starts new, with no app allowed until the caregiver sets it up."),
        "pin_damaged": ("The caregiver PIN record was damaged outside the app. No app is allowed, and the settings "
                        "cannot be opened. To start over, move the history file {name} out of its folder: "
                        "PhoneBuddy then starts new, with no app allowed until the caregiver sets it up."),
        "seal_removed": ("The check mark that protects the caregiver settings was removed outside the app (or the "
                         "settings were saved by an older PhoneBuddy). No app is allowed until the caregiver opens "
                         "the settings with the PIN, checks them and saves them again."),
        "settings_removed": ("The caregiver settings were deleted outside the app. No app is allowed until the "
                             "caregiver opens the settings with the PIN and saves them again."),
        "apps_added": "Apps added outside the app: {apps}.",
        "apps_removed": "Apps removed outside the app: {apps}.",
        "record_edited": "The settings record itself was edited.",
        "tamper_locked": "For safety the PIN is locked for {seconds} seconds.",
        "pin_unreadable": ("The PIN cannot be checked right now because the history file cannot be read. "
                           "Please try again in a moment."),
        "guard_tampered": ("The record of wrong PIN tries was changed or removed outside the app, so the PIN is "
                           "locked for a while as if the tries had run out."),
    },
)

SETTINGS_KEY = "caregiver_settings"
PIN_KEY = "caregiver_pin"
PIN_GUARD_KEY = "caregiver_pin_guard"
SEAL_SETTINGS_KEY = "caregiver_seal_settings"
SEAL_GUARD_KEY = "caregiver_seal_guard"


_Finite = Field(allow_inf_nan=False, strict=True)


class _Schema(BaseModel):
    """The types and ranges of CaregiverSettings (strict: no bool for a number, no number for a text)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    allowed_apps: frozenset[StrictStr] = frozenset()
    always_confirm: frozenset[Category] = frozenset()
    step_budget: Annotated[StrictInt, Field(ge=1, le=500)] = 30
    speech_rate: Annotated[float, _Finite, Field(ge=0.5, le=2.0)] = 1.0
    voice: Annotated[StrictStr, Field(max_length=200)] = ""
    language: Annotated[StrictStr, Field(max_length=20)] = "en"
    model: Annotated[StrictStr, Field(max_length=200)] = "phonebuddy-0.8b"
    confirm_window_s: Annotated[float | None, _Finite, Field(gt=0, le=86_400)] = 60.0
    confirm_reminders: Annotated[StrictInt, Field(ge=0, le=20)] = 3
    loop_guard_repeats: Annotated[StrictInt, Field(ge=2, le=50)] = 6


_RECORD_FIELDS = tuple(_Schema.model_fields)  # the stored fields (CaregiverSettings.apps_state is not)


def _schema_problems(error: ValidationError) -> dict[str, str]:
    """field -> what was wrong with it, from pydantic's errors."""
    found: dict[str, str] = {}
    for item in error.errors():
        name = str(item["loc"][0]) if item["loc"] else "settings"
        found.setdefault(name, item["msg"])
    return found


class AppsState(StrEnum):
    """How binding `CaregiverSettings.allowed_apps` is (never stored: `SettingsStore.load` says it).

    UNSET: nothing saved yet (first run); the simulated phone may then use its own apps.
    SAVED: the caregiver's own list, binding even when empty once a PIN guards it (deny-all everywhere).
    LOCKED: tampered, damaged or set aside: no app at all, on every phone, until the caregiver saves again.
    """

    UNSET = "unset"
    SAVED = "saved"
    LOCKED = "locked"


@dataclass(frozen=True)
class CaregiverSettings:
    """What the caregiver decided. Validated on construction (bad values raise SettingsError).

    `apps_state` is not part of the record: it says whether `allowed_apps` is binding (see AppsState) and
    does not take part in equality."""

    allowed_apps: frozenset[str] = frozenset()
    always_confirm: frozenset[Category] = frozenset()
    step_budget: int = 30
    speech_rate: float = 1.0
    voice: str = ""
    language: Lang = "en"
    model: str = "phonebuddy-0.8b"
    confirm_window_s: float | None = 60.0
    confirm_reminders: int = 3
    loop_guard_repeats: int = 6
    apps_state: AppsState = field(default=AppsState.UNSET, compare=False)

    def __post_init__(self) -> None:
        try:
            checked = _Schema.model_validate({name: getattr(self, name) for name in _RECORD_FIELDS})
        except ValidationError as error:
            detail = "; ".join(f"{name}: {msg}" for name, msg in _schema_problems(error).items())
            raise SettingsError(detail) from None
        for name in _RECORD_FIELDS:
            object.__setattr__(self, name, getattr(checked, name))
        object.__setattr__(self, "language", normalize_lang(self.language))
        object.__setattr__(self, "apps_state", AppsState(self.apps_state))

    @property
    def extra_confirm(self) -> frozenset[Category]:
        """The opt-in categories chosen (the mandatory ones are always confirmed anyway)."""
        return self.always_confirm & OPTIONAL_CONFIRM

    def to_json(self) -> str:
        data = asdict(self)
        data.pop("apps_state")
        data["allowed_apps"] = sorted(self.allowed_apps)
        data["always_confirm"] = sorted(str(c) for c in self.always_confirm)
        return json.dumps(data, ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> CaregiverSettings:
        """Parse a stored record; raises SettingsError (never returns a permissive fallback)."""
        settings, bad = cls.from_json_lenient(text)
        if bad:
            raise SettingsError("; ".join(f"{name}: {msg}" for name, msg in bad.items()))
        return settings

    @classmethod
    def from_json_lenient(cls, text: str) -> tuple[CaregiverSettings, dict[str, str]]:
        """(settings, bad fields): each field that fails the schema gets its safe default, and allowed_apps
        is then empty (deny-all). Raises SettingsError when the record is not a JSON object at all."""
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, ValueError) as error:
            raise SettingsError(f"not JSON ({getattr(error, 'msg', error)})") from None
        except RecursionError:
            raise SettingsError("not JSON (nested too deeply)") from None
        if not isinstance(data, dict):
            raise SettingsError("not a settings object")
        known = set(_RECORD_FIELDS)
        unknown = set(data) - known
        if unknown:
            log.warning("ignoring unknown settings fields %s", sorted(unknown)[:20])
        kwargs: dict[str, Any] = {k: v for k, v in data.items() if k in known}
        for name in ("allowed_apps", "always_confirm"):
            if name in kwargs and not isinstance(kwargs[name], list):
                kwargs[name] = {"not a list": kwargs[name]}  # a text or an object is not a list of apps
        try:
            _Schema.model_validate(kwargs)
            bad: dict[str, str] = {}
        except ValidationError as error:
            bad = _schema_problems(error)
        kept = {k: v for k, v in kwargs.items() if k not in bad}
        if bad:
            kept.pop("allowed_apps", None)
        return cls(**kept), bad


SAFE_DEFAULTS = CaregiverSettings()
LOCKED_DEFAULTS = CaregiverSettings(apps_state=AppsState.LOCKED)


@dataclass(frozen=True)
class SettingsLoad:
    settings: CaregiverSettings
    problems: tuple[Text, ...] = ()
    needs_setup: bool = False
    tampered: bool = False  # changed outside the app (the seal does not match): tell the caregiver


def _join(*parts: Text) -> Text:
    return Text(" ".join(p.en for p in parts), "".join(p.zh for p in parts))


def _quiet_audit(history: HistoryStore, kind: str, **detail: Any) -> None:
    """An audit row when the disk allows it (a full or locked database must not stop the safe answer)."""
    try:
        history.audit(kind, detail=detail or None)
    except (sqlite3.Error, HistoryError) as error:
        log.warning("could not write the audit row %s (%s)", kind, type(error).__name__)


class SettingsStore:
    """Settings persisted in the history database."""

    def __init__(self, history: HistoryStore):
        self.history = history

    def load(self) -> SettingsLoad:
        problems: list[Text] = []
        if self.history.set_aside is not None:
            problems.append(MSG["set_aside"])
        raw = self.history.get_setting(SETTINGS_KEY)
        tamper = settings_tamper(self.history)
        if tamper is not None:
            # Fail closed: no app, the PIN locked once for this state, and the caregiver is told what changed.
            log.warning("the caregiver settings do not match their seal: changed outside the app")
            _quiet_audit(self.history, "settings_tampered", what=tamper.en[:300])
            guard = PinGuard(self.history)
            if guard.locked_for_s() > 0 and guard.refusal() is None:
                tamper = _join(tamper, MSG["tamper_locked"].format(seconds=int(guard.locked_for_s() + 0.999)))
            problems.append(tamper)
            try:
                settings = CaregiverSettings.from_json_lenient(raw)[0] if raw is not None else SAFE_DEFAULTS
            except SettingsError:
                settings = SAFE_DEFAULTS
            locked = replace(settings, allowed_apps=frozenset(), apps_state=AppsState.LOCKED)
            return SettingsLoad(locked, tuple(problems), needs_setup=True, tampered=True)
        if raw is None:
            problems.append(MSG["missing"])
            # Once a PIN is set (or the file was set aside) the caregiver is in charge: nothing widens.
            binding = self.history.set_aside is not None or pin_state(self.history)[0] is not PinState.NONE
            state = AppsState.LOCKED if binding else AppsState.UNSET
            return SettingsLoad(replace(SAFE_DEFAULTS, apps_state=state), tuple(problems), needs_setup=True)
        try:
            settings, bad = CaregiverSettings.from_json_lenient(raw)
        except SettingsError as error:
            log.warning("stored settings are damaged: %s", error)
            problems.append(MSG["corrupt"].format(detail=str(error)))
            return SettingsLoad(LOCKED_DEFAULTS, tuple(problems), needs_setup=True)
        if bad:
            detail = "; ".join(f"{name}: {msg}" for name, msg in bad.items())
            log.warning("stored settings have bad fields, safe defaults used for them: %s", detail)
            problems.append(MSG["corrupt"].format(detail=detail))
            return SettingsLoad(replace(settings, apps_state=AppsState.LOCKED), tuple(problems), needs_setup=True)
        # The allowed_apps table is the source of truth for the allowed set when present.
        table = self.history.allowed_apps()
        if table:
            settings = replace(settings, allowed_apps=frozenset(table))
        # The caregiver's list binds even when empty once a PIN guards it (the settings dialog always sets one
        # first); an empty list saved before any PIN (the first-run wizard's language choice) is "not set".
        binding = bool(settings.allowed_apps) or pin_state(self.history)[0] is not PinState.NONE
        state = AppsState.SAVED if binding else AppsState.UNSET
        return SettingsLoad(replace(settings, apps_state=state), tuple(problems), needs_setup=False)

    def save(self, settings: CaregiverSettings, *, app_labels: dict[str, str] | None = None) -> None:
        labels = app_labels or {}
        self.history.put_setting(SETTINGS_KEY, settings.to_json())
        self.history.set_allowed_apps({p: labels.get(p, "") for p in settings.allowed_apps})
        put_seal(self.history, SEAL_SETTINGS_KEY, _settings_material(self.history))


# --- tamper evidence ----------------------------------------------------------------------------------------


class PinState(StrEnum):
    NONE = "none"  # never set: a first run
    SET = "set"
    REMOVED = "removed"  # the row is gone but a seal (or the audit log) shows one was set
    DAMAGED = "damaged"  # the row is there but is not a PIN record


def pin_state(history: HistoryStore) -> tuple[PinState, PinHash | None]:
    """Whether a caregiver PIN is set, and its hash. A missing row counts as REMOVED when anything the app
    writes only once a PIN exists (a seal, the audit row of the PIN being set) is still there."""
    raw = history.get_setting(PIN_KEY)
    if raw is None:
        was_set = (history.get_setting(SEAL_SETTINGS_KEY) is not None
                   or history.get_setting(SEAL_GUARD_KEY) is not None
                   or history.audit_mentions("setting_changed", f'"{PIN_KEY}"'))
        return (PinState.REMOVED if was_set else PinState.NONE), None
    try:
        return PinState.SET, PinHash.from_json(raw)
    except SettingsError:
        return PinState.DAMAGED, None


def _seal_key(history: HistoryStore) -> bytes | None:
    state, pin = pin_state(history)
    if pin is None:
        return None
    return hmac.new(pin.digest, b"phonebuddy caregiver seal v1", hashlib.sha256).digest()


def _settings_material(history: HistoryStore) -> bytes:
    record = history.get_setting(SETTINGS_KEY) or ""
    table = json.dumps(sorted(history.allowed_apps()), ensure_ascii=False)
    return b"settings\0" + record.encode() + b"\0" + table.encode()


def _guard_material(history: HistoryStore) -> bytes:
    return b"guard\0" + (history.get_setting(PIN_GUARD_KEY) or "").encode()


def _mac(key: bytes, material: bytes) -> str:
    return hmac.new(key, material, hashlib.sha256).hexdigest()


def put_seal(history: HistoryStore, seal_key: str, material: bytes, key: bytes | None = None) -> None:
    """Seal `material` under the PIN-derived key (nothing to do while no PIN is set). The settings seal
    also keeps the sealed allowed apps (with their own MAC), so a later change can be said app by app."""
    key = key or _seal_key(history)
    if key is None:
        return
    value = _mac(key, material)
    if seal_key == SEAL_SETTINGS_KEY:
        apps = json.dumps(sorted(history.allowed_apps()), ensure_ascii=False)
        value = json.dumps({"mac": value, "apps": apps, "apps_mac": _mac(key, b"apps\0" + apps.encode())})
    history.put_setting(seal_key, value)


def _seal_parts(stored: str) -> dict[str, str]:
    """A stored seal: a bare MAC (guard, and settings seals before issue 28) or the settings' JSON form."""
    if stored.startswith("{"):
        try:
            data = json.loads(stored)
            return {k: str(v) for k, v in data.items()} if isinstance(data, dict) else {}
        except (ValueError, RecursionError):
            return {}
    return {"mac": stored}


def seal_holds(history: HistoryStore, seal_key: str, material: bytes) -> bool:
    """True when no PIN was ever set (nothing to check against) or the stored seal matches `material`.
    A removed or damaged PIN record never holds (fail closed)."""
    state, _pin = pin_state(history)
    if state is PinState.NONE:
        return True
    key = _seal_key(history)
    stored = history.get_setting(seal_key)
    if key is None or stored is None:
        return False
    return hmac.compare_digest(_seal_parts(stored).get("mac", ""), _mac(key, material))


def _sealed_apps(history: HistoryStore) -> set[str] | None:
    """The allowed apps as last sealed by the app (None when the seal does not say, or was forged)."""
    key, stored = _seal_key(history), history.get_setting(SEAL_SETTINGS_KEY)
    if key is None or stored is None:
        return None
    parts = _seal_parts(stored)
    apps = parts.get("apps", "")
    if not apps or not hmac.compare_digest(parts.get("apps_mac", ""), _mac(key, b"apps\0" + apps.encode())):
        return None
    try:
        return {str(a) for a in json.loads(apps)}
    except (ValueError, TypeError):
        return None


def settings_tamper(history: HistoryStore) -> Text | None:
    """What was changed outside the app, in words (None when the seal holds or no PIN was ever set)."""
    state, _pin = pin_state(history)
    if state is PinState.NONE:
        return None
    if state is PinState.REMOVED:
        return MSG["pin_removed"].format(name=history.path.name)
    if state is PinState.DAMAGED:
        return MSG["pin_damaged"].format(name=history.path.name)
    record, seal = history.get_setting(SETTINGS_KEY), history.get_setting(SEAL_SETTINGS_KEY)
    if record is None:
        return MSG["settings_removed"] if seal is not None else None  # a PIN, nothing saved yet: not tampered
    if seal is None:
        return MSG["seal_removed"]
    if seal_holds(history, SEAL_SETTINGS_KEY, _settings_material(history)):
        return None
    return _join(MSG["tampered"], *_what_changed(history, record))


def _what_changed(history: HistoryStore, record: str) -> list[Text]:
    """The difference between the apps the app last sealed and what is there now, and a record edit."""
    now = set(history.allowed_apps())
    last = _sealed_apps(history)
    said: list[Text] = []
    if last is not None:
        if now - last:
            said.append(MSG["apps_added"].format(apps=", ".join(sorted(now - last))))
        if last - now:
            said.append(MSG["apps_removed"].format(apps=", ".join(sorted(last - now))))
    try:
        in_record = set(json.loads(record).get("allowed_apps") or ())
    except (ValueError, AttributeError, TypeError):
        in_record = None
    if in_record != now:
        said.append(MSG["record_edited"])
    return said


def _tamper_fingerprint(history: HistoryStore) -> str | None:
    """One value per tampered state (so its lock is applied once, not at every look), None when untampered."""
    if settings_tamper(history) is None:
        return None
    parts = [history.get_setting(k) or "" for k in (PIN_KEY, SETTINGS_KEY, SEAL_SETTINGS_KEY)]
    parts.append(json.dumps(sorted(history.allowed_apps())))
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]


# --- the PIN ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PinHash:
    salt: bytes
    digest: bytes
    n: int = 2**14
    r: int = 8
    p: int = 1

    @classmethod
    def create(cls, pin: str, *, n: int = 2**14) -> PinHash:
        if not (pin.isdigit() and 4 <= len(pin) <= 12):
            raise SettingsError(MSG["pin_short"].en)
        salt = os.urandom(16)
        return cls(salt, _scrypt(pin, salt, n, 8, 1), n, 8, 1)

    def matches(self, pin: str) -> bool:
        return hmac.compare_digest(self.digest, _scrypt(pin, self.salt, self.n, self.r, self.p))

    def to_json(self) -> str:
        return json.dumps({"salt": self.salt.hex(), "digest": self.digest.hex(), "n": self.n, "r": self.r, "p": self.p})

    @classmethod
    def from_json(cls, text: str) -> PinHash:
        try:
            d = json.loads(text)
            made = cls(bytes.fromhex(d["salt"]), bytes.fromhex(d["digest"]), int(d["n"]), int(d["r"]), int(d["p"]))
            # Only what PinHash.create writes (a huge n would make every check a memory bomb).
            if not (len(made.salt) >= 8 and len(made.digest) == 32 and 2 <= made.n <= 2**20
                    and made.n & (made.n - 1) == 0 and 1 <= made.r <= 32 and 1 <= made.p <= 16):
                raise ValueError("out of range")
            return made
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as error:
            raise SettingsError(f"stored PIN record is damaged ({type(error).__name__})") from None


def _scrypt(pin: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return hashlib.scrypt(pin.encode(), salt=salt, n=n, r=r, p=p, maxmem=128 * n * r * 2, dklen=32)


@dataclass(frozen=True)
class PinCheck:
    ok: bool
    message: Text | None = None
    retry_after_s: float = 0.0


@dataclass
class PinGuard:
    """Checks the caregiver PIN with back-off. State is persisted in the history store's settings.

    `clock` defaults to the history store's clock. A settings change made outside the app locks the PIN
    once for `base_delay_s` (per tampered state, so the caregiver gets in after the pause); a removed or
    damaged PIN record refuses every PIN and every new PIN (fail closed)."""

    history: HistoryStore
    clock: Callable[[], float] | None = None
    free_tries: int = 3
    base_delay_s: float = 30.0
    max_delay_s: float = 3600.0
    _failures: int = field(default=0, init=False)
    _locked_until: float = field(default=0.0, init=False)
    _tamper_seen: str = field(default="", init=False)
    tampered: bool = field(default=False, init=False)

    def __post_init__(self) -> None:
        if self.clock is None:
            self.clock = self.history.clock
        raw = self.history.get_setting(PIN_GUARD_KEY)
        if self.has_pin and not seal_holds(self.history, SEAL_GUARD_KEY, _guard_material(self.history)):
            # Deleted or edited outside the app (to reset the lockout): assume the tries ran out.
            log.warning("the PIN guard's record does not match its seal: locked as if the tries ran out")
            _quiet_audit(self.history, "pin_guard_tampered")
            self.tampered = True
            self._failures, self._locked_until = self.free_tries, self.clock() + self.base_delay_s
            self._save()
        elif raw:
            try:
                d = json.loads(raw)
                self._failures, self._locked_until = int(d["failures"]), float(d["locked_until"])
                self._tamper_seen = str(d.get("tamper", ""))
                if not math.isfinite(self._locked_until) or self._failures < 0:
                    raise ValueError("out of range")
            except (ValueError, KeyError, TypeError, OverflowError, AttributeError):
                # A damaged counter must not unlock anything: assume the worst.
                self._failures, self._locked_until = self.free_tries, self.clock() + self.base_delay_s
        seen = _tamper_fingerprint(self.history)
        if seen is not None and seen != self._tamper_seen:
            # The settings were changed outside the app: lock the PIN once for this state.
            self._tamper_seen = seen
            self._failures = max(self._failures, self.free_tries)
            self._locked_until = max(self._locked_until, self.clock() + self.base_delay_s)
            self._save()

    @property
    def has_pin(self) -> bool:
        """A PIN is set, or was (a removed or damaged record still counts: no new PIN over it)."""
        return pin_state(self.history)[0] is not PinState.NONE

    def locked_for_s(self) -> float:
        return max(0.0, self._locked_until - self.clock())

    def refusal(self) -> Text | None:
        """Why no PIN can be checked or set at all (the record was removed or damaged), or None."""
        state = pin_state(self.history)[0]
        if state is PinState.REMOVED:
            return MSG["pin_removed"].format(name=self.history.path.name)
        if state is PinState.DAMAGED:
            return MSG["pin_damaged"].format(name=self.history.path.name)
        return None

    def set_pin(self, pin: str, *, n: int = 2**14) -> None:
        refused = self.refusal()
        if refused is not None:  # whoever deleted the row must not choose the next PIN
            _quiet_audit(self.history, "pin_set_refused")
            raise SettingsError(refused.en)
        # The settings seal moves to the new PIN's key only if it held under the old one (a change made
        # outside the app stays visible after a PIN change).
        settings_held = self.history.get_setting(SETTINGS_KEY) is not None and seal_holds(
            self.history, SEAL_SETTINGS_KEY, _settings_material(self.history))
        self.history.put_setting(PIN_KEY, PinHash.create(pin, n=n).to_json())
        self._failures, self._locked_until = 0, 0.0
        self._save()
        if settings_held:
            put_seal(self.history, SEAL_SETTINGS_KEY, _settings_material(self.history))

    def check(self, pin: str) -> PinCheck:
        """Works on a full disk: the answer never depends on writing (the back-off is kept in memory then)."""
        now = self.clock()
        if now < self._locked_until:
            wait = self._locked_until - now
            return PinCheck(False, MSG["pin_locked"].format(seconds=int(wait + 0.999)), wait)
        try:
            state, stored = pin_state(self.history)
        except (sqlite3.Error, HistoryError) as error:
            log.warning("could not read the PIN record (%s)", type(error).__name__)
            return PinCheck(False, MSG["pin_unreadable"])
        if state in (PinState.REMOVED, PinState.DAMAGED):
            return PinCheck(False, self.refusal())
        if stored is None:
            return PinCheck(False, MSG["pin_missing"])
        if stored.matches(pin):
            self._failures, self._locked_until = 0, 0.0
            self._save()
            _quiet_audit(self.history, "pin_ok")
            return PinCheck(True)
        self._failures += 1
        _quiet_audit(self.history, "pin_wrong", failures=self._failures)
        if self._failures < self.free_tries:
            self._save()
            return PinCheck(False, MSG["pin_wrong"].format(left=self.free_tries - self._failures))
        delay = min(self.max_delay_s, self.base_delay_s * 2 ** (self._failures - self.free_tries))
        self._locked_until = now + delay
        self._save()
        return PinCheck(False, MSG["pin_wrong_wait"].format(seconds=int(delay)), delay)

    def _save(self) -> None:
        record = {"failures": self._failures, "locked_until": self._locked_until}
        if self._tamper_seen:
            record["tamper"] = self._tamper_seen
        try:
            self.history.put_setting(PIN_GUARD_KEY, json.dumps(record))
            put_seal(self.history, SEAL_GUARD_KEY, _guard_material(self.history))
        except (sqlite3.Error, HistoryError) as error:  # a full or locked disk: the back-off holds in memory
            log.warning("could not save the PIN guard's state (%s)", type(error).__name__)
