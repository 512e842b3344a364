"""Issue 28 (item 5) and 27: what a tool reads stays within the caregiver's allowed apps.

`query notifications` read every app's notifications into the model's history. Now a notification from
an app that is not allowed never reaches the model (the history the policy is given on the next step),
the stored history (every text column of the run's database), or the spoken text; those of allowed apps
(and of the phone's own shell) are still read. Likewise `query screen` does not read an app that is not
allowed. Through the real loop, on the simulated phone in process and through the real adb server, in
English and Chinese.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field

import pytest

from assistant_core.confirm import FixedConfirmer
from assistant_core.events import Said
from assistant_core.history import HistoryStore
from assistant_core.loop import LoopConfig, run_episode
from assistant_core.policies import ScriptedPolicy
from assistant_core.safety import GateContext
from assistant_core.types import ConfirmAnswer, Observation, Proposal, Step
from harness.phoneworld import SimDevice, World
from tests.test_tools_gate import reply

pytest_plugins = ("tests.adb_fixtures",)

SECRET = "Your Wallet code 448812 for ¥3,000"
WALLET, CHAT, SHOP = "com.phoneworld.wallet", "com.phoneworld.chat", "com.phoneworld.shop"


@dataclass
class Watching:
    """A scripted model that remembers the history the loop gives it on every step."""

    inner: ScriptedPolicy
    seen: list[str] = field(default_factory=list)

    def propose(self, goal: str, observation: Observation, history: Sequence[Step]) -> Proposal:
        self.seen.extend(json.dumps([s.result, s.error]) for s in history)
        return self.inner.propose(goal, observation, history)


def world_with_notifications(lang: str) -> World:
    world = World(seed=0, language=lang)
    world.notify(WALLET, "Wallet", SECRET)
    world.notify(CHAT, "Grace", "Lunch at noon?")
    return world


def run(device, lang: str, query: str, tmp_path, allowed=frozenset({CHAT, "com.android.messaging"})):
    store = HistoryStore(tmp_path / f"history-{lang}-{query}.db")
    policy = Watching(ScriptedPolicy.from_replies([reply("query", query=query), reply("finish", text="")]))
    context = GateContext(allowed_apps=frozenset(allowed), app_labels=device.installed_apps(), lang=lang)
    gen = run_episode("What are my notifications?", device=device, policy=policy, confirmer=FixedConfirmer(ConfirmAnswer.NO),
                      context=context, history=store, config=LoopConfig(step_budget=4, lang=lang), sleep=lambda s: None)
    events = []
    while True:
        try:
            events.append(next(gen))
        except StopIteration as done:
            result = done.value
            break
    store.close()
    with sqlite3.connect(tmp_path / f"history-{lang}-{query}.db") as db:
        stored = []
        for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'"):
            stored += [" ".join(str(v) for v in row if not isinstance(v, bytes)) for row in db.execute(f'SELECT * FROM "{table}"')]
    spoken = [e.text.en + " " + e.text.zh for e in events if isinstance(e, Said)]
    return result, spoken, policy.seen, stored


def assert_kept_out(result, spoken, seen, stored):
    for where, texts in (("spoken", spoken), ("model history", seen), ("stored history", stored),
                         ("steps", [s.result for s in result.steps])):
        assert not any("448812" in t or "Wallet code" in t for t in texts), (where, texts)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_notification_from_an_app_that_is_not_allowed_never_reaches_the_model_the_history_or_the_voice(lang, tmp_path):
    world = world_with_notifications(lang)
    result, spoken, seen, stored = run(SimDevice(world, screenshots=False), lang, "notifications", tmp_path)
    assert_kept_out(result, spoken, seen, stored)
    # The allowed app's notification is read, and reaches all three.
    assert any("Lunch at noon?" in t for t in spoken) and any("Lunch at noon?" in t for t in seen)
    assert any("Lunch at noon?" in t for t in stored)
    # Allowed, the same notification is read (the filter is the allow-list, not the words).
    world = world_with_notifications(lang)
    result, spoken, _, _ = run(SimDevice(world, screenshots=False), lang, "notifications", tmp_path / "..",
                               allowed=frozenset({CHAT, WALLET}))
    assert any("448812" in t for t in spoken)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_screen_of_an_app_that_is_not_allowed_is_not_read(lang, tmp_path):
    world = world_with_notifications(lang)
    world.launch(SHOP)
    shop_words = {e.label for e in world.elements() if e.package == SHOP and len(e.label) > 3} - {"Shop", "商城"}
    assert shop_words
    result, spoken, seen, stored = run(SimDevice(world, screenshots=False), lang, "screen", tmp_path)
    for texts in (spoken, seen, stored):
        assert not any(w in t for w in shop_words for t in texts)
    assert any("not one your caregiver allowed" in t or "不在照护人允许" in t for t in spoken)


def test_over_adb_the_notification_is_kept_out_too(adb_server, attach, tmp_path):
    from harness.adb import AdbDevice

    world = world_with_notifications("en")
    with attach(world) as phone:
        device = AdbDevice(adb_server.client(), phone.address, reconnect_grace_s=3.0)
        try:
            result, spoken, seen, stored = run(device, "en", "notifications", tmp_path)
        finally:
            device.close()
    assert_kept_out(result, spoken, seen, stored)
    assert any("Lunch at noon?" in t for t in spoken)
