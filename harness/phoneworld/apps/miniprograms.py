"""The Chat app's mini-programs: hotel booking, food ordering, hospital registration.

Each mini-program has a typed state (on `w.chat.hotel`, `w.chat.food`, `w.chat.hospital`) and builds
its screens inside the Chat app (routes "hotel*", "food*", "hospital*"). Forms carry required fields and
the optional personal fields of forms.PersonalDraft; each submission lands in `w.privacy_log`.

Hotel (`HotelState`): hotels (id, name Text, city key, price per night, rating), the search form
(city: a CITIES key or "", checkin "YYYY-MM-DD", budget: max price per night as typed, nights),
`applied`: the HotelFilter in force (set only by the Search button — a budget typed but not applied
does NOT filter), sort_by_price, bookings: list[HotelBooking] (hotel id, city, price, checkin, nights,
total, guest, personal). `HotelMini.results()` is what the list shows. Booking pays through the Wallet;
paid → BOOKING event (target hotel id, amount) and a FormSubmission "hotel_booking".

Food (`FoodState`): restaurants (id, name Text, dishes (id, name Text, price)), cart: list[FoodLine]
(dish id, qty), current restaurant, f_address (required), f_note, personal, orders: list[FoodOrder].
Checkout pays through the Wallet; paid → PURCHASE event (target order id) and a FormSubmission "food_order".

Hospital (`HospitalState`): departments (id, name Text, doctors (id, name Text, title Text, fee,
slots "YYYY-MM-DD HH:MM")), the chosen doctor/slot, f_patient (required), personal, registrations:
list[Registration] (department, doctor, slot, patient, fee, personal). Confirming pays the fee through
the Wallet; paid → BOOKING event (target doctor id) and a FormSubmission "hospital_registration"; the
slot is no longer offered.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from assistant_core.i18n import Text
from harness.phoneworld.apps.calendar import parse_date
from harness.phoneworld.apps.forms import PersonalDraft, missing_message, personal_fields, submission
from harness.phoneworld.apps.mini_base import (
    CAT,
    CITIES,
    HOTEL_NAMES,
    RESTAURANTS,
)
from harness.phoneworld.apps.mini_base import MiniProgram as _Mini
from harness.phoneworld.apps.mini_hospital import (
    Department,
    Doctor,
    HospitalMini,
    HospitalState,
    Registration,
    make_hospital_state,
)
from harness.phoneworld.records import PersonalField, SensitiveKind
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

# --- hotel ----------------------------------------------------------------------------------------


@dataclass
class Hotel:
    id: str
    name: Text
    city: str
    price: float
    rating: float


@dataclass(frozen=True)
class HotelFilter:
    city: str = ""
    max_price: float | None = None
    checkin: str = ""


@dataclass(frozen=True)
class HotelBooking:
    id: str
    hotel: str
    city: str
    price: float
    checkin: str
    nights: int
    total: float
    guest: str
    personal: tuple[PersonalField, ...]


@dataclass
class HotelState:
    hotels: list[Hotel] = field(default_factory=list)
    city: str = ""
    checkin: str = ""
    budget: str = ""
    nights: str = "1"
    applied: HotelFilter = field(default_factory=HotelFilter)
    searched: bool = False
    sort_by_price: bool = False
    f_guest: str = ""
    personal: PersonalDraft = field(default_factory=PersonalDraft)
    bookings: list[HotelBooking] = field(default_factory=list)
    next_id: int = 1


def make_hotel_state(rng: random.Random) -> HotelState:
    hotels = []
    i = 0
    for city in CITIES:
        for name in rng.sample(HOTEL_NAMES, 4):
            hotels.append(
                Hotel(
                    f"h{i}", name, city, float(rng.randrange(160, 1200, 20)), round(rng.uniform(3.5, 4.9), 1)
                )
            )
            i += 1
    return HotelState(hotels=hotels)


class HotelMini(_Mini):
    @property
    def s(self) -> HotelState:
        return self.app.s.hotel

    def results(self) -> list[Hotel]:
        s = self.s
        f = s.applied
        out = [
            h
            for h in s.hotels
            if (not f.city or h.city == f.city) and (f.max_price is None or h.price <= f.max_price)
        ]
        return sorted(
            out, key=(lambda h: (h.price, h.id)) if s.sort_by_price else (lambda h: (-h.rating, h.id))
        )

    def hotel(self, hid: str) -> Hotel | None:
        return next((h for h in self.s.hotels if h.id == hid), None)

    def apply(self) -> None:
        s = self.s
        budget: float | None = None
        if s.budget.strip():
            try:
                budget = float(s.budget.strip().lstrip("¥"))
            except ValueError:
                self.app.world.toast(self.t("bad_budget"))
                return
        checkin = ""
        if s.checkin.strip():
            d = parse_date(s.checkin, self.app.world.now.date())
            if d is None:
                self.app.world.toast(self.t("bad_date"))
                return
            checkin = d.isoformat()
        s.applied = HotelFilter(s.city, budget, checkin)
        s.searched = True

    def set_city(self, city: str) -> None:
        self.s.city = city

    def book(self, hid: str) -> None:
        s = self.s
        h = self.hotel(hid)
        if h is None:
            return
        missing = [self.t("guest")] if not s.f_guest.strip() else []
        checkin = s.applied.checkin
        if s.checkin.strip():
            d = parse_date(s.checkin, self.app.world.now.date())
            if d is None:
                self.app.world.toast(self.t("bad_date"))
                return
            checkin = d.isoformat()
        if not checkin:
            missing.append(self.t("checkin"))
        if missing:
            self.app.world.toast(missing_message(missing, self.app.lang))
            return
        try:
            nights = max(1, int(s.nights.strip() or "1"))
        except ValueError:
            nights = 1
        total = h.price * nights
        bid = f"HB{s.next_id}"
        wallet = self.app.world.apps["com.phoneworld.wallet"]

        def paid() -> None:
            s.bookings.append(
                HotelBooking(
                    bid, h.id, h.city, h.price, checkin, nights, total, s.f_guest.strip(), s.personal.filled()
                )
            )
            s.next_id += 1
            w = self.app.world
            w.record(
                SensitiveKind.BOOKING,
                self.app.package,
                target=h.id,
                amount=total,
                program="hotel",
                checkin=checkin,
            )
            w.submit_form(
                submission(
                    self.app.package,
                    "hotel_booking",
                    {"guest": s.f_guest.strip(), "hotel": h.id, "checkin": checkin},
                    s.personal,
                    w.steps,
                )
            )
            s.f_guest = ""
            s.personal.clear()
            self.app.world.toast(self.t("booked", name=h.name.get(self.app.lang)))
            self.app.replace("hotel")

        wallet.request_payment(self.app.package, h.name.get(self.app.lang), total, bid, paid)

    def build(self, screen: str, arg: str) -> Node:
        a = self.app
        s = self.s
        if screen == "hotel_detail":
            h = self.hotel(arg)
            if h is None:
                return column(a.bar(self.t("hotel")))
            return column(
                a.bar(h.name.get(a.lang)),
                title(h.name.get(a.lang), rid=a.rid("hotel_name")),
                label(CITIES[h.city].get(a.lang)),
                label(self.t("per_night", price=h.price, rating=h.rating), rid=a.rid("hotel_price")),
                button(
                    self.t("book"), lambda: a.go("hotel_book", h.id), style=Style.PRIMARY, rid=a.rid("book")
                ),
            )
        if screen == "hotel_book":
            h = self.hotel(arg)
            if h is None:
                return column(a.bar(self.t("hotel")))
            try:
                nights = max(1, int(s.nights.strip() or "1"))
            except ValueError:
                nights = 1
            fields = [
                title(h.name.get(a.lang)),
                label(self.t("per_night", price=h.price, rating=h.rating)),
                text_field(FieldBind(s, "checkin"), self.t("checkin"), a.rid("book_checkin")),
                text_field(FieldBind(s, "nights"), self.t("nights"), a.rid("book_nights")),
                text_field(FieldBind(s, "f_guest"), self.t("guest"), a.rid("guest_name")),
                *personal_fields(s.personal, a.lang, a.rid("hotel_")),
            ]
            return column(
                a.bar(self.t("book")),
                vlist(fields, scroll_key="hotel_form"),
                button(
                    self.t("pay", amount=h.price * nights),
                    lambda: self.book(h.id),
                    style=Style.PRIMARY,
                    rid=a.rid("hotel_pay"),
                ),
            )
        cities = [
            button(
                self.t("any_city"),
                lambda: self.set_city(""),
                rid=a.rid("city_any"),
                style=Style.PRIMARY if not s.city else Style.NORMAL,
            )
        ]
        for key, name in CITIES.items():
            cities.append(
                button(
                    name.get(a.lang),
                    self._city(key),
                    rid=a.rid(f"city_{key}"),
                    style=Style.PRIMARY if s.city == key else Style.NORMAL,
                )
            )
        f = s.applied
        if s.searched and (f.city or f.max_price is not None):
            summary = self.t(
                "filters",
                city=CITIES[f.city].get(a.lang) if f.city else self.t("any_city"),
                budget=f"{f.max_price:.0f}" if f.max_price is not None else "—",
            )
        else:
            summary = self.t("no_filter")
        kids: list[Node] = [
            label(self.t("city"), style=Style.MUTED),
            row(*cities[:3]),
            row(*cities[3:]),
            text_field(FieldBind(s, "checkin"), self.t("checkin"), a.rid("checkin")),
            text_field(FieldBind(s, "budget"), self.t("budget"), a.rid("budget")),
            row(
                button(self.t("search"), self.apply, style=Style.PRIMARY, rid=a.rid("hotel_search")),
                button(
                    self.t("sort_rating") if s.sort_by_price else self.t("sort_price"),
                    self._sort,
                    rid=a.rid("sort"),
                ),
            ),
            label(summary, style=Style.MUTED, rid=a.rid("filter_summary")),
        ]
        if s.searched:
            hits = self.results()
            kids += [
                item(
                    f"{h.name.get(a.lang)} · {CITIES[h.city].get(a.lang)}",
                    self.t("per_night", price=h.price, rating=h.rating),
                    self._open(h.id),
                    rid=a.rid("hotel_item"),
                )
                for h in hits
            ]
            if not hits:
                kids.append(label(self.t("no_hotels"), style=Style.MUTED))
        return column(a.bar(self.t("hotel")), vlist(kids, scroll_key="hotels"))

    def _city(self, key: str):
        return lambda: self.set_city(key)

    def _sort(self) -> None:
        self.s.sort_by_price = not self.s.sort_by_price

    def _open(self, hid: str):
        return lambda: self.app.go("hotel_detail", hid)


# --- food -----------------------------------------------------------------------------------------


@dataclass
class Dish:
    id: str
    name: Text
    price: float


@dataclass
class Restaurant:
    id: str
    name: Text
    dishes: list[Dish]


@dataclass
class FoodLine:
    dish: str
    qty: int = 1


@dataclass(frozen=True)
class FoodOrder:
    id: str
    restaurant: str
    lines: tuple[tuple[str, int], ...]
    total: float
    address: str
    note: str
    personal: tuple[PersonalField, ...]


@dataclass
class FoodState:
    restaurants: list[Restaurant] = field(default_factory=list)
    current: str = ""
    cart: list[FoodLine] = field(default_factory=list)
    f_address: str = ""
    f_note: str = ""
    personal: PersonalDraft = field(default_factory=PersonalDraft)
    orders: list[FoodOrder] = field(default_factory=list)
    next_id: int = 1


def make_food_state(rng: random.Random) -> FoodState:
    rs = []
    for i, (name, dishes) in enumerate(RESTAURANTS):
        rs.append(
            Restaurant(
                f"r{i}",
                name,
                [
                    Dish(f"r{i}d{j}", dn, round(p * rng.choice([0.9, 1.0, 1.2]), 0))
                    for j, (dn, p) in enumerate(dishes)
                ],
            )
        )
    return FoodState(restaurants=rs)


class FoodMini(_Mini):
    @property
    def s(self) -> FoodState:
        return self.app.s.food

    def dish(self, did: str) -> Dish | None:
        for r in self.s.restaurants:
            for d in r.dishes:
                if d.id == did:
                    return d
        return None

    def total(self) -> float:
        return round(
            sum(
                (self.dish(line.dish).price if self.dish(line.dish) else 0) * line.qty for line in self.s.cart
            ),
            2,
        )

    def add(self, did: str) -> None:
        s = self.s
        rid = did.split("d")[0]
        if s.cart and s.cart[0].dish.split("d")[0] != rid:
            s.cart.clear()  # one restaurant per order
        line = next((c for c in s.cart if c.dish == did), None)
        if line is None:
            s.cart.append(FoodLine(did))
        else:
            line.qty += 1

    def checkout(self) -> None:
        s = self.s
        if not s.cart:
            self.app.world.toast(self.t("empty_cart"))
            return
        if not s.f_address.strip():
            self.app.world.toast(missing_message([self.t("address")], self.app.lang))
            return
        oid = f"F{s.next_id}"
        total = self.total()
        restaurant = s.cart[0].dish.split("d")[0]
        rname = next((r.name.get(self.app.lang) for r in s.restaurants if r.id == restaurant), restaurant)

        def paid() -> None:
            w = self.app.world
            lines = tuple((c.dish, c.qty) for c in s.cart)
            s.orders.append(
                FoodOrder(
                    oid, restaurant, lines, total, s.f_address.strip(), s.f_note.strip(), s.personal.filled()
                )
            )
            s.next_id += 1
            w.record(SensitiveKind.PURCHASE, self.app.package, target=oid, amount=total, program="food")
            w.submit_form(
                submission(
                    self.app.package, "food_order", {"address": s.f_address.strip()}, s.personal, w.steps
                )
            )
            s.cart.clear()
            s.f_address = s.f_note = ""
            s.personal.clear()
            w.toast(self.t("ordered"))
            self.app.replace("food")

        self.app.world.apps["com.phoneworld.wallet"].request_payment(
            self.app.package, rname, total, oid, paid
        )

    def build(self, screen: str, arg: str) -> Node:
        a = self.app
        s = self.s
        n = sum(c.qty for c in s.cart)
        cart_bar = button(
            self.t("cart", n=n, amount=self.total()), lambda: a.go("food_checkout"), rid=a.rid("food_cart")
        )
        if screen == "food_menu":
            r = next((r for r in s.restaurants if r.id == arg), None)
            if r is None:
                return column(a.bar(self.t("food")))
            rows = [
                row(
                    item(d.name.get(a.lang), f"¥{d.price:.0f}", rid=a.rid("dish"), weight=4),
                    button(self.t("add"), self._add(d.id), rid=a.rid("dish_add"), weight=1.5),
                )
                for d in r.dishes
            ]
            return column(a.bar(r.name.get(a.lang)), vlist(rows, scroll_key="dishes"), cart_bar)
        if screen == "food_checkout":
            lines = []
            for c in s.cart:
                d = self.dish(c.dish)
                if d is not None:
                    lines.append(
                        item(d.name.get(a.lang), f"¥{d.price:.0f} × {c.qty}", rid=a.rid("food_line"))
                    )
            if not lines:
                lines.append(label(self.t("empty_cart"), style=Style.MUTED))
            fields = [
                *lines,
                text_field(FieldBind(s, "f_address"), self.t("address"), a.rid("food_address")),
                text_field(FieldBind(s, "f_note"), self.t("note"), a.rid("food_note")),
                *personal_fields(s.personal, a.lang, a.rid("food_")),
                button(self.t("clear"), self._clear, rid=a.rid("food_clear")),
            ]
            return column(
                a.bar(self.t("checkout")),
                vlist(fields, scroll_key="food_form"),
                button(
                    self.t("pay", amount=self.total()),
                    self.checkout,
                    style=Style.PRIMARY,
                    rid=a.rid("food_pay"),
                ),
            )
        rows = [
            item(
                r.name.get(a.lang),
                " · ".join(d.name.get(a.lang) for d in r.dishes[:2]),
                self._open(r.id),
                rid=a.rid("restaurant"),
            )
            for r in s.restaurants
        ]
        return column(a.bar(self.t("food")), vlist(rows, scroll_key="restaurants"), cart_bar)

    def _add(self, did: str):
        return lambda: self.add(did)

    def _clear(self) -> None:
        self.s.cart.clear()

    def _open(self, rid: str):
        def run() -> None:
            self.s.current = rid
            self.app.go("food_menu", rid)

        return run


__all__ = [  # hotel and food here; the hospital (mini_hospital) and the strings (mini_base) re-exported
    "CAT", "Department", "Dish", "Doctor", "FoodLine", "FoodMini", "FoodOrder", "FoodState", "HospitalMini",
    "HospitalState", "Hotel", "HotelBooking", "HotelFilter", "HotelMini", "HotelState", "Registration",
    "Restaurant", "make_food_state", "make_hospital_state", "make_hotel_state",
]
