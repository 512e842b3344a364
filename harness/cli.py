"""`phonebuddy devices`: phones over ADB.

    phonebuddy devices list                     # USB and Wi-Fi phones, their state, and what to do next
    phonebuddy devices connect HOST:PORT        # adb connect (Wi-Fi debugging, or `phonebuddy world serve`)
    phonebuddy devices forget HOST:PORT         # stop reconnecting a remembered Wi-Fi phone
    phonebuddy devices pair HOST:PORT CODE      # wireless debugging: pair with the six-digit code, once
    phonebuddy devices info [--serial S]        # model, screen, foreground app, lock state, apps
    phonebuddy devices watch                    # say every plug, unplug and state change until Ctrl-C

Uses the adb server on the standard address (127.0.0.1:5037, or ANDROID_ADB_SERVER_ADDRESS /
ANDROID_ADB_SERVER_PORT; --adb-host/--adb-port override them). When none answers it starts one there
(harness.adbserver.AdbServerOwner), says so on stderr, and later calls find that same server. Messages
are the spoken ones (harness.phonestates); `--lang zh` prints them in Chinese. Exit status: 0 ok,
1 device or server problem, 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import sys

from assistant_core import languages as langs

EXIT_OK, EXIT_DEVICE, EXIT_BAD_INPUT = 0, 1, 2


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="phonebuddy devices", description="Phones over ADB.")
    p.add_argument("--adb-host", default=None, help="adb server host (default: ANDROID_ADB_SERVER_ADDRESS or 127.0.0.1)")
    p.add_argument("--adb-port", type=int, default=None, help="adb server port (default: ANDROID_ADB_SERVER_PORT or 5037)")
    p.add_argument("--lang", choices=langs.choices(), default="en", help="language of messages")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list phones, their state and what to do")
    connect = sub.add_parser("connect", help="adb connect HOST:PORT")
    connect.add_argument("address")
    connect.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for the phone (default 10)")
    forget = sub.add_parser("forget", help="forget a remembered Wi-Fi phone (HOST:PORT)")
    forget.add_argument("address")
    pair = sub.add_parser("pair", help="pair with a phone's wireless debugging (HOST:PORT CODE)")
    pair.add_argument("address")
    pair.add_argument("code")
    sub.add_parser("mdns", help="phones advertising wireless debugging on this network")
    info = sub.add_parser("info", help="describe one phone")
    info.add_argument("--serial", help="which phone (default: the only one)")
    watch = sub.add_parser("watch", help="say every change until Ctrl-C")
    watch.add_argument("--seconds", type=float, default=0, help="stop after this long (0: until Ctrl-C)")
    return p


def _owner(args: argparse.Namespace):
    from harness.adbserver import AdbServerOwner, ServerAddress, server_address

    default = server_address()
    address = ServerAddress(args.adb_host or default.host, args.adb_port or default.port)

    def announce(text) -> None:
        print(f"{text.get(args.lang)} (adb server, {address})", file=sys.stderr, flush=True)

    return AdbServerOwner(address, announce=announce)


def main(argv: list[str] | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:
        return EXIT_OK if exc.code == 0 else EXIT_BAD_INPUT
    from assistant_core.types import DeviceError
    from harness.adb import list_devices
    from harness.adbserver import RememberedPhones
    from harness.devicewatch import connect_wifi
    from harness.opener import Target, open_phone
    from harness.phonestates import STATES, instruction_for, state_instruction

    owner = _owner(args)
    try:
        if args.command == "watch":
            return _watch(owner, args)
        if args.command == "pair":
            from harness.devicewatch import pair

            answer = pair(owner, args.address, args.code)
            print(json.dumps({"paired": args.address, "answer": answer}) if args.json else answer)
            return EXIT_OK
        if args.command == "mdns":
            from harness.devicewatch import mdns_services

            found = mdns_services(owner)
            print(json.dumps(found) if args.json else "\n".join("\t".join(f) for f in found))
            return EXIT_OK
        client = owner.ensure()
        if args.command == "list":
            devices = list_devices(client)
            listed = {d.serial for d in devices}
            silent = [a for a in RememberedPhones().load()["wifi"] if a not in listed]
            if args.json:
                rows = [d.__dict__ for d in devices]
                rows += [{"serial": a, "state": "remembered, not answering", "transport": "tcp", "model": "",
                          "product": ""} for a in silent]
                print(json.dumps(rows, ensure_ascii=False))
                return EXIT_OK
            for d in devices:
                print(f"{d.serial}\t{d.state}\t{d.transport}\t{d.model}")
            for address in silent:
                print(f"{address}\tremembered, not answering\ttcp\t")
            if silent and not [d for d in devices if d.state == "device"]:
                print(STATES["remembered_silent"].format(address=silent[0]).get(args.lang)
                      + f" (phonebuddy devices forget {silent[0]})")
            else:
                print(instruction_for(devices).get(args.lang))
            return EXIT_OK
        if args.command == "connect":
            serial, state = connect_wifi(client, args.address, timeout=args.timeout)
            if args.json:
                print(json.dumps({"serial": serial, "state": state}))
            else:
                print(f"connected to {serial} ({state})")
                if state != "device":
                    print(state_instruction(state, serial).get(args.lang))
            return EXIT_OK if state == "device" else EXIT_DEVICE
        if args.command == "forget":
            return _forget(client, args)
        device = open_phone(Target(False, serial=args.serial), client=client).device  # the one device opener (harness.opener)
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


def _forget(client, args: argparse.Namespace) -> int:
    """Drop a remembered Wi-Fi phone and take it off the server's list (whatever its state)."""
    from harness.adb import list_devices
    from harness.adbserver import RememberedPhones
    from harness.phonestates import STATES

    address = args.address.strip() if ":" in args.address else f"{args.address.strip()}:5555"
    known = RememberedPhones().forget(address)
    if any(d.serial == address for d in list_devices(client)):
        client.disconnect(address)
        known = True
    message = STATES["forgot" if known else "not_remembered"].format(address=address)
    print(json.dumps({"forgotten": address, "was_known": known}) if args.json else message.get(args.lang))
    return EXIT_OK


def _watch(owner, args: argparse.Namespace) -> int:
    import threading

    from harness.devicewatch import DeviceWatcher

    done = threading.Event()

    def say(event) -> None:
        line = {"event": str(event.kind), "serial": event.serial, "message": event.message.get(args.lang)}
        print(json.dumps(line, ensure_ascii=False) if args.json else f"[{event.kind}] {line['message']}", flush=True)

    watcher = DeviceWatcher(owner, say).start()
    try:
        done.wait(args.seconds or None)
    except KeyboardInterrupt:
        pass
    finally:
        watcher.stop()
    return EXIT_OK
