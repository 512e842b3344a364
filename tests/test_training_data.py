"""SFT data: the policy's exact prompt and reply format, de-duplication, task-level splits, history exports."""

from __future__ import annotations

import base64
import io
import json
import logging

import pytest
from PIL import Image

from assistant_core.policy.parsing import parse_reply
from assistant_core.policy.prompt import action_to_call, build_prompt
from assistant_core.types import Observation
from tests.training_fixtures import TINY_PIXELS
from training.data import (
    dedupe,
    history_examples,
    load_sft_dataset,
    oracle_examples,
    reply_text,
    split_by_task,
    write_dataset,
)
from training.errors import EmptyDatasetError, TrainingError

TASKS = ("SettingsTurnOnWifi", "ClockStartTimer", "MessagesSendText")


@pytest.fixture(scope="module")
def examples():
    return list(oracle_examples(TASKS, seeds=(100,), languages=("en", "zh"), max_pixels=TINY_PIXELS))


def test_every_reply_parses_back_to_its_action(examples):
    from harness.phoneworld.oracle import solve

    assert {e.task for e in examples} == set(TASKS)
    for task in TASKS:
        for step in solve(task, 100).steps:
            text = reply_text(step.thought, step.action, 1080, 2400)
            assert text.startswith("<think>\n") and "<tool_call>\n{" in text and text.endswith("</tool_call>")
            parsed = parse_reply(text, 1080, 2400)
            # Same call on the model's grid (pixels round-trip through the 0-1000 grid).
            assert action_to_call(parsed.action, 1080, 2400) == action_to_call(step.action, 1080, 2400)
            assert parsed.thought == step.thought


def test_prompts_are_the_policy_runtime_prompts(examples, tmp_path):
    from assistant_core.policy.hf_compat import load_processor
    from assistant_core.policy.tiny import build_tiny_model

    proc = load_processor(build_tiny_model(tmp_path / "m", max_pixels=TINY_PIXELS))
    data = load_sft_dataset(write_dataset(tmp_path / "ds", examples))
    row = data["train"][1]
    example = examples[1]
    assert row["key"] == example.key
    stored = proc.apply_chat_template(row["prompt"], tokenize=False, add_generation_prompt=True)
    runtime = proc.apply_chat_template(list(example.messages), tokenize=False, add_generation_prompt=True)
    assert stored == runtime
    assert "# History of Previous Actions\n- Step 1:" in runtime  # step 2 sees step 1 as text history
    assert row["images"][0].size == example.image.size and example.image.size[0] * example.image.size[1] <= TINY_PIXELS
    assert row["completion"][0]["content"][0]["text"] == example.reply


def test_dedupe_and_task_split_never_leak(examples):
    doubled = dedupe([*examples, *examples])
    assert len(doubled) == len(examples)
    train, held = split_by_task(doubled, eval_tasks=("ClockStartTimer",))
    assert {e.task for e in held} == {"ClockStartTimer"}
    assert not {e.task for e in train} & {e.task for e in held}
    train2, held2 = split_by_task(doubled, eval_fraction=0.34, seed=1)
    assert held2 and train2 and not {e.task for e in train2} & {e.task for e in held2}


def test_empty_dataset_is_refused_and_nothing_written(tmp_path):
    with pytest.raises(EmptyDatasetError, match="no training examples"):
        write_dataset(tmp_path / "ds", [])
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(EmptyDatasetError, match="no dataset"):
        load_sft_dataset(tmp_path / "nothing")


def test_history_export_with_consent_becomes_examples(tmp_path):
    from assistant_core.history import ConsentPurpose, ConsentRequiredError, HistoryStore

    store = HistoryStore(tmp_path / "h.db")
    run = store.start_run("Turn on Wi-Fi.", lang="en")
    first = store.record_step(run, 0, action={"kind": "open_app", "app": "com.android.settings"},
                              thought="Open Settings.",
                      verdict="allow", foreground="com.android.launcher3")
    denied = store.record_step(run, 1, action={"kind": "open_app", "app": "com.phoneworld.wallet"},
                               thought="Open the wallet.", verdict="deny")
    ok = store.record_step(run, 2, action={"kind": "finish", "text": "Done"}, thought="Done.", verdict="allow")
    assert denied
    for step_id in (first, ok):
        store.update_step(step_id, executed=True)
    store.finish_run(run, outcome="finished", steps=3)
    buffer = io.StringIO()
    with pytest.raises(ConsentRequiredError):
        store.export_training([run], buffer)
    store.record_consent(ConsentPurpose.TRAINING_EXPORT, True)
    store.export_training([run], buffer)
    path = tmp_path / "export.jsonl"
    path.write_text(buffer.getvalue(), encoding="utf-8")
    got = list(history_examples(path, max_pixels=TINY_PIXELS))
    # The refused step is never trained on; the executed ones are, in order, with text history.
    assert [e.step for e in got] == [0, 1]
    assert '"open_app"' in got[0].reply and '"finish"' in got[1].reply
    assert "Open Settings." in got[1].messages[1]["content"][2]["text"]
    assert {e.source for e in got} == {"history"}


@pytest.mark.parametrize("lang, answer", [("en", "Anna (from choir)"), ("zh", "安娜（合唱团的）")])
def test_a_run_with_an_answer_exports_the_goal_as_said_and_the_answer_as_data(tmp_path, lang, answer):
    """A real run asks the user mid-way: the export keeps the request as said and the answer as structured
    exchanges, and the example after the answer shows it in the prompt's answers part, as the model saw it."""
    from assistant_core.confirm import FixedConfirmer
    from assistant_core.history import ConsentPurpose, HistoryStore
    from assistant_core.loop import LoopConfig, ScriptedUser, run_episode
    from assistant_core.policies import ScriptedPolicy
    from assistant_core.safety import GateContext
    from assistant_core.types import ConfirmAnswer
    from harness.phoneworld import SimDevice, World
    from tests.core_fixtures import drain, tool_call

    device = SimDevice(World(seed=0, language=lang), screenshots=False)
    store = HistoryStore(tmp_path / "h.db")
    policy = ScriptedPolicy.from_replies([tool_call("call_user", text="Who should I write to?"),
                                          tool_call("finish", text="")])
    goal = "Write to my friend" if lang == "en" else "给我朋友写信"
    gen = run_episode(goal, device=device, policy=policy, confirmer=FixedConfirmer(ConfirmAnswer.NO),
                      context=GateContext(allowed_apps=frozenset({"com.android.settings"})),
                      user=ScriptedUser([answer]), history=store, config=LoopConfig(lang=lang), sleep=lambda s: None)
    result = drain(gen)
    assert result.outcome.value == "finished" and result.goal == goal
    store.record_consent(ConsentPurpose.TRAINING_EXPORT, True)
    buffer = io.StringIO()
    assert store.export_training([result.run_id], buffer) == 2
    lines = [json.loads(line) for line in buffer.getvalue().splitlines()]
    assert [line["goal"] for line in lines] == [goal, goal]
    said = {"step": 0, "question": {"en": "Who should I write to?", "zh": "Who should I write to?"}, "answer": answer}
    assert [line["exchanges"] for line in lines] == [[], [said]]
    path = tmp_path / "export.jsonl"
    path.write_text(buffer.getvalue(), encoding="utf-8")
    first, second = (e.messages[1]["content"][2]["text"] for e in history_examples(path, max_pixels=TINY_PIXELS))
    heading = "# Instruction" if lang == "en" else "# 指令"
    assert first == f"{heading}\n{goal}"  # the first step: nothing asked yet, no history
    assert second.startswith(f"{heading}\n{goal}\n(The user said: {answer})\n\n")
    lines[1]["exchanges"] = [{"answer": 7}]
    path.write_text("\n".join(json.dumps(line, ensure_ascii=False) for line in lines), encoding="utf-8")
    with pytest.raises(TrainingError, match="not the user's answers"):
        list(history_examples(path, max_pixels=TINY_PIXELS))


def _tool_call(reply: str) -> dict:
    return json.loads(reply.split("<tool_call>\n", 1)[1].split("\n</tool_call>", 1)[0])


def test_history_export_of_a_720x1600_phone_keeps_its_screen_and_thumbnail(tmp_path):
    from assistant_core.history import ConsentPurpose, HistoryStore, make_thumbnail

    # Top half red, bottom half blue: the example's image must show both, the right way up.
    screen = Image.new("RGB", (720, 1600), (220, 20, 20))
    screen.paste((20, 20, 220), (0, 800, 720, 1600))
    thumb = make_thumbnail(screen)
    store = HistoryStore(tmp_path / "h.db")
    run = store.start_run("Tap the middle.", lang="en")
    tap = store.record_step(run, 0, action={"kind": "click", "x": 360, "y": 800}, thought="Tap the middle.",
                            verdict="allow", foreground="com.android.settings", thumbnail=thumb,
                            width=720, height=1600)
    done = store.record_step(run, 1, action={"kind": "finish", "text": "Done"}, thought="Done.", verdict="allow",
                             foreground="com.android.settings", thumbnail=thumb, width=720, height=1600)
    for step_id in (tap, done):
        store.update_step(step_id, executed=True)
    store.finish_run(run, outcome="finished", steps=2)
    store.record_consent(ConsentPurpose.TRAINING_EXPORT, True)
    buffer = io.StringIO()
    assert store.export_training([run], buffer) == 2
    lines = [json.loads(line) for line in buffer.getvalue().splitlines()]
    assert [(line["width"], line["height"]) for line in lines] == [(720, 1600)] * 2
    assert all(base64.b64decode(line["screenshot"]) == thumb for line in lines)
    path = tmp_path / "export.jsonl"
    path.write_text(buffer.getvalue(), encoding="utf-8")

    got = list(history_examples(path, max_pixels=TINY_PIXELS))
    assert [e.step for e in got] == [0, 1]
    # (360, 800) on a 720x1600 screen is the middle of the model's 0-1000 grid, in the reply and in the
    # next step's text history.
    assert _tool_call(got[0].reply) == {"name": "click", "arguments": {"points": [[500, 500]]}}
    assert 'click({"points": [[500, 500]]})' in got[1].messages[1]["content"][2]["text"]
    parsed = parse_reply(got[0].reply, 720, 1600).action
    assert (parsed.x, parsed.y) == (360, 800)
    # The image is the thumbnail at the size the runtime would send for a live 720x1600 screenshot.
    runtime = build_prompt("Tap the middle.", Observation(720, 1600, "com.android.settings", screenshot=screen),
                           max_pixels=TINY_PIXELS)
    image = got[0].image
    assert image.size == runtime.image.size
    w, h = image.size
    top, bottom = image.getpixel((w // 2, h // 4)), image.getpixel((w // 2, 3 * h // 4))
    assert top[0] > 150 > top[2] and bottom[2] > 150 > bottom[0]


def test_history_lines_without_thumbnail_or_size_fall_back_and_say_so(tmp_path, caplog):
    base = {"goal": "Tap.", "lang": "en", "outcome": "finished", "verification": None, "executed": True,
            "verdict": "allow", "thought": "Tap.", "foreground": "com.android.settings"}
    rows = [
        # A sized step without a thumbnail, and one whose screenshot is not an image: black frames of 720x1600.
        {**base, "run_id": 1, "step": 0, "action": {"kind": "click", "x": 360, "y": 800}, "width": 720, "height": 1600},
        {**base, "run_id": 1, "step": 1, "action": {"kind": "click", "x": 720, "y": 1600}, "width": 720,
         "height": 1600, "screenshot": "bm90IGFuIGltYWdl"},
        # A line from before the store recorded sizes: 1080x2400 is assumed, and logged.
        {**base, "run_id": 2, "step": 0, "action": {"kind": "click", "x": 540, "y": 1200}},
    ]
    path = tmp_path / "export.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="training.data"):
        got = list(history_examples(path, max_pixels=TINY_PIXELS))
    assert [(e.task, e.step) for e in got] == [("history-run-1", 0), ("history-run-1", 1), ("history-run-2", 0)]
    assert [_tool_call(e.reply)["arguments"]["points"] for e in got] == [[[500, 500]], [[1000, 1000]], [[500, 500]]]
    for example in got:
        assert example.image.getextrema() == ((0, 0), (0, 0), (0, 0))
    blank = build_prompt("Tap.", Observation(720, 1600, "", screenshot=Image.new("RGB", (720, 1600))),
                         max_pixels=TINY_PIXELS)
    assert got[0].image.size == blank.image.size
    messages = [r.getMessage() for r in caplog.records]
    assert any("run 1" in m and "no usable thumbnail" in m and "[0, 1]" in m for m in messages)
    assert any("run 1 step 1" in m and "cannot be read" in m for m in messages)
    assert any("run 2" in m and "no recorded screen size" in m for m in messages)
    assert not any("run 1" in m and "no recorded screen size" in m for m in messages)

    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({**rows[0], "width": 0}) + "\n", encoding="utf-8")
    with pytest.raises(TrainingError, match="not a positive size"):
        list(history_examples(bad))
