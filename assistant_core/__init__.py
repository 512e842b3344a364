"""The assistant's core: contracts, the agent loop, policy backends, the safety gate, the session and the
history store. No Qt here, and nothing heavy at import time (torch and transformers load lazily inside the
local policy backend only)."""

from assistant_core.errors import PolicyOutputError, PolicyUnavailableError
from assistant_core.types import (
    Action,
    ActionError,
    ActionKind,
    Button,
    ConfirmAnswer,
    Decision,
    Device,
    DeviceDisconnected,
    DeviceError,
    Observation,
    Policy,
    Proposal,
    Step,
    UIElement,
    Verdict,
)

__all__ = [
    "Action", "ActionError", "ActionKind", "Button", "ConfirmAnswer", "Decision", "Device",
    "DeviceDisconnected", "DeviceError", "Observation", "Policy", "PolicyOutputError",
    "PolicyUnavailableError", "Proposal", "Step", "UIElement", "Verdict",
]
