"""Mini-program tasks inside Chat, each with a constraint the verifier checks in state: a hotel under a
budget with the budget filter really applied (typing it without pressing Search does not count), the
cheapest or best-rated hotel, a food order with exactly the asked dishes and quantities (a stale cart
must be cleared), a note for the restaurant, a hospital registration for a department, doctor and time.

Setups shape the seeded listings so the constraint matters: in the asked city the best-rated hotels
are over the budget, so an unfiltered pick fails; the asked slot sits among other slots of the day.
Payments go through the Wallet (the oracle reads the PIN from world state; a real agent hands over).
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from assistant_core.i18n import Text
from harness.phoneworld.tasks import content
from harness.phoneworld.tasks.base import Task, TaskCategory
from harness.phoneworld.tasks.content import Person, text_matches
from harness.phoneworld.tasks.driver import UI, Match, Move, OracleStuck, T
from harness.phoneworld.tasks.flows import CHAT, WALLET, open_mini, pay_with_wallet, rich_wallet, rid

CITY_KEYS = ("beijing", "shanghai", "hangzhou", "chengdu")


def city_name(key: str) -> Text:
    from harness.phoneworld.apps.mini_base import CITIES

    return CITIES[key]


class _Mini(Task):
    category: ClassVar[TaskCategory] = TaskCategory.MINI_APP
    apps: ClassVar[tuple[str, ...]] = (CHAT, WALLET)
    max_steps: ClassVar[int] = 40


def _c(ui: UI, name: str) -> Match:
    return rid(CHAT, name)


# --- hotel ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HotelParams:
    city: str
    budget: int
    checkin: str
    nights: int
    guest: Person


def hotel_params(rng: random.Random) -> HotelParams:
    return HotelParams(
        rng.choice(CITY_KEYS), rng.randrange(300, 701, 50), f"2026-04-{rng.randint(3, 27):02d}", rng.randint(1, 3),
        content.person(rng),
    )


def shape_hotels(world: Any, city: str, budget: int) -> None:
    """In `city`: two hotels under the budget (rated 4.3 and 4.0) and two over it (rated 4.9 and 4.7),
    so ignoring the budget picks an expensive one whether sorted by rating or not."""
    hotels = [h for h in world.chat.hotel.hotels if h.city == city]
    layout = ((budget + 260, 4.9), (budget - 120, 4.3), (budget + 80, 4.7), (budget - 40, 4.0))
    for h, (price, rating) in zip(hotels, layout, strict=False):
        h.price, h.rating = float(price), rating


def nights_en(n: int) -> str:
    return "1 night" if n == 1 else f"{n} nights"


def bookings(world: Any) -> list[Any]:
    return list(world.chat.hotel.bookings)


def _booked(b: Any, params: HotelParams) -> bool:
    return b.city == params.city and b.checkin == params.checkin and b.nights == params.nights and text_matches(
        b.guest, params.guest.name
    )


def hotel_search(ui: UI, params: HotelParams, *, budget: int | None, by_price: bool = False) -> Iterator[Move]:
    name = city_name(params.city)
    yield from open_mini(ui, "hotel")
    yield from ui.tap(_c(ui, f"city_{params.city}"), T("Choose {name}.").format(name=name))
    yield from ui.type_into(_c(ui, "checkin"), params.checkin, T("Enter the check-in date."))
    if budget is not None:
        yield from ui.type_into(_c(ui, "budget"), str(budget), T("Set the budget to ¥{budget}.").format(budget=budget))
    if by_price:
        yield from ui.hide_keyboard()  # it covers the buttons below
        yield from ui.tap(_c(ui, "sort"), T("Sort by price."))
    yield from ui.hide_keyboard()
    yield from ui.tap(_c(ui, "hotel_search"), T("Search."))


def book_first_result(ui: UI, params: HotelParams) -> Iterator[Move]:
    """Open the first hotel in the results, book it for the nights and guest, and pay."""
    yield from ui.scroll_to(_c(ui, "hotel_item"))
    yield from ui.tap(_c(ui, "hotel_item"), T("Open the first hotel in the list."))
    yield from ui.tap(_c(ui, "book"), T("Tap Book."))
    if params.nights != 1:
        yield from ui.type_into(_c(ui, "book_nights"), str(params.nights), T("Enter the nights."),
                                replace="1")
    guest = ui.say(params.guest.name)
    yield from ui.type_into(_c(ui, "guest_name"), guest, T("Guest name {guest}.").format(guest=guest))
    yield from ui.tap(_c(ui, "hotel_pay"), T("Tap Pay."))
    yield from pay_with_wallet(ui)


class _HotelTask(_Mini):
    def params(self, rng: random.Random) -> HotelParams:
        return hotel_params(rng)

    def setup(self, world: Any, params: HotelParams) -> None:
        shape_hotels(world, params.city, params.budget)
        rich_wallet(world)


class ChatHotelBookingUnderBudget(_HotelTask):
    id = "ChatHotelBookingUnderBudget"

    def perturb(self, params: HotelParams, rng: random.Random) -> HotelParams:
        return replace(params, budget=params.budget + 500)  # as if the budget were not applied

    def instruction(self, params: HotelParams) -> Text:
        c, g = city_name(params.city), params.guest.name
        return Text("In WeChat's hotel booking, book a hotel in {c} for {nights_en} from {checkin} for {g}, at most ¥{budget} a night. Use the budget filter.").format(c=c, nights_en=Text(str(nights_en(params.nights)), str(params.nights)), checkin=params.checkin, g=g, budget=params.budget)

    def is_successful(self, world: Any, params: HotelParams) -> bool:
        applied = world.chat.hotel.applied
        filtered = applied.city == params.city and applied.max_price is not None and applied.max_price <= params.budget
        return filtered and any(_booked(b, params) and b.price <= params.budget for b in bookings(world))

    def solve(self, ui: UI, params: HotelParams) -> Iterator[Move]:
        yield from hotel_search(ui, params, budget=params.budget)
        yield from book_first_result(ui, params)


class ChatHotelCheapestInCity(_HotelTask):
    id = "ChatHotelCheapestInCity"

    def perturb(self, params: HotelParams, rng: random.Random) -> HotelParams:
        return replace(params, city=rng.choice([c for c in CITY_KEYS if c != params.city]))

    def instruction(self, params: HotelParams) -> Text:
        c, g = city_name(params.city), params.guest.name
        return Text("Book the cheapest hotel in {c} in WeChat's hotel booking, {nights_en} from {checkin}, guest {g}.").format(c=c, nights_en=Text(str(nights_en(params.nights)), str(params.nights)), checkin=params.checkin, g=g)

    def is_successful(self, world: Any, params: HotelParams) -> bool:
        in_city = [h for h in world.chat.hotel.hotels if h.city == params.city]
        cheapest = min(in_city, key=lambda h: h.price)
        return any(_booked(b, params) and b.hotel == cheapest.id for b in bookings(world))

    def solve(self, ui: UI, params: HotelParams) -> Iterator[Move]:
        yield from hotel_search(ui, params, budget=None, by_price=True)
        yield from book_first_result(ui, params)


class ChatHotelBestRatedUnderBudget(_HotelTask):
    id = "ChatHotelBestRatedUnderBudget"

    def perturb(self, params: HotelParams, rng: random.Random) -> HotelParams:
        return replace(params, budget=params.budget + 500)

    def instruction(self, params: HotelParams) -> Text:
        c, g = city_name(params.city), params.guest.name
        return Text("Book the best-rated hotel in {c} that costs at most ¥{budget} a night, {nights_en} from {checkin}, guest {g} (WeChat hotel booking).").format(c=c, budget=params.budget, nights_en=Text(str(nights_en(params.nights)), str(params.nights)), checkin=params.checkin, g=g)

    def is_successful(self, world: Any, params: HotelParams) -> bool:
        ok = [h for h in world.chat.hotel.hotels if h.city == params.city and h.price <= params.budget]
        best = max(ok, key=lambda h: h.rating)
        return any(_booked(b, params) and b.hotel == best.id for b in bookings(world))

    def solve(self, ui: UI, params: HotelParams) -> Iterator[Move]:
        yield from hotel_search(ui, params, budget=params.budget)  # results come sorted by rating
        yield from book_first_result(ui, params)


# --- food ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FoodParams:
    restaurant: int
    lines: tuple[tuple[int, int], ...]  # (dish index, quantity)
    address: Text
    note: Text | None = None


ADDRESSES = (
    Text("12 Lake Street, flat 3"),
    Text("Building 5, Sunny Garden"),
    Text("88 West Road, 2nd floor"),
)
NOTES = (Text("No chili, please"), Text("Ring the bell twice"), Text("Extra napkins"))


def restaurants() -> tuple:
    from harness.phoneworld.apps.mini_base import RESTAURANTS

    return RESTAURANTS


def dish_id(params_restaurant: int, dish: int) -> str:
    return f"r{params_restaurant}d{dish}"


def food_orders(world: Any) -> list[Any]:
    return list(world.chat.food.orders)


def order_matches(order: Any, params: FoodParams) -> bool:
    want = sorted((dish_id(params.restaurant, d), q) for d, q in params.lines)
    return sorted(order.lines) == want and text_matches(order.address, params.address) and (
        params.note is None or text_matches(order.note, params.note)
    )


def cheapest_on_menu(ui: UI) -> int:
    """The index of the cheapest dish on the open menu, read off the screen (first one on a tie)."""
    els = ui.elements
    prices = []
    for i, e in enumerate(els):
        if e.resource_id == f"{CHAT}:id/dish":
            summary = next(x for x in els[i + 1 : i + 3] if x.resource_id == "android:id/summary")
            prices.append(float(summary.text.lstrip("¥")))
    if not prices:
        raise OracleStuck("no dishes on the menu")
    return min(range(len(prices)), key=lambda k: (prices[k], k))


def order_food(ui: UI, params: FoodParams, *, clear_first: bool = False, cheapest: bool = False) -> Iterator[Move]:
    """Order `params.lines` (or, with `cheapest`, one of the menu's cheapest dish) from the restaurant."""
    name, dishes = restaurants()[params.restaurant]
    yield from open_mini(ui, "food")
    if clear_first:
        yield from ui.tap(_c(ui, "food_cart"), T("Open the cart."))
        yield from ui.scroll_tap(_c(ui, "food_clear"), T("Clear the old items."))
        yield from ui.back()
    yield from ui.scroll_tap(
        Match(rid="android:id/title", text=ui.say(name)), T("Open {name}.").format(name=name)
    )
    lines = ((cheapest_on_menu(ui), 1),) if cheapest else params.lines
    for d, qty in lines:
        dish = ui.say(dishes[d][0])
        label = ui.need(Match(rid="android:id/title", text=dish))
        for _ in range(qty):
            add = ui.beside(label, _c(ui, "dish_add"))
            if add is None:
                raise OracleStuck(f"no Add button beside {dish}")
            yield from ui.tap(add, T("Add {dishes}.").format(dishes=dishes[d][0]))
            label = ui.need(Match(rid="android:id/title", text=dish))
    yield from ui.tap(_c(ui, "food_cart"), T("Go to checkout."))
    address = ui.say(params.address)
    yield from ui.type_into(_c(ui, "food_address"), address, T("Enter the address.", ctx="harness.phoneworld.tasks.mini_app"))
    if params.note is not None:
        yield from ui.type_into(_c(ui, "food_note"), ui.say(params.note), T("Add the note."))
    yield from ui.hide_keyboard()
    yield from ui.tap(_c(ui, "food_pay"), T("Tap Pay."))
    yield from pay_with_wallet(ui)


def _food_text(params: FoodParams) -> Text:
    name, dishes = restaurants()[params.restaurant]
    en = " and ".join(f"{q} × {dishes[d][0].en}" for d, q in params.lines)
    zh = "和".join(f"{q}份{dishes[d][0].zh}" for d, q in params.lines)
    return Text("{en} from {name}").format(en=Text(str(en), str(zh)), name=name)


class _FoodTask(_Mini):
    def setup(self, world: Any, params: FoodParams) -> None:
        world.chat.food.cart.clear()
        rich_wallet(world)

    def is_successful(self, world: Any, params: FoodParams) -> bool:
        return any(order_matches(o, params) for o in food_orders(world))


class ChatFoodOrderItems(_FoodTask):
    id = "ChatFoodOrderItems"

    def params(self, rng: random.Random) -> FoodParams:
        r = rng.randrange(3)
        a, b = rng.sample(range(3), 2)
        return FoodParams(r, ((a, rng.randint(1, 3)), (b, 1)), rng.choice(ADDRESSES))

    def perturb(self, params: FoodParams, rng: random.Random) -> FoodParams:
        (a, qa), rest = params.lines[0], params.lines[1:]
        return replace(params, lines=((a, qa + 1), *rest))

    def instruction(self, params: FoodParams) -> Text:
        f, a = _food_text(params), params.address
        return Text("Order {f} with WeChat's food delivery, to {a}.").format(f=f, a=a)

    def solve(self, ui: UI, params: FoodParams) -> Iterator[Move]:
        yield from order_food(ui, params)


class ChatFoodOrderWithNote(_FoodTask):
    id = "ChatFoodOrderWithNote"

    def params(self, rng: random.Random) -> FoodParams:
        return FoodParams(rng.randrange(3), ((rng.randrange(3), 1),), rng.choice(ADDRESSES), rng.choice(NOTES))

    def perturb(self, params: FoodParams, rng: random.Random) -> FoodParams:
        return replace(params, note=content.other(rng, NOTES, params.note))

    def instruction(self, params: FoodParams) -> Text:
        f, a, n = _food_text(params), params.address, params.note
        assert n is not None
        return Text("Order {f} with WeChat's food delivery to {a}, with the note '{n}'.").format(f=f, a=a, n=n)

    def solve(self, ui: UI, params: FoodParams) -> Iterator[Move]:
        yield from order_food(ui, params)


class ChatFoodReplaceCart(_FoodTask):
    """A stale cart from the same restaurant must be cleared: only the asked dish may be ordered."""

    id = "ChatFoodReplaceCart"

    def params(self, rng: random.Random) -> FoodParams:
        return FoodParams(rng.randrange(3), ((rng.randrange(3), 1),), rng.choice(ADDRESSES))

    def perturb(self, params: FoodParams, rng: random.Random) -> FoodParams:
        (d, q), = params.lines
        return replace(params, lines=(((d + 1) % 3, q),))

    def instruction(self, params: FoodParams) -> Text:
        f, a = _food_text(params), params.address
        return Text("Order just {f} with WeChat's food delivery to {a}; nothing else.").format(f=f, a=a)

    def setup(self, world: Any, params: FoodParams) -> None:
        from harness.phoneworld.apps.miniprograms import FoodLine

        (d, _), = params.lines
        food = world.chat.food
        food.cart.clear()
        food.cart.append(FoodLine(dish_id(params.restaurant, (d + 1) % 3), 2))
        rich_wallet(world)

    def solve(self, ui: UI, params: FoodParams) -> Iterator[Move]:
        yield from order_food(ui, params, clear_first=True)


class ChatFoodCheapestDish(_FoodTask):
    id = "ChatFoodCheapestDish"

    def params(self, rng: random.Random) -> FoodParams:
        return FoodParams(rng.randrange(3), ((0, 1),), rng.choice(ADDRESSES))

    def perturb(self, params: FoodParams, rng: random.Random) -> FoodParams:
        return replace(params, restaurant=(params.restaurant + 1) % 3)

    def instruction(self, params: FoodParams) -> Text:
        name = restaurants()[params.restaurant][0]
        a = params.address
        return Text("Order one portion of the cheapest dish at {name} in WeChat's food delivery, to {a}.").format(name=name, a=a)

    def _cheapest(self, world: Any, restaurant: int) -> Any:
        r = world.chat.food.restaurants[restaurant]
        return min(r.dishes, key=lambda d: (d.price, d.id))

    def is_successful(self, world: Any, params: FoodParams) -> bool:
        want = self._cheapest(world, params.restaurant).id
        return any(
            o.lines == ((want, 1),) and text_matches(o.address, params.address) for o in food_orders(world)
        )

    def solve(self, ui: UI, params: FoodParams) -> Iterator[Move]:
        yield from order_food(ui, params, cheapest=True)  # the prices are read off the menu


# --- hospital ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HospitalParams:
    department: int
    doctor: int  # 0 is the chief physician, 1 the attending physician
    days_ahead: int  # 1 tomorrow, 2 the day after
    time: str
    patient: Person


DAY_WORDS = {1: Text("tomorrow"), 2: Text("the day after tomorrow")}
TIMES = ("08:30", "09:00", "10:00", "14:00", "15:30")


def departments() -> tuple:
    from harness.phoneworld.apps.mini_base import DEPARTMENTS

    return DEPARTMENTS


def hospital_params(rng: random.Random) -> HospitalParams:
    return HospitalParams(rng.randrange(4), rng.randrange(2), rng.choice((1, 2)), rng.choice(TIMES), content.person(rng))


def slot_of(world: Any, params: HospitalParams) -> str:
    day = world.now.date() + dt.timedelta(days=params.days_ahead)
    return f"{day.isoformat()} {params.time}"


def shape_slots(world: Any, params: HospitalParams) -> None:
    """Every doctor of the department offers the asked day at several times, the asked time included."""
    dep = world.chat.hospital.departments[params.department]
    today = world.now.date()
    for doc in dep.doctors:
        slots = {f"{(today + dt.timedelta(days=k)).isoformat()} {t}" for k in (1, 2, 3) for t in TIMES[:: 2]}
        slots.add(slot_of(world, params))
        doc.slots = sorted(slots)


def registrations(world: Any) -> list[Any]:
    return list(world.chat.hospital.registrations)


def register(ui: UI, params: HospitalParams, *, earliest: bool = False) -> Iterator[Move]:
    """Department, doctor, then a slot read off the doctor's list (in time order; its first date is
    tomorrow): the earliest one, or the day and time `params` ask for; then the patient and payment."""
    dep_name, doctors = departments()[params.department]
    doc = doctors[params.doctor]
    yield from open_mini(ui, "hospital")
    yield from ui.scroll_tap(Match(rid="android:id/title", text=ui.say(dep_name)), T("Open {dep_name}.").format(dep_name=dep_name))
    yield from ui.tap(
        Match(rid="android:id/title", where=lambda e: e.text.startswith(ui.say(doc))), T("Choose {doc}.").format(doc=doc)
    )
    listed = sorted(e.text for e in ui.find_all(Match(rid=f"{CHAT}:id/slot")))
    if not listed:
        raise OracleStuck("no slots listed")
    if earliest:
        slot = listed[0]
    else:
        day = dt.date.fromisoformat(listed[0].split()[0]) + dt.timedelta(days=params.days_ahead - 1)
        slot = f"{day.isoformat()} {params.time}"
    yield from ui.scroll_tap(Match(rid=f"{CHAT}:id/slot", text=slot), T("Pick {slot}.").format(slot=slot))
    patient = ui.say(params.patient.name)
    yield from ui.type_into(_c(ui, "patient_name"), patient, T("Patient {patient}.").format(patient=patient))
    yield from ui.hide_keyboard()
    yield from ui.tap(_c(ui, "hospital_confirm"), T("Confirm the registration."))
    yield from pay_with_wallet(ui)


def _registered(world: Any, params: HospitalParams, *, doctor: bool = True) -> bool:
    dep = world.chat.hospital.departments[params.department]
    doc_id = dep.doctors[params.doctor].id
    slot = slot_of(world, params)
    return any(
        r.department == dep.id and r.slot == slot and (not doctor or r.doctor == doc_id)
        and text_matches(r.patient, params.patient.name)
        for r in registrations(world)
    )


def _slot_text(params: HospitalParams) -> Text:
    w = DAY_WORDS[params.days_ahead]
    return Text(f"{w.en} at {params.time}", f"{w.zh} {params.time}")


class _HospitalTask(_Mini):
    def params(self, rng: random.Random) -> HospitalParams:
        return hospital_params(rng)

    def setup(self, world: Any, params: HospitalParams) -> None:
        shape_slots(world, params)
        rich_wallet(world)


class ChatHospitalRegisterDoctor(_HospitalTask):
    id = "ChatHospitalRegisterDoctor"

    def perturb(self, params: HospitalParams, rng: random.Random) -> HospitalParams:
        return replace(params, time=rng.choice([t for t in TIMES[::2] if t != params.time]))

    def instruction(self, params: HospitalParams) -> Text:
        dep, doctors = departments()[params.department]
        doc, when, p = doctors[params.doctor], _slot_text(params), params.patient.name
        return Text("Register {p} with {doc} in {dep} {when}, through WeChat's hospital registration.").format(p=p, doc=doc, dep=dep, when=when)

    def is_successful(self, world: Any, params: HospitalParams) -> bool:
        return _registered(world, params)

    def solve(self, ui: UI, params: HospitalParams) -> Iterator[Move]:
        yield from register(ui, params)


class ChatHospitalRegisterDepartment(_HospitalTask):
    """Any doctor of the department will do; the day and time are the constraint."""

    id = "ChatHospitalRegisterDepartment"

    def perturb(self, params: HospitalParams, rng: random.Random) -> HospitalParams:
        return replace(params, time=rng.choice([t for t in TIMES[::2] if t != params.time]))

    def instruction(self, params: HospitalParams) -> Text:
        dep = departments()[params.department][0]
        when, p = _slot_text(params), params.patient.name
        return Text("Book {p} a {dep} appointment {when} in WeChat's hospital registration, any doctor.").format(p=p, dep=dep, when=when)

    def is_successful(self, world: Any, params: HospitalParams) -> bool:
        return _registered(world, params, doctor=False)

    def solve(self, ui: UI, params: HospitalParams) -> Iterator[Move]:
        yield from register(ui, params)


class ChatHospitalRegisterChiefPhysician(_HospitalTask):
    """The chief physician of the department, at the earliest time offered."""

    id = "ChatHospitalRegisterChiefPhysician"

    def params(self, rng: random.Random) -> HospitalParams:
        return replace(hospital_params(rng), doctor=0)

    def perturb(self, params: HospitalParams, rng: random.Random) -> HospitalParams:
        return replace(params, doctor=1)

    def instruction(self, params: HospitalParams) -> Text:
        dep, p = departments()[params.department][0], params.patient.name
        return Text("Register {p} with the chief physician of {dep} at the earliest time available (WeChat hospital registration).").format(p=p, dep=dep)

    def is_successful(self, world: Any, params: HospitalParams) -> bool:
        dep = world.chat.hospital.departments[params.department]
        chief = dep.doctors[0]
        earliest_at_start = min([*chief.slots, *(r.slot for r in registrations(world) if r.doctor == chief.id)])
        return any(
            r.doctor == chief.id and r.slot == earliest_at_start and text_matches(r.patient, params.patient.name)
            for r in registrations(world)
        )

    def solve(self, ui: UI, params: HospitalParams) -> Iterator[Move]:
        yield from register(ui, params, earliest=True)


TASKS: tuple[Task, ...] = (
    ChatHotelBookingUnderBudget(),
    ChatHotelCheapestInCity(),
    ChatHotelBestRatedUnderBudget(),
    ChatFoodOrderItems(),
    ChatFoodOrderWithNote(),
    ChatFoodReplaceCart(),
    ChatFoodCheapestDish(),
    ChatHospitalRegisterDoctor(),
    ChatHospitalRegisterDepartment(),
    ChatHospitalRegisterChiefPhysician(),
)
