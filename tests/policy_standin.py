"""An OpenAI-compatible model server stand-in that replays fixed replies (streamed or not), for tests that
run the app's real RemotePolicy end to end without a model.

    httpd, url, calls = policy_server(replies)    # url ends in /v1; calls: one timestamp per request
    ...
    httpd.shutdown()
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def policy_server(replies: list[str]) -> tuple[ThreadingHTTPServer, str, list]:
    calls: list = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:
            pass

        def do_GET(self) -> None:
            self._answer({"data": [{"id": "stand-in"}]})

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            calls.append(time.monotonic())
            content = replies[min(len(calls), len(replies)) - 1]
            usage = {"prompt_tokens": 10, "completion_tokens": 10}
            if not body.get("stream"):
                self._answer({"choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                           "finish_reason": "stop"}], "usage": usage})
                return
            events = [{"choices": [{"index": 0, "delta": {"role": "assistant", "content": content}}]},
                      {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                      {"choices": [], "usage": usage}]
            sse = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
            self._answer(sse, "text/event-stream")

        def _answer(self, body: dict | str, kind: str = "application/json") -> None:
            data = (body if isinstance(body, str) else json.dumps(body)).encode()
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}/v1", calls
