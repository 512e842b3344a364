"""The demo purchase end to end by keyboard, in the window: the request typed, one confirmation (Y after the
grace period), the hand-over question saying how to answer (F10), the PIN typed into the PIN box the
window shows for the simulated phone's protected screen, then F10 (or "done" typed): the order is placed
and paid on the simulated phone, and the PIN was never shown, said or recorded."""

from __future__ import annotations

import re

import pytest
from PySide6.QtCore import Qt

from app.confirm_dialog import GRACE_MS
from app.strings import tr
from assistant_core.events import ConfirmationRequested
from assistant_core.history import HistoryStore
from tests.app_fixtures import make_window

REQUEST = {"en": "Buy 'Desk lamp' in the Shop and pay for it, delivered to Max Yuan, 88 West Road, 2nd floor.",
           "zh": "在商城买“台灯”并付款，收货人袁麦克斯，地址西路88号2楼。"}


@pytest.mark.parametrize(("lang", "finish"), [("en", "f10"), ("zh", "typed")])
def test_the_demo_purchase_completes_by_keyboard(qtbot, tmp_path, lang, finish):
    from harness.phoneworld.tasks import registry

    task = registry.get("ShopPayOrder")
    request = task.instruction(task.params(task.rng_for(0))).get(lang)
    history = HistoryStore(tmp_path / "h.db")
    window = make_window(qtbot, lang=lang, history=history)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=5000)
    window.request_box.setText(request)
    qtbot.keyClick(window.request_box, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: window._dialog is not None and window._dialog.isVisible(), timeout=60_000)
    qtbot.wait(GRACE_MS + 100)
    qtbot.keyClick(window._dialog, Qt.Key.Key_Y)
    # The hand-over: the question says how to answer, and the PIN box is shown and focused.
    qtbot.waitUntil(lambda: window.pin_pad.isVisible(), timeout=60_000)
    question = [e.text for e in window.conversation.entries if tr("handover_key", lang) in e.text]
    assert question and ("“done”" in question[-1] or "“好了”" in question[-1]), question
    qtbot.waitUntil(lambda: window.focusWidget() is window.pin_pad, timeout=5000)
    world = window.phone.world
    pin = world.apps["com.phoneworld.wallet"].state.pin
    qtbot.keyClicks(window.pin_pad, pin)
    qtbot.keyClick(window.pin_pad, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: any(tr("pin_pressed", lang, n=6) == a.text for a in window.announcer.log), timeout=10_000)
    window.activateWindow()  # the confirmation dialog had the focus; the window's keys work in the window
    qtbot.waitUntil(window.isActiveWindow, timeout=5000)
    qtbot.waitUntil(lambda: window.focusWidget() is window.request_box, timeout=5000)  # after Enter: "done" next
    with qtbot.waitSignal(window.run_finished, timeout=60_000):
        if finish == "f10":
            qtbot.keyClick(window.request_box, Qt.Key.Key_F10)
        else:
            window.request_box.setText(tr("done_word", lang))
            qtbot.keyClick(window.request_box, Qt.Key.Key_Return)
    asked = [e for e in window.events_seen if isinstance(e, ConfirmationRequested)]
    assert len(asked) == 1, [e.question.get(lang) for e in asked]  # one question for the whole purchase
    assert world.shop.orders and world.shop.orders[-1].total == world.wallet.transactions[-1].amount  # paid
    assert not window.pin_pad.isVisible()
    everything = " ".join(e.text for e in window.conversation.entries) + " ".join(a.text for a in window.announcer.log)
    # the PIN as a number of its own: six digits can also turn up inside a longer one (a float's digits,
    # a timestamp), which is no leak (this failed once on '931210' somewhere in the history's rows)
    alone = re.compile(rf"(?<![\d.]){pin}(?!\d)")
    assert not alone.search(everything)
    rows = " ".join(str(r) for table in ("conversation", "events", "audit") for r in history._open()[table].rows)
    assert not alone.search(rows), [m.string[max(0, m.start() - 40):m.end() + 40] for m in alone.finditer(rows)]
