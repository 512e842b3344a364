"""PhoneWorld-lite speed: in-process steps per second (observe + act) with and without screenshots
rendered as images (no PNG encoding), and reset time. Prints figures; asserts nothing.

    .venv/bin/python bench/bench_world.py [--steps 2000] [--shots 300] [--resets 200]

The action stream is a seeded random "user": it taps a random clickable element of the current screen,
types into a focused field now and then, and presses Back or Home every so often, so the steps visit
many apps and screens (not one cached screen). The process is pinned to one core where the OS allows; rates are given per CPU-second of this process
(robust on a shared machine) and per wall-second.
Targets (issue 2): >= 100 steps/s with screenshots, >= 2000 without, reset < 10 ms, on one core.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time

from assistant_core.types import Action
from harness.phoneworld import SimDevice, World


def pin_one_core() -> str:
    if hasattr(os, "sched_setaffinity"):
        cpu = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
        return f"pinned to CPU {cpu}"
    return "not pinned (no sched_setaffinity)"


def random_user(rng: random.Random, obs) -> Action:
    r = rng.random()
    if r < 0.06:
        return Action.press("back")
    if r < 0.09:
        return Action.press("home")
    if r < 0.12:
        return Action.scroll(540, 1700, 540, 900)
    focused = obs.focused_element()
    if focused is not None and r < 0.25:
        return Action.type_text(rng.choice(["hi", "2026-03-05", "15:00", "500", "你好"]))
    targets = [e for e in obs.elements if e.clickable and e.area > 0]
    if not targets:
        return Action.press("home")
    e = rng.choice(targets)
    return Action.click(*e.center)


def run_steps(
    world: World, steps: int, *, screenshots: bool, xml: bool = True, seed: int = 0
) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) for `steps` observe+act steps."""
    dev = SimDevice(world, screenshots=screenshots, ui_xml=xml)
    rng = random.Random(seed)
    world.reset(seed)
    t0, c0 = time.perf_counter(), time.process_time()
    for i in range(steps):
        obs = dev.observe()
        if screenshots:
            assert obs.screenshot is not None
        dev.act(random_user(rng, obs))
        if i % 200 == 199:  # episodes of 200 steps, like an RL rollout
            world.reset(seed + i)
    return time.perf_counter() - t0, time.process_time() - c0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--shots", type=int, default=300)
    ap.add_argument("--resets", type=int, default=200)
    args = ap.parse_args(argv)
    print(f"PhoneWorld-lite bench: {pin_one_core()}, load average {os.getloadavg()[0]:.2f}")

    t = time.perf_counter()
    world = World(seed=0)
    print(f"World() construction: {(time.perf_counter() - t) * 1000:.1f} ms")
    run_steps(world, 200, screenshots=True)  # warm the text and image caches, as a long run would be

    for label, kwargs, n, target in (
        ("without screenshots (elements + ui_xml)", dict(screenshots=False), args.steps, 2000),
        ("without screenshots (elements only)    ", dict(screenshots=False, xml=False), args.steps, 2000),
        ("with screenshots (PIL images, no PNG)  ", dict(screenshots=True), args.shots, 100),
    ):
        wall, cpu = run_steps(world, n, **kwargs)
        print(
            f"steps/s {label}: {n / cpu:7.0f} per CPU-second ({cpu / n * 1e3:.3f} ms), {n / wall:7.0f} wall"
            f"  target {target}  ratio {n / cpu / target:.2f}"
        )

    times = []
    for i in range(args.resets):
        world.tap(540, 1200)
        world.launch("com.phoneworld.shop")
        t = time.process_time()
        world.reset(i)
        times.append((time.process_time() - t) * 1000)
    print(
        f"reset (CPU time): mean {statistics.mean(times):.2f} ms, median {statistics.median(times):.2f} ms, p95 {sorted(times)[int(0.95 * len(times))]:.2f} ms  target < 10 ms"
    )

    world.reset(0)
    world.launch("com.android.settings")
    t = time.process_time()
    n = 50
    for _ in range(n):
        world.refresh()
        world.screenshot()
    print(
        f"one full render of a fresh screen (layout + draw, CPU): {(time.process_time() - t) / n * 1e3:.2f} ms"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
