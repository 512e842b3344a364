"""Capture and Real+Mock rollouts: how long capturing an app takes and how many screens it finds, and
rollouts per minute on the mock phone (in-process) versus phones over adb, with 1 and 2 phones.

    python bench/bench_capture.py [--episodes 6] [--apps com.android.settings,com.phoneworld.shop]

The phones are PhoneWorld-lite served as separate processes (`phonebuddy world serve`), reached through a
private real adb server, exactly as a test phone would be. A rollout is one SettingsTurnOnWifi / "Turn on
Wi-Fi." episode played with the oracle's replies through the RL environments (the loop, the gate, the
reward: the verifier for mock, the device-level outcome check for phones). With 2 phones the two
environments run in two threads (as trl runs one rollout per phone), each on its own phone.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.adb import AdbDevice, connect  # noqa: E402
from harness.adbserver import AdbServer, free_port  # noqa: E402
from harness.phoneworld.capture import capture_app  # noqa: E402
from tests.training_fixtures import play as play_replies  # noqa: E402
from training.data import reply_text  # noqa: E402
from training.rl import EnvSettings, PhoneEnv, PhoneSettings, PhoneWorldEnv  # noqa: E402

TASK = "SettingsTurnOnWifi"


def serve_phone(server: AdbServer) -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "phonebuddy.cli", "world", "serve", "--port", str(port)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    proc.stdout.readline()  # "PhoneWorld-lite ... listening on ..."
    address = f"127.0.0.1:{port}"
    connect(server.client(), address)
    server.wait_state(address)
    return proc, address


def oracle_replies() -> list[str]:
    from harness.phoneworld.oracle import solve

    return [reply_text(s.thought, s.action, 1080, 2400) for s in solve(TASK, 100).steps]


def play(env, replies: list[str]) -> float:
    play_replies(env, replies)  # as the GRPO tests replay a reply list (tests/training_fixtures.py)
    return env.get_reward()


def rollouts(make_env, reset_kwargs: dict, episodes: int, replies: list[str]) -> tuple[float, float]:
    """(rollouts per minute, mean reward) for `episodes` episodes on one environment."""
    env = make_env()
    rewards = []
    t0 = time.perf_counter()
    for _ in range(episodes):
        env.reset(**reset_kwargs)
        rewards.append(play(env, replies))
    seconds = time.perf_counter() - t0
    return episodes * 60 / seconds, sum(rewards) / len(rewards)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=6, help="episodes per environment")
    ap.add_argument("--apps", default="com.android.settings,com.phoneworld.shop")
    args = ap.parse_args()
    server = AdbServer().start()
    procs = []
    try:
        print("Capture over a real adb server (PhoneWorld-lite served as a separate process)")
        for package in args.apps.split(","):
            proc, address = serve_phone(server)
            procs.append(proc)
            device = AdbDevice(server.client(), address, reconnect_grace_s=5.0)
            with tempfile.TemporaryDirectory() as out:
                t0 = time.perf_counter()
                result = capture_app(device, package, Path(out), max_steps=1000, max_seconds=900)
                seconds = time.perf_counter() - t0
            s = result.summary()
            print(f"  {package:24s} {s['screens']:3d} screens {s['edges']:4d} edges {s['skipped_sensitive']:3d} left alone "
                  f"{s['steps']:4d} device steps  {seconds:6.1f} s  ({seconds / max(1, s['screens']):.2f} s/screen)")
        replies = oracle_replies()
        settings = EnvSettings(allowed_apps=("com.android.settings", "com.android.launcher3"), screenshot_scale=0.1)
        print(f"\nRollouts ({TASK} / 'Turn on Wi-Fi.', oracle replies, {args.episodes} episodes per environment)")
        mock_rate, mock_reward = rollouts(lambda: PhoneWorldEnv(settings), {"task": TASK, "seed": 100},
                                          args.episodes, replies)
        print(f"  mock, in-process           {mock_rate:7.1f} rollouts/min  (mean reward {mock_reward:.2f})")
        phone_addresses: list[str] = []
        for _ in range(2):
            proc, address = serve_phone(server)
            procs.append(proc)
            phone_addresses.append(address)
        one = PhoneSettings((phone_addresses[0],), client=server.client())
        rate1, reward1 = rollouts(lambda: PhoneEnv(settings, one), {"task": "phone:wifi_on"}, args.episodes, replies)
        print(f"  1 phone over adb           {rate1:7.1f} rollouts/min  (mean reward {reward1:.2f})")
        two = PhoneSettings(tuple(phone_addresses), client=server.client())
        envs = [PhoneEnv(settings, two), PhoneEnv(settings, two)]  # instance i drives phone i
        t0 = time.perf_counter()
        with ThreadPoolExecutor(max_workers=2) as pool:
            results = list(pool.map(lambda env: rollouts(lambda: env, {"task": "phone:wifi_on"}, args.episodes, replies),
                                    envs))
        rate2 = 2 * args.episodes * 60 / (time.perf_counter() - t0)
        reward2 = sum(r[1] for r in results) / 2
        print(f"  2 phones over adb, parallel {rate2:6.1f} rollouts/min  (mean reward {reward2:.2f})")
        print(f"\n  mock / 1 phone: {mock_rate / rate1:.1f}x   2 phones / 1 phone: {rate2 / rate1:.2f}x")
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(timeout=20)
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
