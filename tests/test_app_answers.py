"""A question is answered in words: in the window the answer is the last thing the voice says (not cut
off by the ending, not said twice, never "Done, as far as I can tell"), the screen reader hears it, F3
repeats it, and the history's conversation keeps it once; English and Chinese, battery and time."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from app.conversation import EntryKind
from app.main_window import AppServices
from assistant_core.endings import SAY
from assistant_core.history import HistoryStore
from tests.app_fixtures import make_window


class RecordingSpeaker:
    """The speech queue the window fills (say / stop / repeat_last, in order)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []
        self.last = ""

    def say(self, text: str, lang: str | None = None) -> None:
        self.calls.append(("say", text))
        self.last = text

    def stop(self) -> None:
        self.calls.append(("stop", ""))

    def repeat_last(self) -> None:
        self.calls.append(("say", self.last))  # as speech.Speaker: its own last utterance again

    def set_rate(self, rate: float) -> None:
        pass


CASES = [("How much battery do I have?", "en", "The battery is at {battery}%"),
         ("电池还有多少电", "zh", "电量还有 {battery}%"),
         ("What time is it?", "en", "It is "),
         ("现在几点了", "zh", "现在是")]


@pytest.mark.parametrize(("goal", "lang", "expected"), CASES, ids=[c[0] for c in CASES])
def test_a_question_is_spoken_with_its_answer_and_f3_repeats_it(qtbot, tmp_path, goal, lang, expected):
    speaker = RecordingSpeaker()
    history = HistoryStore(tmp_path / "h.db")
    window = make_window(qtbot, lang=lang, services=AppServices(speaker=speaker), history=history)
    expected = expected.format(battery=window.phone.world.sys.battery)
    speaker.calls.clear()
    window.request_box.setText(goal)
    with qtbot.waitSignal(window.run_finished, timeout=60_000):
        qtbot.keyClick(window.request_box, Qt.Key.Key_Return)
    said = [t for k, t in speaker.calls if k == "say"]
    answer = said[-1]
    assert expected in answer, said  # the last thing said is the answer itself
    assert sum(expected in t for t in said) == 1, said  # said once, not cut off by the ending and said again
    assert not any(SAY["done_unchecked"].get(lang) in t or SAY["done_short"].get(lang) in t for t in said), said
    last = window.conversation.entries[-1]
    assert last.kind is EntryKind.RESULT and last.text == answer
    assert window.announcer.log[-1].text == answer and window.announcer.log[-1].to_screen_reader
    window.request_box.setFocus()
    speaker.calls.clear()
    qtbot.keyClick(window.request_box, Qt.Key.Key_F3)
    assert [t for k, t in speaker.calls if k == "say"] == [answer]  # F3 repeats the answer
    rows = [r["text"] for r in history._open()["conversation"].rows if r["role"] == "assistant"]
    assert rows.count(answer) == 1, rows
