"""The user's own PIN pad for the simulated phone's protected screen (the Wallet's payment PIN).

On a real phone a protected screen is the user's to finish by hand; on PhoneWorld-lite there is no hand,
so the window offers a PIN pad beside the mirror, and `enter_pin(device, digits)` presses the protected
screen's own keypad keys, one digit at a time, as the user's touches would. It is never the assistant's
action: nothing here goes through the agent loop, the gate or the history, and the digits are neither
logged nor returned.
"""

from __future__ import annotations

from typing import Any

from assistant_core.types import Action

KEY_SUFFIX = "pin_key"


def pin_pad_showing(device: Any) -> bool:
    """Whether the phone shows a protected screen with a digit keypad (what `enter_pin` can press)."""
    obs = device.observe()
    return bool(obs.is_secure and _keys(obs))


def _keys(obs: Any) -> dict[str, Any]:
    return {e.label.strip(): e for e in obs.elements or () if e.resource_id.endswith(KEY_SUFFIX) and e.label.strip()}


def enter_pin(device: Any, digits: str) -> bool:
    """Press `digits` on the protected screen's keypad. False (nothing pressed) when no keypad is showing
    or `digits` holds anything but the keypad's digits."""
    digits = "".join(digits.split())
    obs = device.observe()
    keys = _keys(obs) if obs.is_secure else {}
    if not digits or not keys or any(d not in keys for d in digits):
        return False
    for d in digits:
        device.act(Action.click(*keys[d].center))
    return True
