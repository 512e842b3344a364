"""Build the PhoneBuddy bundle for the platform this runs on.

    python installers/build.py linux   [--dist DIR] [--work DIR] [--no-archive]
    python installers/build.py windows [--dist DIR] [--work DIR]     (on Windows; needs Inno Setup's iscc)
    python installers/build.py macos   [--dist DIR] [--work DIR]     (on macOS; hdiutil makes the .dmg)

Asking for another platform than the one it runs on is refused with exit code 2: PyInstaller cannot
cross-build. Steps: PyInstaller runs installers/phonebuddy.spec into DIST/PhoneBuddy/ (a one-folder
bundle; `PhoneBuddy/phonebuddy` is the executable), then per platform:
- linux: adds the .desktop entry and the icon, checks the Qt platform plugins, writes
  DIST/PhoneBuddy-<version>-linux-x86_64.tar.gz (no AppImage: appimagetool is not on any package
  registry we can reach; README.md says how to make one where it is available);
- windows: compiles installers/windows/phonebuddy.iss with iscc into DIST/PhoneBuddy-<version>-setup.exe;
- macos: installers/macos/make_dmg.sh wraps DIST/PhoneBuddy.app into DIST/PhoneBuddy-<version>.dmg.
Prints the bundle size and the build time. Exit 0 on success, 1 when a step failed, 2 on bad usage.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import manifest

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def folder_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def data_root(bundle: Path) -> Path:
    """Where PyInstaller (6.x, one-folder) puts data and libraries inside a bundle folder."""
    return bundle / "_internal"


def run_pyinstaller(dist: Path, work: Path) -> Path:
    env = dict(os.environ, PHONEBUDDY_BUILD_WORK=str(work))
    cmd = [sys.executable, "-m", "PyInstaller", "--noconfirm", "--clean", "--log-level", "WARN",
           "--distpath", str(dist), "--workpath", str(work), str(manifest.INSTALLERS / "phonebuddy.spec")]
    print("build:", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, env=env, cwd=manifest.ROOT)
    return dist / manifest.APP_NAME


def check_qt_plugins(bundle: Path, platform: manifest.Platform) -> list[str]:
    """Names of required Qt platform plugins missing from the bundle."""
    found = {p.name for p in data_root(bundle).rglob("platforms/*")}
    return [name for name in manifest.QT_PLATFORM_PLUGINS[platform] if name not in found]


def finish_linux(bundle: Path, dist: Path, *, archive: bool) -> Path | None:
    share = bundle / "share"
    (share / "applications").mkdir(parents=True, exist_ok=True)
    (share / "icons" / "hicolor" / "256x256" / "apps").mkdir(parents=True, exist_ok=True)
    shutil.copy2(manifest.DESKTOP_FILE, share / "applications" / manifest.DESKTOP_FILE.name)
    shutil.copy2(manifest.ICON_PNG, share / "icons" / "hicolor" / "256x256" / "apps" / f"{manifest.APP_ID}.png")
    shutil.copy2(manifest.ICON_PNG, bundle / f"{manifest.APP_ID}.png")
    shutil.copy2(manifest.INSTALLERS / "linux" / "install.sh", bundle / "install.sh")
    if not archive:
        return None
    out = dist / f"{manifest.APP_NAME}-{manifest.version()}-linux-x86_64.tar.gz"
    with tarfile.open(out, "w:gz", compresslevel=6) as tar:
        tar.add(bundle, arcname=f"{manifest.APP_NAME}-{manifest.version()}")
    return out


def finish_windows(bundle: Path, dist: Path) -> Path | None:
    iscc = shutil.which("iscc") or shutil.which("ISCC.exe")
    if iscc is None:
        print("build: Inno Setup's iscc is not on PATH; the folder bundle is ready, the installer is not", file=sys.stderr)
        return None
    subprocess.run([iscc, f"/DBundleDir={bundle}", f"/DAppVersion={manifest.version()}", f"/O{dist}",
                    str(manifest.INNO_SCRIPT)], check=True)
    return dist / f"{manifest.APP_NAME}-{manifest.version()}-setup.exe"


def finish_macos(dist: Path) -> Path:
    app = dist / f"{manifest.APP_NAME}.app"
    out = dist / f"{manifest.APP_NAME}-{manifest.version()}.dmg"
    subprocess.run(["bash", str(manifest.MAC_DMG_SCRIPT), str(app), str(out), manifest.version()], check=True)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="installers/build.py", description="Build the PhoneBuddy bundle.")
    p.add_argument("platform", choices=[str(x) for x in manifest.Platform])
    p.add_argument("--dist", type=Path, default=manifest.ROOT / "dist")
    p.add_argument("--work", type=Path, default=manifest.ROOT / "build" / "installers")
    p.add_argument("--no-archive", action="store_true", help="Linux: skip the .tar.gz")
    args = p.parse_args(argv)
    want = manifest.Platform(args.platform)
    here = manifest.current_platform()
    if want is not here:
        print(f"build: cannot build the {want} bundle on {here or sys.platform}: PyInstaller builds only for the "
              f"platform it runs on. Run `python installers/build.py {want}` on a {want} machine "
              f"(this one can build: {here or 'nothing'}).", file=sys.stderr)
        return EXIT_USAGE
    started = time.perf_counter()
    dist, work = args.dist.resolve(), args.work.resolve()
    try:
        bundle = run_pyinstaller(dist, work)
    except subprocess.CalledProcessError as exc:
        print(f"build: PyInstaller failed (exit {exc.returncode})", file=sys.stderr)
        return EXIT_FAILED
    missing = check_qt_plugins(bundle, want)
    if missing:
        print(f"build: Qt platform plugins missing from the bundle: {', '.join(missing)}", file=sys.stderr)
        return EXIT_FAILED
    try:
        if want is manifest.Platform.LINUX:
            artefact = finish_linux(bundle, dist, archive=not args.no_archive)
        elif want is manifest.Platform.WINDOWS:
            artefact = finish_windows(bundle, dist)
        else:
            artefact = finish_macos(dist)
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"build: packaging failed: {exc}", file=sys.stderr)
        return EXIT_FAILED
    size_mb = folder_size(bundle) / 2**20
    print(f"build: bundle {bundle} is {size_mb:.0f} MB (target < {manifest.SIZE_TARGET_MB} MB, no model weights)")
    if artefact is not None:
        print(f"build: {artefact.name} is {artefact.stat().st_size / 2**20:.0f} MB")
    print(f"build: done in {time.perf_counter() - started:.0f} s")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
