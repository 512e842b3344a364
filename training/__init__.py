"""Personalize the phone-use policy and measure it: the paper's recipe on PhoneWorld-lite.

- `training.data`: SFT examples in exactly the policy's prompt and reply format, from oracle runs and
  consented history exports; de-duplicated, split by task, saved as a `datasets` dataset with images.
- `training.sft`: trl SFTTrainer + LoRA (QLoRA on CUDA), reply-only loss, resumable, atomic adapters
  that `LocalPolicy(..., adapter_dir=...)` loads directly.
- `training.rl`: GRPO with trl's `environment_factory`: `PhoneWorldEnv` tools are our Action kinds, the
  app's SafetyGate runs inside rollouts, rewards are the task verifiers (plus a small format reward).
- `training.evaluate`: success rate by category through the agent loop, for any policy; per-episode
  results as JSON lines.
- `training.cli`: `phonebuddy train data|sft|rl|eval`; `training.config`: config files;
  `training.runs`: run folders and all-or-nothing outputs; `training.forcing`: scripted completions.

Importing this package is light: torch, transformers, trl and datasets load inside functions.
"""
