"""`phonebuddy policy serve` against a web page the user happens to open (issue 20): a cross-site
`text/plain` POST, a request without the per-launch token, a foreign Origin or a rebinding Host name are all
refused before the model runs; the remote backend with the token still works."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
import requests
from policy_fixtures import TEST_MAX_PIXELS, phone_observation

from assistant_core.policy.remote import RemotePolicy
from assistant_core.policy.serve import ChatServer

REPLY = '<think>\nOpen it.\n</think>\n<tool_call>{"name": "click", "arguments": {"points": [[500, 500]]}}</tool_call>'


class FakeModel:
    profile = SimpleNamespace(repo_id="fake/model", max_new_tokens=64)

    def __init__(self):
        self.calls = 0

    def generate(self, messages, on_text=None, max_new_tokens=None):
        self.calls += 1
        if on_text is not None:
            on_text(REPLY)
        return SimpleNamespace(text=REPLY, finish_reason="stop", prompt_tokens=10, decode_tokens=5)


@pytest.fixture
def served():
    model = FakeModel()
    server = ChatServer(model).start()
    yield server, model
    server.stop()


BODY = {"model": "fake/model", "messages": [{"role": "user", "content": "hi"}]}


def post(server, *, headers, data=None):
    url = server.url + "/chat/completions"
    return requests.post(url, data=json.dumps(BODY) if data is None else data, headers=headers, timeout=10)


def test_a_cross_site_text_plain_post_does_not_run_the_model(served):
    server, model = served
    # What a web page's form or fetch(mode: "no-cors") sends: no token, text/plain, a foreign Origin.
    response = post(server, headers={"Content-Type": "text/plain", "Origin": "https://evil.example"})
    assert response.status_code == 403 and model.calls == 0


@pytest.mark.parametrize("headers,status", [
    ({"Content-Type": "application/json"}, 401),  # no token
    ({"Content-Type": "application/json", "Authorization": "Bearer guessed"}, 401),
    ({"Content-Type": "text/plain", "Authorization": "TOKEN"}, 415),  # the simple-request trick, even with it
    ({"Content-Type": "application/json", "Authorization": "TOKEN", "Origin": "http://evil.example"}, 403),
    ({"Content-Type": "application/json", "Authorization": "TOKEN", "Host": "evil.example:PORT"}, 421),
    ({"Content-Type": "application/json", "Authorization": "TOKEN", "Content-Length": str(10**12)}, 413),
])
def test_requests_without_the_token_or_from_elsewhere_are_refused(served, headers, status):
    server, model = served
    port = server.url.split(":")[2].split("/")[0]
    headers = {k: v.replace("TOKEN", f"Bearer {server.token}").replace("PORT", port) for k, v in headers.items()}
    if "Content-Length" in headers:
        import socket

        with socket.create_connection(("127.0.0.1", int(port)), timeout=10) as sock:
            lines = ["POST /v1/chat/completions HTTP/1.1", f"Host: 127.0.0.1:{port}"]
            lines += [f"{k}: {v}" for k, v in headers.items()]
            sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
            assert f" {status} ".encode() in sock.recv(4096).split(b"\r\n")[0] + b" "
    else:
        assert post(server, headers=headers).status_code == status
    assert model.calls == 0


def test_models_list_needs_the_token_too(served):
    server, _ = served
    assert requests.get(server.url + "/models", timeout=10).status_code == 401
    ok = requests.get(server.url + "/models", headers={"Authorization": f"Bearer {server.token}"}, timeout=10)
    assert ok.status_code == 200 and ok.json()["data"][0]["id"] == "fake/model"


def test_each_launch_has_its_own_token():
    one, two = ChatServer(FakeModel()), ChatServer(FakeModel())
    try:
        assert one.token != two.token and len(one.token) >= 32
    finally:
        for server in (one, two):
            server._httpd.server_close()


@pytest.mark.parametrize("stream", [True, False])
def test_the_remote_backend_with_the_token_works(served, stream):
    server, model = served
    policy = RemotePolicy(server.url, profile="phonebuddy-4b", api_key=server.token, stream=stream,
                          max_pixels=TEST_MAX_PIXELS)
    proposal = policy.propose("Open it", phone_observation())
    assert proposal.action.x == 540 and model.calls == 1


def test_the_token_can_come_from_the_environment(served, monkeypatch):
    server, model = served
    monkeypatch.setenv("PHONEBUDDY_API_KEY", server.token)
    policy = RemotePolicy(server.url, profile="phonebuddy-4b", max_pixels=TEST_MAX_PIXELS)
    assert policy.propose("Open it", phone_observation()).action.x == 540 and model.calls == 1
