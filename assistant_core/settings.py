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
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Any

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
    },
)

SETTINGS_KEY = "caregiver_settings"
PIN_KEY = "caregiver_pin"
PIN_GUARD_KEY = "caregiver_pin_guard"


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
        object.__setattr__(self, "allowed_apps", frozenset(str(a) for a in self.allowed_apps))
        try:
            cats = frozenset(Category(c) for c in self.always_confirm)
        except ValueError as error:
            raise SettingsError(f"unknown confirmation category: {error}") from None
        object.__setattr__(self, "always_confirm", cats)
        object.__setattr__(self, "language", normalize_lang(self.language))
        if not isinstance(self.step_budget, int) or not 1 <= self.step_budget <= 500:
            raise SettingsError("step_budget must be a whole number from 1 to 500")
        if not isinstance(self.speech_rate, int | float) or not 0.5 <= float(self.speech_rate) <= 2.0:
            raise SettingsError("speech_rate must be between 0.5 and 2.0")
        if self.confirm_window_s is not None and self.confirm_window_s <= 0:
            raise SettingsError("confirm_window_s must be positive or None (no limit)")
        if not isinstance(self.confirm_reminders, int) or not 0 <= self.confirm_reminders <= 20:
            raise SettingsError("confirm_reminders must be 0 to 20")
        if not isinstance(self.loop_guard_repeats, int) or not 2 <= self.loop_guard_repeats <= 50:
            raise SettingsError("loop_guard_repeats must be 2 to 50")

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
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise SettingsError(f"not JSON ({error.msg})") from None
        if not isinstance(data, dict):
            raise SettingsError("not a settings object")
        known = set(cls.__dataclass_fields__)
        unknown = set(data) - known
        if unknown:
            log.warning("ignoring unknown settings fields %s", sorted(unknown))
        kwargs: dict[str, Any] = {k: v for k, v in data.items() if k in known}
        if "allowed_apps" in kwargs and not isinstance(kwargs["allowed_apps"], list):
            raise SettingsError("allowed_apps must be a list")
        if "always_confirm" in kwargs and not isinstance(kwargs["always_confirm"], list):
            raise SettingsError("always_confirm must be a list")
        try:
            return cls(**kwargs)
        except TypeError as error:
            raise SettingsError(str(error)) from None


SAFE_DEFAULTS = CaregiverSettings()


@dataclass(frozen=True)
class SettingsLoad:
    settings: CaregiverSettings
    problems: tuple[Text, ...] = ()
    needs_setup: bool = False


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
            settings = CaregiverSettings.from_json(raw)
        except SettingsError as error:
            log.warning("stored settings are damaged: %s", error)
            problems.append(MSG["corrupt"].format(detail=str(error)))
            return SettingsLoad(SAFE_DEFAULTS, tuple(problems), needs_setup=True)
        # The allowed_apps table is the source of truth for the allowed set when present.
        table = self.history.allowed_apps()
        if table:
            settings = replace(settings, allowed_apps=frozenset(table))
        return SettingsLoad(settings, tuple(problems), needs_setup=False)

    def save(self, settings: CaregiverSettings, *, app_labels: dict[str, str] | None = None) -> None:
        labels = app_labels or {}
        self.history.put_setting(SETTINGS_KEY, settings.to_json())
        self.history.set_allowed_apps({p: labels.get(p, "") for p in settings.allowed_apps})


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

    def __post_init__(self) -> None:
        raw = self.history.get_setting(PIN_GUARD_KEY)
        if raw:
            try:
                d = json.loads(raw)
                self._failures, self._locked_until = int(d["failures"]), float(d["locked_until"])
            except (ValueError, KeyError, TypeError):
                # A damaged counter must not unlock anything: assume the worst.
                self._failures, self._locked_until = self.free_tries, self.clock() + self.base_delay_s

    @property
    def has_pin(self) -> bool:
        return self.history.get_setting(PIN_KEY) is not None

    def set_pin(self, pin: str, *, n: int = 2**14) -> None:
        self.history.put_setting(PIN_KEY, PinHash.create(pin, n=n).to_json())
        self._failures, self._locked_until = 0, 0.0
        self._save()

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
