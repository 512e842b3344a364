"""One decoding step of a Qwen3.5 Gated DeltaNet layer, written for the CPU (issue 25).

transformers runs a one-token step of these layers through its reference PyTorch code (the fused kernels it
prefers, causal-conv1d and flash-linear-attention, are CUDA only): the causal convolution concatenates the
state and the new column and runs a grouped `conv1d`, and the recurrence builds four state-sized
temporaries (decay, key x state, the outer-product update, query x state). At 0.8B on 2 threads that was
26.7 ms of a 149 ms token outside the layer's matrix products (18 layers). Here the same arithmetic, in
fp32 as there, works on the cached states in place:

- convolution: the state (channels x kernel) shifts left by one column, takes the new column, and the output
  is its row-wise dot product with the kernel, then SiLU;
- recurrence, per value head: S <- S * exp(g); kv = k.S; S <- S + k (x) (beta * (v - kv)); out = q.S, with
  q and k L2-normalised and q scaled by 1/sqrt(d_k), as transformers' `torch_recurrent_gated_delta_rule`
  does; the products are batched matrix products over the heads.

The step is used only where it applies (one token, a cache whose states exist, no past recording, no
padding mask); anything else goes to transformers' own forward. tests/test_policy_cpu_runtime.py checks
the outputs and states against transformers' step.
"""

from __future__ import annotations

import types
from typing import Any


def install(model: Any) -> int:
    """Give every Gated DeltaNet layer of `model` the CPU step for one-token decoding; returns how many."""
    count = 0
    for module in model.modules():
        if type(module).__name__.endswith("GatedDeltaNet") and hasattr(module, "in_proj_qkv"):
            if getattr(module, "_pb_original_forward", None) is None:
                module._pb_original_forward = module.forward
                module.forward = types.MethodType(_forward, module)
            count += 1
    return count


def _forward(self: Any, hidden_states: Any, cache: Any = None, attention_mask: Any = None, **kwargs: Any) -> Any:
    if cache is None and "cache_params" in kwargs:
        cache = kwargs.pop("cache_params")
    usable = (
        cache is not None
        and hidden_states.shape[0] == 1
        and hidden_states.shape[1] == 1
        and attention_mask is None
        and not cache.is_recording_past(self.layer_idx)
        and cache.get_conv_state(self.layer_idx) is not None
        and cache.get_recurrent_state(self.layer_idx) is not None
    )
    if not usable:
        return self._pb_original_forward(hidden_states, cache=cache, attention_mask=attention_mask, **kwargs)
    return step(self, hidden_states, cache)


def step(layer: Any, hidden_states: Any, cache: Any) -> Any:
    """The layer's output for one token (1, 1, hidden), its conv and recurrent states updated in `cache`."""
    import torch
    import torch.nn.functional as F

    idx = layer.layer_idx
    conv_state = cache.get_conv_state(idx)  # (1, channels, kernel)
    state = cache.get_recurrent_state(idx)  # (1, value heads, d_k, d_v), fp32
    heads, k_heads = layer.num_v_heads, layer.num_k_heads
    d_k, d_v = layer.head_k_dim, layer.head_v_dim

    mixed = layer.in_proj_qkv(hidden_states)[:, 0]  # (1, channels)
    z = layer.in_proj_z(hidden_states)
    b = layer.in_proj_b(hidden_states)[0, 0]
    a = layer.in_proj_a(hidden_states)[0, 0]

    # the causal convolution over the last `kernel` inputs
    weight = layer.conv1d.weight[:, 0, :]  # (channels, kernel)
    conv_state[:, :, :-1] = conv_state[:, :, 1:].clone()
    conv_state[:, :, -1] = mixed.to(conv_state.dtype)
    cache.increase_count(idx, 0)
    mixed = (conv_state[0].to(weight.dtype) * weight).sum(-1)
    if layer.conv1d.bias is not None:
        mixed = mixed + layer.conv1d.bias
    mixed = F.silu(mixed).to(hidden_states.dtype)

    query, key, value = torch.split(mixed, [layer.key_dim, layer.key_dim, layer.value_dim])
    query = query.float().view(k_heads, d_k)
    key = key.float().view(k_heads, d_k)
    value = value.float().view(heads, d_v)
    if k_heads != heads:
        query = query.repeat_interleave(heads // k_heads, dim=0)
        key = key.repeat_interleave(heads // k_heads, dim=0)
    query = query * torch.rsqrt((query * query).sum(-1, keepdim=True) + 1e-6) / (d_k ** 0.5)
    key = key * torch.rsqrt((key * key).sum(-1, keepdim=True) + 1e-6)
    beta = b.float().sigmoid()
    decay = (-layer.A_log.float().exp() * F.softplus(a.float() + layer.dt_bias)).exp()

    s = state[0]  # (heads, d_k, d_v), updated in place
    s.mul_(decay.view(heads, 1, 1))
    remembered = torch.bmm(key.unsqueeze(1), s)  # (heads, 1, d_v)
    delta = (value.unsqueeze(1) - remembered) * beta.view(heads, 1, 1)
    s.baddbmm_(key.unsqueeze(2), delta)
    out = torch.bmm(query.unsqueeze(1), s).view(heads, d_v).to(hidden_states.dtype)

    out = layer.norm(out, z.reshape(-1, d_v))
    return layer.out_proj(out.reshape(1, 1, -1))
