"""Hostile servers and hostile files (issue 20): the longest policy step a hostile model server can cause,
and the peak memory of hostile imports.

    .venv/bin/python bench/bench_hostile.py [--deadline 10]

Part 1 starts local servers that misbehave (keep-alive comments or empty stream deltas every 0.2 s for a
minute, a server that sends headers then nothing, a plain reply trickled one space at a time, a 30 MB
reply, a 307 to another host) and times `RemotePolicy.propose` against each with the given per-step
deadline; it prints each step's wall time and how it ended, then the longest (bounded by the deadline,
which the app sets to 180 s).

Part 2 runs each hostile import in its own process and prints the process's peak resident memory next to
a baseline process that only imports the same modules (VmHWM, which exec resets): a history export claiming a 1,000,000 x 1,000,000
screen, one whose thumbnail is a 20,000 x 20,000 PNG (a decompression bomb), a 1 MB model reply, and a
host flooding the simulated adbd with 64 MB of WRTE without waiting for OKAY.
Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

GOOD = {"choices": [{"index": 0, "finish_reason": "stop", "message": {
    "role": "assistant", "content": '<tool_call>{"name": "click", "arguments": {"points": [[500, 500]]}}</tool_call>'}}]}


class Hostile(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    behaviour = "good"
    target = ""

    def log_message(self, *args):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        behaviour = type(self).behaviour
        if behaviour == "redirect":
            self.send_response(307)
            self.send_header("Location", type(self).target)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        started = time.monotonic()
        try:
            if behaviour == "huge":
                body = b'{"choices": [{"message": {"content": "' + b"a" * 30_000_000 + b'"}}]}'
                for i in range(0, len(body), 1 << 20):
                    self.wfile.write(body[i:i + (1 << 20)])
                return
            while time.monotonic() - started < 60:
                self.wfile.write({"keepalive": b": keep-alive\n\n", "empty_deltas": b'data: {"choices": [{"delta": {}}]}\n\n',
                                  "spaces": b" ", "silent": b""}[behaviour])
                self.wfile.flush()
                time.sleep(0.2)
        except OSError:
            pass


def serve(behaviour, target=""):
    handler = type("H", (Hostile,), {"behaviour": behaviour, "target": target})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}"


def part_servers(deadline: float) -> None:
    from PIL import Image

    from assistant_core.errors import PolicyOutputError
    from assistant_core.policy.errors import PolicyUnavailable
    from assistant_core.policy.remote import RemotePolicy
    from assistant_core.types import Observation

    obs = Observation(1080, 2400, "com.android.settings", screenshot=Image.new("RGB", (1080, 2400), "white"))
    elsewhere, elsewhere_url = serve("good")
    cases = [("keepalive", True), ("empty_deltas", True), ("silent", True), ("spaces", False), ("silent", False),
             ("huge", False), ("redirect", False)]
    print(f"hostile model servers, per-step deadline {deadline:.0f} s (the app uses 180 s):")
    longest = 0.0
    for behaviour, stream in cases:
        httpd, url = serve(behaviour, target=elsewhere_url + "/v1/chat/completions")
        policy = RemotePolicy(url + "/v1", model="m", profile="phonebuddy-4b", stream=stream, deadline_s=deadline,
                              retries=1, backoff_s=0.1, max_pixels=256 * 256)
        started = time.monotonic()
        try:
            policy.propose("Turn on Wi-Fi", obs)
            ended = "a proposal (!)"
        except PolicyUnavailable as error:
            ended = error.message.en[:110]
        except PolicyOutputError as error:
            ended = f"bad reply: {str(error)[:90]}"
        took = time.monotonic() - started
        longest = max(longest, took)
        print(f"  {behaviour:<13} stream={'yes' if stream else 'no ':<3} {took:6.2f} s  {ended}")
        httpd.shutdown()
        httpd.server_close()
    elsewhere.shutdown()
    print(f"longest step under a hostile server: {longest:.2f} s (deadline {deadline:.0f} s)")


CHILD_PRELUDE = """
import base64, io, json, sys, tempfile
from pathlib import Path
sys.path.insert(0, {root!r})
from PIL import Image
from training.data import history_examples
from training.errors import TrainingError
from assistant_core.policy.parsing import parse_reply
from assistant_core.errors import PolicyOutputError
from harness.phoneworld import adbd
tmp = Path(tempfile.mkdtemp())
row = {{"run_id": 1, "goal": "g", "lang": "en", "outcome": "finished", "executed": True, "verdict": "allow",
        "rule": "allow.default", "step": 0, "action": {{"kind": "wait"}}, "thought": "wait", "width": 1080,
        "height": 2400}}
def export(**extra):
    path = tmp / "e.jsonl"
    path.write_text(json.dumps({{**row, **extra}}) + "\\n")
    return path
result = "ok"
"""

CASES = {
    "baseline (imports only)": "",
    "history export, 1e6 x 1e6 screen": textwrap.dedent("""
        try:
            list(history_examples(export(width=10**6, height=10**6), max_pixels=256*256))
        except TrainingError as e:
            result = "refused: " + str(e)[-60:]
    """),
    "history export, 20000x20000 PNG bomb": textwrap.dedent("""
        bomb = Path(sys.argv[1]).read_text()  # made by the parent: the making is not what is measured
        got = list(history_examples(export(screenshot=bomb), max_pixels=256*256))
        result = f"{len(got)} example(s), thumbnail set aside"
    """),
    "model reply of 1 MB": textwrap.dedent("""
        try:
            parse_reply("[[1e308," * 131072, 1080, 2400)
        except PolicyOutputError as e:
            result = "refused: " + str(e)[:60]
    """),
    "adbd flooded with 64 MB of WRTE": textwrap.dedent("""
        import socket, threading
        class R:
            def route(self, s):
                return (lambda stream: stream.wait_closed(30)) if s == "sink:" else None
        with adbd.Adbd(R()) as d:
            s = socket.create_connection(("127.0.0.1", d.port), timeout=10)
            s.sendall(adbd.Packet(adbd.Cmd.CNXN, adbd.A_VERSION, adbd.MAX_PAYLOAD, b"host::\\0").encode())
            adbd.read_packet(s)
            s.sendall(adbd.Packet(adbd.Cmd.OPEN, 7, 0, b"sink:\\0").encode())
            local = adbd.read_packet(s).arg0
            chunk = b"x" * adbd.MAX_PAYLOAD
            def flood():
                try:
                    for _ in range(64):
                        s.sendall(adbd.Packet(adbd.Cmd.WRTE, 7, local, chunk).encode())
                except OSError:
                    pass
            t = threading.Thread(target=flood, daemon=True); t.start()
            while adbd.read_packet(s).command != adbd.Cmd.CLSE:
                pass
            result = "stream closed by the phone"
    """),
}


def part_imports() -> None:
    import base64
    import io
    import tempfile

    from PIL import Image

    print("peak memory of hostile imports (each in its own process):")
    buffer = io.BytesIO()
    Image.new("1", (20_000, 20_000)).save(buffer, format="PNG")
    bomb = Path(tempfile.mkdtemp()) / "bomb.b64"
    bomb.write_text(base64.b64encode(buffer.getvalue()).decode("ascii"))
    print(f"  (the bomb: {len(buffer.getvalue()) / 1024:.0f} KB of PNG for 400 M pixels)")
    base = None
    for name, body in CASES.items():
        code = CHILD_PRELUDE.format(root=str(ROOT)) + body + (
            "\nhwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1]"
            "\nprint(json.dumps({'rss_mb': int(hwm) / 1024, 'result': result}))\n")
        started = time.monotonic()
        proc = subprocess.run([sys.executable, "-c", code, str(bomb)], capture_output=True, text=True, timeout=600)
        took = time.monotonic() - started
        if proc.returncode != 0:
            print(f"  {name:<40} FAILED (exit {proc.returncode}): {proc.stderr.strip()[-200:]}")
            continue
        out = json.loads(proc.stdout.strip().splitlines()[-1])
        if base is None:
            base = out["rss_mb"]
        print(f"  {name:<40} peak {out['rss_mb']:7.1f} MB (+{out['rss_mb'] - base:6.1f}), {took:5.1f} s: "
              f"{out['result']}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deadline", type=float, default=10.0, help="the per-step deadline to test (seconds)")
    parser.add_argument("--skip-servers", action="store_true")
    parser.add_argument("--skip-imports", action="store_true")
    args = parser.parse_args()
    if not args.skip_servers:
        part_servers(args.deadline)
    if not args.skip_imports:
        part_imports()
    return 0


if __name__ == "__main__":
    sys.exit(main())
