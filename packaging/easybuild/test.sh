#!/usr/bin/env bash
# packaging/easybuild/test.sh: builds xylem with EasyBuild as a centre would, from a
# source tarball of this checkout, with the system toolchain and an external MPI module
# (Debian's Open MPI 4, under a module named openmpi written here), installs it into a
# temporary tree, loads the generated module with Lmod and runs sqmr from it on two ranks.
# Run by `make test`; EasyBuild (Python registry) and Lmod (Debian) are installed by
# scripts/install-deps.sh. Prints "N passed, N failed" at the end.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
eb_venv=${XYLEM_EASYBUILD_VENV:-$root/.easybuild}

unavailable() {
  if [ "${CI:-}" = true ]; then
    echo "easybuild test: FAILED: $1 (under CI=true the setup must be possible)" >&2
    echo "0 passed, 1 failed"
    exit 1
  fi
  echo "easybuild test: SKIPPED: $1" >&2
  exit 0
}

[ -x "$eb_venv/bin/eb" ] || unavailable "no EasyBuild in $eb_venv (scripts/install-deps.sh installs it)"
[ -r /usr/share/lmod/lmod/init/bash ] || unavailable "no Lmod (Debian: lmod)"
command -v mpicc.openmpi >/dev/null || unavailable "no Debian Open MPI (mpicc.openmpi)"

work=$(mktemp -d /tmp/xylem-easybuild.XXXXXX)
trap 'rm -rf "$work"' EXIT
version=$(awk -F'"' '/^version = /{print $2; exit}' Cargo.toml)

# The source tarball, as a site would make it from a checkout (committed files only).
mkdir -p "$work/sources/x/xylem"
if git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
  git -C "$root" archive --prefix="xylem-$version/" -o "$work/sources/x/xylem/xylem-$version.tar.gz" HEAD
else
  tar -C "$root/.." --exclude=target --exclude=.mpi -czf "$work/sources/x/xylem/xylem-$version.tar.gz" \
    --transform "s|^$(basename "$root")|xylem-$version|" "$(basename "$root")"
fi

# The site's MPI module: Debian's Open MPI 4.
mkdir -p "$work/mpi-modules/openmpi"
cat > "$work/mpi-modules/openmpi/4.1.lua" <<'LUA'
whatis("Open MPI 4.1 (Debian's), for the xylem EasyBuild test")
setenv("MPICC", "mpicc.openmpi")
setenv("OMPI_ALLOW_RUN_AS_ROOT", "1")
setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
LUA

set +u
# shellcheck disable=SC1091
source /usr/share/lmod/lmod/init/bash
set -u
module use "$work/mpi-modules"
# A target folder shared with the suite's other release builds (make test sets it): the
# crates of the registry compiled once; xylem's own are compiled from the tarball.
if [ -n "${XYLEM_TEST_RELEASE_TARGET:-}" ]; then
  export CARGO_TARGET_DIR=$XYLEM_TEST_RELEASE_TARGET
fi
start=$(date +%s)
PATH="$eb_venv/bin:$PATH" eb "$root/packaging/easybuild/xylem-$version.eb" \
  --installpath="$work/install" --buildpath="$work/build" --sourcepath="$work/sources" \
  --tmpdir="$work/tmp" --modules-tool=Lmod --module-syntax=Lua \
  --allow-use-as-root-and-accept-consequences --disable-cleanup-tmpdir \
  --logtostdout >"$work/eb.log" 2>&1 || {
  tail -n 60 "$work/eb.log" >&2
  find "$work/tmp" -name 'easybuild-*.log' -exec tail -n 80 {} + >&2 || true
  echo "easybuild test: eb failed (its log above)" >&2
  echo "0 passed, 1 failed"
  exit 1
}
echo "easybuild test: eb built and installed xylem $version in $(( $(date +%s) - start )) s" >&2

passed=0 failed=0
check() {
  if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "easybuild test: FAILED: $*" >&2; fi
}

module use "$work/install/modules/all"
module load "xylem/$version"
# The module loads the MPI module it was built with, and puts the programs first.
check test "$(command -v sqmr)" = "$work/install/software/xylem/$version/bin/sqmr"
check grep -q 'openmpi/4.1' <<<"${LOADEDMODULES:-}"
check test -n "${XYLEM_SCHEMAS:-}" -a -f "${XYLEM_SCHEMAS:-/nonexistent}/sqmr-2.schema.json"
check grep -q "built against: Open MPI 4" <(sqmr --version)
# A real run from the module: two ranks, every size's figures in its JSON.
run_sqmr() {
  mpirun.openmpi --oversubscribe -n 2 sqmr --num_iters 200 --max_msgsize 64 --json "$work/run.json" >"$work/run.txt" 2>&1 &&
    python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["complete"] and len(d["sizes"]) == 8, d
assert all(s["rates"]["average"]["msgs_per_s"] > 0 for s in d["sizes"]), d
' "$work/run.json" || { cat "$work/run.txt" >&2; return 1; }
}
check run_sqmr
check man -w sqmr >/dev/null

echo "easybuild test: $passed checks passed, $failed failed" >&2
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
