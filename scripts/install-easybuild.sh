#!/usr/bin/env bash
# Installs EasyBuild (easybuild-framework and easybuild-easyblocks from the Python
# registry, pinned) into a virtual environment of its own, .easybuild/ in the checkout
# (XYLEM_EASYBUILD_VENV overrides), for the easyconfig test (packaging/easybuild/test.sh,
# run by `make test`). Called by scripts/install-deps.sh. Idempotent: an installation
# whose stamp names the same version is left alone.
set -euo pipefail

version=5.4.1
root=$(cd "$(dirname "$0")/.." && pwd)
prefix=${XYLEM_EASYBUILD_VENV:-$root/.easybuild}
python=${PYTHON:-python3}
want="easybuild-framework==$version easybuild-easyblocks==$version"

if [ -f "$prefix/.xylem-installed" ] && [ "$(cat "$prefix/.xylem-installed")" = "$want" ] &&
  [ -x "$prefix/bin/eb" ]; then
  exit 0
fi
echo "install-easybuild: installing $want into $prefix" >&2
rm -rf "$prefix"
"$python" -m venv "$prefix"
# shellcheck disable=SC2086
"$prefix/bin/python" -m pip install --quiet --disable-pip-version-check $want
got=$(PATH="$prefix/bin:$PATH" "$prefix/bin/eb" --version | sed -n 's/^This is EasyBuild \([0-9.]*\) .*/\1/p')
[ "$got" = "$version" ] || {
  echo "install-easybuild: $prefix/bin/eb says version '$got', not $version" >&2
  exit 1
}
printf '%s' "$want" >"$prefix/.xylem-installed"
