"""With weights present the window runs the real policy: a tiny random-weight checkpoint of the real
architecture loads through assistant_core.policy.LocalPolicy on the worker thread. Its replies are
nonsense, so the loop retries and stops with a spoken reason, while the window keeps ticking."""

from __future__ import annotations

import pytest

from app.agent import AgentChoice, AgentKind, choose_agent, make_policy
from app.conversation import EntryKind
from tests.app_fixtures import Ticker, make_window

pytest_plugins = ("tests.policy_fixtures",)


def test_choice_follows_weights_and_server():
    assert choose_agent(None, simulated=True, have_weights=False).kind is AgentKind.DEMO
    assert choose_agent(None, simulated=False, have_weights=True).kind is AgentKind.LOCAL_CPU
    assert choose_agent(None, simulated=False, have_weights=True, cuda=True).kind is AgentKind.LOCAL_4BIT
    server = choose_agent(AgentKind.SERVER, simulated=False, have_weights=False, server="http://10.0.0.2:8000/v1")
    assert server.kind is AgentKind.SERVER and server.label("en").endswith("http://10.0.0.2:8000/v1")
    # Weights asked for but absent: never pretend; the demo is labelled as a demo.
    assert choose_agent(AgentKind.LOCAL_CPU, simulated=True, have_weights=False).label("en").startswith("Scripted")


def test_remote_choice_builds_the_remote_policy():
    from assistant_core.policy.remote import RemotePolicy

    policy = make_policy(AgentChoice(AgentKind.SERVER, server_address="http://127.0.0.1:9/v1"), lang="zh")
    assert isinstance(policy, RemotePolicy) and policy.base_url == "http://127.0.0.1:9/v1" and policy.lang == "zh"


@pytest.mark.slow
def test_window_runs_the_local_policy_off_the_gui_thread(qtbot, tiny_qwen3_5):
    window = make_window(qtbot)
    window.agent = AgentChoice(AgentKind.LOCAL_CPU, model_dir=str(tiny_qwen3_5), max_pixels=96 * 32 * 32,
                               max_new_tokens=24)
    ticker = Ticker().start()
    # a request the fast path (harness.fastpath) hands to the model: "Turn on Wi-Fi" would never reach it
    window.submit_request("Find a pizza place near me")
    with qtbot.waitSignal(window.run_finished, timeout=240_000):
        pass
    ticker.stop()
    assert ticker.count > 10
    assert max(ticker.gaps) < 2.0, f"the GUI thread stalled for {max(ticker.gaps):.2f} s"
    last = window.conversation.entries[-1]
    from assistant_core.endings import SAY

    assert last.kind is EntryKind.RESULT and last.text.startswith(SAY.get("not_finished", "en"))  # said what happened
    from assistant_core.policy.local import MESSAGES

    notes = [e.text for e in window.conversation.entries if e.kind is EntryKind.NOTE]
    assert MESSAGES["loading"].en in notes and MESSAGES["ready"].en in notes  # loading was shown and said
    kinds = {type(e).__name__ for e in window.events_seen}
    assert "ErrorEvent" in kinds  # the unparseable replies were reported, not hidden
