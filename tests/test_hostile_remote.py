"""The remote backend against hostile servers (issue 20): a redirect to another host is not followed (the
screenshot stayed there), keep-alives or empty deltas cannot hold a step past its deadline, a huge reply is
cut at the size cap, and a certificate that does not verify stops the request before anything is sent."""

from __future__ import annotations

import json
import ssl
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from policy_fixtures import TEST_MAX_PIXELS, phone_observation

from assistant_core.policy.errors import PolicyUnavailable
from assistant_core.policy.remote import RemotePolicy

GOOD = {"choices": [{"index": 0, "finish_reason": "stop", "message": {
    "role": "assistant", "content": '<tool_call>{"name": "click", "arguments": {"points": [[500, 500]]}}</tool_call>'}}]}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    behaviour = "good"
    target = ""
    calls: list

    def log_message(self, *args):
        pass

    def _send_json(self, payload, status=200):
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        type(self).calls.append(("GET", self.path, b""))
        if type(self).behaviour == "redirect":
            return self._redirect()
        self._send_json({"data": [{"id": "m"}]})

    def _redirect(self):
        self.send_response(307)
        self.send_header("Location", type(self).target + self.path)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        type(self).calls.append(("POST", self.path, body))
        behaviour = type(self).behaviour
        if behaviour == "redirect":
            return self._redirect()
        if behaviour == "same_origin" and self.path.startswith("/v1/"):
            self.send_response(308)
            self.send_header("Location", "/v2/chat/completions")
            self.send_header("Content-Length", "0")
            return self.end_headers()
        if behaviour in ("good", "same_origin"):
            return self._send_json(GOOD)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        started = time.monotonic()
        try:
            if behaviour == "huge":
                self.wfile.write(b'{"choices": [{"message": {"content": "' + b"a" * 3_000_000 + b'"}}]}')
                return
            if behaviour == "huge_stream":
                event = b'data: {"choices": [{"delta": {"content": "' + b"a" * 1000 + b'"}}]}\n\n'
                for _ in range(3000):
                    self.wfile.write(event)
                return
            while time.monotonic() - started < 30:
                if behaviour == "keepalive":
                    self.wfile.write(b": keep-alive\n\n")
                elif behaviour == "empty_deltas":
                    self.wfile.write(b'data: {"choices": [{"delta": {}}]}\n\n')
                elif behaviour == "spaces":
                    self.wfile.write(b" ")
                elif behaviour == "silent":
                    pass
                self.wfile.flush()
                time.sleep(0.2)
        except OSError:
            pass


def serve(behaviour, *, tls_context=None, target=""):
    handler = type("H", (Handler,), {"behaviour": behaviour, "target": target, "calls": []})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    if tls_context is not None:
        httpd.socket = tls_context.wrap_socket(httpd.socket, server_side=True)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    scheme = "https" if tls_context else "http"
    return httpd, handler, f"{scheme}://127.0.0.1:{httpd.server_address[1]}"


@pytest.fixture
def servers():
    started = []

    def start(*args, **kwargs):
        httpd, handler, url = serve(*args, **kwargs)
        started.append(httpd)
        return handler, url

    yield start
    for httpd in started:
        httpd.shutdown()
        httpd.server_close()


def policy(url, **kwargs):
    kwargs.setdefault("model", "m")
    return RemotePolicy(url + "/v1", profile="phonebuddy-4b", max_pixels=TEST_MAX_PIXELS, retries=1,
                        backoff_s=0.01, **kwargs)


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("discover", [True, False])
def test_a_redirect_to_another_host_is_refused_and_nothing_is_sent_there(servers, stream, discover):
    elsewhere, elsewhere_url = servers("good")
    _, url = servers("redirect", target=elsewhere_url)
    p = policy(url, stream=stream, **({"model": None} if discover else {}))
    with pytest.raises(PolicyUnavailable) as caught:
        p.propose("Turn on Wi-Fi", phone_observation())
    assert elsewhere.calls == []  # the screenshot, goal and history never left for the other host
    assert elsewhere_url in caught.value.message.en and "another address" in caught.value.message.en
    assert elsewhere_url in caught.value.message.zh


def test_a_redirect_within_the_same_server_is_followed(servers):
    handler, url = servers("same_origin")
    proposal = policy(url, stream=False).propose("Turn on Wi-Fi", phone_observation())
    assert proposal.action.x == 540
    assert [c[1] for c in handler.calls] == ["/v1/chat/completions", "/v2/chat/completions"]


@pytest.mark.parametrize("behaviour,stream", [("keepalive", True), ("empty_deltas", True), ("silent", True),
                                              ("spaces", False), ("silent", False)])
def test_one_deadline_bounds_the_whole_step(servers, behaviour, stream):
    _, url = servers(behaviour)
    p = policy(url, stream=stream, deadline_s=1.5, read_timeout=300)
    started = time.monotonic()
    with pytest.raises(PolicyUnavailable) as caught:
        p.propose("Turn on Wi-Fi", phone_observation())
    assert "did not answer within 2 seconds" in caught.value.message.en, caught.value.message.en
    assert caught.value.message.zh
    assert time.monotonic() - started < 25  # the server streams for 30 s: it was the deadline that ended it


@pytest.mark.parametrize("behaviour,stream", [("huge", False), ("huge_stream", True)])
def test_a_huge_reply_is_cut_at_the_size_cap(servers, behaviour, stream):
    _, url = servers(behaviour)
    p = policy(url, stream=stream, max_reply_bytes=1024 * 1024)
    with pytest.raises(PolicyUnavailable) as caught:
        p.propose("Turn on Wi-Fi", phone_observation())
    assert "larger than 1 MB" in caught.value.message.en


def test_an_unverified_certificate_stops_the_request_before_anything_is_sent(servers, tmp_path):
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out",
                    str(cert), "-days", "1", "-subj", "/CN=127.0.0.1"], check=True, capture_output=True)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    handler, url = servers("good", tls_context=context)
    with pytest.raises(PolicyUnavailable) as caught:
        policy(url).propose("Turn on Wi-Fi", phone_observation())
    assert handler.calls == []
    assert "could not be verified" in caught.value.message.en
