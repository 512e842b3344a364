"""The parts of installers/ that run without building: the Windows and macOS scripts agree with the
spec's manifest (names, version, bundled data, icons), build.py refuses other platforms, the licence
classifier, the bundle's cv2 stand-in, the first-run marker, and the self-check from a source install."""

from __future__ import annotations

import plistlib
import re
import subprocess
import sys

import numpy as np
import pytest

from installers import licences, manifest
from installers.licences import Compat

ROOT = manifest.ROOT


def test_icons_and_script_inputs_exist():
    for path in (manifest.ICON_PNG, manifest.ICON_ICO, manifest.ICON_ICNS, manifest.DESKTOP_FILE, manifest.INNO_SCRIPT,
                 manifest.MAC_PLIST, manifest.MAC_DMG_SCRIPT, manifest.INSTALLERS / "COPYING",
                 manifest.INSTALLERS / "phonebuddy.spec", manifest.INSTALLERS / "launcher.py",
                 manifest.INSTALLERS / "linux" / "install.sh"):
        assert path.is_file(), path
    from PIL import Image

    assert Image.open(manifest.ICON_PNG).size == (256, 256)
    assert (256, 256) in Image.open(manifest.ICON_ICO).info["sizes"]
    assert Image.open(manifest.ICON_ICNS).format == "ICNS"


def _iss() -> str:
    return manifest.INNO_SCRIPT.read_text(encoding="utf-8")


def _iss_define(name: str) -> str:
    m = re.search(rf'#define {name} "([^"]*)"', _iss())
    assert m, name
    return m.group(1)


def test_inno_script_matches_the_manifest():
    assert _iss_define("AppName") == manifest.APP_NAME
    assert _iss_define("AppId") == manifest.APP_ID
    assert _iss_define("AppVersion") == manifest.version()
    assert _iss_define("CliExe") == f"{manifest.EXECUTABLE}.exe"
    assert _iss_define("AppExe") == f"{manifest.APP_NAME}.exe"  # the spec's windowed EXE on Windows
    parts = sorted(p.replace("\\", "/") for p in re.findall(r'#define Part "([^"]+)"', _iss()))
    want = sorted([*manifest.bundled_data_list(manifest.Platform.WINDOWS), manifest.LICENCES_FILE])
    assert parts == want
    assert _iss().count("#call CheckPart") == len(want)
    here = manifest.INNO_SCRIPT.parent
    for rel in re.findall(r"^(?:SetupIconFile|LicenseFile)=(.+)$", _iss(), re.M):
        assert (here / rel.replace("\\", "/")).is_file(), rel
    for rel in re.findall(r'InfoAfterFile: "([^"]+)"', _iss()):
        assert (here / rel).is_file(), rel
    # The driver note says what the USB driver is, where to get it, and how to turn on USB debugging.
    en, zh = ((here / f"adb-usb-driver-{lang}.txt").read_text(encoding="utf-8") for lang in ("en", "zh"))
    assert all(w in en for w in ("USB driver", "Google USB Driver", "USB debugging", "Device Manager"))
    assert all(w in zh for w in ("USB 驱动", "Google USB Driver", "USB 调试"))


def test_inno_script_speaks_every_page_in_both_languages():
    text = _iss()
    assert "CreateOleObject('SAPI.SpVoice')" in text
    said = re.findall(r"wp(\w+): Speak\(CustomMessage\('(\w+)'\)\)", text)
    assert {page for page, _ in said} >= {"Welcome", "License", "SelectDir", "Ready", "Installing", "InfoAfter",
                                          "Finished"}
    for _page, key in said:
        assert re.search(rf"^english\.{key}=\S", text, re.M), key
        assert re.search(rf"^chinesesimplified\.{key}=\S", text, re.M), key


def test_macos_plist_and_dmg_script_match_the_manifest():
    with manifest.MAC_PLIST.open("rb") as f:
        info = plistlib.load(f)
    assert info["CFBundleName"] == manifest.APP_NAME
    assert info["CFBundleIdentifier"] == manifest.APP_ID
    assert info["CFBundleShortVersionString"] == manifest.version()
    assert info["CFBundleExecutable"] == manifest.APP_NAME
    assert info["CFBundleIconFile"] == manifest.ICON_ICNS.name
    assert "listens" in info["NSMicrophoneUsageDescription"]
    assert set(info["CFBundleLocalizations"]) == {"en", "zh-Hans"}
    for lproj, marker in (("en.lproj", "listens"), ("zh-Hans.lproj", "语音")):
        strings = (manifest.MAC_PLIST.parent / lproj / "InfoPlist.strings").read_text(encoding="utf-8")
        assert re.search(rf'NSMicrophoneUsageDescription = ".*{marker}.*";', strings), lproj
    script = manifest.MAC_DMG_SCRIPT.read_text()
    block = script.split("parts=(", 1)[1].split(")", 1)[0]
    parts = sorted(re.findall(r'"([^"]+)"', block))
    assert parts == sorted([*manifest.bundled_data_list(manifest.Platform.MACOS), manifest.LICENCES_FILE])
    assert "hdiutil create" in script and "InfoPlist.strings" in script


def test_desktop_entry_matches_the_manifest():
    entry = dict(line.split("=", 1) for line in manifest.DESKTOP_FILE.read_text(encoding="utf-8").splitlines()
                 if "=" in line)
    assert entry["Name"] == manifest.APP_NAME
    assert entry["Exec"] == manifest.EXECUTABLE
    assert entry["Icon"] == manifest.APP_ID
    assert "Accessibility" in entry["Categories"]
    assert entry["Name[zh_CN]"]


def test_spec_uses_the_manifest_for_every_part():
    spec = (manifest.INSTALLERS / "phonebuddy.spec").read_text()
    for needle in ("manifest.parts_for(PLATFORM)", "manifest.EXCLUDED_MODULES", "manifest.DATA_PACKAGES",
                   "manifest.LICENCES_FILE", "manifest.MAC_PLIST", "manifest.ICON_ICO", "manifest.ICON_ICNS"):
        assert needle in spec, needle
    for part in manifest.parts_for(manifest.Platform.LINUX):  # every Linux source exists in this environment
        assert part.source().exists(), part


def test_selfcheck_required_files_are_bundled_parts():
    from app.selfcheck import BUNDLED_FONT, LICENCES_FILE, REQUIRED_FILES

    bundled = set(manifest.bundled_data_list(manifest.current_platform()))
    assert {f.bundle_path for f in REQUIRED_FILES} | {BUNDLED_FONT} <= bundled
    assert LICENCES_FILE == manifest.LICENCES_FILE


@pytest.mark.parametrize("other", [p for p in manifest.Platform if p is not manifest.current_platform()])
def test_build_refuses_another_platform(other):
    out = subprocess.run([sys.executable, str(manifest.INSTALLERS / "build.py"), str(other)], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 2
    assert f"cannot build the {other} bundle" in out.stderr


@pytest.mark.parametrize(("expr", "want"), [
    ("GPL-3.0-or-later", Compat.COMPATIBLE),
    ("MIT", Compat.COMPATIBLE),
    ("Apache 2.0", Compat.COMPATIBLE),
    ("LGPL-3.0-only OR GPL-2.0-only OR GPL-3.0-only", Compat.COMPATIBLE),
    ("BSD-3-Clause AND 0BSD AND MIT AND Zlib AND CC0-1.0", Compat.COMPATIBLE),
    ("MPL-2.0 AND MIT", Compat.COMPATIBLE),
    ("GPL-2.0-only", Compat.INCOMPATIBLE),
    ("MIT AND GPL-2.0-only", Compat.INCOMPATIBLE),
    ("Apache-1.1", Compat.INCOMPATIBLE),
    ("GPL-3.0-or-later WITH GCC-exception-3.1", Compat.COMPATIBLE),
    ("GPL-2.0-only WITH Classpath-exception-2.0", Compat.INCOMPATIBLE),
    ("Some Custom Licence", Compat.UNKNOWN),
    ("", Compat.UNKNOWN),
])
def test_licence_classifier(expr, want):
    assert licences.classify(expr) is want


def test_notices_from_real_metadata_flag_what_is_not_compatible(tmp_path):
    notices = licences.collect_notices(licences.distributions_for_modules(["piper", "numpy", "PySide6"]))
    by_name = {n.name.lower(): n for n in notices}
    assert by_name["piper-tts"].licence == "GPL-3.0-or-later"
    assert all(n.compat is Compat.COMPATIBLE for n in notices)
    bad = licences.ExtraNotice("some GPLv2-only thing", "GPL-2.0-only", "lib/x.so")
    flagged = licences.write_notices(tmp_path / "N.txt", notices, version="9", extra=[bad])
    assert flagged == ["some GPLv2-only thing: GPL-2.0-only -> INCOMPATIBLE"]
    text = (tmp_path / "N.txt").read_text()
    review = text.split("== Licences to review")[1].split("== Summary ==")[0]
    assert "some GPLv2-only thing" in review and "piper-tts" not in review


def test_cv2_stand_in_matches_opencv():
    import cv2

    sys.path.insert(0, str(manifest.INSTALLERS / "compat"))
    try:
        import phonebuddy_cv2_lite as lite
    finally:
        sys.path.pop(0)
    rng = np.random.default_rng(0)
    bgr = rng.integers(0, 255, (9, 7, 3), dtype=np.uint8)
    bgra = rng.integers(0, 255, (9, 7, 4), dtype=np.uint8)
    assert lite.COLOR_BGR2RGB == cv2.COLOR_BGR2RGB and lite.COLOR_BGRA2RGBA == cv2.COLOR_BGRA2RGBA
    assert np.array_equal(lite.cvtColor(bgr, lite.COLOR_BGR2RGB), cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB))
    assert np.array_equal(lite.cvtColor(bgra, lite.COLOR_BGRA2RGBA), cv2.cvtColor(bgra, cv2.COLOR_BGRA2RGBA))
    for code in (0, 1, -1):
        assert np.array_equal(lite.flip(bgr, code), cv2.flip(bgr, code))
    with pytest.raises(NotImplementedError, match="code 6"):
        lite.cvtColor(bgr, 6)
    assert not hasattr(lite, "imshow")


def test_first_run_marker(tmp_path):
    from app.first_run import FirstRun, wizard_wanted

    fr = FirstRun(tmp_path / "data")
    assert fr.pending()
    fr.mark_done()
    assert not fr.pending() and fr.marker.is_file()
    assert wizard_wanted({"PHONEBUDDY_BUNDLE": "1"})
    assert not wizard_wanted({})
    assert not wizard_wanted({"PHONEBUDDY_BUNDLE": "1", "PHONEBUDDY_FIRST_RUN": "0"})
    assert wizard_wanted({"PHONEBUDDY_FIRST_RUN": "1"})


def test_local_policy_without_ml_runtime_says_so(monkeypatch):
    import app.agent as agent

    monkeypatch.setattr(agent, "local_runtime_present", lambda: False)
    with pytest.raises(agent.AgentUnavailableError) as err:
        agent.make_policy(agent.AgentChoice(agent.AgentKind.LOCAL_CPU), lang="zh")
    assert "model server" in err.value.text.en and "服务器" in err.value.text.zh


@pytest.mark.slow
def test_self_check_from_a_source_install(tmp_path):
    """`phonebuddy --self-check` from the checkout: every check runs for real and passes here."""
    env = {"PATH": f"{ROOT / '.venv' / 'bin'}:/usr/bin:/bin", "HOME": str(tmp_path), "QT_QPA_PLATFORM": "offscreen",
           "LANG": "C.UTF-8"}
    out = subprocess.run([str(ROOT / ".venv" / "bin" / "phonebuddy"), "--self-check"], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert "PhoneBuddy self-check (source install" in out.stdout
    assert "OK    simulated phone" in out.stdout and "PhoneBuddy self-check: OK" in out.stdout
