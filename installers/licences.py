"""Licence notices for everything the bundle carries, read from each distribution's own metadata.

    dists = distributions_for_modules(["PySide6", "piper", "numpy", ...])   # top-level import names
    notices = collect_notices(dists)                                          # one Notice per distribution
    write_notices(path, notices, extra=EXTRA_NOTICES)                         # THIRD_PARTY_LICENSES.txt

`classify(expression)` judges a licence string (SPDX expression, or the free text of `License:` or a
trove classifier) against GPL-3.0-or-later, the bundle's licence: COMPATIBLE, INCOMPATIBLE, or UNKNOWN
(a person must read it). `A OR B` is compatible when one side is; `A AND B` when both are. The build
prints every non-compatible entry and the notices file lists them at the top.
"""

from __future__ import annotations

import importlib.metadata as md
import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path


class Compat(StrEnum):
    COMPATIBLE = "compatible"
    INCOMPATIBLE = "INCOMPATIBLE"
    UNKNOWN = "unknown (review by hand)"


# Licences that may be combined into a GPL-3.0-or-later work (FSF's list of GPLv3-compatible licences).
_COMPATIBLE = {
    "MIT", "MIT-0", "MIT-CMU", "X11", "ISC", "0BSD", "BSD-2-CLAUSE", "BSD-3-CLAUSE", "BSD", "APACHE-2.0",
    "PSF-2.0", "PYTHON-2.0", "ZLIB", "CC0-1.0", "UNLICENSE", "MPL-2.0", "HPND", "LGPL-2.1-OR-LATER",
    "LGPL-2.1-ONLY", "LGPL-3.0-ONLY", "LGPL-3.0-OR-LATER", "LGPL-2.0-OR-LATER", "GPL-2.0-OR-LATER",
    "GPL-3.0-ONLY", "GPL-3.0-OR-LATER", "BSL-1.0", "WTFPL", "CNRI-PYTHON", "ARTISTIC-2.0",
}
# Known to clash with GPLv3 (cannot be distributed together under its terms).
_INCOMPATIBLE = {
    "GPL-2.0-ONLY", "APACHE-1.1", "APACHE-1.0", "BSD-4-CLAUSE", "CC-BY-NC-4.0", "CC-BY-NC-SA-4.0", "SSPL-1.0",
    "PROPRIETARY", "BUSL-1.1", "CDDL-1.0", "EPL-1.0", "AGPL-1.0",
}
# Free-text spellings seen in metadata, mapped to SPDX ids.
_ALIASES = {
    "MIT LICENSE": "MIT", "THE MIT LICENSE": "MIT", "APACHE 2.0": "APACHE-2.0", "APACHE 2": "APACHE-2.0",
    "APACHE LICENSE 2.0": "APACHE-2.0", "APACHE LICENSE, VERSION 2.0": "APACHE-2.0", "APACHE LICENSE": "APACHE-2.0",
    "APACHE SOFTWARE LICENSE": "APACHE-2.0", "APACHE-2": "APACHE-2.0", "3-CLAUSE BSD LICENSE": "BSD-3-CLAUSE",
    "BSD LICENSE": "BSD", "NEW BSD": "BSD-3-CLAUSE", "MOZILLA PUBLIC LICENSE 2.0 (MPL 2.0)": "MPL-2.0",
    "ISC LICENSE (ISCL)": "ISC", "ISC LICENSE": "ISC", "PYTHON SOFTWARE FOUNDATION LICENSE": "PSF-2.0",
    "GNU GENERAL PUBLIC LICENSE V3 OR LATER (GPLV3+)": "GPL-3.0-OR-LATER", "GPLV3+": "GPL-3.0-OR-LATER",
    "GNU LESSER GENERAL PUBLIC LICENSE V3 (LGPLV3)": "LGPL-3.0-ONLY", "GPL-2.0": "GPL-2.0-ONLY",
    "GPL-3.0": "GPL-3.0-ONLY", "LGPL-3.0": "LGPL-3.0-ONLY", "LGPL-2.1": "LGPL-2.1-ONLY",
    "GPL-2.0+": "GPL-2.0-OR-LATER", "GPL-3.0+": "GPL-3.0-OR-LATER", "LGPL-2.1+": "LGPL-2.1-OR-LATER",
    "PUBLIC DOMAIN": "CC0-1.0", "HISTORICAL PERMISSION NOTICE AND DISCLAIMER (HPND)": "HPND",
    "UNIVERSAL PERMISSIVE LICENSE": "UPL-1.0",
}
_COMPATIBLE |= {"UPL-1.0", "SLEEPYCAT", "BLESSING"}


def _norm(token: str) -> str:
    t = token.strip().strip("()").strip().upper()
    t = re.sub(r"^OSI APPROVED :: ", "", t)
    return _ALIASES.get(t, t)


def classify(expression: str) -> Compat:
    """Judge a licence expression against GPL-3.0-or-later (see the module docstring)."""
    expr = (expression or "").strip()
    if not expr:
        return Compat.UNKNOWN
    if " OR " in expr.upper():
        sides = [classify(s) for s in re.split(r"\s+OR\s+", expr, flags=re.I)]
        if Compat.COMPATIBLE in sides:
            return Compat.COMPATIBLE
        return Compat.INCOMPATIBLE if all(s is Compat.INCOMPATIBLE for s in sides) else Compat.UNKNOWN
    if " AND " in expr.upper():
        sides = [classify(s) for s in re.split(r"\s+AND\s+", expr, flags=re.I)]
        if Compat.INCOMPATIBLE in sides:
            return Compat.INCOMPATIBLE
        return Compat.COMPATIBLE if all(s is Compat.COMPATIBLE for s in sides) else Compat.UNKNOWN
    if " WITH " in expr.upper():  # a licence exception only grants more (GCC runtime, font, classpath)
        return classify(re.split(r"\s+WITH\s+", expr, flags=re.I)[0])
    token = _norm(expr)
    if token in _COMPATIBLE:
        return Compat.COMPATIBLE
    if token in _INCOMPATIBLE:
        return Compat.INCOMPATIBLE
    return Compat.UNKNOWN


@dataclass(frozen=True)
class Notice:
    """One bundled distribution: its name, version, licence as declared, the verdict, and the texts of
    the licence files it ships (LICENSE, COPYING, NOTICE ...)."""

    name: str
    version: str
    licence: str
    compat: Compat
    texts: tuple[tuple[str, str], ...] = ()  # (file name, text)


def declared_licence(dist: md.Distribution) -> str:
    """License-Expression, else a short License field, else the trove classifiers, joined by OR."""
    meta = dist.metadata
    expr = (meta.get("License-Expression") or "").strip()
    if expr:
        return expr
    text = (meta.get("License") or "").strip()
    if text and "\n" not in text and len(text) < 80:
        return text
    classifiers = [c.split("::")[-1].strip() for c in meta.get_all("Classifier") or [] if c.startswith("License ::")]
    classifiers = [c for c in classifiers if c not in ("OSI Approved",)]
    if classifiers:
        return " OR ".join(classifiers)
    return text.splitlines()[0][:80] if text else ""


_LICENCE_FILE = re.compile(r"(^|/)(LICEN[CS]E|COPYING|NOTICE|AUTHORS)[^/]*$", re.I)


def licence_texts(dist: md.Distribution) -> tuple[tuple[str, str], ...]:
    out = []
    for f in dist.files or ():
        name = str(f)
        if ".dist-info/" in name and _LICENCE_FILE.search(name):
            try:
                out.append((str(f), Path(dist.locate_file(f)).read_text(encoding="utf-8", errors="replace")))
            except OSError:
                continue
    return tuple(out)


def distributions_for_modules(modules: Iterable[str]) -> list[md.Distribution]:
    """The installed distributions that provide these top-level import names (unknown names skipped:
    the standard library and our own packages belong to no distribution but this project)."""
    mapping = md.packages_distributions()
    names: set[str] = set()
    for m in modules:
        names.update(mapping.get(m.split(".")[0], ()))
    out = []
    for n in sorted(names, key=str.lower):
        try:
            out.append(md.distribution(n))
        except md.PackageNotFoundError:
            continue
    return out


def collect_notices(dists: Iterable[md.Distribution]) -> list[Notice]:
    seen: dict[str, Notice] = {}
    for d in dists:
        name = d.metadata["Name"]
        if name.lower().replace("_", "-") in seen:
            continue
        lic = declared_licence(d)
        seen[name.lower().replace("_", "-")] = Notice(name, d.version, lic, classify(lic), licence_texts(d))
    return sorted(seen.values(), key=lambda n: n.name.lower())


@dataclass(frozen=True)
class ExtraNotice:
    """A bundled part that is not a Python distribution (a binary or data inside one, or a system file)."""

    name: str
    licence: str
    where: str
    text_file: str = ""  # a file whose text is copied in, if it exists


EXTRA_NOTICES = (
    ExtraNotice("Android Debug Bridge (adb), shipped inside adbutils", "Apache-2.0", "adbutils/binaries/adb"),
    ExtraNotice("scrcpy server 3.3.4 (Genymobile), shipped inside muti-scrcpy-client", "Apache-2.0",
                "scrcpy/scrcpy-server.jar"),
    ExtraNotice("espeak-ng data, shipped inside piper-tts", "GPL-3.0-or-later", "piper/espeak-ng-data"),
    ExtraNotice("WenQuanYi Micro Hei font", "Apache-2.0 OR GPL-3.0-or-later", "fonts/wqy-microhei.ttc",
                "/usr/share/doc/fonts-wqy-microhei/copyright"),
    ExtraNotice("Qt 6 (inside PySide6-Essentials)", "LGPL-3.0-only OR GPL-2.0-only OR GPL-3.0-only", "PySide6/Qt"),
    ExtraNotice("FFmpeg libraries inside av (PyAV)", "LGPL-2.1-or-later AND GPL-2.0-or-later", "av.libs"),
    ExtraNotice("GCC runtime libraries inside the wheels (libgomp, libgfortran, libquadmath, libstdc++)",
                "GPL-3.0-or-later WITH GCC-exception-3.1", "ctranslate2.libs, numpy.libs"),
    ExtraNotice("OpenBLAS inside numpy", "BSD-3-Clause", "numpy.libs"),
    ExtraNotice("Debian system libraries PyInstaller copies beside Python (glib, libgcrypt, libsqlite3, libdb, ...)",
                "LGPL-2.1-or-later AND MIT AND Sleepycat AND blessing",
                "_internal/*.so*; each one's terms are in /usr/share/doc/<package>/copyright on Debian"),
    ExtraNotice("Python 3 runtime", "PSF-2.0", "libpython3"),
)

HEADER = """PhoneBuddy Desktop {version} -- third-party licence notices

This bundle as a whole is distributed under the GNU General Public License, version 3 or (at your
option) any later version (GPL-3.0-or-later), because it includes piper-tts and espeak-ng, which are
GPL-3.0-or-later. Where a part below is offered under several licences, it is used here under the one
compatible with GPL-3.0 (for Qt/PySide6: LGPL-3.0 / GPL-3.0). The source code of PhoneBuddy is the
project's repository; the sources of every part below are available from the addresses in its metadata.

Generated at build time from each bundled distribution's own metadata (installers/licences.py).
"""


def review(notices: Iterable[Notice], extra: Iterable[ExtraNotice] = EXTRA_NOTICES) -> list[str]:
    """One line per bundled part whose licence is not plainly compatible with GPL-3.0-or-later."""
    out = [f"{n.name} {n.version}: {n.licence or '(no licence declared)'} -> {n.compat}" for n in notices
           if n.compat is not Compat.COMPATIBLE]
    out += [f"{e.name}: {e.licence} -> {classify(e.licence)}" for e in extra
            if classify(e.licence) is not Compat.COMPATIBLE]
    return out


def render(notices: list[Notice], *, version: str, extra: Iterable[ExtraNotice] = EXTRA_NOTICES) -> str:
    extra = list(extra)
    lines = [HEADER.format(version=version), "== Licences to review against GPL-3.0-or-later =="]
    flagged = review(notices, extra)
    if not flagged:
        lines.append("none: every bundled part declares a GPL-3.0-compatible licence.")
    lines += [f"- {line}" for line in flagged]
    lines.append("")
    lines.append("== Summary ==")
    for n in notices:
        lines.append(f"{n.name} {n.version}: {n.licence or '(none declared)'} [{n.compat}]")
    for e in extra:
        lines.append(f"{e.name} ({e.where}): {e.licence} [{classify(e.licence)}]")
    lines.append("")
    for n in notices:
        lines.append("=" * 78)
        lines.append(f"{n.name} {n.version} -- {n.licence}")
        for fname, text in n.texts:
            lines.append(f"--- {fname} ---")
            lines.append(text.rstrip())
        if not n.texts:
            lines.append("(the distribution ships no licence file; its metadata declares the licence above)")
    for e in extra:
        lines.append("=" * 78)
        lines.append(f"{e.name} -- {e.licence} ({e.where})")
        if e.text_file and Path(e.text_file).is_file():
            lines.append(Path(e.text_file).read_text(encoding="utf-8", errors="replace").rstrip())
    return "\n".join(lines) + "\n"


def write_notices(path: Path, notices: list[Notice], *, version: str,
                  extra: Iterable[ExtraNotice] = EXTRA_NOTICES) -> list[str]:
    """Write the notices file; return one line per licence that is not plainly compatible."""
    extra = list(extra)
    path.write_text(render(notices, version=version, extra=extra), encoding="utf-8")
    return review(notices, extra)
