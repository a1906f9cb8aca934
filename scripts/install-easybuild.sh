#!/usr/bin/env bash
# Installs EasyBuild (easybuild-framework and easybuild-easyblocks from the Python
# registry, pinned) into a virtual environment of its own, .easybuild/ in the checkout
# (XYLEM_EASYBUILD_VENV overrides), for the easyconfig test (packaging/easybuild/test.sh,
# run by `make test`). Called by scripts/install-deps.sh. Idempotent
# (scripts/pinned-venv.sh).
set -euo pipefail
version=5.4.1
root=$(cd "$(dirname "$0")/.." && pwd)
exec "$root/scripts/pinned-venv.sh" install-easybuild "${XYLEM_EASYBUILD_VENV:-$root/.easybuild}" \
  "$version" eb -- "easybuild-framework==$version" "easybuild-easyblocks==$version"
