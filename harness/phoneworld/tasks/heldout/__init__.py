"""The held-out split: task templates ported by structure (never by text) from public benchmarks
(AndroidWorld, MobileWorld, MyPhoneBench), written apart from the seen tasks the fast path, the oracle
and the verifiers were shaped around. docs/heldout-tasks.md lists each template's public family.

Training never loads them: `registry.get` refuses their ids (HeldOutTaskError) and SFT data, GRPO
datasets and the fast path's phrase data check `registry.refuse_heldout`. Only evaluation reaches them
(`phonebuddy train eval --split heldout`, `registry.split_tasks("heldout")`).
"""

from __future__ import annotations

from harness.phoneworld.tasks.heldout import ho_apps, ho_ask, ho_comms, ho_more, ho_schedule, ho_settings

HELDOUT_MODULES = (ho_settings, ho_apps, ho_comms, ho_ask, ho_more, ho_schedule)
