"""One question per purchase, and hand-overs that end, on the simulated phone's demo purchase (ShopPayOrder,
the PhoneWorld-lite oracle as the policy, the real loop, gate and history):
- the purchase is asked once, at Buy now, with the item, the amount and the app; the later Pay steps of the
  same purchase (same amount, same payee) go ahead, each said aloud ("Paying ¥149.00 to Shop, as you said"),
  while the gate still rules CONFIRM on each; what was approved and what it covered (screen, app) is in the
  history's audit log;
- a different amount on the pay screen asks again (twice in all);
- the protected PIN screen is handed over with how to answer; the user presses the PIN on the simulated
  phone's keypad (harness.phoneworld.pinpad), says "done" (or 好了), and the run looks again and goes on:
  the order is placed and paid; "done" with the screen still protected asks again; no ends; stop stops."""

from __future__ import annotations

import pytest

from assistant_core.confirm import FixedConfirmer
from assistant_core.events import ConfirmationAnswered, Outcome, Paused, PauseReason, Said
from assistant_core.history import HistoryStore
from assistant_core.types import ConfirmAnswer, Verdict
from harness.phoneworld import SimDevice
from harness.phoneworld.oracle import OraclePolicy
from harness.phoneworld.pinpad import enter_pin, pin_pad_showing
from harness.phoneworld.tasks import make_world, registry
from phonebuddy.assemble import RunSpec, assemble

TASK = "ShopPayOrder"
SHOP, WALLET = "com.phoneworld.shop", "com.phoneworld.wallet"


class User:
    """Answers hand-over questions: `script` items are "pin" (press the PIN on the keypad, say nothing
    yet), or a word to say."""

    def __init__(self, device, world, script):
        self.device, self.world, self.script, self.questions = device, world, list(script), []

    def ask_user(self, question, timeout_s=None):
        self.questions.append(question)
        while self.script:
            item = self.script.pop(0)
            if item != "pin":
                return item
            assert pin_pad_showing(self.device)
            assert enter_pin(self.device, self.world.apps[WALLET].state.pin)
        return None


def purchase(lang="en", script=("pin", "done"), *, extra_in_cart=False, history=None):
    world, params = make_world(TASK, 0, lang)
    task = registry.get(TASK)
    if extra_in_cart:  # something already in the cart: the pay screen's total is not the product's price
        world.shop.cart.clear()
        from harness.phoneworld.apps.shop import CartLine

        world.shop.cart.append(CartLine(world.shop.products[0].id, 1))
    device = SimDevice(world)
    parts = assemble(RunSpec(device=device, lang=lang, simulated=True, task=task))
    confirmer = FixedConfirmer(ConfirmAnswer.YES)
    user = User(device, world, script)
    gen = parts.episode(task.instruction(params).get(lang), confirmer=confirmer, user=user, history=history,
                        policy=OraclePolicy(TASK, 0, world, language=lang, params=params), sleep=lambda s: None)
    events = []
    while True:
        try:
            events.append(next(gen))
        except StopIteration as done:
            return world, confirmer, user, events, done.value


@pytest.mark.parametrize(("lang", "done_word"), [("en", "done"), ("zh", "好了")])
def test_the_demo_purchase_asks_once_and_completes_after_the_pin_and_done(tmp_path, lang, done_word):
    history = HistoryStore(tmp_path / "h.db")
    world, confirmer, user, events, result = purchase(lang, ("pin", done_word), history=history)
    assert len(confirmer.seen) == 1, [r.spoken("en") for r in confirmer.seen]  # one question
    first = confirmer.seen[0]
    question = first.spoken(lang)
    price = "¥149.00"
    assert price in question and ("Desk lamp" in question or "台灯" in question) and first.app in question
    covered = [e for e in events if isinstance(e, ConfirmationAnswered) and e.carried]
    assert len(covered) == 2  # Pay in the Shop, Pay in the Wallet
    said = [e.text.get(lang) for e in events if isinstance(e, Said)]
    expected = f"Paying {price} to Shop, as you said." if lang == "en" else f"按您说的，向「{first.payee}」支付 {price}。"
    assert sum(t.startswith(expected) for t in said) == 2, said
    assert any(t.startswith(expected) and ("88" in t) for t in said), said  # the address, once it is known
    gated = [s for s in result.steps if s.decision is not None and s.decision.verdict is Verdict.CONFIRM]
    assert len(gated) == 3 and all(s.confirmation is ConfirmAnswer.YES and s.executed for s in gated)  # judged each
    # The hand-over said how to answer; the PIN on the protected screen and "done" finished the purchase.
    handover = [e for e in events if isinstance(e, Paused) and e.reason is PauseReason.HANDOVER]
    assert len(handover) == 1 and ("say or type “done”" in handover[0].message.en)
    assert "好了" in handover[0].message.zh
    assert result.outcome is Outcome.FINISHED
    order = world.shop.orders[-1]
    assert order.total == 149.0 and order.address and world.wallet.transactions[-1].amount == 149.0
    assert world.wallet.transactions[-1].merchant == "Shop" or world.wallet.transactions[-1].merchant == "商城"
    # The binding is in the history: what was approved (screen, app) and each step it covered.
    approved = history.audit_rows("purchase_approval")
    used = history.audit_rows("purchase_approval_used")
    assert len(approved) == 1 and approved[0][3]["amount"] == price and approved[0][3]["package"] == SHOP
    assert [u[3]["covered_package"] for u in used] == [SHOP, WALLET]
    assert all(u[3]["amount"] == price and u[3]["covered_amount"] == price for u in used)
    assert result.approvals and result.approvals[0]["kind"] == "approved"


def test_a_different_amount_on_the_pay_screen_asks_again():
    world, confirmer, _user, events, result = purchase(extra_in_cart=True)
    amounts = [r.how_much for r in confirmer.seen]
    assert len(confirmer.seen) == 2, [r.spoken("en") for r in confirmer.seen]  # asked twice
    assert amounts[0] == "¥149.00" and amounts[1] != amounts[0]
    # the wallet's step, for the new amount to the same payee, is covered by the second yes
    assert sum(1 for e in events if isinstance(e, ConfirmationAnswered) and e.carried) == 1
    assert world.wallet.transactions and world.wallet.transactions[-1].amount != 149.0


def test_done_with_the_screen_still_protected_asks_again_then_goes_on():
    world, confirmer, user, events, result = purchase(script=("done", "pin", "完成"))
    handovers = [e for e in events if isinstance(e, Paused) and e.reason is PauseReason.HANDOVER]
    assert len(handovers) == 2
    assert handovers[1].message.en.startswith("The screen is still protected.")
    assert result.outcome is Outcome.FINISHED and world.wallet.transactions


@pytest.mark.parametrize(("word", "outcome"), [("no", Outcome.USER_ENDED), ("stop", Outcome.STOPPED)])
def test_no_or_stop_at_the_hand_over_ends_with_nothing_paid(word, outcome):
    world, _confirmer, _user, _events, result = purchase(script=(word,))
    assert result.outcome is outcome
    assert not world.wallet.transactions and not world.shop.orders
