"""Project-level checks: every module imports, every bilingual catalog is complete, and CI runs the
README's test command."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import pytest

from assistant_core.i18n import catalogs

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ["assistant_core", "harness", "speech", "training", "app", "phonebuddy"]


def all_modules() -> list[str]:
    names = []
    for package in PACKAGES:
        names.append(package)
        module = importlib.import_module(package)
        for info in pkgutil.walk_packages(module.__path__, prefix=package + "."):
            if info.name.endswith("__main__"):
                continue
            names.append(info.name)
    return sorted(names)


@pytest.mark.parametrize("name", all_modules())
def test_every_module_imports(name):
    importlib.import_module(name)


def test_every_catalog_has_both_languages():
    for name in all_modules():
        importlib.import_module(name)
    problems = [p for catalog in catalogs().values() for p in catalog.problems()]
    assert problems == []


def test_ci_runs_exactly_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    command = "bash scripts/dev.sh test"
    assert command in readme
    assert f"exec {command}" in ci
