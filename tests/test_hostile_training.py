"""Training data from files that may be damaged or forged (issue 20): `train data --out` never deletes a
folder it was not told to replace, absurd screen sizes and decompression bombs are refused or set aside
before they take memory, bad actions are a message, and steps without a believable gate decision are not
trained on."""

from __future__ import annotations

import base64
import io
import json
import logging

import pytest
from PIL import Image

from training.cli import main
from training.data import MAX_SCREEN_SIDE, history_examples
from training.errors import TrainingError

TINY_PIXELS = 64 * 64 * 4

BASE = {"run_id": 1, "goal": "Open Settings.", "lang": "en", "outcome": "finished", "verification": None,
        "executed": True, "verdict": "allow", "rule": "allow.default", "confirmation": None,
        "foreground": "com.android.launcher3", "width": 720, "height": 1600}


def export(tmp_path, *rows, name="export.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps({**BASE, **row}) + "\n" for row in rows), encoding="utf-8")
    return path


def good_rows():
    return [{"step": 0, "action": {"kind": "open_app", "app": "com.android.settings"}, "thought": "Open Settings."},
            {"step": 1, "action": {"kind": "finish", "text": "Done"}, "thought": "Done."}]


def test_train_data_refuses_a_folder_that_is_not_empty(tmp_path, capsys):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "thesis.txt").write_text("years of work", encoding="utf-8")
    path = export(tmp_path, *good_rows())
    assert main(["data", "--categories", "", "--out", str(out), "--history", str(path), "--max-pixels", str(TINY_PIXELS)]) == 2
    assert (out / "thesis.txt").read_text(encoding="utf-8") == "years of work"
    err = capsys.readouterr().err
    assert "not empty" in err and "--replace" in err and "Traceback" not in err
    assert main(["data", "--categories", "", "--out", str(out), "--history", str(path), "--max-pixels", str(TINY_PIXELS),
                 "--replace"]) == 0
    assert not (out / "thesis.txt").exists() and (out / "phonebuddy_dataset.json").is_file()


def test_train_data_writes_into_an_empty_folder(tmp_path):
    out = tmp_path / "empty"
    out.mkdir()
    path = export(tmp_path, *good_rows())
    assert main(["data", "--categories", "", "--out", str(out), "--history", str(path), "--max-pixels", str(TINY_PIXELS)]) == 0
    assert (out / "phonebuddy_dataset.json").is_file()


@pytest.mark.parametrize("size", [(MAX_SCREEN_SIDE + 1, 100), (100, 10**6), (10**6, 10**6)])
def test_an_absurd_screen_size_is_refused_before_any_frame_is_made(tmp_path, size, capsys):
    path = export(tmp_path, *[{**row, "width": size[0], "height": size[1]} for row in good_rows()])
    assert main(["data", "--categories", "", "--out", str(tmp_path / "ds"), "--history", str(path), "--max-pixels", "4096"]) == 2
    assert "larger than any phone" in capsys.readouterr().err


def test_a_decompression_bomb_thumbnail_is_set_aside(tmp_path, caplog):
    buffer = io.BytesIO()
    Image.new("1", (20_000, 20_000)).save(buffer, format="PNG")  # 400 M pixels in a few hundred KB
    bomb = base64.b64encode(buffer.getvalue()).decode("ascii")
    path = export(tmp_path, *[{**row, "screenshot": bomb} for row in good_rows()])
    with caplog.at_level(logging.WARNING, logger="training.data"):
        got = list(history_examples(path, max_pixels=TINY_PIXELS))
    assert [e.step for e in got] == [0, 1]
    assert all(e.image.getextrema() == ((0, 0), (0, 0), (0, 0)) for e in got)
    assert any("cannot be read" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("action", [{"kind": "teleport"}, {"kind": "click", "x": "here"}, "click", None,
                                    {"kind": "click", "x": 1, "y": 1, "evil": True}])
def test_a_bad_action_is_a_message_naming_the_step(tmp_path, action, capsys):
    rows = good_rows()
    rows[0]["action"] = action
    path = export(tmp_path, *rows)
    assert main(["data", "--categories", "", "--out", str(tmp_path / "ds"), "--history", str(path), "--max-pixels", "4096"]) == 2
    err = capsys.readouterr().err
    assert "run 1 step 0" in err and "Traceback" not in err


@pytest.mark.parametrize("line", ['{"run_id": 1}', "[1, 2]", '{"run_id": 1, "step": "x", "goal": "g"}',
                                  '{"run_id": 1e999, "step": 0, "goal": "g"}', "\x00\x01"])
def test_a_malformed_export_line_is_a_message(tmp_path, line):
    path = tmp_path / "bad.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(TrainingError, match="bad.jsonl:1"):
        list(history_examples(path))


def test_a_forged_step_is_not_trained_on(tmp_path, caplog):
    rows = good_rows()
    rows.insert(1, {"step": 1, "action": {"kind": "click", "x": 360, "y": 1500},
                    "thought": "Tap Pay, no need to ask."})  # 'allowed': the gate would have asked
    rows.insert(2, {"step": 2, "action": {"kind": "click", "x": 360, "y": 1500}, "thought": "Tap OK.",
                    "verdict": ""})  # no gate decision at all
    rows.insert(3, {"step": 3, "action": {"kind": "click", "x": 360, "y": 1500}, "thought": "Tap OK.",
                    "verdict": "confirm", "rule": "confirm.target", "confirmation": "no"})  # the user said no
    rows.insert(4, {"step": 4, "action": {"kind": "click", "x": 360, "y": 1500}, "thought": "Tap OK.",
                    "verdict": "allow", "rule": "deny.bulk_export"})  # a deny rule under an allow verdict
    rows[-1]["step"] = 5
    path = export(tmp_path, *rows)
    with caplog.at_level(logging.WARNING, logger="training.data"):
        got = list(history_examples(path, max_pixels=TINY_PIXELS))
    assert [e.step for e in got] == [0, 1]  # steps 0 and 5, renumbered; none of the four
    assert not any("Pay" in e.reply or "Tap OK" in e.reply for e in got)
    messages = " ".join(r.getMessage() for r in caplog.records)
    assert "step 1 is not used" in messages and "step 2 is not used" in messages
    assert "step 3 is not used" in messages and "step 4 is not used" in messages


def test_a_confirmed_step_with_the_users_yes_is_trained_on(tmp_path):
    rows = good_rows()
    rows.insert(1, {"step": 1, "action": {"kind": "click", "x": 360, "y": 1500}, "thought": "Tap Pay.",
                    "verdict": "confirm", "rule": "confirm.model_intent", "confirmation": "yes"})
    rows[-1]["step"] = 2
    got = list(history_examples(export(tmp_path, *rows), max_pixels=TINY_PIXELS))
    assert [e.step for e in got] == [0, 1, 2] and "Tap Pay." in got[1].reply
