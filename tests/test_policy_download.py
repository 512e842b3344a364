"""`download_weights` through huggingface_hub's snapshot_download against a small hub served on this
machine (the real hub cannot be reached here): byte progress, the snapshot layout, retries when the
connection drops half-way through the weights, and complete files skipped on the next run."""

from __future__ import annotations

import hashlib
import json
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from assistant_core.policy.weights import download_weights, locate_weights

COMMIT = "0123456789abcdef0123456789abcdef01234567"
FILES = {"config.json": b'{"model_type": "qwen3_5"}', "tokenizer.json": b"{}",
         "model.safetensors": bytes(range(256)) * 4000, "notes.bin": b"not wanted"}


class LocalHub:
    """Model info, file tree, HEAD and GET (with Range) for any repository, serving FILES."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, str | None]] = []
        self.breaks: dict[str, int] = {}  # file -> how many more GETs to cut half-way
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _json(self, payload) -> None:
                body = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _file(self) -> str:
                path = urllib.parse.unquote(urllib.parse.urlparse(self.path).path)
                return path.split("/resolve/", 1)[1].split("/", 1)[1]

            def _file_headers(self, name: str, length: int) -> None:
                self.send_header("X-Repo-Commit", COMMIT)
                self.send_header("ETag", f'"{hashlib.sha1(FILES[name]).hexdigest()}"')
                self.send_header("Content-Length", str(length))
                self.send_header("Accept-Ranges", "bytes")

            def do_HEAD(self):
                name = self._file()
                hub.requests.append(("HEAD", name, None))
                self.send_response(200)
                self._file_headers(name, len(FILES[name]))
                self.end_headers()

            def do_GET(self):
                path = urllib.parse.unquote(urllib.parse.urlparse(self.path).path)
                if path.startswith("/api/models/") and "/tree/" in path:
                    return self._json([{"type": "file", "path": n, "size": len(d),
                                        "oid": hashlib.sha1(d).hexdigest()} for n, d in FILES.items()])
                if path.startswith("/api/models/"):
                    return self._json({"id": "repo", "sha": COMMIT,
                                       "siblings": [{"rfilename": n, "size": len(d)} for n, d in FILES.items()]})
                name = self._file()
                data, start = FILES[name], 0
                if self.headers.get("Range"):
                    start = int(self.headers["Range"].split("=")[1].split("-")[0])
                hub.requests.append(("GET", name, self.headers.get("Range")))
                self.send_response(206 if start else 200)
                self._file_headers(name, len(data) - start)
                if start:
                    self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
                self.end_headers()
                if hub.breaks.get(name, 0) > 0:
                    hub.breaks[name] -= 1
                    self.wfile.write(data[start: start + (len(data) - start) // 2])
                    self.wfile.flush()
                    self.connection.shutdown(2)  # the line drops half-way
                    return
                self.wfile.write(data[start:])

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def hub(monkeypatch):
    import huggingface_hub.constants as constants

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    server = LocalHub()
    yield server
    server.close()


def test_download_reports_progress_and_lands_in_the_cache(hub, tmp_path):
    seen = []
    folder = download_weights("phonebuddy-0.8b", cache_dir=tmp_path, endpoint=hub.url, on_progress=seen.append)
    assert folder == tmp_path / "models--PhoneBuddyAI--PhoneBuddy-0.8B" / "snapshots" / COMMIT
    assert (folder / "model.safetensors").read_bytes() == FILES["model.safetensors"]
    assert not (folder / "notes.bin").exists()  # only what inference needs
    assert seen and max(p.done_bytes for p in seen) >= len(FILES["model.safetensors"])
    assert locate_weights("phonebuddy-0.8b", cache_dir=tmp_path) == folder  # found again without the hub


def test_a_broken_connection_is_retried_by_the_hub(hub, tmp_path):
    hub.breaks["model.safetensors"] = 2  # the first GET and the hub's own first retry both break
    folder = download_weights("phonebuddy-0.8b", cache_dir=tmp_path, endpoint=hub.url)
    assert (folder / "model.safetensors").read_bytes() == FILES["model.safetensors"]
    gets = [name for kind, name, _ in hub.requests if kind == "GET" and name == "model.safetensors"]
    assert len(gets) == 3


def test_a_second_download_skips_complete_files(hub, tmp_path):
    download_weights("phonebuddy-0.8b", cache_dir=tmp_path, endpoint=hub.url)
    first = len(hub.requests)
    folder = download_weights("phonebuddy-0.8b", cache_dir=tmp_path, endpoint=hub.url)
    assert (folder / "model.safetensors").read_bytes() == FILES["model.safetensors"]
    assert not [r for r in hub.requests[first:] if r[0] == "GET"]  # nothing fetched again
