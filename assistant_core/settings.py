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
The key lives in the same database, so this is evidence against casual edits, not a cryptographic lock.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import math
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError

from assistant_core.errors import SettingsError
from assistant_core.history import HistoryStore
from assistant_core.i18n import Catalog, Lang, Text, normalize_lang
from assistant_core.safety import OPTIONAL_CONFIRM, Category

log = logging.getLogger(__name__)

MSG = Catalog(
    "settings",
    {
        "missing": ("The assistant has not been set up yet. Until the caregiver sets it up, no app is allowed.",
                    "助手还没有设置。在照护人设置之前，不允许使用任何应用。"),
        "corrupt": ("The saved settings were damaged ({detail}). Safe settings are in use and no app is allowed until the caregiver sets them again.",
                    "保存的设置已损坏（{detail}）。现在使用安全设置，在照护人重新设置之前不允许使用任何应用。"),
        "set_aside": ("The history file was damaged and put aside. The caregiver needs to set the assistant up again.",
                      "历史记录文件已损坏并已另存。需要照护人重新设置助手。"),
        "pin_short": ("The PIN must be 4 to 12 digits.", "PIN 码必须是 4 到 12 位数字。"),
        "pin_wrong": ("That PIN is not right. {left} tries left before a pause.", "PIN 码不对。还可以再试 {left} 次，之后需要等待。"),
        "pin_wrong_wait": ("That PIN is not right. Please wait {seconds} seconds before trying again.", "PIN 码不对。请等 {seconds} 秒后再试。"),
        "pin_locked": ("Too many wrong PINs. Please wait {seconds} seconds.", "PIN 码错误次数太多。请等 {seconds} 秒。"),
        "pin_missing": ("No caregiver PIN is set yet.", "还没有设置照护人 PIN 码。"),
        "bad_value": ("{name} must be {what}.", "{name}必须是{what}。"),
        "bad_fields": ("Some saved settings were not valid ({detail}). Safe values are in use for them and no app "
                       "is allowed until the caregiver checks the settings and saves them again.",
                       "部分保存的设置无效（{detail}）。这些设置现在使用安全值，在照护人检查并重新保存设置之前，"
                       "不允许使用任何应用。"),
        "tampered": ("The caregiver settings were changed outside the app. No app is allowed until the caregiver "
                     "opens the settings with the PIN, checks them and saves them again.",
                     "照护人设置在应用之外被改动过。在照护人用 PIN 码打开设置、检查并重新保存之前，不允许使用任何应用。"),
        "guard_tampered": ("The record of wrong PIN tries was changed or removed outside the app, so the PIN is "
                           "locked for a while as if the tries had run out.",
                           "PIN 码错误次数的记录在应用之外被改动或删除，因此 PIN 码会像次数用完一样暂时锁定。"),
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


def _schema_problems(error: ValidationError) -> dict[str, str]:
    """field -> what was wrong with it, from pydantic's errors."""
    found: dict[str, str] = {}
    for item in error.errors():
        name = str(item["loc"][0]) if item["loc"] else "settings"
        found.setdefault(name, item["msg"])
    return found


@dataclass(frozen=True)
class CaregiverSettings:
    """What the caregiver decided. Validated on construction (bad values raise SettingsError)."""

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

    def __post_init__(self) -> None:
        try:
            checked = _Schema.model_validate({name: getattr(self, name) for name in self.__dataclass_fields__})
        except ValidationError as error:
            detail = "; ".join(f"{name}: {msg}" for name, msg in _schema_problems(error).items())
            raise SettingsError(detail) from None
        for name in self.__dataclass_fields__:
            object.__setattr__(self, name, getattr(checked, name))
        object.__setattr__(self, "language", normalize_lang(self.language))

    @property
    def extra_confirm(self) -> frozenset[Category]:
        """The opt-in categories chosen (the mandatory ones are always confirmed anyway)."""
        return self.always_confirm & OPTIONAL_CONFIRM

    def to_json(self) -> str:
        data = asdict(self)
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
        known = set(cls.__dataclass_fields__)
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


@dataclass(frozen=True)
class SettingsLoad:
    settings: CaregiverSettings
    problems: tuple[Text, ...] = ()
    needs_setup: bool = False
    tampered: bool = False  # changed outside the app (the seal does not match): tell the caregiver


class SettingsStore:
    """Settings persisted in the history database."""

    def __init__(self, history: HistoryStore):
        self.history = history

    def load(self) -> SettingsLoad:
        problems: list[Text] = []
        if self.history.set_aside is not None:
            problems.append(MSG["set_aside"])
        raw = self.history.get_setting(SETTINGS_KEY)
        if raw is None:
            problems.append(MSG["missing"])
            return SettingsLoad(SAFE_DEFAULTS, tuple(problems), needs_setup=True)
        try:
            settings, bad = CaregiverSettings.from_json_lenient(raw)
        except SettingsError as error:
            log.warning("stored settings are damaged: %s", error)
            problems.append(MSG["corrupt"].format(detail=str(error)))
            return SettingsLoad(SAFE_DEFAULTS, tuple(problems), needs_setup=True)
        if bad:
            detail = "; ".join(f"{name}: {msg}" for name, msg in bad.items())
            log.warning("stored settings have bad fields, safe defaults used for them: %s", detail)
            problems.append(MSG["corrupt"].format(detail=detail))
            return SettingsLoad(settings, tuple(problems), needs_setup=True)
        if not seal_holds(self.history, SEAL_SETTINGS_KEY, _settings_material(self.history)):
            log.warning("the caregiver settings do not match their seal: changed outside the app")
            self.history.audit("settings_tampered")
            problems.append(MSG["tampered"])
            return SettingsLoad(replace(settings, allowed_apps=frozenset()), tuple(problems), needs_setup=True,
                                tampered=True)
        # The allowed_apps table is the source of truth for the allowed set when present.
        table = self.history.allowed_apps()
        if table:
            settings = replace(settings, allowed_apps=frozenset(table))
        return SettingsLoad(settings, tuple(problems), needs_setup=False)

    def save(self, settings: CaregiverSettings, *, app_labels: dict[str, str] | None = None) -> None:
        labels = app_labels or {}
        self.history.put_setting(SETTINGS_KEY, settings.to_json())
        self.history.set_allowed_apps({p: labels.get(p, "") for p in settings.allowed_apps})
        put_seal(self.history, SEAL_SETTINGS_KEY, _settings_material(self.history))


# --- tamper evidence ----------------------------------------------------------------------------------------


def _seal_key(history: HistoryStore) -> bytes | None:
    raw = history.get_setting(PIN_KEY)
    if raw is None:
        return None
    try:
        digest = PinHash.from_json(raw).digest
    except SettingsError:
        return None
    return hmac.new(digest, b"phonebuddy caregiver seal v1", hashlib.sha256).digest()


def _settings_material(history: HistoryStore) -> bytes:
    record = history.get_setting(SETTINGS_KEY) or ""
    table = json.dumps(sorted(history.allowed_apps()), ensure_ascii=False)
    return b"settings\0" + record.encode() + b"\0" + table.encode()


def _guard_material(history: HistoryStore) -> bytes:
    return b"guard\0" + (history.get_setting(PIN_GUARD_KEY) or "").encode()


def _mac(key: bytes, material: bytes) -> str:
    return hmac.new(key, material, hashlib.sha256).hexdigest()


def put_seal(history: HistoryStore, seal_key: str, material: bytes, key: bytes | None = None) -> None:
    """Seal `material` under the PIN-derived key (nothing to do while no PIN is set)."""
    key = key or _seal_key(history)
    if key is not None:
        history.put_setting(seal_key, _mac(key, material))


def seal_holds(history: HistoryStore, seal_key: str, material: bytes) -> bool:
    """True when no PIN is set (nothing to check against) or the stored seal matches `material`."""
    key = _seal_key(history)
    if key is None:
        return True
    stored = history.get_setting(seal_key)
    return stored is not None and hmac.compare_digest(stored, _mac(key, material))


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
            return cls(bytes.fromhex(d["salt"]), bytes.fromhex(d["digest"]), int(d["n"]), int(d["r"]), int(d["p"]))
        except (ValueError, KeyError, TypeError) as error:
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
    """Checks the caregiver PIN with back-off. State is persisted in the history store's settings."""

    history: HistoryStore
    clock: Callable[[], float] = time.time
    free_tries: int = 3
    base_delay_s: float = 30.0
    max_delay_s: float = 3600.0
    _failures: int = field(default=0, init=False)
    _locked_until: float = field(default=0.0, init=False)
    tampered: bool = field(default=False, init=False)

    def __post_init__(self) -> None:
        raw = self.history.get_setting(PIN_GUARD_KEY)
        if self.has_pin and not seal_holds(self.history, SEAL_GUARD_KEY, _guard_material(self.history)):
            # Deleted or edited outside the app (to reset the lockout): assume the tries ran out.
            log.warning("the PIN guard's record does not match its seal: locked as if the tries ran out")
            self.history.audit("pin_guard_tampered")
            self.tampered = True
            self._failures, self._locked_until = self.free_tries, self.clock() + self.base_delay_s
            self._save()
            return
        if raw:
            try:
                d = json.loads(raw)
                self._failures, self._locked_until = int(d["failures"]), float(d["locked_until"])
                if not math.isfinite(self._locked_until) or self._failures < 0:
                    raise ValueError("out of range")
            except (ValueError, KeyError, TypeError, OverflowError):
                # A damaged counter must not unlock anything: assume the worst.
                self._failures, self._locked_until = self.free_tries, self.clock() + self.base_delay_s

    @property
    def has_pin(self) -> bool:
        return self.history.get_setting(PIN_KEY) is not None

    def set_pin(self, pin: str, *, n: int = 2**14) -> None:
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
        now = self.clock()
        if now < self._locked_until:
            wait = self._locked_until - now
            return PinCheck(False, MSG["pin_locked"].format(seconds=int(wait + 0.999)), wait)
        raw = self.history.get_setting(PIN_KEY)
        if raw is None:
            return PinCheck(False, MSG["pin_missing"])
        if PinHash.from_json(raw).matches(pin):
            self._failures, self._locked_until = 0, 0.0
            self._save()
            self.history.audit("pin_ok")
            return PinCheck(True)
        self._failures += 1
        self.history.audit("pin_wrong", detail={"failures": self._failures})
        if self._failures < self.free_tries:
            self._save()
            return PinCheck(False, MSG["pin_wrong"].format(left=self.free_tries - self._failures))
        delay = min(self.max_delay_s, self.base_delay_s * 2 ** (self._failures - self.free_tries))
        self._locked_until = now + delay
        self._save()
        return PinCheck(False, MSG["pin_wrong_wait"].format(seconds=int(delay)), delay)

    def _save(self) -> None:
        self.history.put_setting(PIN_GUARD_KEY, json.dumps({"failures": self._failures, "locked_until": self._locked_until}))
        put_seal(self.history, SEAL_GUARD_KEY, _guard_material(self.history))
