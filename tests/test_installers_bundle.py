"""The Linux bundle, built by installers/build.py and run like a fresh user would: no virtual
environment on any path, HOME in a temporary folder. Its --self-check passes; with one part removed it
fails and names the part; the first run opens the setup wizard; nothing heavy or secret is inside."""

from __future__ import annotations

import os
import shutil
import tarfile
from pathlib import Path

import pytest

from installers import manifest
from installers.bundle_cache import folder_size

ROOT = Path(__file__).resolve().parents[1]

pytest_plugins = ("tests.installers_fixtures",)

pytestmark = pytest.mark.slow


def _linked_copy(src: Path, dst: Path) -> Path:
    """A copy of the bundle made of hard links (fast, no extra disk); removing a file in it leaves the
    cached bundle intact."""
    shutil.copytree(src, dst, copy_function=os.link, symlinks=True)
    return dst


def test_bundled_self_check_passes_without_the_project_environment(linux_bundle, tmp_path, run_bundled):
    out = run_bundled(linux_bundle.executable, "--self-check", home=tmp_path / "home")
    assert out.returncode == 0, out.stdout[-4000:]
    text = out.stdout
    assert "PhoneBuddy self-check (bundle," in text, text[-2000:]
    for name in ("files", "qt", "main window", "speech runtime", "adb", "scrcpy server", "simulated phone"):
        assert f"OK    {name}" in text, f"{name} not OK:\n{text[-3000:]}"
    assert "SettingsTurnOnWifi solved through the agent loop" in text
    assert "no local model runtime" in text  # the default bundle leaves torch out and says so
    assert "/.venv/" not in text  # nothing came from the project's virtual environment


@pytest.mark.parametrize("part", ["scrcpy/scrcpy-server.jar", "adbutils/binaries/adb", "piper/espeak-ng-data/phontab",
                                  "fonts/wqy-microhei.ttc", "THIRD_PARTY_LICENSES.txt"])
def test_a_missing_part_fails_the_self_check_and_is_named(linux_bundle, tmp_path, run_bundled, part):
    broken = _linked_copy(linux_bundle.folder, tmp_path / "PhoneBuddy")
    (broken / "_internal" / part).unlink()
    out = run_bundled(broken / manifest.EXECUTABLE, "--self-check", home=tmp_path / "home")
    assert out.returncode == 1, out.stdout[-3000:]
    assert f"missing file {broken / '_internal' / part}" in out.stdout, out.stdout[-3000:]
    assert "PhoneBuddy self-check: FAILED" in out.stdout


def test_a_missing_module_off_the_file_list_fails_the_part_that_loads_it(linux_bundle, tmp_path, run_bundled):
    # Not one of the self-check's listed files: the speech runtime check finds it by loading piper for real.
    broken = _linked_copy(linux_bundle.folder, tmp_path / "PhoneBuddy")
    (broken / "_internal" / "piper" / "espeakbridge.so").unlink()
    out = run_bundled(broken / manifest.EXECUTABLE, "--self-check", home=tmp_path / "home")
    assert out.returncode == 1, out.stdout[-3000:]
    failed = [line for line in out.stdout.splitlines() if line.strip().startswith("FAIL")]
    assert len(failed) == 1 and "speech runtime" in failed[0] and "espeakbridge" in failed[0], out.stdout[-3000:]
    assert "PhoneBuddy self-check: FAILED: speech runtime" in out.stdout


def test_first_run_opens_the_setup_wizard_once(linux_bundle, tmp_path, run_bundled):
    home = tmp_path / "home"
    first = run_bundled(linux_bundle.executable, "--demo", "--no-speech", home=home, timeout=180,
                        PHONEBUDDY_STARTUP_PROBE="1", PHONEBUDDY_PROBE_QUIT_S="3")
    assert first.returncode == 0, first.stdout[-3000:]
    assert "phonebuddy-probe: window-shown" in first.stdout
    assert "phonebuddy-probe: wizard-shown" in first.stdout, first.stdout[-3000:]
    assert (home / ".local" / "share" / "PhoneBuddy" / "first-run-done").is_file()
    second = run_bundled(linux_bundle.executable, "--demo", "--no-speech", home=home, timeout=180,
                         PHONEBUDDY_STARTUP_PROBE="1", PHONEBUDDY_PROBE_QUIT_S="1")
    assert second.returncode == 0, second.stdout[-3000:]
    assert "phonebuddy-probe: no-wizard" in second.stdout
    assert "wizard-shown" not in second.stdout


def test_bundle_contents_lean_no_weights_and_parts_present(linux_bundle):
    data = linux_bundle.data_root
    for check in manifest.bundled_data_list(manifest.Platform.LINUX):
        assert (data / check).is_file(), check
    assert os.access(data / "adbutils" / "binaries" / "adb", os.X_OK)
    # The compiled Chinese catalog rides along (read with the standard library; Babel itself stays out).
    assert (data / "assistant_core" / "locale" / "zh" / "LC_MESSAGES" / "phonebuddy.mo").is_file()
    assert not (data / "babel").exists()
    plugins = {p.name for p in data.rglob("platforms/*")}
    assert {"libqoffscreen.so", "libqxcb.so"} <= plugins
    for heavy in ("torch", "transformers", "trl", "bitsandbytes", "cv2", "training"):
        assert not (data / heavy).exists(), f"{heavy} is in the bundle"
    # The two Kokoro Mandarin voices (speech/voices, 0.5 MB style tables listed in its NOTICE) ride along as the
    # speech package's data; no model weights do (Kokoro's 92 MB model comes on first use).
    voices = {f"speech/voices/{p.name}" for p in (ROOT / "speech" / "voices").glob("*.bin")}
    weights = [p for p in data.rglob("*") if p.is_file() and (p.suffix in {".safetensors", ".bin", ".pt", ".gguf"}
                                                                or (p.suffix == ".onnx" and p.stat().st_size > 10e6))
               and not (p.relative_to(data).as_posix() in voices and p.stat().st_size < 1e6)]
    assert weights == [], weights
    assert folder_size(linux_bundle.folder) < manifest.SIZE_TARGET_MB * 2**20


def test_licence_notices_cover_the_bundle(linux_bundle):
    text = (linux_bundle.data_root / manifest.LICENCES_FILE).read_text(encoding="utf-8")
    assert "GPL-3.0-or-later" in text.splitlines()[0] + text[:2000]
    for dist in ("piper-tts", "PySide6_Essentials", "onnxruntime", "ctranslate2", "av", "numpy", "adbutils",
                 "muti-scrcpy-client", "faster-whisper"):
        assert f"\n{dist} " in text, dist
    summary = text.split("== Summary ==")[1].split("=" * 78)[0]
    assert "torch " not in summary and "opencv-python" not in summary  # only what is really inside
    assert (linux_bundle.data_root / "LICENSE-GPL-3.0.txt").read_text().startswith("                    GNU GENERAL")


def test_tarball_has_the_desktop_entry_icon_and_installer(linux_bundle):
    top = f"{manifest.APP_NAME}-{manifest.version()}"
    with tarfile.open(linux_bundle.archive) as tar:
        names = set(tar.getnames())
        desktop = tar.extractfile(f"{top}/share/applications/{manifest.APP_ID}.desktop").read().decode()
        launcher = tar.getmember(f"{top}/{manifest.EXECUTABLE}")
    assert f"{top}/share/icons/hicolor/256x256/apps/{manifest.APP_ID}.png" in names
    assert f"{top}/install.sh" in names
    assert launcher.mode & 0o111
    assert "Exec=phonebuddy" in desktop and f"Icon={manifest.APP_ID}" in desktop and "Name[zh_CN]=" in desktop


def test_command_groups_run_in_the_bundle_and_left_out_parts_are_explained(linux_bundle, tmp_path, run_bundled):
    listed = run_bundled(linux_bundle.executable, "world", "list", home=tmp_path / "home", timeout=120)
    assert listed.returncode == 0, listed.stdout[-2000:]
    assert "SettingsTurnOnWifi" in listed.stdout
    train = run_bundled(linux_bundle.executable, "train", "--help", home=tmp_path / "home", timeout=120)
    assert train.returncode == 2, train.stdout[-2000:]
    assert "needs 'training', which the PhoneBuddy installer leaves out" in train.stdout
    assert "Traceback" not in train.stdout
