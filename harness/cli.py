"""`phonebuddy devices`: phones over ADB.

    phonebuddy devices list                 # USB and Wi-Fi phones the adb server knows, with their state
    phonebuddy devices connect HOST:PORT    # adb connect (Wi-Fi debugging, or `phonebuddy world serve`)
    phonebuddy devices info [--serial S]    # model, screen, foreground app, lock state, apps

Talks to the adb server at --adb-host/--adb-port (default: ANDROID_ADB_SERVER_PORT or 5037) and never
starts one itself: when none answers it says so and how to start one. `--lang zh` prints messages in
Chinese. Exit status: 0 ok, 1 device problem, 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

EXIT_OK, EXIT_DEVICE, EXIT_BAD_INPUT = 0, 1, 2


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="phonebuddy devices", description="Phones over ADB.")
    p.add_argument("--adb-host", default=os.environ.get("ANDROID_ADB_SERVER_HOST", "127.0.0.1"))
    p.add_argument("--adb-port", type=int, default=int(os.environ.get("ANDROID_ADB_SERVER_PORT", "5037") or 5037))
    p.add_argument("--lang", choices=("en", "zh"), default="en")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list phones and their state")
    connect = sub.add_parser("connect", help="adb connect HOST:PORT")
    connect.add_argument("address")
    info = sub.add_parser("info", help="describe one phone")
    info.add_argument("--serial", help="which phone (default: the only one)")
    return p


def main(argv: list[str] | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:
        return EXIT_OK if exc.code == 0 else EXIT_BAD_INPUT
    from assistant_core.types import DeviceError
    from harness.adb import connect, list_devices, open_device
    from harness.adbserver import GuardedAdbClient

    client = GuardedAdbClient(args.adb_host, args.adb_port, socket_timeout=10)
    try:
        if args.command == "list":
            devices = list_devices(client)
            if args.json:
                print(json.dumps([d.__dict__ for d in devices], ensure_ascii=False))
            elif not devices:
                print("No phones." if args.lang == "en" else "没有手机。")
            for d in [] if args.json else devices:
                print(f"{d.serial}\t{d.state}\t{d.transport}\t{d.model}")
            return EXIT_OK
        if args.command == "connect":
            serial = connect(client, args.address)
            state = next((d.state for d in list_devices(client) if d.serial == serial), "gone")
            print(json.dumps({"serial": serial, "state": state}) if args.json else f"connected to {serial} ({state})")
            return EXIT_OK
        device = open_device(client, args.serial)
        obs = device.observe()
        apps = device.installed_apps()
        info = {
            "serial": device.serial,
            "model": device.shell("getprop ro.product.model").strip(),
            "android": device.shell("getprop ro.build.version.release").strip(),
            "screen": f"{obs.width}x{obs.height}",
            "foreground": obs.foreground,
            "locked": obs.is_locked,
            "secure_screen": obs.is_secure,
            "apps": apps,
        }
        if args.json:
            print(json.dumps(info, ensure_ascii=False))
        else:
            for key, value in info.items():
                if key != "apps":
                    print(f"{key}: {value}")
            print("apps: " + ", ".join(f"{label} ({pkg})" for pkg, label in sorted(apps.items(), key=lambda kv: kv[1])))
        return EXIT_OK
    except DeviceError as exc:
        print(exc.message.get(args.lang) + (f" [{exc.detail}]" if exc.detail else ""), file=sys.stderr)
        return EXIT_DEVICE
