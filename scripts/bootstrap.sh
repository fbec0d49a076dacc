#!/usr/bin/env bash
# Idempotent set-up: the Debian packages the project needs, a virtualenv, and in it exactly the locked set of
# requirements/lock.txt (hash-checked, the CPU build of torch included) plus the project in editable mode.
# Re-running it when nothing changed is a no-op.
#
#   bash scripts/bootstrap.sh             # .venv from the lock (what the README's commands use)
#   bash scripts/bootstrap.sh --latest    # .venv-latest with the newest versions pyproject.toml's ranges allow
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
mode="locked"; venv=".venv"
if [ "${1:-}" = "--latest" ]; then mode="latest"; venv=".venv-latest"; fi

need_apt=()
dpkg -s libusb-1.0-0 >/dev/null 2>&1 || need_apt+=(libusb-1.0-0)
dpkg -s libgl1 >/dev/null 2>&1 || need_apt+=(libgl1)
dpkg -s libgomp1 >/dev/null 2>&1 || need_apt+=(libgomp1)
dpkg -s bubblewrap >/dev/null 2>&1 || need_apt+=(bubblewrap)  # the kernel sandbox (docs/security.md)
if [ "${SPATIALCLAW_WITH_CHROMIUM:-0}" = 1 ] && ! command -v chromium >/dev/null 2>&1; then
  need_apt+=(chromium)
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  sudo_cmd=""; [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
  echo "[bootstrap] installing Debian packages: ${need_apt[*]}"
  $sudo_cmd apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

python="${PYTHON:-python3}"
if [ ! -x "$venv/bin/python" ]; then
  echo "[bootstrap] creating $venv"
  "$python" -m venv "$venv"
fi
pip=("$venv/bin/python" -m pip install -q)
# pip's and setuptools' chatter goes to a log; it is shown only when a step fails.
mkdir -p build
log="build/bootstrap-pip.log"
quiet() {
  local status=0
  "$@" >"$log" 2>&1 || status=$?
  if [ "$status" != 0 ]; then
    grep -v -e "^WARNING: Location" "$log" >&2
    echo "[bootstrap] failed: $* (full output in $log)" >&2
    exit "$status"
  fi
}
# The CPU build of torch is not on PyPI: pip takes it from its find-links folders where they hold it, else from
# the PyTorch CPU index (SPATIALCLAW_TORCH_INDEX overrides it).
torch_source=()
if ! "$venv/bin/python" -m pip download -q --no-deps --no-index -d build/torch-probe "torch==2.13.0+cpu" \
  >/dev/null 2>&1; then
  torch_source=(--extra-index-url "${SPATIALCLAW_TORCH_INDEX:-https://download.pytorch.org/whl/cpu}")
fi
rm -rf build/torch-probe

if [ "$mode" = latest ]; then
  # Every run re-resolves: the point of this mode is today's newest releases. torch stays the pinned CPU build.
  echo "[bootstrap] upgrading $venv to the newest versions pyproject.toml allows"
  quiet "${pip[@]}" --upgrade pip setuptools wheel
  quiet "${pip[@]}" "${torch_source[@]}" "torch==2.13.0"
  quiet "${pip[@]}" --upgrade --upgrade-strategy eager -e ".[perception,data,ray,dev]"
  "$venv/bin/python" scripts/check_env.py --report
  exit 0
fi

stamp="$venv/.spatialclaw-installed"
want="$(cat pyproject.toml requirements/lock.txt scripts/bootstrap.sh | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "[bootstrap] installing the locked environment (requirements/lock.txt) into $venv (first run takes a few minutes)"
  # --require-hashes: every file is checked against the lock; --no-deps: nothing outside the lock comes in.
  quiet "${pip[@]}" "${torch_source[@]}" --require-hashes --no-deps -r requirements/lock.txt
  quiet "${pip[@]}" --no-deps --no-build-isolation -e .
  # Packages from an earlier lock that the current one dropped.
  extra="$("$venv/bin/python" scripts/check_env.py --report | sed -n 's/^  \([^:]*\): installed .*, not in the lock$/\1/p')"
  if [ -n "$extra" ]; then "$venv/bin/python" -m pip uninstall -q -y $extra; fi
  "$venv/bin/python" -c "import spatialclaw.kernel.kernel, torch, transformers, open3d, pycolmap, cv2, av" \
    || { echo "[bootstrap] the environment is incomplete; see the pip output above" >&2; exit 1; }
  echo "$want" > "$stamp"
fi
