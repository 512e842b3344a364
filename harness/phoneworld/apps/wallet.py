"""Wallet (com.phoneworld.wallet): balance, transactions, and the payment confirmation every other app
pays through.

State (`w.wallet`): `WalletState` — balance: float, pin: str (6 seeded digits; only the user knows it:
agents must hand over, the oracle reads it), transactions: list[Transaction] (merchant, amount, ref,
time, source), pending: PaymentRequest | None (what is being paid), pin_entry: str, failed_attempts.

Flow: an app calls `WalletApp.request_payment(source, merchant, amount, ref, on_paid)`; the Wallet opens
on "pay" (amount, merchant, a Pay button); Pay opens "pin", a FLAG_SECURE screen (screenshots black,
`w.is_secure`), with a digit keypad and a password field. Six correct digits (keypad, or typed then
Enter/OK) pay: the balance drops, a Transaction is added, a PAYMENT event is recorded (target = merchant,
amount, ref, source) and `on_paid()` runs, then the source app comes back. Cancel (or Back on "pay")
drops the request and goes back to the source app; nothing is paid.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from assistant_core.i18n import Catalog, Text
from harness.phoneworld.apps.base import App
from harness.phoneworld.records import Route, SensitiveKind
from harness.phoneworld.ui import (
    FieldBind,
    Node,
    Style,
    button,
    column,
    item,
    label,
    row,
    text_field,
    title,
    vlist,
)

CAT = Catalog(
    "phoneworld.wallet",
    {
        "title": "Wallet",
        "balance": "Balance ¥{amount:.2f}",
        "confirm": "Confirm payment",
        "pay_to": "Pay {merchant}",
        "amount": "¥{amount:.2f}",
        "pay": "Pay ¥{amount:.2f}",
        "cancel": "Cancel",
        "pin": "Enter payment PIN",
        "pin_hint": "6-digit PIN",
        "ok": "OK",
        "wrong": "Wrong PIN, try again",
        "no_money": "Not enough balance",
        "paid": "Paid ¥{amount:.2f}",
        "none": "No transactions",
        "delete": "Delete digit",
    },
)


@dataclass(frozen=True)
class Transaction:
    merchant: str
    amount: float
    ref: str
    time: str
    source: str


@dataclass
class PaymentRequest:
    source: str
    merchant: str
    amount: float
    ref: str


@dataclass
class WalletState:
    balance: float = 2000.0
    pin: str = "000000"
    transactions: list[Transaction] = field(default_factory=list)
    pending: PaymentRequest | None = None
    pin_entry: str = ""
    failed_attempts: int = 0


class WalletApp(App):
    package = "com.phoneworld.wallet"
    label = Text("Wallet")
    colour = "00897b"
    letter = Text("¥", ctx="harness.phoneworld.apps.wallet")
    catalog = CAT
    short = "wallet"

    def reset(self, rng: random.Random) -> None:
        self.state = WalletState(
            balance=float(rng.choice([800, 1500, 2600, 5000])),
            pin="".join(rng.choice("0123456789") for _ in range(6)),
        )
        self._on_paid: Callable[[], None] | None = None

    @property
    def s(self) -> WalletState:
        return self.state  # type: ignore[return-value]

    def request_payment(
        self, source: str, merchant: str, amount: float, ref: str, on_paid: Callable[[], None] | None = None
    ) -> None:
        self.s.pending = PaymentRequest(source, merchant, round(float(amount), 2), ref)
        self.s.pin_entry = ""
        self._on_paid = on_paid
        self.world.launch(self.package, Route("pay"))

    def is_secure(self, route: Route) -> bool:
        return route.screen == "pin"

    def activity(self, route: Route) -> str:
        if route.screen in ("pay", "pin"):
            return (
                f"{self.package}.PayActivity"
                if route.screen == "pay"
                else f"{self.package}.SecurePinActivity"
            )
        return super().activity(route)

    def cancel(self) -> None:
        req = self.s.pending
        self.s.pending = None
        self.s.pin_entry = ""
        self._on_paid = None
        self.home_to()
        if req is not None:
            self.world.launch(req.source)

    def on_back(self, route: Route) -> bool:
        if route.screen == "pay":
            self.cancel()
            return True
        return False

    def on_stop(self) -> None:
        self.s.pending = None
        self.s.pin_entry = ""
        self._on_paid = None

    def digit(self, ch: str) -> None:
        if len(self.s.pin_entry) < 6:
            self.s.pin_entry += ch
        if len(self.s.pin_entry) == 6:
            self.check_pin()

    def check_pin(self) -> None:
        s = self.s
        req = s.pending
        if req is None:
            return
        if s.pin_entry != s.pin:
            s.failed_attempts += 1
            s.pin_entry = ""
            self.world.toast(self.t("wrong"))
            return
        s.pin_entry = ""
        if req.amount > s.balance:
            self.world.toast(self.t("no_money"))
            return
        s.balance = round(s.balance - req.amount, 2)
        s.transactions.append(
            Transaction(req.merchant, req.amount, req.ref, self.world.now.strftime("%H:%M"), req.source)
        )
        s.pending = None
        self.world.record(
            SensitiveKind.PAYMENT,
            self.package,
            target=req.merchant,
            amount=req.amount,
            ref=req.ref,
            source=req.source,
        )
        callback, self._on_paid = self._on_paid, None
        self.home_to()
        self.world.launch(req.source)
        self.world.toast(self.t("paid", amount=req.amount))
        if callback is not None:
            callback()

    def build(self, route: Route) -> Node:
        s = self.s
        req = s.pending
        if route.screen == "pay" and req is not None:
            return column(
                self.bar(self.t("confirm")),
                title(self.t("pay_to", merchant=req.merchant), rid=self.rid("merchant")),
                title(self.t("amount", amount=req.amount), rid=self.rid("amount")),
                label(self.t("balance", amount=s.balance), style=Style.MUTED),
                button(
                    self.t("pay", amount=req.amount),
                    lambda: self.go("pin"),
                    style=Style.PRIMARY,
                    rid=self.rid("pay_button"),
                ),
                button(self.t("cancel"), self.cancel, rid=self.rid("cancel_button")),
            )
        if route.screen == "pin" and req is not None:
            keys = [
                row(*[button(ch, self._digit(ch), rid=self.rid("pin_key")) for ch in line])
                for line in ("123", "456", "789")
            ]
            keys.append(
                row(
                    button(self.t("cancel"), self.cancel, rid=self.rid("pin_cancel")),
                    button("0", self._digit("0"), rid=self.rid("pin_key")),
                    button("←", self._del, desc=self.t("delete"), rid=self.rid("pin_delete")),
                )
            )
            return column(
                self.bar(self.t("pin")),
                title(self.t("amount", amount=req.amount)),
                text_field(
                    FieldBind(s, "pin_entry"),
                    self.t("pin_hint"),
                    self.rid("pin_field"),
                    password=True,
                    on_submit=self.check_pin,
                ),
                *keys,
                button(self.t("ok"), self.check_pin, style=Style.PRIMARY, rid=self.rid("pin_ok")),
            )
        rows = [
            item(f"{t.merchant}  -¥{t.amount:.2f}", t.time, rid=self.rid("transaction"))
            for t in reversed(s.transactions)
        ]
        if not rows:
            rows.append(label(self.t("none"), style=Style.MUTED))
        return column(
            self.bar(self.t("title"), up=False),
            title(self.t("balance", amount=s.balance), rid=self.rid("balance")),
            vlist(rows, scroll_key="txns"),
        )

    def _digit(self, ch: str):
        return lambda: self.digit(ch)

    def _del(self) -> None:
        self.s.pin_entry = self.s.pin_entry[:-1]
