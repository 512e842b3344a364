"""Run by Debian's /usr/bin/python3 (pyatspi is built for it, not for the virtual environment): wait for
the PhoneBuddy application on the AT-SPI desktop, walk its accessible tree, print it as JSON lines of
[role, name, description], and exit. argv[1]: seconds to wait for the window to appear."""

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


app = find_app(float(sys.argv[1]) if len(sys.argv) > 1 else 30)
if app is None:
    print(json.dumps({"found": False}))
    sys.exit(1)
time.sleep(1.0)
print(json.dumps({"found": True, "app": app.name, "nodes": walk(app)}))
