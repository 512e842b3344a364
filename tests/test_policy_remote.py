"""The remote backend against real local HTTP servers: the OpenAI-compatible ChatServer serving a tiny
model (streaming and plain, reasoning fields on and off), and small stdlib servers that misbehave
(503s, 401, empty replies) to check retries, backoff and error messages."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from policy_fixtures import TEST_MAX_PIXELS, ForcedReply, phone_observation

from assistant_core.errors import PolicyOutputError, PolicyUnavailableError
from assistant_core.policy.errors import PolicyUnavailable
from assistant_core.policy.hf_compat import load_processor
from assistant_core.policy.local import LocalPolicy
from assistant_core.policy.remote import RemotePolicy, chat_completions_url
from assistant_core.policy.serve import ChatServer
from assistant_core.types import Action, Step

REPLY = ("I should open the Wi-Fi row.\n</think>\n\n<tool_call>\n"
         '{"name": "long_press", "arguments": {"points": [[500, 125]], "duration": 900}}\n</tool_call>')

pytest_plugins = ("policy_fixtures",)  # the shared tiny-model fixtures


@pytest.fixture(scope="module")
def model_server(tiny_qwen3_5):
    forced = ForcedReply(load_processor(tiny_qwen3_5).tokenizer, REPLY)
    local = LocalPolicy(tiny_qwen3_5, quantization="fp32", max_new_tokens=96, logits_processors=[forced])
    servers = {split: ChatServer(local, split_reasoning=split).start() for split in (False, True)}
    yield servers
    for server in servers.values():
        server.stop()


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("split_reasoning", [True, False])
def test_remote_propose_through_a_real_server(model_server, stream, split_reasoning):
    chunks: list[str] = []
    policy = RemotePolicy(model_server[split_reasoning].url, profile="phonebuddy-4b", stream=stream,
                          max_pixels=TEST_MAX_PIXELS, on_thought=chunks.append,
                          api_key=model_server[split_reasoning].token)
    assert policy.model == "PhoneBuddyAI/PhoneBuddy-4B"  # discovered from /v1/models
    history = [Step(index=0, action=Action.open_app("com.android.settings"), thought="打开设置")]
    proposal = policy.propose("Turn on Wi-Fi", phone_observation(), history)
    assert proposal.action == Action.long_press(540, 300, duration_ms=900)
    assert proposal.thought == "I should open the Wi-Fi row."
    assert proposal.stats["decode_tokens"] > 5 and proposal.stats["prompt_tokens"] > 100
    assert proposal.timings["total"] >= proposal.timings["request"] > 0
    if stream:
        assert "prefill" in proposal.timings and "decode" in proposal.timings
        assert "Wi-Fi row" in "".join(chunks) and "<tool_call>" in "".join(chunks)
    else:
        assert chunks == []


def test_the_server_rejects_images_it_cannot_fetch(model_server):
    import requests

    body = {"model": "x", "messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": "http://example.com/a.png"}}]}]}
    response = requests.post(chat_completions_url(model_server[False].url), json=body, timeout=30,
                             headers={"Authorization": f"Bearer {model_server[False].token}"})
    assert response.status_code == 400 and "data URLs" in response.json()["error"]["message"]


class Scripted(BaseHTTPRequestHandler):
    """Answers POSTs from a script of (status, body, headers); the last entry repeats."""

    protocol_version = "HTTP/1.1"
    script: list = []
    calls: list = []

    def log_message(self, *args):
        pass

    def do_GET(self):
        self._answer(200, {"data": [{"id": "served-model"}]}, {})

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        type(self).calls.append(json.loads(self.rfile.read(length)))
        status, body, headers = type(self).script[min(len(type(self).calls) - 1, len(type(self).script) - 1)]
        self._answer(status, body, headers)

    def _answer(self, status, body, headers):
        data = json.dumps(body).encode()
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def scripted_server():
    handler = type("Handler", (Scripted,), {"script": [], "calls": []})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield handler, f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()


def completion(content, reasoning=None, finish="stop"):
    message = {"role": "assistant", "content": content}
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    return {"choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 1200, "completion_tokens": 40}}


def test_retries_with_backoff_then_succeeds(scripted_server):
    handler, url = scripted_server
    handler.script = [(503, {"error": {"message": "warming up"}}, {"Retry-After": "0.5"}),
                      (502, {"error": "bad gateway"}, {}),
                      (200, completion(None, reasoning='Tap it.\n<tool_call>{"name": "click", "arguments": '
                                                     '{"points": [[0, 0]]}}</tool_call>'), {})]
    sleeps: list[float] = []
    policy = RemotePolicy(url, stream=False, retries=3, backoff_s=1.0, sleep=sleeps.append,
                          max_pixels=TEST_MAX_PIXELS)
    proposal = policy.propose("x", phone_observation(), [])
    assert proposal.action == Action.click(0, 0)  # found in the reasoning field, content was null
    assert proposal.thought == "Tap it."
    assert sleeps == [0.5, 2.0]  # Retry-After honoured, then exponential backoff
    assert proposal.stats["attempts"] == 3
    sent = handler.calls[-1]
    assert sent["model"] == "served-model" and sent["temperature"] == 0.0 and sent["skip_special_tokens"] is False
    assert sent["messages"][0] == {"role": "system", "content": ""}
    assert sent["messages"][1]["content"][1]["image_url"]["url"].startswith("data:image/jpeg;base64,")


def test_gives_up_after_the_retries_with_a_clear_message(scripted_server):
    handler, url = scripted_server
    handler.script = [(503, {"error": {"message": "overloaded"}}, {})]
    sleeps: list[float] = []
    policy = RemotePolicy(url, model="m", stream=False, retries=2, sleep=sleeps.append)
    with pytest.raises(PolicyUnavailable) as info:
        policy.propose("x", phone_observation(), [])
    assert len(handler.calls) == 3 and len(sleeps) == 2
    assert "overloaded" in info.value.message.en and "3 attempts" in info.value.message.en
    assert "服务器" in info.value.message.zh


def test_auth_errors_are_not_retried(scripted_server):
    handler, url = scripted_server
    handler.script = [(401, {"error": {"message": "invalid api key"}}, {})]
    policy = RemotePolicy(url, model="m", api_key="wrong", stream=False, retries=3, sleep=lambda s: None)
    with pytest.raises(PolicyUnavailableError, match="API key"):
        policy.propose("x", phone_observation(), [])
    assert len(handler.calls) == 1


def test_an_empty_cut_off_reply_is_a_policy_output_error(scripted_server):
    handler, url = scripted_server
    handler.script = [(200, completion("", finish="length"), {})]
    policy = RemotePolicy(url, model="m", stream=False)
    with pytest.raises(PolicyOutputError, match="token limit"):
        policy.propose("x", phone_observation(), [])


def test_unreachable_server():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again at once: nothing listens there
    sleeps: list[float] = []
    policy = RemotePolicy(f"http://127.0.0.1:{port}", model="m", retries=1, sleep=sleeps.append, connect_timeout=2)
    with pytest.raises(PolicyUnavailable) as info:
        policy.propose("x", phone_observation(), [])
    assert f"127.0.0.1:{port}" in info.value.message.en and "cannot be reached" in info.value.message.en
    assert "无法连接" in info.value.message.zh
    assert sleeps == [1.0]


def test_url_forms():
    assert chat_completions_url("http://h:8000") == "http://h:8000/v1/chat/completions"
    assert chat_completions_url("http://h:8000/v1/") == "http://h:8000/v1/chat/completions"
    assert chat_completions_url("http://h/v1/chat/completions") == "http://h/v1/chat/completions"


def test_reasoning_split_survives_a_tag_cut_across_chunks():
    from assistant_core.policy.serve import _ReasoningSplitter

    splitter = _ReasoningSplitter(True)
    out = []
    for piece in ["I will tap", " it.</th", "ink>\n\n<tool_", 'call>{"name"', "}</tool_call>"]:
        out += splitter.feed(piece)
    out += splitter.flush()
    reasoning = "".join(p for kind, p in out if kind == "reasoning_content")
    content = "".join(p for kind, p in out if kind == "content")
    assert reasoning == "I will tap it." and content == '<tool_call>{"name"}</tool_call>'
    assert _ReasoningSplitter(False).feed("a</think>b") == [("content", "a</think>b")]


@pytest.mark.slow
def test_policy_serve_command_serves_a_model_folder(tiny_qwen3_5):
    """`phonebuddy policy serve` in its own process: the models list answers, then it stops on a signal."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    import requests

    root = Path(__file__).resolve().parents[1]
    proc = subprocess.Popen([sys.executable, "-m", "phonebuddy.cli", "policy", "serve", "--model-dir", str(tiny_qwen3_5),
                             "--port", "0", "--quantization", "fp32", "--profile", "phonebuddy-4b"], cwd=root, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, HF_HUB_OFFLINE="1"))
    try:
        url = None
        for line in proc.stderr:
            if line.startswith("serving "):
                url = line.strip().rsplit(" at ", 1)[1]
                break
        assert url and url.startswith("http://127.0.0.1:")
        token = proc.stderr.readline().strip().rsplit(" ", 1)[1]  # printed once per launch
        assert requests.get(url + "/models", timeout=30).status_code == 401
        models = requests.get(url + "/models", headers={"Authorization": f"Bearer {token}"}, timeout=30).json()
        assert models["data"][0]["id"] == "PhoneBuddyAI/PhoneBuddy-4B"
    finally:
        proc.terminate()
        proc.wait(timeout=30)
