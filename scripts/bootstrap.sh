#!/usr/bin/env bash
# Idempotent set-up: the Debian package Open3D needs, a virtualenv at .venv, and the project installed
# into it in editable mode with every extra the tests use. Re-running it when nothing changed is a no-op.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

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
if [ ! -x .venv/bin/python ]; then
  echo "[bootstrap] creating .venv"
  "$python" -m venv .venv
fi

stamp=".venv/.spatialclaw-installed"
want="$(cat pyproject.toml scripts/bootstrap.sh | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "[bootstrap] installing spatialclaw and its dependencies into .venv (first run takes a few minutes)"
  quiet() { grep -v -e "^WARNING: Location" -e "BuildBackendWarning" -e "^ *!!" -e "^ *\*\*\*" || true; }
  .venv/bin/python -m pip install -q --upgrade pip setuptools wheel 2>&1 | quiet
  # torch first and pinned: a bare requirement would pull a multi-GB CUDA build.
  .venv/bin/python -m pip install -q "torch==2.13.0" 2>&1 | quiet
  .venv/bin/python -m pip install -q -e ".[perception,data,ray,dev]" 2>&1 | quiet
  .venv/bin/python -c "import spatialclaw.kernel.kernel, torch, transformers, open3d, pycolmap, cv2, av" \
    || { echo "[bootstrap] the environment is incomplete; see the pip output above" >&2; exit 1; }
  echo "$want" > "$stamp"
fi
