"""SFT data: the policy's exact prompt and reply format, de-duplication, task-level splits, history exports."""

from __future__ import annotations

import io

import pytest

from assistant_core.policy.parsing import parse_reply
from assistant_core.policy.prompt import action_to_call
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
from training.errors import EmptyDatasetError

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
