"""Run by Debian's /usr/bin/python3 (pyatspi is built for it, not for the virtual environment): wait for
the PhoneBuddy application on the AT-SPI desktop, walk its accessible tree, print it as JSON lines of
[role, name, description], and exit. argv[1]: seconds to wait for the window to appear.

With `--press NAME` instead: press the push button called NAME through its AT-SPI action (as a screen
reader user would), listen for announcement events for a few seconds, and print them as JSON:
{"found": ..., "pressed": ..., "announcements": [text, ...]} — what a screen reader would be told.

With `--listen OUT_FILE SECONDS [FOCUS_NAME]`: a screen reader's ears for a test that drives the app with
real keys: every announcement is written to OUT_FILE as it arrives (see listen_to_file)."""

import json
import sys
import time

import pyatspi


def walk(node, depth=0, out=None):
    out = [] if out is None else out
    if node is None or depth > 40:
        return out
    try:
        out.append([node.getRoleName(), node.name or "", node.description or ""])
        for i in range(node.childCount):
            walk(node.getChildAtIndex(i), depth + 1, out)
    except Exception as exc:  # a node that vanished while walking
        out.append(["error", str(exc), ""])
    return out


def find_app(timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        desktop = pyatspi.Registry.getDesktop(0)
        for i in range(desktop.childCount):
            app = desktop.getChildAtIndex(i)
            if app is None:
                continue
            for j in range(app.childCount):
                frame = app.getChildAtIndex(j)
                if frame is not None and "PhoneBuddy" in (frame.name or ""):
                    return app
        time.sleep(0.3)
    return None


def find_button(node, name, depth=0):
    if node is None or depth > 40:
        return None
    try:
        if (node.name or "") == name and node.getRoleName() == "push button":
            return node
        for i in range(node.childCount):
            found = find_button(node.getChildAtIndex(i), name, depth + 1)
            if found is not None:
                return found
    except Exception:  # a node that vanished while walking
        return None
    return None


def press_and_listen(app, name, seconds=30.0):
    """Press, then listen until the first announcement arrives (plus a moment for more) or `seconds` pass."""
    from gi.repository import GLib

    heard = []
    pressed = []

    def on_announcement(event):
        if not pressed:  # something the app said before the press (its start-up news) is not the answer
            return
        heard.append(str(event.any_data))
        if len(heard) == 1:
            GLib.timeout_add(500, lambda: pyatspi.Registry.stop() or False)

    pyatspi.Registry.registerEventListener(on_announcement, "object:announcement")
    button = find_button(app, name)
    if button is None:
        return {"found": True, "pressed": False, "announcements": heard}

    def press():
        pressed.append(True)
        button.queryAction().doAction(0)
        return False

    GLib.timeout_add(1000, press)
    GLib.timeout_add(int(seconds * 1000), lambda: pyatspi.Registry.stop() or False)
    pyatspi.Registry.start()
    return {"found": True, "pressed": True, "announcements": heard}


def listen_to_file(app, path, seconds, focus_name=None):
    """Write every announcement as a JSON line {"t": monotonic seconds, "text": ...} to `path`, flushed at
    once, until the time is up. First line: {"ready": true, "focused": ...} once registered; with
    `focus_name`, that push button is first given the focus through its AT-SPI component (as a screen
    reader moves the focus)."""
    from gi.repository import GLib

    with open(path, "a", encoding="utf-8") as out:

        def write(record):
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            out.flush()

        pyatspi.Registry.registerEventListener(lambda e: write({"t": time.monotonic(), "text": str(e.any_data)}),
                                               "object:announcement")
        focused = None
        if focus_name:
            button = find_button(app, focus_name)
            focused = bool(button is not None and button.queryComponent().grabFocus())
        write({"ready": True, "t": time.monotonic(), "focused": focused})
        GLib.timeout_add(int(seconds * 1000), lambda: pyatspi.Registry.stop() or False)
        pyatspi.Registry.start()


app = find_app(float(sys.argv[1]) if len(sys.argv) > 1 else 30)
if app is None:
    print(json.dumps({"found": False}))
    if len(sys.argv) > 3 and sys.argv[2] == "--listen":
        with open(sys.argv[3], "a", encoding="utf-8") as missing:
            missing.write(json.dumps({"found": False}) + "\n")
    sys.exit(1)
if len(sys.argv) > 4 and sys.argv[2] == "--listen":
    listen_to_file(app, sys.argv[3], float(sys.argv[4]), sys.argv[5] if len(sys.argv) > 5 else None)
    sys.exit(0)
time.sleep(1.0)
if len(sys.argv) > 3 and sys.argv[2] == "--press":
    print(json.dumps(press_and_listen(app, sys.argv[3]), ensure_ascii=False))
else:
    print(json.dumps({"found": True, "app": app.name, "nodes": walk(app)}))
