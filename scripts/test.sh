#!/usr/bin/env bash
# The test command: sets up .venv (idempotent) and runs the default test suite (slow tests excluded;
# pass `-m slow` or `-m ''` to include them). Extra arguments go to pytest.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
SPATIALCLAW_WITH_CHROMIUM=1 bash scripts/bootstrap.sh
if [ -z "${SPATIALCLAW_TEST_DATA:-}" ] && [ -d "$root/../shared/data" ]; then
  SPATIALCLAW_TEST_DATA="$(cd "$root/../shared/data" && pwd)"
fi
export SPATIALCLAW_TEST_DATA="${SPATIALCLAW_TEST_DATA:-$root/../shared/data}"
export HF_HUB_OFFLINE=1
exec .venv/bin/python -m pytest -q --timeout=600 "$@"
