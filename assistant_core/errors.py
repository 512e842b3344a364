"""Errors shared across the core that are not device errors."""

from __future__ import annotations


class PolicyOutputError(ValueError):
    """The model's reply could not be turned into an Action. Recoverable: the loop tells the model what
    was wrong (`str(error)`) and asks again, a bounded number of times."""

    def __init__(self, message: str, *, raw_text: str = ""):
        self.raw_text = raw_text
        super().__init__(message)


class PolicyUnavailableError(RuntimeError):
    """The policy cannot run at all: missing weights, unreachable server, out of memory. Not retried."""


class SettingsError(RuntimeError):
    """A settings problem a caregiver must fix (wrong PIN, locked out, corrupt file)."""
