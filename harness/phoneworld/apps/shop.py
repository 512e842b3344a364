"""Shop (com.phoneworld.shop): products, a cart and a checkout that pays through the Wallet.

State (`w.shop`): `ShopState` — products: list[Product] (id, name: Text, price, category), cart:
list[CartLine] (product id, qty), orders: list[Order] (id, lines, total, name, address, personal fields
filled), query (the search field), f_name / f_address (required checkout fields), personal:
PersonalDraft (phone, id_number, birthday — optional). `ShopApp.cart_total()`, `product(id)`,
`find_product(name)`.

Screens: main (search + list), product <id>, cart, checkout, done <order id>.
Checkout → "Pay ¥X" → Wallet confirmation → secure PIN screen; only a correct PIN places the order:
PURCHASE (target = order id, amount) and PAYMENT (by the Wallet) events, a FormSubmission in
`w.privacy_log` (form "shop_checkout"), the cart emptied.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from assistant_core.i18n import Catalog, Text
from harness.phoneworld.apps.base import App
from harness.phoneworld.apps.forms import PersonalDraft, missing_message, personal_fields, submission
from harness.phoneworld.records import PersonalField, Route, SensitiveKind
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
    "phoneworld.shop",
    {
        "title": "Shop",
        "search": "Search products",
        "cart": "Cart ({n})",
        "add": "Add to cart",
        "added": "Added to cart",
        "buy": "Buy now",
        "checkout": "Checkout",
        "total": "Total ¥{amount:.2f}",
        "empty": "Your cart is empty",
        "name": "Recipient name",
        "address": "Delivery address",
        "pay": "Pay ¥{amount:.2f}",
        "done": "Order placed",
        "order": "Order {id}",
        "remove": "Remove",
        "more": "Add one",
        "less": "Remove one",
        "price": "¥{amount:.2f}",
        "back_shop": "Continue shopping",
    },
)

CATALOGUE = (
    (Text("Reading glasses"), 59.0, "health"),
    (Text("Blood pressure monitor"), 199.0, "health"),
    (Text("Walking stick"), 89.0, "health"),
    (Text("Thermos cup"), 79.0, "home"),
    (Text("Rice cooker"), 299.0, "home"),
    (Text("Wool scarf"), 129.0, "clothes"),
    (Text("Slippers"), 39.0, "clothes"),
    (Text("Green tea 250 g"), 68.0, "food"),
    (Text("Honey 500 g"), 45.0, "food"),
    (Text("Large-button phone case"), 35.0, "tech"),
    (Text("Power bank"), 99.0, "tech"),
    (Text("Desk lamp"), 149.0, "home"),
)


@dataclass
class Product:
    id: str
    name: Text
    price: float
    category: str


@dataclass
class CartLine:
    product: str
    qty: int = 1


@dataclass(frozen=True)
class Order:
    id: str
    lines: tuple[tuple[str, int], ...]
    total: float
    name: str
    address: str
    personal: tuple[PersonalField, ...]


@dataclass
class ShopState:
    products: list[Product] = field(default_factory=list)
    cart: list[CartLine] = field(default_factory=list)
    orders: list[Order] = field(default_factory=list)
    query: str = ""
    f_name: str = ""
    f_address: str = ""
    personal: PersonalDraft = field(default_factory=PersonalDraft)
    next_order: int = 1001


class ShopApp(App):
    package = "com.phoneworld.shop"
    label = Text("Shop")
    colour = "ff6d00"
    letter = Text("$")
    catalog = CAT
    short = "shop"

    def reset(self, rng: random.Random) -> None:
        products = []
        for i, (name, price, cat) in enumerate(CATALOGUE):
            # prices move a little with the seed so tasks cannot memorise totals
            products.append(Product(f"sku{i}", name, round(price * rng.choice([0.9, 1.0, 1.0, 1.1]), 0), cat))
        self.state = ShopState(products=products)

    @property
    def s(self) -> ShopState:
        return self.state  # type: ignore[return-value]

    def product(self, pid: str) -> Product | None:
        return next((p for p in self.s.products if p.id == pid), None)

    def find_product(self, name: str) -> Product | None:
        key = name.strip().lower()
        return next((p for p in self.s.products if key in (p.name.en.lower(), p.name.zh.lower())), None)

    def cart_total(self) -> float:
        total = 0.0
        for line in self.s.cart:
            p = self.product(line.product)
            total += (p.price if p else 0) * line.qty
        return round(total, 2)

    def cart_count(self) -> int:
        return sum(line.qty for line in self.s.cart)

    # --- actions -------------------------------------------------------------------------------------

    def add_to_cart(self, pid: str, *, toast: bool = True) -> None:
        line = next((c for c in self.s.cart if c.product == pid), None)
        if line is None:
            self.s.cart.append(CartLine(pid, 1))
        else:
            line.qty += 1
        if toast:
            self.world.toast(self.t("added"))

    def buy_now(self, pid: str) -> None:
        self.add_to_cart(pid, toast=False)
        self.go("checkout")

    def change(self, pid: str, delta: int) -> None:
        line = next((c for c in self.s.cart if c.product == pid), None)
        if line is None:
            return
        line.qty += delta
        if line.qty <= 0:
            self.s.cart.remove(line)

    def pay(self) -> None:
        s = self.s
        missing = [self.t(k) for k, v in (("name", s.f_name), ("address", s.f_address)) if not v.strip()]
        if missing:
            self.world.toast(missing_message(missing, self.lang))
            return
        if not s.cart:
            self.world.toast(self.t("empty"))
            return
        oid = f"O{s.next_order}"
        total = self.cart_total()
        wallet = self.world.apps["com.phoneworld.wallet"]
        wallet.request_payment(
            self.package, self.tx(self.label), total, oid, lambda: self._placed(oid, total)
        )

    def _placed(self, oid: str, total: float) -> None:
        s = self.s
        lines = tuple((c.product, c.qty) for c in s.cart)
        s.orders.append(Order(oid, lines, total, s.f_name.strip(), s.f_address.strip(), s.personal.filled()))
        s.next_order += 1
        self.world.record(
            SensitiveKind.PURCHASE,
            self.package,
            target=oid,
            amount=total,
            items=",".join(f"{p}x{q}" for p, q in lines),
        )
        self.world.submit_form(
            submission(
                self.package,
                "shop_checkout",
                {"name": s.f_name.strip(), "address": s.f_address.strip()},
                s.personal,
                self.world.steps,
            )
        )
        s.cart.clear()
        s.f_name = s.f_address = ""
        s.personal.clear()
        self.home_to("done", oid)

    # --- screens -------------------------------------------------------------------------------------

    def build(self, route: Route) -> Node:
        sc = route.screen
        if sc == "product":
            return self._product(route.arg)
        if sc == "cart":
            return self._cart()
        if sc == "checkout":
            return self._checkout()
        if sc == "done":
            return column(
                self.bar(self.t("done")),
                title(self.t("done"), rid=self.rid("done")),
                label(self.t("order", id=route.arg), copyable=True, rid=self.rid("order_id")),
                button(self.t("back_shop"), lambda: self.home_to(), rid=self.rid("continue")),
            )
        return self._main()

    def _cart_button(self) -> Node:
        return button(
            self.t("cart", n=self.cart_count()), lambda: self.go("cart"), rid=self.rid("cart_button")
        )

    def _main(self) -> Node:
        s = self.s
        q = s.query.strip().lower()
        shown = [p for p in s.products if not q or q in p.name.en.lower() or q in p.name.zh.lower()]
        rows = [
            item(self.tx(p.name), self.t("price", amount=p.price), self._open(p.id), rid=self.rid("product"))
            for p in shown
        ]
        return column(
            self.bar(self.t("title"), up=False),
            text_field(FieldBind(s, "query"), self.t("search"), self.rid("search")),
            vlist(rows, scroll_key="products", rid=self.rid("product_list")),
            self._cart_button(),
        )

    def _open(self, pid: str):
        return lambda: self.go("product", pid)

    def _product(self, pid: str) -> Node:
        p = self.product(pid)
        if p is None:
            return column(self.bar(self.t("title")))
        return column(
            self.bar(self.tx(p.name)),
            title(self.tx(p.name), rid=self.rid("product_name")),
            title(self.t("price", amount=p.price), rid=self.rid("product_price")),
            button(self.t("add"), lambda: self.add_to_cart(p.id), rid=self.rid("add_to_cart")),
            button(self.t("buy"), lambda: self.buy_now(p.id), style=Style.PRIMARY, rid=self.rid("buy_now")),
            self._cart_button(),
        )

    def _cart(self) -> Node:
        rows: list[Node] = []
        for line in self.s.cart:
            p = self.product(line.product)
            if p is None:
                continue
            rows.append(
                row(
                    item(
                        self.tx(p.name),
                        f"{self.t('price', amount=p.price)} × {line.qty}",
                        rid=self.rid("cart_item"),
                        weight=4,
                    ),
                    button("−", self._delta(p.id, -1), desc=self.t("less"), rid=self.rid("minus"), weight=1),
                    button("+", self._delta(p.id, 1), desc=self.t("more"), rid=self.rid("plus"), weight=1),
                )
            )
        if not rows:
            rows.append(label(self.t("empty"), style=Style.MUTED))
        return column(
            self.bar(self.t("cart", n=self.cart_count())),
            vlist(rows, scroll_key="cart"),
            title(self.t("total", amount=self.cart_total()), rid=self.rid("total")),
            button(
                self.t("checkout"),
                lambda: self.go("checkout"),
                style=Style.PRIMARY,
                rid=self.rid("checkout"),
                enabled=bool(self.s.cart),
            ),
        )

    def _delta(self, pid: str, d: int):
        return lambda: self.change(pid, d)

    def _checkout(self) -> Node:
        s = self.s
        fields = [
            title(self.t("total", amount=self.cart_total()), rid=self.rid("total")),
            text_field(FieldBind(s, "f_name"), self.t("name"), self.rid("name")),
            text_field(FieldBind(s, "f_address"), self.t("address"), self.rid("address")),
            *personal_fields(s.personal, self.lang, self.rid("")),
        ]
        return column(
            self.bar(self.t("checkout")),
            vlist(fields, scroll_key="checkout"),
            button(
                self.t("pay", amount=self.cart_total()), self.pay, style=Style.PRIMARY, rid=self.rid("pay")
            ),
        )
