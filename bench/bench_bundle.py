"""The Linux bundle's size and start-up time (targets: under 600 MB without models; window within 3 s).

    .venv/bin/python bench/bench_bundle.py [--runs 3]

Uses the bundle cached by installers/bundle_cache.py (builds it first if the sources changed, and then
reports the build time). Each run starts the bundled executable in a clean environment (no virtual
environment, HOME in a fresh temporary folder, Qt off-screen, the simulated phone) with the start-up
probe on, and reads the time from just before the process was spawned to the window being shown.
First runs (the setup wizard opens too) and later runs (no wizard) are measured separately. Then the
bundle's --self-check is timed. Prints figures and ratios to the targets; asserts nothing.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from installers import manifest
from installers.bundle_cache import cached_linux_bundle, clean_env, folder_size

WINDOW_TARGET_S = 3.0


def start_once(exe: Path, home: Path) -> dict[str, float]:
    t0 = time.time()
    out = subprocess.run([str(exe), "--demo", "--no-speech"], env=clean_env(
        home, PHONEBUDDY_STARTUP_PROBE="1", PHONEBUDDY_PROBE_QUIT_S="1.5", PHONEBUDDY_T0=repr(t0)),
        cwd=home, capture_output=True, text=True, timeout=180)
    marks = {m.group(1): float(m.group(2)) for m in re.finditer(r"phonebuddy-probe: (\S+) ([\d.]+)", out.stdout)}
    if "window-shown" not in marks:
        raise RuntimeError(f"no window-shown mark (exit {out.returncode}):\n{out.stdout[-2000:]}{out.stderr[-2000:]}")
    return marks


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=3)
    args = p.parse_args()
    started = time.perf_counter()
    built = cached_linux_bundle()
    build = (f"built now in {built.build_seconds:.0f} s" if built.build_seconds is not None
             else f"reused (key {built.key}, built in {(built.folder.parent.parent / 'BUILD_OK').read_text().strip()} s)")
    size = folder_size(built.folder) / 2**20
    print(f"bundle: {built.folder} ({build}; this step {time.perf_counter() - started:.0f} s)")
    print(f"size: {size:.0f} MB unpacked, target {manifest.SIZE_TARGET_MB} MB -> ratio {size / manifest.SIZE_TARGET_MB:.2f}")
    if built.archive.is_file():
        print(f"archive: {built.archive.name} {built.archive.stat().st_size / 2**20:.0f} MB")
    first, later, wizard = [], [], []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="pb-bench-home-") as tmp:
            home = Path(tmp)
            marks = start_once(built.executable, home)
            first.append(marks["window-shown"])
            if "wizard-shown" in marks:
                wizard.append(marks["wizard-shown"])
            later.append(start_once(built.executable, home)["window-shown"])
    for label, values in (("first run, window shown", first), ("first run, setup wizard shown", wizard),
                          ("later run, window shown", later)):
        if values:
            med = statistics.median(values)
            print(f"{label}: median {med:.2f} s over {len(values)} runs (min {min(values):.2f}, max {max(values):.2f}), "
                  f"target {WINDOW_TARGET_S:.0f} s -> ratio {med / WINDOW_TARGET_S:.2f}")
    with tempfile.TemporaryDirectory(prefix="pb-bench-home-") as tmp:
        t = time.perf_counter()
        out = subprocess.run([str(built.executable), "--self-check"], env=clean_env(Path(tmp)), cwd=tmp,
                             capture_output=True, text=True, timeout=300)
        print(f"self-check: exit {out.returncode} in {time.perf_counter() - t:.1f} s")
        print(out.stdout.rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
