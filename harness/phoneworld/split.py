"""Where the held-out split lives, for guards that must not import the tasks themselves.

Training (SFT data, GRPO datasets) and the fast path's phrase data must never load the held-out task
templates (harness.phoneworld.tasks.heldout) or anything written from them. `is_heldout_source(path)` is
True for a file inside that package, or one whose name says it is held-out data (`*heldout*`).
"""

from __future__ import annotations

from pathlib import Path

HELDOUT_DIR = (Path(__file__).parent / "tasks" / "heldout").resolve()


class HeldOutDataError(ValueError):
    """Held-out data was offered where only the seen split may be used; the message says where."""


def is_heldout_source(path: str | Path) -> bool:
    if not str(path):
        return False
    p = Path(path).expanduser().resolve()
    return p == HELDOUT_DIR or HELDOUT_DIR in p.parents or any("heldout" in part.lower() for part in p.parts[-2:])
