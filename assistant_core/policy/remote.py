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
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from assistant_core.errors import PolicyOutputError
from assistant_core.policy.errors import PolicyUnavailable, unavailable
from assistant_core.policy.parsing import parse_reply
from assistant_core.policy.profiles import ModelProfile, get_profile
from assistant_core.policy.prompt import ChatPrompt, build_prompt
from assistant_core.types import Observation, Proposal, Step

log = logging.getLogger(__name__)

RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})
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
                 max_new_tokens: int | None = None, max_pixels: int | None = None, lang: str = "en",
                 extra_body: dict[str, Any] | None = None, on_thought: Callable[[str], None] | None = None,
                 session: Any = None, sleep: Callable[[float], None] = time.sleep):
        import requests

        self.base_url = base_url
        self.profile = get_profile(profile)
        self._model = model
        self.api_key = api_key
        self.timeout = (connect_timeout, read_timeout)
        self.retries = max(0, retries)
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.stream = stream
        self.max_new_tokens = max_new_tokens or self.profile.max_new_tokens
        self.max_pixels = max_pixels
        self.lang = lang
        self.extra_body = {"skip_special_tokens": False} if extra_body is None else dict(extra_body)
        self.on_thought = on_thought
        self.session = session or requests.Session()
        self._sleep = sleep

    # --- HTTP ------------------------------------------------------------------------------------------

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers

    def _request(self, method: str, url: str, *, body: dict | None = None, stream: bool = False):
        """One HTTP call with retries; returns (response, attempts). Raises PolicyUnavailable."""
        import requests

        last = ""
        for attempt in range(self.retries + 1):
            wait = min(self.max_backoff_s, self.backoff_s * 2**attempt)
            try:
                response = self.session.request(method, url, json=body, headers=self._headers(),
                                                timeout=self.timeout, stream=stream)
            except (requests.ConnectionError, requests.Timeout) as error:
                last = f"{type(error).__name__}: {error}"[:300]
                log.warning("request to %s failed (attempt %d/%d): %s", url, attempt + 1, self.retries + 1, last)
            else:
                if response.status_code < 400:
                    return response, attempt + 1
                detail = self._error_detail(response)
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
                self._sleep(wait)
        if last.startswith("HTTP"):
            raise unavailable("server_error", url=url, detail=f"{last} after {self.retries + 1} attempts")
        raise unavailable("server_unreachable", url=url, detail=f"{last} after {self.retries + 1} attempts")

    @staticmethod
    def _error_detail(response: Any) -> str:
        try:
            data = response.json()
            error = data.get("error", data) if isinstance(data, dict) else data
            message = error.get("message", error) if isinstance(error, dict) else error
            return str(message)[:300]
        except ValueError:
            return (response.text or response.reason or "")[:300]

    def list_models(self) -> list[str]:
        response, _ = self._request("GET", models_url(self.base_url))
        try:
            return [m["id"] for m in response.json().get("data", [])]
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            raise unavailable("server_error", url=self.base_url, detail=f"bad /models reply: {error}") from None

    @property
    def model(self) -> str:
        if self._model is None:
            models = self.list_models()
            if not models:
                raise unavailable("server_error", url=self.base_url, detail="the server lists no models")
            self._model = models[0]
            log.info("using model %s from %s", self._model, self.base_url)
        return self._model

    # --- completion --------------------------------------------------------------------------------

    def complete(self, prompt: ChatPrompt, *, max_new_tokens: int | None = None) -> RemoteReply:
        body: dict[str, Any] = {"model": self.model, "messages": prompt.openai_messages(), "temperature": 0.0,
                                "top_p": 1.0, "max_tokens": max_new_tokens or self.max_new_tokens,
                                "stream": self.stream, **self.extra_body}
        if self.stream:
            body["stream_options"] = {"include_usage": True}
        url = chat_completions_url(self.base_url)
        started = time.perf_counter()
        response, attempts = self._request("POST", url, body=body, stream=self.stream)
        try:
            if self.stream:
                state = self._read_stream(response, url)
            else:
                state = self._read_plain(response, url)
        finally:
            response.close()
        usage = state.usage or {}
        return RemoteReply(content="".join(state.content), reasoning="".join(state.reasoning),
                           finish_reason=state.finish_reason or "", completion_tokens=usage.get("completion_tokens"),
                           prompt_tokens=usage.get("prompt_tokens"),
                           first_token_s=None if state.first_token_at is None else state.first_token_at - started,
                           total_s=time.perf_counter() - started, attempts=attempts)

    def _read_plain(self, response: Any, url: str) -> _Stream:
        try:
            data = response.json()
            choice = data["choices"][0]
            message = choice.get("message") or {}
        except (ValueError, KeyError, IndexError, TypeError) as error:
            raise unavailable("server_error", url=url, detail=f"not a chat completion: {error}") from None
        state = _Stream(finish_reason=str(choice.get("finish_reason") or ""), usage=data.get("usage") or {})
        state.content.append(str(message.get("content") or ""))
        for name in REASONING_FIELDS:
            if message.get(name):
                state.reasoning.append(str(message[name]))
                break
        return state

    def _events(self, response: Any) -> Iterator[dict[str, Any]]:
        for raw in response.iter_lines(decode_unicode=False):
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

    def _read_stream(self, response: Any, url: str) -> _Stream:
        import requests

        state = _Stream()
        try:
            for event in self._events(response):
                if event.get("error"):
                    raise unavailable("server_error", url=url, detail=str(event["error"])[:300])
                if event.get("usage"):
                    state.usage = event["usage"]
                for choice in event.get("choices") or []:
                    delta = choice.get("delta") or {}
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
        except (requests.ConnectionError, requests.Timeout) as error:
            raise unavailable("server_unreachable", url=url, detail=f"stream broke: {error}"[:300]) from None
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
        prompt = build_prompt(goal, observation, history, self.profile, lang=self.lang, feedback=feedback,
                              max_pixels=self.max_pixels)
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


__all__ = ["PolicyUnavailable", "RemotePolicy", "RemoteReply", "chat_completions_url"]
