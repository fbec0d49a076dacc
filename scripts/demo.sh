#!/usr/bin/env bash
# The main job: sets up .venv (idempotent) and runs the full agent loop on a bundled real example.
# Uses the model in $SPATIALCLAW_MODEL when set (e.g. openai:gpt-4o with OPENAI_API_KEY); otherwise a
# scripted replay that says plainly that it is one. No API key or network needed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/bootstrap.sh
exec .venv/bin/spatialclaw demo "$@"
