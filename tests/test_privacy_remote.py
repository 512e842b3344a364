"""What leaves this computer: a local HTTP server stands in for a remote model and captures each request.

The real RemotePolicy, put together by the front hall (phonebuddy.assemble, which attaches the privacy
Outbound), sends screenshots whose notification-shade rows and password fields are black (asserted on the
decoded pixels), text with "never" profile items and card numbers replaced, and every request is in the
privacy store's log (host, bytes, what was masked). A run on a local policy sends nothing and the log says so.
"""

from __future__ import annotations

import base64
import io
import json
import threading
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from assistant_core.confirm import FixedConfirmer
from assistant_core.loop import ScriptedUser
from assistant_core.policies import ScriptedPolicy, action_to_reply
from assistant_core.policy.remote import RemotePolicy
from assistant_core.privacy import Kind, Outbound, Profile, ProfileItem, Tier
from assistant_core.profile_store import PrivacyStore
from assistant_core.types import Action, ConfirmAnswer
from harness.phoneworld import SimDevice, World
from phonebuddy.assemble import RunSpec, assemble

CHAT, MAIL, NOTES = "com.phoneworld.chat", "com.android.email", "com.phoneworld.notes"
CARD = "4111 1111 1111 1111"
NEVER = Profile((ProfileItem(Kind.ID_NUMBER, "11010519491231002X", Tier.NEVER),))


@pytest.fixture
def capture():
    """(url, bodies): an OpenAI-compatible stand-in that keeps every POST body and answers `finish`."""
    bodies: list[dict[str, Any]] = []
    reply = action_to_reply(Action.finish("done"), 1080, 2400, thought="nothing to do")

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:
            pass

        def do_GET(self) -> None:
            self._send({"data": [{"id": "stand-in"}]})

        def do_POST(self) -> None:
            bodies.append(json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0")))))
            self._send({"choices": [{"index": 0, "message": {"role": "assistant", "content": reply},
                                     "finish_reason": "stop"}]})

        def _send(self, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", bodies
    httpd.shutdown()
    httpd.server_close()


def sent_image(body: dict[str, Any]) -> Image.Image:
    parts = body["messages"][1]["content"]
    url = next(p["image_url"]["url"] for p in parts if p["type"] == "image_url")
    return Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).convert("RGB")


def sent_text(body: dict[str, Any]) -> str:
    return json.dumps(body["messages"], ensure_ascii=False).split('"image_url"')[0] + "".join(
        p.get("text", "") for p in body["messages"][1]["content"])


def region_mean(image: Image.Image, bounds: tuple[int, int, int, int], size: tuple[int, int]) -> float:
    """The mean brightness inside a box given in device pixels, a few pixels in from its edges (JPEG)."""
    sx, sy = image.width / size[0], image.height / size[1]
    left, top, right, bottom = bounds
    box = (int(left * sx) + 3, int(top * sy) + 3, int(right * sx) - 3, int(bottom * sy) - 3)
    crop = image.crop(box).convert("L")
    return sum(crop.getdata()) / max(1, crop.width * crop.height)


def shade_world() -> World:
    world = World(seed=0, language="en")
    world.notify(MAIL, "Bank statement", "Your balance is 12,400")
    world.notify(CHAT, "Li Wei", "Dinner at seven?")
    world.sys.shade_open = True
    world.version += 1
    return world


def test_remote_request_masks_the_shade_and_is_logged(capture, tmp_path: Path):
    url, bodies = capture
    store = PrivacyStore(tmp_path / "privacy.db")
    world = shade_world()
    device = SimDevice(world)
    before = device.observe()
    rows = [e for e in before.elements if e.resource_id == "android:id/status_bar_latest_event_content"]
    assert len(rows) >= 2  # the world's own notification and the two above
    parts = assemble(RunSpec(device=device, lang="en", simulated=True, allowed_override=frozenset({CHAT}),
                             verify=False, profile=NEVER, privacy_log=store))
    policy = RemotePolicy(url, stream=False, retries=0)
    gen = parts.episode(f"Read my notifications; my card is {CARD}, ID 11010519491231002X", policy=policy,
                        confirmer=FixedConfirmer(ConfirmAnswer.NO), user=ScriptedUser([]), sleep=lambda s: None)
    for _ in gen:
        pass
    assert len(bodies) == 1
    image = sent_image(bodies[0])
    size = (before.width, before.height)
    for row in rows:  # no app name is shown in the row, so neither can be attributed to an allowed app
        assert region_mean(image, row.bounds, size) < 12, row
    raw = before.screenshot
    assert max(region_mean(raw, row.bounds, size) for row in rows) > 60  # the unmasked capture shows them
    # the quick-settings tiles above the rows are not masked
    tiles = next(e for e in before.elements if e.resource_id == "qs:wifi")
    assert region_mean(image, tiles.bounds, size) > 60
    text = sent_text(bodies[0])
    assert "4111" not in text and "11010519491231002X" not in text and "[hidden]" in text
    log = store.log_rows()
    remote = [r for r in log if r["backend"] == "remote"]
    assert len(remote) == 2  # the model-id discovery (GET, nothing masked) and the step (POST)
    post = max(remote, key=lambda r: r["bytes"])
    assert post["host"] == "127.0.0.1" and post["bytes"] > 10_000
    assert post["masked"]["shade_rows"] == len(rows) and post["masked"]["text"] >= 2
    summary = store.log_summary()
    assert "127.0.0.1" in summary.en and f"{len(rows)} notifications" in summary.en
    assert f"{len(rows)} 条未允许应用的通知" in summary.zh


def test_password_field_is_black_on_the_sent_screenshot(capture, tmp_path: Path):
    url, bodies = capture
    store = PrivacyStore(tmp_path / "privacy.db")
    world = World(seed=0, language="zh")
    device = SimDevice(world)
    world.launch(NOTES)
    obs = device.observe()
    # Mark the screen's biggest element as the phone would mark a password field (password=true).
    target = max((e for e in obs.elements if e.package == NOTES and e.area > 0), key=lambda e: e.area)
    assert region_mean(obs.screenshot, target.bounds, (obs.width, obs.height)) > 60
    marked = replace(obs, elements=tuple(replace(e, password=True) if e is target else e for e in obs.elements))
    policy = RemotePolicy(url, stream=False, retries=0)
    policy.outbound = Outbound(allowed_apps=frozenset({NOTES}), log=store)
    policy.propose("open my notes", marked)
    image = sent_image(bodies[-1])
    assert region_mean(image, target.bounds, (obs.width, obs.height)) < 12
    assert store.log_rows()[-1]["masked"] == {"secure_fields": 1}


def test_a_local_run_sends_nothing_and_the_log_says_so(tmp_path: Path):
    store = PrivacyStore(tmp_path / "privacy.db")
    device = SimDevice(World(seed=0, language="en"), screenshots=False)
    parts = assemble(RunSpec(device=device, lang="en", simulated=True, verify=False, privacy_log=store))
    for _ in parts.episode("wait", policy=ScriptedPolicy([action_to_reply(Action.finish("ok"), 1080, 2400)]),
                           confirmer=FixedConfirmer(ConfirmAnswer.NO), user=ScriptedUser([]), sleep=lambda s: None):
        pass
    rows = store.log_rows()
    assert [r["backend"] for r in rows] == ["local"] and rows[0]["bytes"] == 0
    summary = store.log_summary()
    assert summary.en.startswith("Nothing was sent") and "没有任何内容" in summary.zh


def test_never_items_shown_on_screen_are_black_and_the_users_own_words_stay(tmp_path: Path):
    from assistant_core.privacy import mask_regions, paint_mask
    from assistant_core.types import Observation, UIElement

    shown = UIElement((100, 500, 900, 600), text="ID: 11010519491231002X", package="com.example.app")
    name = UIElement((100, 700, 900, 800), text="Li Wei", package="com.example.app")
    obs = Observation(1080, 2400, "com.example.app", screenshot=Image.new("RGB", (540, 1200), (255, 255, 255)),
                      elements=(shown, name))
    boxes, labels, note = mask_regions(obs, allowed_apps=(), app_labels={}, profile=NEVER)
    assert boxes == [shown.bounds] and note.never_items == 1
    painted = paint_mask(obs.screenshot, boxes, obs.width, obs.height)
    assert region_mean(painted, shown.bounds, (1080, 2400)) == 0
    assert region_mean(painted, name.bounds, (1080, 2400)) == 255
    out = Outbound(profile=NEVER)
    out.mask_observation(obs, keep="Tell me my ID")
    assert out.mask_prompt_text("It says ID: 11010519491231002X") == "It says [hidden]"


def test_the_users_answer_is_theirs_to_send_like_the_request(capture):
    """A name the user gave as an answer is not hidden from the request because the phone's shade shows it:
    the answers are kept like the request itself (typed exchanges, never part of the goal)."""
    from assistant_core.i18n import Text
    from assistant_core.types import Exchange

    url, bodies = capture
    device = SimDevice(shade_world())
    seen = device.observe()
    policy = RemotePolicy(url, stream=False, retries=0)
    policy.outbound = Outbound(allowed_apps=frozenset(), app_labels=device.installed_apps())
    policy.propose("Reply to my friend", seen)
    hidden = policy.outbound._labels
    assert any("Li Wei" in label for label in hidden)  # the shade's row is masked text
    answer = next(label for label in hidden if "Li Wei" in label)
    asked = replace(seen, exchanges=(Exchange(Text("Who?", "谁？"), answer),))
    policy.propose("Reply to my friend", asked)
    assert f"(The user said: {answer})" in sent_text(bodies[-1])
