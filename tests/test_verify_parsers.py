"""Parsers of what a phone prints (harness.verify.readers) and request extraction (extract): real
formats read, garbled or unexpected text raises Unreadable (never read as "nothing there"), and the
checks turn garbled readings into cannot_verify — never a crash, never a false verified."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assistant_core.events import VerificationStatus
from harness.verify import extract
from harness.verify.checks import CHECKS, CONTACTS, Params, Readings
from harness.verify.readers import (
    Unreadable,
    parse_alarms,
    parse_epoch,
    parse_foreground,
    parse_ls,
    parse_notifications,
    parse_packages,
    parse_rows,
    parse_setting,
    parse_wifi_ssid,
    same_number,
)

SENT = "content query --uri content://sms/sent --projection _id:address:body:date"

# --- the real formats ------------------------------------------------------------------------------------


def test_rows_keep_commas_inside_values_and_null():
    text = "Row: 0 _id=1, address=+1 555 0147, body=milk, eggs, bread, date=1700000000000\nRow: 1 _id=2, address=NULL, body=, date=5\n"
    rows = parse_rows(text, ("_id", "address", "body", "date"))
    assert rows[0]["body"] == "milk, eggs, bread" and rows[0]["address"] == "+1 555 0147"
    assert rows[1]["address"] is None and rows[1]["body"] == ""
    assert parse_rows("No result found.\n", ("_id",)) == []


def test_alarms_from_dumpsys():
    text = (
        "Current Alarm Manager state:\n  Pending alarms: 2\n"
        "    RTC_WAKEUP #0: Alarm{9ca06d4 type 0 origWhen 1774847700000 window 0 exactAllowReason=policy_permission "
        "repeatInterval 0 count 0 flags 0x9 com.android.deskclock}\n"
        "      tag=*walarm*:com.android.deskclock.ALARM_ALERT\n"
        "    ELAPSED #1: Alarm{1 type 3 origWhen 999 window 0 flags 0x0 android}\n      tag=*alarm*:android.tick\n"
    )
    alarms = parse_alarms(text)
    assert [(a.kind, a.when_ms, a.package, a.tag) for a in alarms] == [
        ("RTC_WAKEUP", 1774847700000, "com.android.deskclock", "*walarm*:com.android.deskclock.ALARM_ALERT"),
        ("ELAPSED", 999, "android", "*alarm*:android.tick"),
    ]


def test_notifications_redacted_and_not():
    head = "Current Notification Manager state:\n  Notification List:\n"
    rec = "    NotificationRecord(0x00000001: pkg=com.android.email user=UserHandle{0} id=7 tag=null importance=3)\n"
    shown = parse_notifications(head + rec + "        android.title=String (Grace)\n        android.text=String (Hi, there)\n")
    hidden = parse_notifications(head + rec + "        android.title=String [length=5]\n")
    assert shown[0].package == "com.android.email" and shown[0].id == 7 and shown[0].text == "Hi, there"
    assert hidden[0].title is None


def test_wifi_foreground_packages_ls_epoch():
    assert parse_wifi_ssid('mWifiInfo SSID: "Home Net", BSSID: x, Supplicant state: COMPLETED, RSSI: -5') == "Home Net"
    assert parse_wifi_ssid("mWifiInfo SSID: <unknown ssid>, BSSID: <none>, Supplicant state: DISCONNECTED") is None
    assert parse_foreground("  mCurrentFocus=Window{1a2b u0 com.android.settings/com.android.settings.Settings}") == (
        "com.android.settings", "com.android.settings.Settings")
    assert parse_foreground("mCurrentFocus=Window{1a2b u0 NotificationShade}") == ("", "NotificationShade")
    assert parse_packages("package:android\npackage:/data/app/x-1/base.apk=com.x\n") == {"android", "com.x"}
    ls = parse_ls("total 8\n-rw-rw---- 1 shell shell 47 2026-03-02 08:00 My note.txt\ndrwxrwx--x 2 root root 4096 2026-03-02 08:00 Sub\n", "/d")
    assert [(e.name, e.is_dir, e.size) for e in ls] == [("My note.txt", False, 47), ("Sub", True, 4096)]
    assert parse_ls("ls: /nope: No such file or directory\n", "/nope") is None
    assert parse_epoch("1774794840\n") == 1774794840
    assert parse_setting("1\n") == "1" and parse_setting("null\n") is None


def test_numbers_compare_by_digits_with_country_codes():
    assert same_number("+86 195 8846 1981", "195 8846 1981")
    assert same_number("+1 555 0147", "15550147")
    assert not same_number("555 0147", "555 0148") and not same_number("", "1")


# --- garbled and unexpected text ---------------------------------------------------------------------------

GARBLED_ROWS = [
    "",  # nothing at all, not even "No result found."
    "Error while accessing provider:sms\njava.lang.SecurityException: Permission Denial: reading sms\n",
    "Row: 0 _id=1, address=+1 555",  # cut inside a row
    "Row: 0 _id=1, body=hi, address=1, date=2\n",  # the columns in another order
    "Row: 1 _id=1, address=1, body=hi, date=2\n",  # rows out of order
    "\x00\x89PNG\r\n\x1a\n garbage",
    "/system/bin/sh: content: inaccessible or not found\n",
]


@pytest.mark.parametrize("text", GARBLED_ROWS)
def test_garbled_content_query_is_unreadable(text):
    with pytest.raises(Unreadable) as info:
        parse_rows(text, ("_id", "address", "body", "date"))
    assert str(info.value)


def test_user_text_that_looks_like_an_error_is_still_data():
    rows = parse_rows("Row: 0 _id=1, address=1, body=Exception: Permission Denial lol, date=2\n", ("_id", "address", "body", "date"))
    assert rows[0]["body"].startswith("Exception")


@pytest.mark.parametrize(
    ("parser", "text"),
    [
        (parse_alarms, "Can't find service: alarm\n"),
        (parse_alarms, "hello world\n"),
        (parse_alarms, "Current Alarm Manager state:\n    RTC_WAKEUP #0: Alarm{9ca06d4 type 0 orig"),
        (parse_notifications, "Permission Denial: can't dump NotificationManager from pid=1\n"),
        (parse_notifications, "random words\n"),
        (parse_wifi_ssid, "Wi-Fi is enabled\n"),
        (parse_foreground, "nothing here"),
        (parse_packages, "Error: java.lang.NullPointerException\n"),
        (parse_packages, "package:a\nwhat is this\n"),
        (parse_epoch, "Tue Mar 3 10:00:00 UTC 2026"),
        (parse_setting, "1\n2\n"),
        (parse_setting, "/system/bin/sh: settings: inaccessible or not found\n"),
        (lambda t: parse_ls(t, "/d"), "-rw?? what\n"),
    ],
)
def test_unexpected_output_is_unreadable(parser, text):
    with pytest.raises(Unreadable):
        parser(text)


def _readings(**outputs: str | None) -> Readings:
    return Readings(tuple(outputs.items()))


def test_a_check_on_garbled_readings_is_cannot_verify_with_the_reason():
    contacts = "Row: 0 contact_id=1, mimetype=vnd.android.cursor.item/phone_v2, display_name=Nina Song, data1=195 8846 1981\n"
    before = Readings(((CONTACTS, contacts), (SENT, "No result found.\n")))
    after = Readings(((CONTACTS, contacts), (SENT, GARBLED_ROWS[1])))
    finding = CHECKS["sms_sent"].judge(Params(recipient="Nina Song", text="hi"), before, after)
    assert finding.status is VerificationStatus.CANNOT_VERIFY and "Permission Denial" in finding.evidence
    assert finding.detail.en and finding.detail.zh


@settings(max_examples=60, deadline=None)
@given(junk=st.text(max_size=200))
def test_random_junk_never_verifies_a_sent_text(junk):
    contacts = "Row: 0 contact_id=1, mimetype=vnd.android.cursor.item/phone_v2, display_name=Nina Song, data1=195 8846 1981\n"
    before = Readings(((CONTACTS, contacts), (SENT, "No result found.\n")))
    after = Readings(((CONTACTS, contacts), (SENT, junk)))
    finding = CHECKS["sms_sent"].judge(Params(recipient="Nina Song", text="I will be there at six"), before, after)
    assert finding.status is not VerificationStatus.VERIFIED


@settings(max_examples=60, deadline=None)
@given(junk=st.text(max_size=200))
def test_random_junk_never_verifies_an_alarm(junk):
    before = Readings((("dumpsys alarm", "Current Alarm Manager state:\n"), ("getprop persist.sys.timezone", "\n")))
    after = Readings((("dumpsys alarm", junk), ("getprop persist.sys.timezone", "\n")))
    finding = CHECKS["alarm_set"].judge(Params(time="07:30"), before, after)
    assert finding.status is not VerificationStatus.VERIFIED


# --- extraction ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "clock"),
    [("4:10 pm", "16:10"), ("下午4点10分", "16:10"), ("上午8点35分", "08:35"), ("下午2:45", "14:45"), ("7 am", "07:00"),
     ("at 14:00", "14:00"), ("晚上七点半", "19:30"), ("12:30 am", "00:30"), ("no time here", None), ("25:00", None)],
)
def test_clock_times(text, clock):
    assert extract.parse_clock(text) == clock


def test_dates_percent_minutes():
    today = dt.date(2026, 3, 29)
    assert extract.parse_date("on April 11 at 2:45 pm", today=today) == "2026-04-11"
    assert extract.parse_date("，时间是4月11日下午2:45。", today=today) == "2026-04-11"
    assert extract.parse_date("tomorrow", today=today) == "2026-03-30"
    assert extract.parse_date("April 31", today=today) is None
    assert extract.parse_percent("把屏幕亮度调到 60%。") == 60 and extract.parse_percent("150%") is None
    assert extract.parse_minutes("Start a 8-minute timer.") == 8 and extract.parse_minutes("开一个 8 分钟的计时器") == 8


def test_a_value_with_line_breaks_stays_in_its_row():
    text = "Row: 0 _id=1, address=123, body=Bring:\nmilk\neggs, date=17\nRow: 1 _id=2, address=4, body=ok, date=18\n"
    rows = parse_rows(text, ("_id", "address", "body", "date"))
    assert rows[0]["body"] == "Bring:\nmilk\neggs" and rows[0]["date"] == "17" and rows[1]["body"] == "ok"
