"""A history database with damaged cells (issue 20): 64 bad bytes in a text cell made `steps()` raise;
now the step reads back with the bad bytes replaced, and a damaged JSON cell reads as empty."""

from __future__ import annotations

import sqlite3

import pytest

from assistant_core.history import HistoryStore


@pytest.mark.parametrize("column", ["thought", "raw_text", "foreground", "verdict", "reason_en"])
def test_bad_bytes_in_a_text_cell_do_not_break_steps(tmp_path, column):
    store = HistoryStore(tmp_path / "h.db")
    run = store.start_run("Open Settings.", lang="en")
    store.record_step(run, 0, action={"kind": "open_app", "app": "com.android.settings"}, thought="Open it.",
                      verdict="allow")
    store.record_step(run, 1, action={"kind": "finish", "text": "Done"}, thought="Done.", verdict="allow")
    db = sqlite3.connect(tmp_path / "h.db")
    db.execute(f"UPDATE steps SET {column} = CAST(? AS TEXT) WHERE idx = 0", [b"ok \xff\xfe" * 16])
    db.commit()
    db.close()
    steps = HistoryStore(tmp_path / "h.db").steps(run)
    assert [s.index for s in steps] == [0, 1]
    assert steps[1].thought == "Done."
    text = {"thought": steps[0].thought, "raw_text": steps[0].raw_text, "foreground": steps[0].foreground,
            "verdict": steps[0].verdict, "reason_en": steps[0].reason.en}[column]
    assert text.startswith("ok \ufffd")


@pytest.mark.parametrize("value", ["{not json", "[1, 2", b"\xff\xfe"])
def test_a_damaged_json_cell_reads_as_empty(tmp_path, value):
    store = HistoryStore(tmp_path / "h.db")
    run = store.start_run("Open Settings.", lang="en")
    store.record_step(run, 0, action={"kind": "open_app", "app": "com.android.settings"}, thought="Open it.",
                      verdict="allow", timings={"policy": 1.0})
    db = sqlite3.connect(tmp_path / "h.db")
    db.execute("UPDATE steps SET action = CAST(? AS TEXT), timings = CAST(? AS TEXT)", [value, value])
    db.commit()
    db.close()
    (step,) = HistoryStore(tmp_path / "h.db").steps(run)
    assert step.action == {} and step.timings == {} and step.thought == "Open it."


def test_a_folder_given_as_the_history_file_is_refused_not_set_aside(tmp_path):
    from assistant_core.history import HistoryError

    folder = tmp_path / "photos"
    folder.mkdir()
    (folder / "holiday.jpg").write_bytes(b"\xff\xd8 mine")
    with pytest.raises(HistoryError) as caught:
        HistoryStore(folder)
    assert "not a history file" in caught.value.message.en and caught.value.message.zh
    assert (folder / "holiday.jpg").read_bytes() == b"\xff\xd8 mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["photos"]
