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


# --- issue 28: the token file and half-sent requests -----------------------------------------------------

import os  # noqa: E402
import socket  # noqa: E402
import stat  # noqa: E402

from assistant_core.policy.cli import main as policy_main  # noqa: E402
from assistant_core.policy.serve import TokenFileError, write_token_file  # noqa: E402


def test_the_token_file_is_created_new_and_readable_only_by_its_owner(tmp_path):
    path = tmp_path / "token"
    old = os.umask(0)  # even with a permissive umask
    try:
        write_token_file(str(path), "secret-token")
    finally:
        os.umask(old)
    assert path.read_text() == "secret-token\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_an_existing_token_file_is_refused_and_left_as_it_was(tmp_path):
    path = tmp_path / "token"
    path.write_text("old\n")
    path.chmod(0o644)
    with pytest.raises(TokenFileError) as refused:
        write_token_file(str(path), "secret-token")
    assert "already exists" in refused.value.message
    assert path.read_text() == "old\n" and stat.S_IMODE(path.stat().st_mode) == 0o644


@pytest.mark.parametrize("dangling", [False, True])
def test_a_symlink_is_never_followed(tmp_path, dangling):
    target = tmp_path / "elsewhere"
    if not dangling:
        target.write_text("precious\n")
    link = tmp_path / "token"
    link.symlink_to(target)
    with pytest.raises(TokenFileError):
        write_token_file(str(link), "secret-token")
    if dangling:
        assert not target.exists()  # nothing created through the link
    else:
        assert target.read_text() == "precious\n"


def test_policy_serve_refuses_an_existing_token_file_before_loading_the_model(tmp_path, capsys):
    path = tmp_path / "token"
    path.write_text("old\n")
    code = policy_main(["serve", "--token-file", str(path), "--model-dir", str(tmp_path / "no-model")])
    err = capsys.readouterr().err
    assert code == 1 and "already exists" in err and "Traceback" not in err
    assert path.read_text() == "old\n"


def _half_sent(server, payload: bytes) -> bytes:
    host, port = server._httpd.server_address[:2]
    with socket.create_connection((host, port), timeout=30) as sock:
        sock.sendall(payload)
        sock.settimeout(30)  # the server's read timeout (1 s here) must close it long before this
        received = b""
        while True:
            chunk = sock.recv(4096)
            if not chunk:
                return received
            received += chunk


@pytest.mark.parametrize("payload", [
    b"POST /v1/chat/completions HTT",  # the request line, cut
    b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le",  # the headers, cut
])
def test_a_half_sent_request_does_not_hold_a_thread(payload):
    model = FakeModel()
    server = ChatServer(model, read_timeout_s=1.0).start()
    try:
        _half_sent(server, payload)  # returns only because the server closed the connection
        assert model.calls == 0
    finally:
        server.stop()


def test_a_half_sent_body_is_dropped_and_the_server_still_answers():
    model = FakeModel()
    server = ChatServer(model, read_timeout_s=1.0).start()
    try:
        port = server._httpd.server_address[1]
        head = (f"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                f"Authorization: Bearer {server.token}\r\nContent-Type: application/json\r\n"
                "Content-Length: 5000\r\n\r\n{\"model\": ").encode()
        _half_sent(server, head)
        assert model.calls == 0
        ok = post(server, headers={"Authorization": f"Bearer {server.token}", "Content-Type": "application/json"})
        assert ok.status_code == 200 and model.calls == 1
    finally:
        server.stop()
