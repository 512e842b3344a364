"""Model weights: find them (a local folder, or the Hugging Face cache) or download them.

- `locate_weights(profile, local_dir=None, cache_dir=None) -> Path`: the checkpoint folder, without any
  network access; raises `PolicyUnavailable` with a bilingual message when the weights are not there
  (the "offline" wording when HF_HUB_OFFLINE is set).
- `download_weights(profile, ..., on_progress=None) -> Path`: through huggingface_hub's snapshot_download,
  into the user's cache (or `local_dir`). Checks free disk space first, reports byte progress to
  `on_progress(DownloadProgress)`; a dropped connection is retried by huggingface_hub, and running the
  download again after a failure skips the files already complete. Hub errors become `PolicyUnavailable`
  in plain words ("I can't reach the internet to download …"), with how to try again from where the user
  is (`again="command"` or `"button"`).
- `endpoint`: another hub (a mirror, or a local one in tests).
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from assistant_core.i18n import retry_hint
from assistant_core.policy.errors import MESSAGES, PolicyUnavailable, unavailable
from assistant_core.policy.profiles import ModelProfile, get_profile

log = logging.getLogger(__name__)

# Only what inference needs: weights, configs, tokenizer, templates.
WEIGHT_PATTERNS = ["*.json", "*.safetensors", "*.jinja", "*.txt", "*.model", "*.tiktoken"]
SPACE_MARGIN = 1.1


@dataclass(frozen=True)
class DownloadProgress:
    done_bytes: int
    total_bytes: int
    description: str = ""

    @property
    def fraction(self) -> float:
        return self.done_bytes / self.total_bytes if self.total_bytes else 0.0


def offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def default_cache_dir() -> Path:
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE)


def is_model_folder(folder: Path) -> bool:
    return (folder / "config.json").exists() and (any(folder.glob("*.safetensors")) or any(folder.glob("*.bin")))


def locate_weights(profile: str | ModelProfile | None = None, *, local_dir: str | Path | None = None,
                   cache_dir: str | Path | None = None) -> Path:
    """The folder holding `profile`'s weights, found without the network."""
    prof = get_profile(profile)
    if local_dir is not None:
        folder = Path(local_dir)
        if is_model_folder(folder):
            return folder
        if folder.exists():
            raise unavailable("bad_folder", where=str(folder), detail="no config.json and weight files")
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    cache = Path(cache_dir) if cache_dir else default_cache_dir()
    try:
        # The same patterns as the download: a snapshot is complete when every *wanted* file is there.
        path = Path(snapshot_download(prof.repo_id, cache_dir=str(cache), local_files_only=True,
                                      allow_patterns=WEIGHT_PATTERNS))
    except (LocalEntryNotFoundError, FileNotFoundError, OSError, ValueError) as error:
        log.debug("no cached snapshot of %s: %s", prof.repo_id, error)
        path = None
    if path is not None and is_model_folder(path):
        return path
    where = ", ".join(str(p) for p in ([Path(local_dir)] if local_dir else []) + [cache])
    key = "offline" if offline() else "no_weights"
    raise unavailable(key, title=prof.title.en, where=where, name=prof.name)


def _free_gb(target: Path) -> tuple[float, Path]:
    probe = target
    while not probe.exists() and probe.parent != probe:
        probe = probe.parent
    return shutil.disk_usage(probe).free / 1e9, probe


def check_disk_space(profile: ModelProfile, target: Path) -> None:
    free, probe = _free_gb(target)
    need = profile.download_gb * SPACE_MARGIN
    if free < need:
        raise unavailable("no_space", title=profile.title.en, need=need, free=free, where=str(probe))


def _progress_class(callback: Callable[[DownloadProgress], None]):
    from tqdm.auto import tqdm

    class CallbackTqdm(tqdm):
        """tqdm that also reports byte progress to a callback (the hub drives one bar per file).

        Counts on its own, so it reports even when the hub disables the visible bar."""

        def __init__(self, *args, **kwargs):
            self._cb_total = int(kwargs.get("total") or 0)
            self._cb_done = int(kwargs.get("initial") or 0)
            self._cb_desc = str(kwargs.get("desc") or "")
            self._cb_bytes = kwargs.get("unit") == "B" or self._cb_total > 10_000
            super().__init__(*args, **kwargs)

        def update(self, n=1):
            result = super().update(n)
            self._cb_done += int(n or 0)
            if self._cb_bytes:
                try:
                    total = int(getattr(self, "total", 0) or self._cb_total)  # the hub may set it later
                    callback(DownloadProgress(self._cb_done, total, self._cb_desc))
                except Exception:  # a progress UI must not stop a download
                    log.exception("download progress callback failed")
            return result

    return CallbackTqdm


def download_weights(profile: str | ModelProfile | None = None, *, local_dir: str | Path | None = None,
                     cache_dir: str | Path | None = None, revision: str | None = None,
                     on_progress: Callable[[DownloadProgress], None] | None = None,
                     endpoint: str | None = None, again: str = "command") -> Path:
    """Download (or finish downloading) the weights of `profile`; returns the folder. `endpoint`: another
    hub (a mirror such as https://hf-mirror.com, or a local one); default: the hub's own setting.
    A failure is PolicyUnavailable in plain words with the next step; `again` says how the user tries
    again from where they are ("command": run the command again; "button": press Download again). The
    hub's own error (class, errno) goes to the log and to `.detail`, never into the message."""
    prof = get_profile(profile)
    hint = retry_hint(again)
    target = Path(local_dir) if local_dir else Path(cache_dir) if cache_dir else default_cache_dir()
    if local_dir and is_model_folder(Path(local_dir)):
        log.info("%s already holds a model; checking for missing files", local_dir)
    if offline():
        try:
            return locate_weights(prof, local_dir=local_dir, cache_dir=cache_dir)
        except PolicyUnavailable:
            raise unavailable("offline_download", title=prof.title.en, again=hint) from None
    check_disk_space(prof, target)
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError, OfflineModeIsEnabled

    kwargs: dict = {"revision": revision, "allow_patterns": WEIGHT_PATTERNS, "endpoint": endpoint}
    if local_dir:
        kwargs["local_dir"] = str(local_dir)
    elif cache_dir:
        kwargs["cache_dir"] = str(cache_dir)
    if on_progress is not None:
        kwargs["tqdm_class"] = _progress_class(on_progress)
    try:
        path = Path(snapshot_download(prof.repo_id, **kwargs))
    except OfflineModeIsEnabled:
        raise unavailable("offline_download", title=prof.title.en, again=hint) from None
    except (HfHubHTTPError, LocalEntryNotFoundError, OSError, ValueError) as error:
        detail = f"{type(error).__name__}: {error}"[:300]
        log.info("downloading %s failed: %s", prof.repo_id, detail)
        reason = download_failure(error)
        if reason == "no_internet":
            raise unavailable("no_internet", title=prof.title.en, again=hint, detail=detail) from error
        raise unavailable("download_failed", title=prof.title.en, reason=MESSAGES[reason], again=hint,
                          detail=detail) from error
    if not is_model_folder(path):
        raise unavailable("bad_folder", where=str(path), detail="the download holds no config.json and weights")
    return path


def download_failure(error: BaseException) -> str:
    """Which plain reason a hub download error is: "no_internet" (the hub could not be reached: no
    connection, no name resolution, refused, timed out; the hub library reports all of these as
    LocalEntryNotFoundError when nothing is cached), or a MESSAGES reason key."""
    import errno
    import socket

    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError, RepositoryNotFoundError

    chain: list[BaseException] = []
    seen: BaseException | None = error
    while seen is not None and seen not in chain:
        chain.append(seen)
        seen = seen.__cause__ or seen.__context__
    names = " ".join(type(e).__name__ for e in chain)
    if isinstance(error, LocalEntryNotFoundError) or any(
            isinstance(e, ConnectionError | socket.gaierror | TimeoutError) for e in chain) or any(
            word in names for word in ("ConnectError", "ConnectTimeout", "ReadTimeout", "NetworkError")):
        return "no_internet"
    if isinstance(error, RepositoryNotFoundError):
        return "reason_not_found"
    if isinstance(error, HfHubHTTPError):
        return "reason_server"
    if isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EACCES, errno.EROFS, errno.EDQUOT):
        return "reason_disk"
    return "reason_other"
