#!/usr/bin/env bash
# Refreshes requirements/lock.txt: every package of the project and of the extras the tests use
# (perception, data, ray, dev), with exact versions and sha256 hashes, for CPython 3.11 on x86-64 Linux with glibc 2.35 or newer (Ubuntu 22.04, Debian 12).
#
# The resolver is uv's `pip compile` at a pinned version, run from its own tool environment under build/;
# its output is pip's hashed-requirements format, so users need only pip (`scripts/bootstrap.sh` installs it
# with `--require-hashes`). `requirements/holds.txt` holds back releases the suite is not yet trusted on.
# Run `bash scripts/test.sh --latest` first: it tests the newest versions the declared ranges allow.
#
#   bash scripts/lock.sh                  # resolve today's newest allowed versions
#   bash scripts/lock.sh --upgrade-package numpy   # extra arguments go to `uv pip compile`
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
uv_version="0.13.8"
tools="build/lock-tools"
if [ ! -x "$tools/bin/uv" ] || [ "$("$tools/bin/uv" --version | cut -d' ' -f2)" != "$uv_version" ]; then
  python3 -m venv "$tools"
  "$tools/bin/python" -m pip install -q "uv==$uv_version"
fi
# The CPU build of torch is not on PyPI: take it from pip's find-links folders when they hold it, else from
# the PyTorch CPU index (override with SPATIALCLAW_TORCH_INDEX).
torch_source=(--extra-index-url "${SPATIALCLAW_TORCH_INDEX:-https://download.pytorch.org/whl/cpu}")
for folder in ${PIP_FIND_LINKS:-} $(python3 -m pip config get global.find-links 2>/dev/null || true); do
  if compgen -G "$folder/torch-2.13.0+cpu-*.whl" >/dev/null; then torch_source=(--find-links "$folder"); fi
done
"$tools/bin/uv" pip compile pyproject.toml requirements/tools.in \
  --extra perception --extra data --extra ray --extra dev \
  --constraint requirements/holds.txt \
  --python-version 3.11 --python-platform x86_64-manylinux_2_35 \
  "${torch_source[@]}" --index-strategy unsafe-best-match --no-emit-find-links --no-emit-index-url \
  --generate-hashes --custom-compile-command "bash scripts/lock.sh" \
  --output-file requirements/lock.txt "$@"
echo "[lock] wrote requirements/lock.txt ($(grep -c '==' requirements/lock.txt) packages); run bash scripts/test.sh"
