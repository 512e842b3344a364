"""The two OpenCV calls PhoneBuddy's mirror path makes, in numpy, for the installer bundle.

opencv-python (a dependency of muti-scrcpy-client) is about 190 MB installed, most of it a second copy
of FFmpeg and Qt 5; the mirror uses only `cv2.cvtColor(frame, cv2.COLOR_BGR2RGB)` (harness/mirror.py)
and `cv2.flip(frame, 1)` (scrcpy's client, for a flipped stream). The bundle's launcher registers this
module as `cv2` only when the real one is not importable, so a source install always uses OpenCV.
Any other name raises AttributeError naming it, instead of returning something wrong.
"""

from __future__ import annotations

import numpy as np

__version__ = "phonebuddy-lite"

COLOR_BGR2RGB = 4
COLOR_RGB2BGR = 4  # the same channel swap (as in OpenCV, where both constants are 4)
COLOR_BGRA2RGBA = 5
COLOR_RGBA2BGRA = 5


def cvtColor(src: np.ndarray, code: int) -> np.ndarray:
    """Channel-order swaps only (BGR<->RGB, BGRA<->RGBA); returns a new C-contiguous array."""
    if code == COLOR_BGR2RGB and src.ndim == 3 and src.shape[2] == 3:
        return np.ascontiguousarray(src[:, :, ::-1])
    if code == COLOR_BGRA2RGBA and src.ndim == 3 and src.shape[2] == 4:
        return np.ascontiguousarray(src[:, :, [2, 1, 0, 3]])
    raise NotImplementedError(f"cv2.cvtColor code {code} on shape {src.shape} is not in the bundle's cv2")


def flip(src: np.ndarray, flip_code: int) -> np.ndarray:
    """flip_code 0: around the x axis, > 0: around the y axis, < 0: both (OpenCV's meaning)."""
    if flip_code == 0:
        out = src[::-1]
    elif flip_code > 0:
        out = src[:, ::-1]
    else:
        out = src[::-1, ::-1]
    return np.ascontiguousarray(out)


def __getattr__(name: str):
    # AttributeError (not NotImplementedError): hasattr() and inspect must keep working on this module.
    raise AttributeError(f"cv2.{name} is not in the PhoneBuddy bundle's cv2 (installers/compat)")
