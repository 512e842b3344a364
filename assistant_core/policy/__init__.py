"""The phone-use policy: prompts, reply parsing, local (transformers) and remote (OpenAI API) backends.

Light at import: torch and transformers load only inside `local.py` and `tiny.py` functions.

Public API:
- `parse_reply(text, width, height, profile="phonebuddy-4b") -> ParsedReply(action, thought, ...)`
  (assistant_core.policy.parsing): model text -> Action in device pixels; raises only PolicyOutputError.
- `build_prompt(goal, observation, history, profile)` (assistant_core.policy.prompt): the request.
- `get_profile(name)` / `load_profiles()` (assistant_core.policy.profiles): model profiles.
- `make_policy(profile, backend="local"|"remote", ...)` (assistant_core.policy.factory): a Policy.
- `LocalPolicy(model_dir, profile=..., quantization=..., adapter_dir=...)` (assistant_core.policy.local).
- `RemotePolicy(base_url, profile=..., model=...)` (assistant_core.policy.remote).
- `build_tiny_model(out_dir, arch="qwen3_5"|"qwen3_vl", tokenizer="bpe"|"qwen")` (assistant_core.policy.tiny).
"""

from assistant_core.policy.factory import default_profile, make_policy
from assistant_core.policy.parsing import ParsedReply, ReplyFormat, parse_reply
from assistant_core.policy.profiles import Dialect, ModelProfile, get_profile, load_profiles

__all__ = ["Dialect", "ModelProfile", "ParsedReply", "ReplyFormat", "default_profile", "get_profile", "load_profiles",
           "make_policy", "parse_reply"]
