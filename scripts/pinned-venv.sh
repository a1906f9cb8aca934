#!/usr/bin/env bash
# scripts/pinned-venv.sh NAME PREFIX VERSION PROGRAM -- PACKAGE==VERSION...
#
# Installs pinned packages of the Python registry into a virtual environment of their
# own at PREFIX, for scripts/install-reframe.sh and scripts/install-easybuild.sh.
# Idempotent: an environment whose stamp names the same packages and whose PROGRAM
# (in PREFIX/bin) reports VERSION is left alone. NAME prefixes the messages. PYTHON
# names another interpreter.
set -euo pipefail
[ $# -ge 6 ] && [ "$5" = "--" ] || {
  echo "usage: scripts/pinned-venv.sh NAME PREFIX VERSION PROGRAM -- PACKAGE==VERSION..." >&2
  exit 2
}
name=$1 prefix=$2 version=$3 program=$4
shift 5
want="$*"
python=${PYTHON:-python3}

# What PROGRAM says its version is: its --version output's first VERSION-like word.
reported() {
  PATH="$prefix/bin:$PATH" "$prefix/bin/$program" --version 2>/dev/null |
    grep -oE '[0-9]+\.[0-9]+(\.[0-9]+)?' | head -n 1
}

if [ -f "$prefix/.xylem-installed" ] && [ "$(cat "$prefix/.xylem-installed")" = "$want" ] &&
  [ -x "$prefix/bin/$program" ] && [ "$(reported)" = "$version" ]; then
  exit 0
fi
echo "$name: installing $want into $prefix" >&2
rm -rf "$prefix"
"$python" -m venv "$prefix"
"$prefix/bin/python" -m pip install --quiet --disable-pip-version-check "$@"
got=$(reported)
[ "$got" = "$version" ] || {
  echo "$name: $prefix/bin/$program says version '$got', not $version" >&2
  exit 1
}
printf '%s' "$want" >"$prefix/.xylem-installed"
