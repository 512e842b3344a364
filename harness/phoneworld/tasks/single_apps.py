"""(tasks land here as their apps do)"""

from __future__ import annotations

TASKS: tuple = ()
