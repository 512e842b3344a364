"""First-run download through huggingface_hub, against a small hub served on this machine (the real hub
cannot be reached here): progress, size check, resume after a broken connection, completion marker."""

from __future__ import annotations

import hashlib
import json
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from speech.messages import ModelMissingError
from speech.models import COMPLETE_MARKER, DownloadProgress, ModelLocator, whisper_folder_ok

COMMIT = "0123456789abcdef0123456789abcdef01234567"


class FakeHub:
    """Serves `files` for any repository: paths-info (sizes), and resolve with HEAD, GET and Range."""

    def __init__(self, files: dict[str, bytes], *, claimed_sizes: dict[str, int] | None = None):
        self.files = files
        self.claimed_sizes = claimed_sizes or {}
        self.ranges: list[tuple[str, int]] = []
        self.break_first_get: set[str] = set()
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                body = self.rfile.read(length).decode()
                if self.headers.get("Content-Type", "").startswith("application/json"):
                    paths = json.loads(body).get("paths", [])
                else:
                    paths = urllib.parse.parse_qs(body).get("paths", [])
                infos = [
                    {"type": "file", "path": p, "size": hub.claimed_sizes.get(p, len(hub.files[p])),
                     "oid": hashlib.sha1(hub.files[p]).hexdigest()}
                    for p in paths if p in hub.files
                ]
                self._send(200, json.dumps(infos).encode(), "application/json")

            def _target(self):
                parts = urllib.parse.unquote(urllib.parse.urlparse(self.path).path).split("/resolve/", 1)
                if len(parts) != 2:
                    return None
                name = parts[1].split("/", 1)[1]
                return name if name in hub.files else None

            def _headers(self, name, length):
                self.send_header("X-Repo-Commit", COMMIT)
                self.send_header("ETag", f'"{hashlib.sha1(hub.files[name]).hexdigest()}"')
                self.send_header("Content-Length", str(length))
                self.send_header("Accept-Ranges", "bytes")

            def do_HEAD(self):
                name = self._target()
                if name is None:
                    self.send_response(404)
                    self.end_headers()
                    return
                self.send_response(200)
                self._headers(name, len(hub.files[name]))
                self.end_headers()

            def do_GET(self):
                name = self._target()
                if name is None:
                    self._send(404, b"not found", "text/plain")
                    return
                data = hub.files[name]
                start = 0
                if self.headers.get("Range"):
                    start = int(self.headers["Range"].split("=")[1].split("-")[0])
                    hub.ranges.append((name, start))
                self.send_response(206 if start else 200)
                self._headers(name, len(data) - start)
                if start:
                    self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
                self.end_headers()
                if name in hub.break_first_get:
                    hub.break_first_get.discard(name)
                    self.wfile.write(data[start : start + len(data) // 2])
                    self.wfile.flush()
                    self.connection.shutdown(2)  # the line drops half-way
                    return
                self.wfile.write(data[start:])

            def _send(self, code, body, kind):
                self.send_response(code)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


WHISPER_FILES = {
    "model.bin": bytes(range(256)) * 2_000,  # 512 kB
    "config.json": b'{"lang_ids": []}',
    "tokenizer.json": b"{}",
}


@pytest.fixture
def online(monkeypatch):
    import huggingface_hub.constants as hub_constants

    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", False)


def test_download_reports_progress_and_marks_the_folder_complete(tmp_path, online):
    hub = FakeHub(dict(WHISPER_FILES))
    seen: list[DownloadProgress] = []
    try:
        loc = ModelLocator(cache_dir=tmp_path, allow_download=True, use_wheels=False, endpoint=hub.url, progress=seen.append)
        folder = loc.whisper("tiny")
    finally:
        hub.close()
    assert folder == tmp_path / "whisper" / "tiny" and whisper_folder_ok(folder)
    assert (folder / "model.bin").read_bytes() == WHISPER_FILES["model.bin"]
    marker = json.loads((folder / COMPLETE_MARKER).read_text())
    assert marker["model.bin"] == len(WHISPER_FILES["model.bin"])
    total = sum(len(v) for v in WHISPER_FILES.values())
    assert seen and seen[-1].done_bytes == total and seen[-1].total_bytes == total
    assert [p.done_bytes for p in seen] == sorted(p.done_bytes for p in seen)
    assert not (folder / ".download").exists()
    # Found again without the hub.
    assert ModelLocator(cache_dir=tmp_path, use_wheels=False).whisper("tiny") == folder


def test_a_file_of_the_wrong_size_is_rejected(tmp_path, online):
    hub = FakeHub(dict(WHISPER_FILES), claimed_sizes={"model.bin": len(WHISPER_FILES["model.bin"]) + 10})
    try:
        loc = ModelLocator(cache_dir=tmp_path, allow_download=True, use_wheels=False, endpoint=hub.url)
        with pytest.raises(ModelMissingError) as caught:
            loc.whisper("tiny")
    finally:
        hub.close()
    assert "damaged or incomplete" in caught.value.text.en and "不完整" in caught.value.text.zh
    assert not whisper_folder_ok(tmp_path / "whisper" / "tiny")


def test_a_broken_download_resumes_where_it_stopped(tmp_path, online):
    # huggingface_hub writes in 10 MB chunks, so resuming shows only past 10 MB: a 24 MB file that breaks
    # at 12 MB must resume from 10 MB, not from 0.
    files = dict(WHISPER_FILES, **{"model.bin": bytes(range(256)) * (24 * 4096)})
    hub = FakeHub(files)
    hub.break_first_get.add("model.bin")
    loc = ModelLocator(cache_dir=tmp_path, allow_download=True, use_wheels=False, endpoint=hub.url)
    try:
        try:
            folder = loc.whisper("tiny")
        except ModelMissingError as error:  # the hub library gave up: a second run must resume
            assert "internet" in error.text.en
            folder = loc.whisper("tiny")
    finally:
        hub.close()
    assert (folder / "model.bin").read_bytes() == files["model.bin"]
    assert any(name == "model.bin" and start >= 10 * 2**20 for name, start in hub.ranges), hub.ranges
