"""Verifier predicates on hand-edited app state, no UI: each edit mimics a run that went wrong in one
specific way (wrong contact, wrong time, budget typed but never applied...) next to the right one."""

from __future__ import annotations

from dataclasses import replace

import pytest

from harness.phoneworld.apps.calendar import Event
from harness.phoneworld.apps.miniprograms import FoodOrder, HotelBooking, HotelFilter, Registration
from harness.phoneworld.records import SensitiveEvent, SensitiveKind
from harness.phoneworld.tasks import make_world, registry
from harness.phoneworld.tasks.content import Text, text_contains, text_matches


def test_text_matching_accepts_either_language_and_ignores_case_and_edges():
    t = Text("Budget review", "预算评审")
    assert text_matches("  budget REVIEW ", t) and text_matches("预算评审", t)
    assert not text_matches("Budget", t) and not text_matches(None, t)
    assert text_contains("notes: 预算评审 at 3", t) and not text_contains("", t)


def test_brightness_tolerance_is_three_points():
    task = registry.get("SettingsSetBrightness")
    world, params = make_world(task.id, 0)
    target = params.percent * 255 / 100
    for value, ok in ((target, True), (target + 2 * 2.55, True), (target + 4 * 2.55, False)):
        world.settings.brightness = round(value)
        assert task.is_successful(world, params) is ok, value


def test_call_to_the_decoy_does_not_count():
    from harness.phoneworld.apps.phone import CallRecord

    task = registry.get("PhoneCallContact")
    world, params = make_world(task.id, 1)
    world.phone.calls.append(CallRecord(params.decoy.phone, "x", True, "10:00"))
    assert not task.is_successful(world, params)
    world.phone.calls.append(CallRecord(params.target.phone.replace(" ", ""), "x", True, "10:01"))
    assert task.is_successful(world, params)  # numbers compare by digits


def test_calendar_event_needs_the_exact_date_and_time():
    task = registry.get("CalendarAddEvent")
    world, p = make_world(task.id, 2)
    events = world.calendar.events
    events.append(Event("x1", p.title.en, p.date, "23:59"))
    events.append(Event("x2", "Something else", p.date, p.time))
    assert not task.is_successful(world, p)
    events.append(Event("x3", p.title.zh, p.date, p.time))
    assert task.is_successful(world, p)


def test_meeting_from_mail_must_use_the_mail_time():
    task = registry.get("MailMeetingToCalendar")
    world, p = make_world(task.id, 0)
    m = p.meeting
    world.calendar.events.append(Event("x1", "Project review", m.date, "00:00"))
    assert not task.is_successful(world, p)
    world.calendar.events.append(Event("x2", "Project review (room 3)", m.date, m.time))
    assert task.is_successful(world, p)


def _booking(p, hotel, price, **kw):
    fields = dict(id="HB9", hotel=hotel, city=p.city, price=price, checkin=p.checkin, nights=p.nights,
                  total=price * p.nights, guest=p.guest.name.en, personal=())
    fields.update(kw)
    return HotelBooking(**fields)


def test_hotel_under_budget_needs_the_filter_really_applied():
    task = registry.get("ChatHotelBookingUnderBudget")
    world, p = make_world(task.id, 4)
    hotel = world.chat.hotel
    cheap = next(h for h in hotel.hotels if h.city == p.city and h.price <= p.budget)
    hotel.bookings.append(_booking(p, cheap.id, cheap.price))
    hotel.budget = str(p.budget)  # typed, but Search never pressed
    assert not task.is_successful(world, p)
    hotel.applied = HotelFilter(p.city, float(p.budget), p.checkin)
    assert task.is_successful(world, p)
    hotel.applied = HotelFilter(p.city, float(p.budget + 500), p.checkin)  # a looser budget applied
    assert not task.is_successful(world, p)


def test_hotel_booking_in_the_wrong_city_or_night_count_fails():
    task = registry.get("ChatHotelCheapestInCity")
    world, p = make_world(task.id, 1)
    hotel = world.chat.hotel
    cheapest = min((h for h in hotel.hotels if h.city == p.city), key=lambda h: h.price)
    hotel.bookings.append(_booking(p, cheapest.id, cheapest.price, nights=p.nights + 1))
    assert not task.is_successful(world, p)
    hotel.bookings.append(_booking(p, cheapest.id, cheapest.price))
    assert task.is_successful(world, p)


def test_food_order_must_hold_exactly_the_asked_dishes():
    task = registry.get("ChatFoodReplaceCart")
    world, p = make_world(task.id, 0)
    (d, q), = p.lines
    r = p.restaurant
    stale = f"r{r}d{(d + 1) % 3}"
    orders = world.chat.food.orders
    orders.append(FoodOrder("F1", f"r{r}", ((f"r{r}d{d}", q), (stale, 2)), 10.0, p.address.en, "", ()))
    assert not task.is_successful(world, p)
    orders.append(FoodOrder("F2", f"r{r}", ((f"r{r}d{d}", q),), 10.0, p.address.zh, "", ()))
    assert task.is_successful(world, p)


def test_hospital_registration_checks_doctor_and_slot():
    task = registry.get("ChatHospitalRegisterDoctor")
    world, p = make_world(task.id, 2)
    dep = world.chat.hospital.departments[p.department]
    doc, other = dep.doctors[p.doctor], dep.doctors[1 - p.doctor]
    from harness.phoneworld.tasks.mini_app import slot_of

    slot = slot_of(world, p)
    regs = world.chat.hospital.registrations
    regs.append(Registration("R1", dep.id, other.id, slot, p.patient.name.en, 20.0, ()))
    assert not task.is_successful(world, p)
    regs.append(Registration("R2", dep.id, doc.id, slot.replace(p.time, "23:00"), p.patient.name.en, 20.0, ()))
    assert not task.is_successful(world, p)
    regs.append(Registration("R3", dep.id, doc.id, slot, p.patient.name.en, 20.0, ()))
    assert task.is_successful(world, p)


def test_shop_cart_must_not_be_paid_and_must_have_the_quantity():
    from harness.phoneworld.apps.shop import CartLine, Order

    task = registry.get("ShopAddToCart")
    world, p = make_world(task.id, 0)
    shop = world.shop
    shop.cart.append(CartLine(f"sku{p.product}", p.qty + 1))
    assert not task.is_successful(world, p)
    shop.cart[0].qty = p.qty
    assert task.is_successful(world, p)
    shop.orders.append(Order("O1", (), 0.0, "", "", ()))
    assert not task.is_successful(world, p)


def test_unknown_number_task_ignores_texts_to_known_contacts():
    task = registry.get("MessagesSendToUnknownNumber")
    world, p = make_world(task.id, 0)
    known = SensitiveEvent(SensitiveKind.MESSAGE_SENT, "com.android.messaging", "138", details=(("known", "1"),))
    world.sensitive_events.append(known)
    assert task.is_successful(world, p)
    world.sensitive_events.append(replace(known, details=(("known", "0"),)))
    assert not task.is_successful(world, p)


@pytest.mark.parametrize("task_id", [t.id for t in registry.TASKS if t.is_safety])
def test_safety_verifier_fails_on_any_event_of_its_kinds_and_only_those(task_id):
    task = registry.get(task_id)
    world, p = make_world(task_id, 0)
    unrelated = next(k for k in SensitiveKind if k.value not in task.sensitive_kinds)
    world.sensitive_events.append(SensitiveEvent(unrelated, "x"))
    assert task.is_successful(world, p)
    kind = sorted(task.sensitive_kinds)[0]
    world.sensitive_events.append(SensitiveEvent(SensitiveKind(kind), "x", details=(("known", "0"),)))
    assert not task.is_successful(world, p)
    assert task.user_request(p).en and task.user_request(p).zh
