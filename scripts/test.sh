#!/usr/bin/env bash
# The test command: sets up the locked environment in .venv (idempotent) and checks that it holds exactly
# requirements/lock.txt, checks formatting, lint and types (ruff, mypy; the rule sets are in pyproject.toml),
# then runs the default test suite (slow tests excluded; pass `-m slow` or `-m ''` to include them).
#
#   bash scripts/test.sh [PYTEST ARGS]            # the locked set (what CI runs)
#   bash scripts/test.sh --latest [PYTEST ARGS]   # the newest versions the declared ranges allow, in .venv-latest
#
# SPATIALCLAW_SKIP_LINT=1 skips the static checks while iterating.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
venv=".venv"
if [ "${1:-}" = "--latest" ]; then
  shift
  venv=".venv-latest"
  SPATIALCLAW_WITH_CHROMIUM=1 bash scripts/bootstrap.sh --latest
else
  SPATIALCLAW_WITH_CHROMIUM=1 bash scripts/bootstrap.sh
  "$venv/bin/python" scripts/check_env.py
fi
if [ -z "${SPATIALCLAW_TEST_DATA:-}" ] && [ -d "$root/../shared/data" ]; then
  SPATIALCLAW_TEST_DATA="$(cd "$root/../shared/data" && pwd)"
fi
export SPATIALCLAW_TEST_DATA="${SPATIALCLAW_TEST_DATA:-$root/../shared/data}"
export HF_HUB_OFFLINE=1
if [ "${SPATIALCLAW_SKIP_LINT:-0}" != 1 ]; then
  echo "[test] ruff format --check, ruff check, mypy ($venv)"
  "$venv/bin/ruff" format --check . || { echo "[test] run: $venv/bin/ruff format ." >&2; exit 1; }
  "$venv/bin/ruff" check --quiet .
  "$venv/bin/python" scripts/typecheck.py --cache-dir "$root/build/mypy-cache${venv#.venv}"
fi
exec "$venv/bin/python" -m pytest -q --timeout=600 "$@"
