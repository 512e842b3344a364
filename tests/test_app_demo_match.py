"""The scripted demonstration recognises a spoken Chinese request whose name Whisper wrote with other
characters of the same sound (给糖酥飞打电话 for 给唐苏菲打电话: Whisper cannot know which characters a
name is written with), and still tells different requests apart."""

from __future__ import annotations

from app.agent import match_demo_task


def test_a_homophone_name_still_matches_its_demonstration():
    typed = match_demo_task("给唐苏菲打电话")
    heard = match_demo_task("给糖酥飞打电话")  # what the real Whisper base writes for our Kokoro voice
    assert typed is not None and heard is not None
    assert heard.task_id == typed.task_id


def test_a_different_chinese_request_does_not_match_by_sound_alone():
    call = match_demo_task("给唐苏菲打电话")
    other = match_demo_task("打开蓝牙")
    assert call is not None and other is not None and other.task_id != call.task_id
    assert match_demo_task("今天天气怎么样") is None
