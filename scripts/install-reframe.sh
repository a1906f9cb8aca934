#!/usr/bin/env bash
# Installs ReFrame (reframe-hpc from the Python registry, pinned) into a virtual
# environment of its own, .reframe/ in the checkout (XYLEM_REFRAME_ROOT overrides), for
# the ReFrame checks under reframe/ (`make reframe`, and `make test` through
# testing/slurmtest/tests/reframe.rs). Called by scripts/install-deps.sh. Idempotent: an
# installation whose stamp names the same version is left alone.
set -euo pipefail

version=4.10.4
root=$(cd "$(dirname "$0")/.." && pwd)
prefix=${XYLEM_REFRAME_ROOT:-$root/.reframe}
python=${PYTHON:-python3}
want="reframe-hpc==$version"

if [ -f "$prefix/.xylem-installed" ] && [ "$(cat "$prefix/.xylem-installed")" = "$want" ] &&
  [ -x "$prefix/bin/reframe" ]; then
  exit 0
fi
echo "install-reframe: installing $want into $prefix" >&2
rm -rf "$prefix"
"$python" -m venv "$prefix"
"$prefix/bin/python" -m pip install --quiet --disable-pip-version-check "$want"
got=$("$prefix/bin/reframe" --version)
[ "$got" = "$version" ] || {
  echo "install-reframe: $prefix/bin/reframe says version '$got', not $version" >&2
  exit 1
}
printf '%s' "$want" >"$prefix/.xylem-installed"
