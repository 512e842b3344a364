"""Build a Policy from a profile name: the one call the app, the CLI and evaluation use.

    policy = make_policy("phonebuddy-4b")                                   # local, weights from the cache
    policy = make_policy("phonebuddy-0.8b", model_dir="/models/pb-0.8b")    # local folder, offline
    policy = make_policy("autoglm-phone-9b", base_url="http://gpu:8000/v1") # remote server
    policy = make_policy(None)   # the default profile for this computer (4B with CUDA, else 0.8B)

Keyword arguments go to LocalPolicy or RemotePolicy (quantization, adapter_dir, on_thought, api_key, ...).
Raises PolicyUnavailable (bilingual) when the weights are missing or a server-only profile has no URL.
Loading is lazy: nothing heavy happens until the first propose() or an explicit load().
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assistant_core.policy.errors import unavailable
from assistant_core.policy.profiles import Backend, ModelProfile, get_profile, load_profiles


def default_profile(has_cuda: bool | None = None) -> ModelProfile:
    """PhoneBuddy-4B with a CUDA GPU, PhoneBuddy-0.8B without (see hardware.recommend for the reasons)."""
    if has_cuda is None:
        from assistant_core.policy.local import cuda_available

        has_cuda = cuda_available()
    book = load_profiles()
    return book.get(book.default if has_cuda else book.cpu_default)


def make_policy(profile: str | ModelProfile | None = None, *, backend: str | Backend | None = None,
                model_dir: str | Path | None = None, cache_dir: str | Path | None = None,
                base_url: str | None = None, **kwargs: Any):
    prof = get_profile(profile) if profile is not None else default_profile()
    chosen = Backend(backend) if backend else (Backend.REMOTE if base_url else Backend.LOCAL)
    if chosen is Backend.REMOTE:
        if not base_url:
            raise unavailable("not_local", title=prof.title.en)
        from assistant_core.policy.remote import RemotePolicy

        return RemotePolicy(base_url, profile=prof, **kwargs)
    if not prof.runs_locally:
        raise unavailable("not_local", title=prof.title.en)
    from assistant_core.policy.local import LocalPolicy
    from assistant_core.policy.weights import locate_weights

    return LocalPolicy(locate_weights(prof, local_dir=model_dir, cache_dir=cache_dir), profile=prof, **kwargs)
