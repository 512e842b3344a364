"""The request the model sees: PhoneBuddy's runner layout, history lines, languages, image policy; and the
`phonebuddy policy` command line."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from PIL import Image

from assistant_core.i18n import Text
from assistant_core.policy.hardware import Hardware, recommend
from assistant_core.policy.profiles import get_profile, load_profiles
from assistant_core.policy.prompt import ImagePart, build_prompt, fit_pixels, prompt_text
from assistant_core.types import Action, Exchange, Observation, Step

ROOT = Path(__file__).resolve().parents[1]


def screen(w=1080, h=2400):
    img = Image.new("RGB", (w, h), (240, 240, 240))
    for y in range(0, h, 200):
        img.paste((30, 90, 200), (40, y + 20, w - 40, y + 120))
    return Observation(width=w, height=h, foreground="com.android.settings", screenshot=img)


def test_phonebuddy_request_matches_the_runner_layout():
    history = [Step(index=0, action=Action.click(540, 1200), thought="Open Wi-Fi settings."),
               Step(index=1, action=Action.type_text("家里的网络"), thought="输入网络名")]
    prompt = build_prompt("Turn on Wi-Fi", screen(), history, "phonebuddy-4b")
    messages = prompt.hf_messages()
    assert messages[0] == {"role": "system", "content": ""}
    content = messages[1]["content"]
    assert [c["type"] for c in content] == ["text", "image", "text"]
    system = content[0]["text"]
    assert system.startswith("You are a GUI Agent.")
    assert "scaled to a range of 0 to 1000" in system
    assert system.endswith("At the end of the function call(s), output </tool_call>")
    tools = [json.loads(line) for line in system.split("<tools>\n")[1].split("\n</tools>")[0].splitlines()]
    assert [t["function"]["name"] for t in tools] == [
        "click", "double_click", "long_press", "type", "scroll", "drag", "button_press", "open_app",
        "close_app", "wait", "output", "finish"]
    assert content[2]["text"] == (
        "# Instruction\nTurn on Wi-Fi\n\n# History of Previous Actions\n"
        "- Step 1:\nThought: Open Wi-Fi settings.\nAction: click({\"points\": [[500, 500]]})\n"
        "- Step 2:\nThought: 输入网络名\nAction: type({\"text\": \"家里的网络\"})")


def test_no_history_section_on_the_first_step():
    prompt = build_prompt("Open the clock", screen(), [], "phonebuddy-4b")
    assert prompt.user[2] == "# Instruction\nOpen the clock"


def answered(*answers):
    """The screen with the user's answers on it, as the loop hands it to the policy."""
    return replace(screen(), exchanges=tuple(Exchange(Text("Which one?", "哪一个？"), a, step=n)
                                             for n, a in enumerate(answers)))


def test_the_users_answers_have_their_own_part_right_after_the_goal():
    history = [Step(index=0, action=Action.call_user("Which Sophie?"), thought="Ask which one.", executed=True)]
    prompt = build_prompt("Call Sophie", answered("Sophie Li", "the one from work"), history, "phonebuddy-4b")
    assert prompt.user[2] == (
        "# Instruction\nCall Sophie\n(The user said: Sophie Li)\n(The user said: the one from work)"
        "\n\n# History of Previous Actions\n- Step 1:\nThought: Ask which one.\n"
        "Action: call_user({\"text\": \"Which Sophie?\"})")
    zh = build_prompt("给王芳发短信", answered("我晚点到"), [], "phonebuddy-4b", lang="zh")
    assert zh.user[2] == "# 指令\n给王芳发短信\n(The user said: 我晚点到)"
    assert build_prompt("Call Sophie", screen(), [], "phonebuddy-4b").user[2] == "# Instruction\nCall Sophie"


@pytest.mark.parametrize("profile", ["phonebuddy-4b", "autoglm-phone-9b", "qwen3-vl-4b"])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_answers_part_is_byte_for_byte_what_the_models_saw_before(profile, lang):
    """Compatibility: the typed answers render exactly as the old goal-with-answers text did, in every
    prompt family and language, so trained models see the same request."""
    history = [Step(index=0, action=Action.click(540, 1200), thought="tap")]
    typed = build_prompt("Set an alarm", answered("7:30 am", "早上"), history, profile, lang=lang)
    glued = build_prompt("Set an alarm\n(The user said: 7:30 am)\n(The user said: 早上)", screen(), history, profile,
                         lang=lang)
    assert typed.system == glued.system and typed.text == glued.text


def test_no_code_glues_the_answers_onto_the_goal():
    """The answers' wording lives in the prompt formats only (rendered by `render_exchanges`); no module
    writes it onto, or reads it out of, a goal."""
    glued = [str(path.relative_to(ROOT)) for package in ("assistant_core", "harness", "phonebuddy", "app", "training")
             for path in (ROOT / package).rglob("*.py") if "The user said: " in path.read_text(encoding="utf-8")]
    assert glued == []
    formats = json.loads((ROOT / "assistant_core/policy/prompts/formats.json").read_text(encoding="utf-8"))
    assert all("{exchanges}" in layout[lang]["request"] for layout in formats.values() for lang in ("en", "zh"))


def test_openai_messages_carry_the_jpeg_as_a_data_url():
    prompt = build_prompt("Open the clock", screen(), [], "phonebuddy-4b")
    part = prompt.openai_messages()[1]["content"][1]
    assert part["type"] == "image_url"
    assert part["image_url"]["url"].startswith("data:image/jpeg;base64,/9j/")


def test_screenshot_is_capped_to_the_profile_max_pixels_and_is_a_jpeg_round_trip():
    profile = get_profile("phonebuddy-4b")
    prompt = build_prompt("x", screen(), [], profile)
    image = prompt.image
    assert isinstance(image, ImagePart)
    w, h = image.size
    assert w * h <= profile.max_pixels and abs(w / h - 1080 / 2400) < 0.01
    assert image.jpeg[:3] == b"\xff\xd8\xff"
    small = build_prompt("x", screen(), [], profile, max_pixels=64 * 32 * 32).image
    assert small.size[0] * small.size[1] <= 64 * 32 * 32
    assert fit_pixels(100, 100, 65536, 1 << 20) == (256, 256)  # tiny frames are scaled up to min_pixels
    assert fit_pixels(1080, 2400, 65536, 1280 * 32 * 32) == (768, 1696)  # 1,272 visual tokens


def test_chinese_prompt_and_feedback():
    history = [Step(index=0, action=Action.press("back"), thought="返回")]
    prompt = build_prompt("打开设置", screen(), history, "phonebuddy-4b", lang="zh",
                          feedback="没有找到工具调用")
    assert prompt.user[0] == prompt_text("phonebuddy", "zh")
    assert prompt.user[2].startswith("# 指令\n打开设置\n\n# 历史操作\n- 第 1 步：\n思考：返回\n动作：button_press({\"type\": \"back\"})")
    assert "没有找到工具调用" in prompt.user[2]


def test_every_prompt_family_has_both_languages_and_the_same_tools():
    for family in ("phonebuddy", "autoglm", "mobile_use"):
        en, zh = prompt_text(family, "en"), prompt_text(family, "zh")
        assert en != zh and en.strip() and zh.strip()
    tool_names = [json.loads(line)["function"]["name"] for line in
                  prompt_text("phonebuddy", "zh").split("<tools>\n")[1].split("\n</tools>")[0].splitlines()]
    assert "click" in tool_names and len(tool_names) == 12


def test_other_dialects_put_their_prompt_in_the_system_message():
    hist = [Step(index=0, action=Action.click(540, 1200), thought="tap")]
    glm = build_prompt("Open WeChat", screen(), hist, "autoglm-phone-9b")
    assert "do(action=\"Tap\"" in glm.system and "{date}" not in glm.system
    assert 'do(action="Tap", element=[500,500])' in glm.user[0]
    qwen = build_prompt("Open WeChat", screen(), hist, "qwen3-vl-4b")
    assert "mobile_use" in qwen.system
    assert '"coordinate": [500, 500]' in qwen.user[0]  # 540/1080*999 = 499.5 -> 500


def test_profiles_file_has_the_required_profiles():
    book = load_profiles()
    assert book.default == "phonebuddy-4b" and book.cpu_default == "phonebuddy-0.8b"
    assert get_profile("phonebuddy-4b").architecture == "qwen3_5"
    assert get_profile("qwen3-vl-4b").grid == 999
    assert get_profile("autoglm-phone-9b").dialect == "autoglm"
    with pytest.raises(KeyError, match="known"):
        get_profile("no-such-model")


def test_recommendation_without_cuda_is_the_small_model_on_cpu_in_both_languages():
    rec = recommend(Hardware(cuda=False, cpu_cores=2, ram_gb=24))
    assert (rec.profile, rec.device, rec.quantization) == ("phonebuddy-0.8b", "cpu", "fp32")
    text = rec.describe()
    assert isinstance(text, Text)
    assert "PhoneBuddy-0.8B" in text.en and "minutes" in text.en and "GB" in text.en
    assert "PhoneBuddy-0.8B" in text.zh and "分钟" in text.zh
    assert recommend(Hardware(cuda=False, cpu_cores=2, ram_gb=4)).quantization == "nf4"


def test_recommendation_with_a_gpu():
    rec = recommend(Hardware(cuda=True, gpu_name="RTX 4070", vram_gb=12, cpu_cores=8, ram_gb=32))
    assert (rec.profile, rec.device, rec.quantization) == ("phonebuddy-4b", "cuda", "nf4")
    assert rec.memory_gb < 8
    small = recommend(Hardware(cuda=True, gpu_name="MX150", vram_gb=2, cpu_cores=4, ram_gb=8))
    assert small.profile == "phonebuddy-0.8b"
    big = recommend(Hardware(cuda=True, gpu_name="RTX 4090", vram_gb=24))
    assert "bf16" in big.describe().en


def run_cli(*args, stdin=""):
    return subprocess.run([sys.executable, "-m", "phonebuddy.cli", "policy", *args], input=stdin, capture_output=True,
                          text=True, cwd=ROOT, timeout=60)


def test_cli_parse_prints_the_action_json():
    reply = '<think>点击</think><tool_call>{"name": "click", "arguments": {"points": [[500, 500]]}}</tool_call>'
    out = run_cli("parse", "--width", "1080", "--height", "2400", stdin=reply)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["action"] == {"kind": "click", "x": 540, "y": 1200}
    assert data["thought"] == "点击"


def test_cli_parse_reports_the_error_and_exits_1():
    out = run_cli("parse", "--width", "1080", "--height", "2400", "--profile", "qwen3-vl-4b", stdin="hello")
    assert out.returncode == 1
    assert "no action found" in out.stderr and out.stdout == ""


def test_the_english_phonebuddy_prompt_is_the_trained_one():
    """The text of PhoneBuddy's eval runner (QWEN3_5_SFT_EN_SYSTEM_PROMPT). Change it only with the model."""
    import hashlib

    data = (ROOT / "assistant_core/policy/prompts/phonebuddy.en.txt").read_bytes()
    assert hashlib.sha256(data).hexdigest() == "001c9b1ed845ba3e170f1d388db8ab6687a04a5f651219fc2166bac80f11c2f8"
