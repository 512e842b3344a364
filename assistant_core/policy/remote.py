"""The remote backend: any OpenAI-compatible chat-completions server (vLLM, SGLang, `phonebuddy policy serve`).

    policy = RemotePolicy("http://gpu-box:8000/v1", profile="phonebuddy-4b")   # model id discovered
    proposal = policy.propose(goal, observation, history)

The request is the profile's prompt (`prompt.build_prompt`) with the screenshot as a JPEG data URL,
greedy (temperature 0, top_p 1), `max_tokens` from the profile, and `skip_special_tokens: false` (vLLM
otherwise strips tool tags on some tokenizers). The reply is read from `content` and from the reasoning
fields (`reasoning_content`, `reasoning`) that vLLM's reasoning parsers fill: reasoning becomes the thought
(``<think>...</think>``) and the tool call is looked for in both.

Streaming (default) gives the time to the first token (prefill) and the thought as it arrives
(`on_thought`); `stream=False` sends one plain request.

Network: connect/read timeouts, retries with exponential backoff (honouring Retry-After) on connection
errors, timeouts, 429 and 5xx; 401/403 and other 4xx are not retried. What cannot be fixed by retrying
raises `PolicyUnavailable` with a bilingual message; an unusable reply raises PolicyOutputError.

Hostile or broken servers (the request carries the screenshot, the goal and the history):
- redirects are never followed to another origin (scheme, host, port): the request is not re-sent, and the
  message names the target; same-origin redirects (a trailing slash) are followed, at most three;
- TLS certificates are always verified (`verify=True`), and a failed check is said as such, not retried;
- one overall deadline per step (`deadline_s`) covers discovery, connect, the first byte, retries and the
  whole body: a watchdog shuts the socket when it passes, so keep-alive comments or empty deltas every few
  seconds cannot hold a step open;
- the reply body is read with a size cap (`max_reply_bytes`).
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from assistant_core.errors import PolicyOutputError
from assistant_core.policy.errors import PolicyUnavailable, unavailable
from assistant_core.policy.parsing import parse_reply
from assistant_core.policy.profiles import ModelProfile, get_profile
from assistant_core.policy.prompt import ChatPrompt, build_prompt
from assistant_core.types import Observation, Proposal, Step

log = logging.getLogger(__name__)

RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})
REDIRECT_STATUS = frozenset({301, 302, 303, 307, 308})
API_KEY_ENV = "PHONEBUDDY_API_KEY"
MAX_REDIRECTS = 3
DEFAULT_DEADLINE_S = 180.0
DEFAULT_MAX_REPLY_BYTES = 8 * 1024 * 1024
REASONING_FIELDS = ("reasoning_content", "reasoning")


@dataclass(frozen=True)
class RemoteReply:
    content: str
    reasoning: str
    finish_reason: str
    completion_tokens: int | None
    prompt_tokens: int | None
    first_token_s: float | None
    total_s: float
    attempts: int = 1

    @property
    def text(self) -> str:
        """The reply as one text: reasoning as a <think> block, then the content."""
        if self.reasoning.strip():
            return f"<think>\n{self.reasoning.strip()}\n</think>\n{self.content}"
        return self.content


@dataclass
class _Stream:
    content: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    finish_reason: str = ""
    usage: dict[str, Any] = field(default_factory=dict)
    first_token_at: float | None = None
    chunks: int = 0


def origin(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of a URL, the port filled in from the scheme."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    return scheme, (parts.hostname or "").lower(), port or (443 if scheme == "https" else 80)


class _Deadline:
    """The time left of one step, and a watchdog that cuts a response's socket when it runs out."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.ends = time.monotonic() + seconds
        self.hit = False

    def left(self) -> float:
        return self.ends - time.monotonic()

    def watch(self, response: Any) -> threading.Timer | None:
        sock = _socket_of(response)
        if sock is None:
            return None

        def cut() -> None:
            self.hit = True
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

        timer = threading.Timer(max(0.0, self.left()), cut)
        timer.daemon = True
        timer.start()
        return timer


def _socket_of(response: Any) -> socket.socket | None:
    """The socket under a streamed requests response (urllib3 2 / http.client), or None."""
    raw = getattr(response, "raw", None)
    for path in (("_connection", "sock"), ("_fp", "fp", "raw", "_sock")):
        obj: Any = raw
        for name in path:
            obj = getattr(obj, name, None)
        if isinstance(obj, socket.socket):
            return obj
    return None


def chat_completions_url(base_url: str) -> str:
    base = base_url.rstrip("/")
    if base.endswith("/chat/completions"):
        return base
    return base + ("/chat/completions" if base.endswith("/v1") else "/v1/chat/completions")


def models_url(base_url: str) -> str:
    base = base_url.rstrip("/")
    if base.endswith("/chat/completions"):
        base = base[: -len("/chat/completions")]
    return base + ("/models" if base.endswith("/v1") else "/v1/models")


class RemotePolicy:
    """A Policy backed by an OpenAI-compatible server (see the module docstring)."""

    def __init__(self, base_url: str, *, profile: str | ModelProfile | None = None, model: str | None = None,
                 api_key: str | None = None, connect_timeout: float = 5.0, read_timeout: float = 300.0,
                 retries: int = 3, backoff_s: float = 1.0, max_backoff_s: float = 10.0, stream: bool = True,
                 deadline_s: float = DEFAULT_DEADLINE_S, max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
                 max_new_tokens: int | None = None, max_pixels: int | None = None, lang: str = "en",
                 extra_body: dict[str, Any] | None = None, on_thought: Callable[[str], None] | None = None,
                 session: Any = None, sleep: Callable[[float], None] = time.sleep):
        import requests

        self.base_url = base_url
        self.profile = get_profile(profile)
        self._model = model
        # `phonebuddy policy serve` needs its per-launch token: callers without a key field (the app,
        # `phonebuddy run --policy remote:URL`, `train eval`) take it from PHONEBUDDY_API_KEY.
        self.api_key = api_key if api_key is not None else (os.environ.get(API_KEY_ENV) or None)
        self.timeout = (connect_timeout, read_timeout)
        self.retries = max(0, retries)
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.stream = stream
        self.deadline_s = float(deadline_s)
        self.max_reply_bytes = int(max_reply_bytes)
        self.max_new_tokens = max_new_tokens or self.profile.max_new_tokens
        self.max_pixels = max_pixels
        self.lang = lang
        self.extra_body = {"skip_special_tokens": False} if extra_body is None else dict(extra_body)
        self.on_thought = on_thought
        self.session = session or requests.Session()
        self._sleep = sleep
        # Set by the front hall (phonebuddy.assemble): masks the screenshot and text and logs every request
        # (assistant_core.privacy.Outbound). None sends as is and logs nothing.
        self.outbound: Any = None

    # --- HTTP ------------------------------------------------------------------------------------------

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers

    def _request(self, method: str, url: str, *, body: dict | None = None, deadline: _Deadline | None = None):
        """One HTTP call with retries, streamed; returns (response, attempts). Raises PolicyUnavailable."""
        import requests

        deadline = deadline or _Deadline(self.deadline_s)
        last = ""
        for attempt in range(self.retries + 1):
            wait = min(self.max_backoff_s, self.backoff_s * 2**attempt)
            try:
                response = self._send(method, url, body, deadline)
            except requests.exceptions.SSLError as error:
                raise unavailable("server_tls", url=url, detail=_short(error)) from None
            except (requests.ConnectionError, requests.Timeout) as error:
                if deadline.left() <= 0:
                    raise self._slow(url, deadline, "no answer") from None
                last = _short(error)
                log.warning("request to %s failed (attempt %d/%d): %s", url, attempt + 1, self.retries + 1, last)
            else:
                if response.status_code < 400:
                    return response, attempt + 1
                detail = self._error_detail(response, deadline)
                response.close()
                if response.status_code in (401, 403):
                    raise unavailable("server_auth", url=url, detail=f"HTTP {response.status_code} {detail}")
                if response.status_code not in RETRY_STATUS:
                    raise unavailable("server_error", url=url, detail=f"HTTP {response.status_code} {detail}")
                last = f"HTTP {response.status_code} {detail}"
                retry_after = response.headers.get("Retry-After", "")
                if retry_after.replace(".", "", 1).isdigit():
                    wait = min(self.max_backoff_s, float(retry_after))
                log.warning("server %s answered %s (attempt %d/%d)", url, last, attempt + 1, self.retries + 1)
            if attempt < self.retries:
                if deadline.left() <= wait:
                    raise self._slow(url, deadline, last)
                self._sleep(wait)
        if last.startswith("HTTP"):
            raise unavailable("server_error", url=url, detail=f"{last} after {self.retries + 1} attempts")
        raise unavailable("server_unreachable", url=url, detail=f"{last} after {self.retries + 1} attempts")

    def _send(self, method: str, url: str, body: dict | None, deadline: _Deadline):
        """One request, redirects followed by hand and only within the origin of `url`."""
        import requests

        target = url
        for _ in range(MAX_REDIRECTS + 1):
            left = deadline.left()
            if left <= 0:
                raise requests.Timeout("the step's deadline passed")
            if self.outbound is not None:
                self.outbound.sent(origin(target)[1], len(json.dumps(body).encode()) if body is not None else 0)
            response = self.session.request(method, target, json=body, headers=self._headers(), stream=True,
                                            timeout=(min(self.timeout[0], left), min(self.timeout[1], left)),
                                            allow_redirects=False, verify=True)
            if response.status_code not in REDIRECT_STATUS:
                return response
            location = response.headers.get("Location", "")
            response.close()
            from urllib.parse import urljoin

            nxt = urljoin(target, location)
            if not location or origin(nxt) != origin(url):
                log.warning("refused a redirect from %s to %r", target, location)
                raise unavailable("server_redirect", url=url, target=(location or "nowhere")[:200])
            if response.status_code == 303:
                method, body = "GET", None
            target = nxt
        raise unavailable("server_error", url=url, detail=f"more than {MAX_REDIRECTS} redirects")

    def _slow(self, url: str, deadline: _Deadline, detail: str) -> PolicyUnavailable:
        return unavailable("server_slow", url=url, seconds=deadline.seconds, detail=detail or "no answer")

    def _body(self, response: Any, url: str, deadline: _Deadline) -> bytes:
        """The whole (non-streamed) body, within the deadline and the size cap."""
        import requests

        data = bytearray()
        timer = deadline.watch(response)
        try:
            for chunk in response.iter_content(chunk_size=65536):
                data += chunk
                if len(data) > self.max_reply_bytes:
                    raise self._too_big(url)
                if deadline.left() <= 0:
                    raise self._slow(url, deadline, f"{len(data):,} bytes read")
        except (requests.ConnectionError, requests.Timeout, requests.exceptions.ChunkedEncodingError) as error:
            if deadline.hit or deadline.left() <= 0:
                raise self._slow(url, deadline, f"{len(data):,} bytes read") from None
            raise unavailable("server_unreachable", url=url, detail=f"reply broke: {_short(error)}") from None
        finally:
            if timer is not None:
                timer.cancel()
        if deadline.hit:
            raise self._slow(url, deadline, f"{len(data):,} bytes read")
        return bytes(data)

    def _too_big(self, url: str) -> PolicyUnavailable:
        return unavailable("server_too_big", url=url, limit_mb=self.max_reply_bytes / 1024 / 1024)

    @staticmethod
    def _error_detail(response: Any, deadline: _Deadline) -> str:
        """What an error reply says: its first 64 KB at most, read within the deadline."""
        timer = deadline.watch(response)
        try:
            raw = next(response.iter_content(chunk_size=65536), b"")
        except Exception:  # a broken error body must not hide the status
            raw = b""
        finally:
            if timer is not None:
                timer.cancel()
        try:
            data = json.loads(raw)
            error = data.get("error", data) if isinstance(data, dict) else data
            message = error.get("message", error) if isinstance(error, dict) else error
            return str(message)[:300]
        except ValueError:
            return (raw.decode("utf-8", errors="replace") or response.reason or "")[:300]

    def list_models(self, deadline: _Deadline | None = None) -> list[str]:
        deadline = deadline or _Deadline(self.deadline_s)
        url = models_url(self.base_url)
        response, _ = self._request("GET", url, deadline=deadline)
        try:
            raw = self._body(response, url, deadline)
        finally:
            response.close()
        try:
            return [str(m["id"]) for m in json.loads(raw).get("data", [])]
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            raise unavailable("server_error", url=self.base_url, detail=f"bad /models reply: {error}") from None

    @property
    def model(self) -> str:
        return self._discover(None)

    def _discover(self, deadline: _Deadline | None) -> str:
        if self._model is None:
            models = self.list_models(deadline)
            if not models:
                raise unavailable("server_error", url=self.base_url, detail="the server lists no models")
            self._model = models[0]
            log.info("using model %s from %s", self._model, self.base_url)
        return self._model

    # --- completion --------------------------------------------------------------------------------

    def complete(self, prompt: ChatPrompt, *, max_new_tokens: int | None = None) -> RemoteReply:
        deadline = _Deadline(self.deadline_s)
        body: dict[str, Any] = {"model": self._discover(deadline), "messages": prompt.openai_messages(), "temperature": 0.0,
                                "top_p": 1.0, "max_tokens": max_new_tokens or self.max_new_tokens,
                                "stream": self.stream, **self.extra_body}
        if self.stream:
            body["stream_options"] = {"include_usage": True}
        url = chat_completions_url(self.base_url)
        started = time.perf_counter()
        response, attempts = self._request("POST", url, body=body, deadline=deadline)
        try:
            if self.stream:
                state = self._read_stream(response, url, deadline)
            else:
                state = self._read_plain(self._body(response, url, deadline), url)
        finally:
            response.close()
        usage = state.usage or {}
        return RemoteReply(content="".join(state.content), reasoning="".join(state.reasoning),
                           finish_reason=state.finish_reason or "",
                           completion_tokens=_count(usage.get("completion_tokens")),
                           prompt_tokens=_count(usage.get("prompt_tokens")),
                           first_token_s=None if state.first_token_at is None else state.first_token_at - started,
                           total_s=time.perf_counter() - started, attempts=attempts)

    def _read_plain(self, raw: bytes, url: str) -> _Stream:
        try:
            data = json.loads(raw)
            choice = data["choices"][0]
            message = choice.get("message") or {}
            if not isinstance(choice, dict) or not isinstance(message, dict):
                raise TypeError("choices[0].message is not an object")
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as error:
            raise unavailable("server_error", url=url, detail=f"not a chat completion: {error}") from None
        usage = data.get("usage")
        state = _Stream(finish_reason=str(choice.get("finish_reason") or ""),
                        usage=usage if isinstance(usage, dict) else {})
        state.content.append(str(message.get("content") or ""))
        for name in REASONING_FIELDS:
            if message.get(name):
                state.reasoning.append(str(message[name]))
                break
        return state

    def _events(self, response: Any, url: str, deadline: _Deadline) -> Iterator[dict[str, Any]]:
        received = 0
        for raw in response.iter_lines(decode_unicode=False):
            received += len(raw) + 1
            if received > self.max_reply_bytes:
                raise self._too_big(url)
            if deadline.left() <= 0:
                raise self._slow(url, deadline, f"still streaming after {received:,} bytes")
            if not raw:
                continue
            line = raw.decode("utf-8", errors="replace").strip()
            if not line.startswith("data:"):
                continue
            payload = line[len("data:"):].strip()
            if payload == "[DONE]":
                return
            try:
                yield json.loads(payload)
            except json.JSONDecodeError:
                log.warning("skipping a malformed stream event: %.100s", payload)

    def _read_stream(self, response: Any, url: str, deadline: _Deadline) -> _Stream:
        import requests

        state = _Stream()
        timer = deadline.watch(response)
        try:
            for event in self._events(response, url, deadline):
                if not isinstance(event, dict):
                    continue
                if event.get("error"):
                    raise unavailable("server_error", url=url, detail=str(event["error"])[:300])
                if isinstance(event.get("usage"), dict):
                    state.usage = event["usage"]
                choices = event.get("choices")
                for choice in choices if isinstance(choices, list) else []:
                    if not isinstance(choice, dict):
                        continue
                    delta = choice.get("delta") if isinstance(choice.get("delta"), dict) else {}
                    pieces = [(state.content, delta.get("content"))]
                    pieces += [(state.reasoning, delta.get(name)) for name in REASONING_FIELDS]
                    for bucket, piece in pieces:
                        if piece:
                            if state.first_token_at is None:
                                state.first_token_at = time.perf_counter()
                            bucket.append(str(piece))
                            state.chunks += 1
                            self._emit(str(piece))
                    if choice.get("finish_reason"):
                        state.finish_reason = str(choice["finish_reason"])
        except (requests.ConnectionError, requests.Timeout, requests.exceptions.ChunkedEncodingError) as error:
            if deadline.hit or deadline.left() <= 0:
                raise self._slow(url, deadline, "the stream did not finish") from None
            raise unavailable("server_unreachable", url=url, detail=f"stream broke: {error}"[:300]) from None
        finally:
            if timer is not None:
                timer.cancel()
        if deadline.hit:
            raise self._slow(url, deadline, "the stream did not finish")
        return state

    def _emit(self, text: str) -> None:
        if self.on_thought is not None:
            try:
                self.on_thought(text)
            except Exception:  # a UI callback must never break the request
                log.exception("on_thought callback failed")

    def propose(self, goal: str, observation: Observation, history: Sequence[Step] = (), *,
                feedback: str | None = None) -> Proposal:
        started = time.perf_counter()
        if self.outbound is not None:
            # What the user said is theirs to send: the request and their answers in this run.
            said = "\n".join([goal, *(exchange.answer for exchange in observation.exchanges)])
            observation = self.outbound.mask_observation(observation, keep=said)
        prompt = build_prompt(goal, observation, history, self.profile, lang=self.lang, feedback=feedback,
                              max_pixels=self.max_pixels)
        if self.outbound is not None:
            prompt = replace(prompt, user=tuple(self.outbound.mask_prompt_text(p) if isinstance(p, str) else p
                                                for p in prompt.user))
        built = time.perf_counter()
        reply = self.complete(prompt)
        text = reply.text
        if not text.strip():
            why = " (the server stopped at the token limit)" if reply.finish_reason == "length" else ""
            raise PolicyOutputError("the reply is empty: expected <think>...</think> and one <tool_call>" + why,
                                    raw_text=text)
        parse_start = time.perf_counter()
        try:
            parsed = parse_reply(text, observation.width, observation.height, self.profile)
        except PolicyOutputError as error:
            message = str(error)
            if reply.finish_reason == "length":
                message += " (the reply was cut off at the token limit)"
            raise PolicyOutputError(message, raw_text=text) from None
        done = time.perf_counter()
        timings = {"prompt": built - started, "request": reply.total_s, "parse": done - parse_start,
                   "total": done - started}
        stats: dict[str, float] = {"thought_chars": len(parsed.thought), "attempts": reply.attempts}
        if reply.first_token_s is not None:
            timings["prefill"] = reply.first_token_s
            timings["decode"] = reply.total_s - reply.first_token_s
        if reply.completion_tokens is not None:
            stats["decode_tokens"] = reply.completion_tokens
            decode = timings.get("decode", 0.0)
            if decode > 0 and reply.completion_tokens > 1:
                stats["decode_tokens_per_s"] = round((reply.completion_tokens - 1) / decode, 2)
        if reply.prompt_tokens is not None:
            stats["prompt_tokens"] = reply.prompt_tokens
        return Proposal(action=parsed.action, thought=parsed.thought, raw_text=text, timings=timings, stats=stats)


def _count(value: Any) -> int | None:
    """A token count from the server's usage, or None when it is not a plain non-negative integer."""
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 10**9 else None


def _short(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"[:300]


__all__ = ["PolicyUnavailable", "RemotePolicy", "RemoteReply", "chat_completions_url"]
