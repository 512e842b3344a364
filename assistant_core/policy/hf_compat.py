"""transformers glue shared by the local backend, the tiny-model builder and training.

Without torchvision (it does not import beside this CPU torch), transformers' Qwen VL processors fail:
they always build a video processor. `image_only_processor_class()` returns a `Qwen3VLProcessor` subclass
that passes `video_processor=None`; it loads real PhoneBuddy (qwen3_5) and Qwen3-VL checkpoint folders
and our tiny ones, with or without torchvision, and it is registered with `AutoProcessor` for both
configs, so folders saved with it reload through `AutoProcessor.from_pretrained` as well.

Everything here imports transformers lazily, inside the functions.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

PROCESSOR_CLASS_NAME = "PhoneBuddyImageOnlyProcessor"


@lru_cache(maxsize=1)
def image_only_processor_class() -> type:
    from transformers import AutoProcessor, Qwen3_5Config, Qwen3VLConfig, Qwen3VLProcessor

    class PhoneBuddyImageOnlyProcessor(Qwen3VLProcessor):
        """Qwen3-VL / Qwen3.5 processor for still images only (no video processor, no torchvision)."""

        # No video_processor parameter: ProcessorMixin derives its attributes from this signature.
        def __init__(self, image_processor=None, tokenizer=None, chat_template=None, **kwargs):
            kwargs.pop("video_processor", None)
            super().__init__(image_processor=image_processor, tokenizer=tokenizer, video_processor=None,
                             chat_template=chat_template, **kwargs)

        @classmethod
        def from_pretrained(cls, pretrained_model_name_or_path, **kwargs):
            return _load_image_only(cls, pretrained_model_name_or_path, **kwargs)

    PhoneBuddyImageOnlyProcessor.__name__ = PROCESSOR_CLASS_NAME
    PhoneBuddyImageOnlyProcessor.__qualname__ = PROCESSOR_CLASS_NAME
    for config in (Qwen3VLConfig, Qwen3_5Config):
        AutoProcessor.register(config, PhoneBuddyImageOnlyProcessor, exist_ok=True)
    return PhoneBuddyImageOnlyProcessor


def _load_image_only(cls: type, path: str | Path, **kwargs: Any) -> Any:
    """Build the processor from a folder's tokenizer, image-processor config and chat template."""
    from transformers import AutoImageProcessor, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(path, **kwargs)
    image_processor = AutoImageProcessor.from_pretrained(path, **kwargs)
    template = getattr(tokenizer, "chat_template", None)
    folder = Path(path)
    for name in ("chat_template.jinja", "chat_template.json"):
        candidate = folder / name
        if candidate.exists():
            text = candidate.read_text(encoding="utf-8")
            if name.endswith(".json"):
                import json

                text = json.loads(text).get("chat_template", text)
            template = text
            break
    return cls(image_processor=image_processor, tokenizer=tokenizer, chat_template=template)


def load_processor(path: str | Path) -> Any:
    """The processor for a checkpoint folder (real or tiny), image-only."""
    return image_only_processor_class().from_pretrained(str(path))


def template_facts(processor: Any) -> dict[str, Any]:
    """What a checkpoint's chat template does, found by rendering it (logged when a model loads).

    - `thinking_prefill`: the generation prompt ends with ``<think>`` (Qwen3.5 4B and larger), so the reply
      starts mid-thought with no opening tag (the parser accepts that);
    - `tool_format`: how the template writes an assistant tool call, ``xml``
      (``<function=NAME><parameter=KEY>``), ``json`` (``{"name": ..., "arguments": ...}``) or ``none``;
    - `has_template`: False when the folder carries no chat template at all.
    """
    template = getattr(processor, "chat_template", None) or getattr(getattr(processor, "tokenizer", None),
                                                                      "chat_template", None)
    facts: dict[str, Any] = {"has_template": bool(template), "thinking_prefill": False, "tool_format": "none"}
    if not template:
        return facts
    user = {"role": "user", "content": [{"type": "text", "text": "hello"}]}
    try:
        prompt = processor.apply_chat_template([user], add_generation_prompt=True, tokenize=False)
        facts["thinking_prefill"] = prompt.rstrip().endswith("<think>")
    except Exception as error:  # a template that cannot render is reported, not fatal
        facts["error"] = f"generation prompt: {error}"
    call = {"role": "assistant", "content": "",
            "tool_calls": [{"type": "function", "function": {"name": "probe_tool", "arguments": {"key": 1}}}]}
    try:
        rendered = processor.apply_chat_template([user, call], tokenize=False)
    except Exception as error:
        facts["error"] = f"tool call: {error}"
        return facts
    if "<function=probe_tool>" in rendered:
        facts["tool_format"] = "xml"
    elif '"probe_tool"' in rendered:
        facts["tool_format"] = "json"
    return facts
