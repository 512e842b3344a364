"""The phone-use policy: prompts, reply parsing, local (transformers) and remote (OpenAI API) backends.

Light at import: torch and transformers load only inside `local.py` and `tiny.py` functions.

Public API:
- `parse_reply(text, width, height, profile="phonebuddy-4b") -> ParsedReply(action, thought, ...)`
  (assistant_core.policy.parsing): model text -> Action in device pixels; raises only PolicyOutputError.
- `build_prompt(goal, observation, history, profile)` (assistant_core.policy.prompt): the request.
- `get_profile(name)` / `load_profiles()` (assistant_core.policy.profiles): model profiles.
- Building a policy for a run: `phonebuddy.policyspec.build_policy(PolicySpec(...))`, the front hall's one
  factory (the app, `phonebuddy run` and evaluation use it).
- `LocalPolicy(model_dir, profile=..., quantization=..., adapter_dir=...)` (assistant_core.policy.local).
- `RemotePolicy(base_url, profile=..., model=...)` (assistant_core.policy.remote).
- `build_tiny_model(out_dir, arch="qwen3_5"|"qwen3_vl", tokenizer="bpe"|"qwen")` (assistant_core.policy.tiny).
"""

from assistant_core.policy.parsing import ParsedReply, ReplyFormat, parse_reply
from assistant_core.policy.profiles import Dialect, ModelProfile, get_profile, load_profiles

__all__ = ["Dialect", "ModelProfile", "ParsedReply", "ReplyFormat", "get_profile", "load_profiles", "parse_reply"]
