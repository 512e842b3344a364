"""PhoneWorld-lite: a deterministic simulated Android phone with mock apps, for tests, demos and RL.

    from harness.phoneworld import World, SimDevice
    w = World(seed=0, language="en")
    dev = SimDevice(w)          # assistant_core.types.Device, in-process

See world.py for the engine contract and each module in apps/ for that app's state API.
"""

from harness.phoneworld.device import SimDevice
from harness.phoneworld.world import World

__all__ = ["SimDevice", "World"]
