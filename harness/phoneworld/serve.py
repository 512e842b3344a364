"""`phonebuddy world serve`: PhoneWorld-lite as a phone on the network, for the real adb server.

    phonebuddy world serve --port 5601 [--task SettingsTurnOnWifi --seed 3] [--lang zh]
    adb connect 127.0.0.1:5601
    adb -s 127.0.0.1:5601 shell input tap 540 1200

Listens on 127.0.0.1 only (a phone with wireless debugging, minus the pairing). Ctrl-C stops it.
`--no-adbkeyboard` serves a phone without the ADBKeyboard IME (to test the other typing paths).
`--auth refuse` plays a phone whose owner never allows USB debugging (the adb server says unauthorized).
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading

log = logging.getLogger(__name__)

EXIT_OK, EXIT_BAD_INPUT, EXIT_FAILED = 0, 2, 1


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="phonebuddy world serve", description="Serve the simulated phone over ADB.")
    p.add_argument("--port", type=int, required=True, help="TCP port on 127.0.0.1 (0 picks a free one)")
    p.add_argument("--task", help="start in this task's start state (see `phonebuddy world list`)")
    p.add_argument("--seed", type=int, default=0, help="world / task seed (default 0)")
    p.add_argument("--lang", choices=("en", "zh"), default="en", help="phone language (default en)")
    p.add_argument("--no-adbkeyboard", action="store_true", help="do not install the ADBKeyboard IME")
    p.add_argument("--auth", choices=("accept", "refuse"), default="accept",
                   help="refuse: answer every connection with AUTH challenges and never accept (adb says unauthorized)")
    p.add_argument("--verbose", "-v", action="store_true")
    return p


def main(argv: list[str] | None = None, *, ready: threading.Event | None = None, stop: threading.Event | None = None,
         prepare=None) -> int:
    """Serve until Ctrl-C (or until `stop` is set, for tests); `ready` is set once listening. `prepare(world)`
    runs on the world before it is served (`phonebuddy world serve --app DIR` installs captured apps)."""
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:
        return EXIT_OK if exc.code == 0 else EXIT_BAD_INPUT
    if not 0 <= args.port <= 65535:
        print(f"phonebuddy world serve: --port must be 0-65535, not {args.port}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.verbose:
        logging.getLogger("harness").setLevel(logging.INFO)
    from harness.phoneworld.phone import SimPhone

    if args.task:
        from harness.phoneworld.tasks import UnknownTaskError, make_world

        try:
            world, _params = make_world(args.task, args.seed, args.lang)
        except UnknownTaskError as exc:
            print(f"phonebuddy world serve: {exc}", file=sys.stderr)
            return EXIT_BAD_INPUT
    else:
        from harness.phoneworld.world import World

        world = World(seed=args.seed, language=args.lang)
    if prepare is not None:
        prepare(world)
    phone = SimPhone(world, port=args.port, adb_keyboard=not args.no_adbkeyboard)
    if args.auth == "refuse":
        from harness.phoneworld.adbd import AuthMode

        phone.adbd.faults.auth = AuthMode.REFUSE  # the user never taps "Allow"
    try:
        phone.start()
    except OSError as exc:
        print(f"phonebuddy world serve: cannot listen on 127.0.0.1:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_FAILED
    stop = stop or threading.Event()
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
    what = f"task {args.task} (seed {args.seed})" if args.task else f"seed {args.seed}"
    print(f"PhoneWorld-lite ({what}, {args.lang}) listening on {phone.address}", flush=True)
    print(f"connect with: adb connect {phone.address}", flush=True)
    if ready is not None:
        ready.set()
    try:
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        phone.stop()
    return EXIT_OK
