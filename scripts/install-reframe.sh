#!/usr/bin/env bash
# Installs ReFrame (reframe-hpc from the Python registry, pinned) into a virtual
# environment of its own, .reframe/ in the checkout (XYLEM_REFRAME_ROOT overrides), for
# the ReFrame checks under reframe/ (`make reframe`, and `make test` through
# testing/slurmtest/tests/reframe.rs). Called by scripts/install-deps.sh. Idempotent
# (scripts/pinned-venv.sh).
set -euo pipefail
version=4.10.4
root=$(cd "$(dirname "$0")/.." && pwd)
exec "$root/scripts/pinned-venv.sh" install-reframe "${XYLEM_REFRAME_ROOT:-$root/.reframe}" \
  "$version" reframe -- "reframe-hpc==$version"
