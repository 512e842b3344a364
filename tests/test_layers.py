"""The layers of ../shared/DESIGN.md §2, enforced by import-linter (contracts in pyproject.toml), and a
check of the contracts themselves: a forbidden import added to a copy of the tree makes them fail."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("assistant_core", "harness", "speech", "app", "training", "phonebuddy")
LINT = Path(sys.executable).with_name("lint-imports")


def _lint(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(LINT), "--config", str(root / "pyproject.toml"), "--no-cache"], cwd=root,
                          env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"}, capture_output=True, text=True,
                          timeout=300)


def test_the_layer_contracts_hold():
    run = _lint(ROOT)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "BROKEN" not in run.stdout and "KEPT" in run.stdout


def _copy_tree(dest: Path) -> None:
    shutil.copy(ROOT / "pyproject.toml", dest / "pyproject.toml")
    for package in PACKAGES:
        shutil.copytree(ROOT / package, dest / package, ignore=shutil.ignore_patterns("__pycache__", "*.png", "*.bin",
                                                                                     "*.onnx", "*.wav"))


def test_a_lazy_forbidden_import_breaks_the_contract(tmp_path):
    """An import hidden inside a function (the kind the old hand-written test could not see) is caught."""
    _copy_tree(tmp_path)
    sneaky = tmp_path / "assistant_core" / "sneaky.py"
    sneaky.write_text("def helper():\n    from harness.phoneworld import World\n    return World\n")
    run = _lint(tmp_path)
    assert run.returncode != 0
    assert "assistant_core.sneaky -> harness.phoneworld" in run.stdout, run.stdout


def test_qt_outside_app_breaks_the_contract(tmp_path):
    _copy_tree(tmp_path)
    (tmp_path / "speech" / "sneaky.py").write_text("import PySide6.QtCore\n")
    run = _lint(tmp_path)
    assert run.returncode != 0 and "speech.sneaky -> PySide6" in run.stdout, run.stdout
