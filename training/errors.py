"""Errors of the training package. Each says what went wrong and what to do, in words a user can act on.

All derive from `TrainingError`, so the CLI can print the message and exit with status 2 instead of a
traceback; anything else escaping a command is a bug and is raised.
"""

from __future__ import annotations


class TrainingError(RuntimeError):
    """A training, data or evaluation problem with a clear, user-facing message."""


class ConfigError(TrainingError):
    """A config file that cannot be used: unreadable, unknown keys, wrong types or values."""


class EmptyDatasetError(TrainingError):
    """No training examples: no consented runs, no tasks selected, or an empty dataset folder."""


class BaseModelMissingError(TrainingError):
    """The base model folder (or hub id, offline) cannot be found or holds no model."""


class DiskSpaceError(TrainingError):
    """Not enough free disk space to write a checkpoint or an adapter; nothing was left half-written."""
