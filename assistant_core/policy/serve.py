"""A small OpenAI-compatible chat-completions server over a LocalPolicy's model.

For a household or clinic computer with a GPU but no vLLM, and for tests of the remote backend against a
real server. `phonebuddy policy serve --model-dir DIR` runs it.

    server = ChatServer(LocalPolicy(folder), port=0, split_reasoning=True).start()
    RemotePolicy(server.url, profile=...)      # server.url is http://127.0.0.1:PORT/v1
    server.stop()

Endpoints: GET /v1/models, POST /v1/chat/completions (plain or `stream: true` server-sent events, with
usage when `stream_options.include_usage` is set). Images must be data URLs (the server reaches nothing
else). Decoding is always greedy: temperature and top_p are accepted and ignored. One generation runs at
a time. With `split_reasoning`, text before ``</think>`` is returned in `reasoning_content`, the rest in
`content`, as vLLM's reasoning parsers do (and everything goes to reasoning if ``</think>`` never comes).

Who may call it: every request needs ``Authorization: Bearer TOKEN`` with the per-launch `server.token`
(random unless given; `phonebuddy policy serve` prints it and can write it to a file), so a web page the
user opens cannot run the model with a cross-site ``text/plain`` POST. The Host header must name this
server (loopback names on a loopback bind: no DNS rebinding), a browser's Origin header must be this
server's own, and a POST must be ``application/json`` (which a page cannot send cross-site without a
CORS preflight this server never grants). Bodies over `MAX_BODY_BYTES` are refused (413). A connection
that sends nothing for `read_timeout_s` (30 s) is closed, so half-sent requests do not hold threads.
`write_token_file` creates the token file new with mode 0600 and never follows a link.
"""

from __future__ import annotations

import base64
import hmac
import io
import json
import logging
import secrets
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from assistant_core.errors import PolicyUnavailableError

log = logging.getLogger(__name__)


MAX_BODY_BYTES = 32 * 1024 * 1024
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]", "::1")


class RequestError(ValueError):
    """A bad request (HTTP 400)."""


READ_TIMEOUT_S = 30.0  # per connection: a client that stops sending mid-request is dropped, its thread freed


class TokenFileError(OSError):
    """The token file was not written (it exists, is a link, or its folder cannot be written); `message`
    says so for a person."""

    def __init__(self, message: str):
        self.message = message
        super().__init__(message)


def write_token_file(path: str, token: str) -> None:
    """Write `token` to a new file only its owner can read (mode 0600), created with O_CREAT|O_EXCL|
    O_NOFOLLOW: an existing file (which might be readable by others, or a link to somewhere else) is
    refused, never overwritten or followed. TokenFileError with a plain sentence otherwise."""
    import errno
    import os

    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o600)
    except FileExistsError:
        raise TokenFileError(f"{path} already exists (or is a link); the token is only written to a new file. "
                             "Remove it or choose another name.") from None
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise TokenFileError(f"{path} is a link; the token is never written through a link.") from None
        raise TokenFileError(f"cannot create {path}: {error.strerror or 'not allowed'}.") from None
    try:
        os.fchmod(fd, 0o600)  # exactly 0600, whatever the umask
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(token + "\n")
    except OSError as error:
        raise TokenFileError(f"cannot write {path}: {error.strerror or 'write failed'}.") from None


def hf_messages_from_openai(messages: Any) -> list[dict[str, Any]]:
    """OpenAI chat messages -> transformers chat-template messages (data-URL images decoded to PIL)."""
    from PIL import Image, UnidentifiedImageError

    if not isinstance(messages, list) or not messages:
        raise RequestError("messages must be a non-empty list")
    converted = []
    for message in messages:
        if not isinstance(message, dict) or message.get("role") not in ("system", "user", "assistant"):
            raise RequestError("each message needs a role of system, user or assistant")
        content = message.get("content")
        if content is None or isinstance(content, str):
            converted.append({"role": message["role"], "content": content or ""})
            continue
        if not isinstance(content, list):
            raise RequestError("content must be a string or a list of parts")
        parts = []
        for part in content:
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "text":
                parts.append({"type": "text", "text": str(part.get("text", ""))})
            elif kind == "image_url":
                url = (part.get("image_url") or {}).get("url", "")
                if not url.startswith("data:image/") or ";base64," not in url:
                    raise RequestError("images must be data URLs (data:image/...;base64,...)")
                try:
                    image = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1], validate=True)))
                    image.load()
                except (ValueError, UnidentifiedImageError, OSError) as error:
                    raise RequestError(f"the image could not be decoded: {error}") from None
                parts.append({"type": "image", "image": image.convert("RGB")})
            else:
                raise RequestError(f"unsupported content part {kind!r}")
        converted.append({"role": message["role"], "content": parts})
    return converted


class _ReasoningSplitter:
    """Routes streamed text to reasoning until </think>, then to content."""

    TAG = "</think>"

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.in_reasoning = enabled
        self.pending = ""

    def feed(self, text: str) -> list[tuple[str, str]]:
        if not self.in_reasoning:
            return [("content", text)] if text else []
        self.pending += text
        if self.TAG in self.pending:
            before, after = self.pending.split(self.TAG, 1)
            self.in_reasoning, self.pending = False, ""
            out = [("reasoning_content", before)] if before else []
            after = after.lstrip("\n")
            return out + ([("content", after)] if after else [])
        # Hold back a tail that could be the start of the tag.
        keep = max((i for i in range(1, len(self.TAG)) if self.pending.endswith(self.TAG[:i])), default=0)
        ready, self.pending = self.pending[: len(self.pending) - keep], self.pending[len(self.pending) - keep:]
        return [("reasoning_content", ready)] if ready else []

    def flush(self) -> list[tuple[str, str]]:
        rest, self.pending = self.pending, ""
        return [("reasoning_content" if self.in_reasoning else "content", rest)] if rest else []

    def split(self, text: str) -> dict[str, str]:
        if not self.enabled:
            return {"content": text}
        if self.TAG in text:
            before, after = text.split(self.TAG, 1)
            return {"reasoning_content": before, "content": after.lstrip("\n")}
        return {"reasoning_content": text, "content": ""}


class ChatServer:
    """See the module docstring. `policy` is a LocalPolicy (anything with `.generate()` and `.profile`)."""

    def __init__(self, policy: Any, *, host: str = "127.0.0.1", port: int = 0, model_name: str | None = None,
                 split_reasoning: bool = False, max_tokens_cap: int | None = None, token: str | None = None,
                 read_timeout_s: float = READ_TIMEOUT_S):
        self.policy = policy
        self.read_timeout_s = read_timeout_s
        self.token = token or secrets.token_urlsafe(32)
        self.model_name = model_name or policy.profile.repo_id
        self.split_reasoning = split_reasoning
        self.max_tokens_cap = max_tokens_cap or policy.profile.max_new_tokens
        self._generate_lock = threading.Lock()
        self.requests = 0
        self._httpd = ThreadingHTTPServer((host, port), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> ChatServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="policy-serve", daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._httpd.serve_forever()

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ChatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _host_ok(self, host_header: str) -> bool:
        """The Host header names this server: on a loopback bind only loopback names (DNS rebinding)."""
        bound, port = self._httpd.server_address[:2]
        host, _, given_port = host_header.strip().rpartition(":")
        if not host or given_port != str(port):
            return False
        if bound in ("127.0.0.1", "::1", "localhost"):
            return host.lower() in LOOPBACK_NAMES
        return True

    def _origin_ok(self, origin: str | None) -> bool:
        if origin is None:
            return True  # not a browser
        _, port = self._httpd.server_address[:2]
        return origin.rstrip("/").lower() in {f"http://{name}:{port}" for name in LOOPBACK_NAMES} | {
            f"http://{self._httpd.server_address[0]}:{port}"}

    def refusal(self, method: str, headers: Any) -> tuple[int, str] | None:
        """(status, why) when a request must be refused before it is read, else None."""
        if not self._host_ok(headers.get("Host", "")):
            return 421, "the Host header does not name this server"
        if not self._origin_ok(headers.get("Origin")):
            return 403, "requests from web pages are not accepted"
        given = headers.get("Authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {self.token}".encode()):
            return 401, "a valid token is required (Authorization: Bearer TOKEN; printed when the server started)"
        if method == "POST":
            if headers.get("Content-Type", "").split(";")[0].strip().lower() != "application/json":
                return 415, "the body must be application/json"
            try:
                length = int(headers.get("Content-Length", "0"))
            except ValueError:
                return 400, "bad Content-Length"
            if not 0 <= length <= MAX_BODY_BYTES:
                return 413, f"the body must be at most {MAX_BODY_BYTES // 1024 // 1024} MB"
        return None

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # socketserver sets this on the connection: a half-sent request line, header or body (or an idle
            # keep-alive connection) ends after this many seconds without a byte, and the thread is freed.
            timeout = server.read_timeout_s

            def log_message(self, fmt: str, *args: Any) -> None:
                log.debug("serve: " + fmt, *args)

            def _json(self, status: int, payload: dict[str, Any]) -> None:
                body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _error(self, status: int, message: str, kind: str) -> None:
                self._json(status, {"error": {"message": message, "type": kind, "code": status}})

            def _refused(self, method: str) -> bool:
                why = server.refusal(method, self.headers)
                if why is None:
                    return False
                log.warning("serve: refused a %s %s: %s", method, self.path[:100], why[1])
                self.close_connection = True
                self._error(why[0], why[1], "forbidden" if why[0] != 401 else "unauthorized")
                return True

            def do_GET(self) -> None:
                if self.path.rstrip("/") in ("/health", "/v1/health") and server._host_ok(self.headers.get("Host", "")):
                    self._json(200, {"status": "ok"})
                    return
                if self._refused("GET"):
                    return
                if self.path.rstrip("/") in ("/v1/models", "/models"):
                    self._json(200, {"object": "list", "data": [
                        {"id": server.model_name, "object": "model", "owned_by": "phonebuddy"}]})
                elif self.path.rstrip("/") in ("/health", "/v1/health"):
                    self._json(200, {"status": "ok"})
                else:
                    self._error(404, f"no route {self.path}", "not_found")

            def do_POST(self) -> None:
                if self._refused("POST"):
                    return
                if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
                    self._error(404, f"no route {self.path}", "not_found")
                    return
                try:
                    length = int(self.headers.get("Content-Length", "0"))
                    body = json.loads(self.rfile.read(length) or b"{}")
                    if not isinstance(body, dict):
                        raise RequestError("the body must be a JSON object")
                    messages = hf_messages_from_openai(body.get("messages"))
                    limit = body.get("max_tokens") or body.get("max_completion_tokens") or server.max_tokens_cap
                    if isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0:
                        raise RequestError("max_tokens must be a positive integer")
                    limit = min(limit, server.max_tokens_cap)
                except (ValueError, RequestError) as error:
                    self._error(400, str(error), "invalid_request_error")
                    return
                server.requests += 1
                if body.get("stream"):
                    self._stream(messages, limit, bool((body.get("stream_options") or {}).get("include_usage")))
                else:
                    self._plain(messages, limit)

            def _generate(self, messages, limit, on_text=None):
                with server._generate_lock:
                    return server.policy.generate(messages, on_text=on_text, max_new_tokens=limit)

            def _plain(self, messages, limit) -> None:
                try:
                    gen = self._generate(messages, limit)
                except PolicyUnavailableError as error:
                    self._error(503, str(error), "server_error")
                    return
                message = {"role": "assistant", **_ReasoningSplitter(server.split_reasoning).split(gen.text)}
                self._json(200, {
                    "id": f"chatcmpl-{uuid.uuid4().hex[:12]}", "object": "chat.completion", "created": int(time.time()),
                    "model": server.model_name,
                    "choices": [{"index": 0, "message": message, "finish_reason": gen.finish_reason}],
                    "usage": {"prompt_tokens": gen.prompt_tokens, "completion_tokens": gen.decode_tokens,
                              "total_tokens": gen.prompt_tokens + gen.decode_tokens}})

            def _stream(self, messages, limit, include_usage: bool) -> None:
                ident, created = f"chatcmpl-{uuid.uuid4().hex[:12]}", int(time.time())
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                splitter = _ReasoningSplitter(server.split_reasoning)

                def send(payload: dict[str, Any]) -> None:
                    self.wfile.write(b"data: " + json.dumps(payload, ensure_ascii=False).encode("utf-8") + b"\n\n")
                    self.wfile.flush()

                def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
                    return {"id": ident, "object": "chat.completion.chunk", "created": created,
                            "model": server.model_name,
                            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

                def on_text(text: str) -> None:
                    for name, piece in splitter.feed(text):
                        send(chunk({name: piece}))

                send(chunk({"role": "assistant", "content": ""}))
                try:
                    gen = self._generate(messages, limit, on_text)
                except PolicyUnavailableError as error:
                    send({"error": {"message": str(error), "type": "server_error", "code": 503}})
                    self.wfile.write(b"data: [DONE]\n\n")
                    return
                for name, piece in splitter.flush():
                    send(chunk({name: piece}))
                send(chunk({}, gen.finish_reason))
                if include_usage:
                    send({"id": ident, "object": "chat.completion.chunk", "created": created,
                          "model": server.model_name, "choices": [],
                          "usage": {"prompt_tokens": gen.prompt_tokens, "completion_tokens": gen.decode_tokens,
                                    "total_tokens": gen.prompt_tokens + gen.decode_tokens}})
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

        return Handler
