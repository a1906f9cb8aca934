#!/usr/bin/env bash
# scripts/reframe-run.sh SYSTEM OUT MPI... [-- REFRAME-OPTIONS...]
#
# Runs xylem's ReFrame checks (reframe/checks/xylem_checks.py) with the configuration
# reframe/settings.py on SYSTEM (xylem-local, or xylem-slurm with SLURM_CONF naming the
# cluster) for the environments MPI... (openmpi4 mpich4 openmpi5 mpich5 intelmpi), with
# the ReFrame of .reframe/ (scripts/install-reframe.sh). Stage and output directories and
# the run report (report.json) go under OUT; the performance log is appended to
# OUT/perflogs/SYSTEM/PARTITION/CHECK.log (XYLEM_PERFLOG_DIR overrides the perflogs
# folder). XYLEM_BIN_DIR says where the binaries are ({mpi} = the environment's name;
# default target/{mpi}/release).
#
# Sizes are small, for a quick run on a laptop (sqmr up to 4 KiB and 200 iterations,
# b_eff_io -T 6 with 64 MiB per process, NOT VALID accepted); XYLEM_REFRAME_FULL=1 runs
# the checks' own defaults (sqmr to 4 MiB, b_eff_io -T 600 and VALID required).
# XYLEM_REFRAME_BUILD=1 adds sqmr_built_check, which builds xylem from source with each
# environment's MPI first (the xylem_build fixture).
# Exits with ReFrame's status: 0 when every check passed.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
usage() {
  echo "usage: scripts/reframe-run.sh SYSTEM OUT MPI... [-- REFRAME-OPTIONS...]" >&2
  exit 2
}
[ $# -ge 3 ] || usage
system=$1 out=$2
shift 2
mpis=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  mpis+=("$1")
  shift
done
[ ${#mpis[@]} -gt 0 ] || usage
[ "${1:-}" = "--" ] && shift

reframe=${XYLEM_REFRAME_ROOT:-$root/.reframe}/bin/reframe
[ -x "$reframe" ] || {
  echo "reframe-run: $reframe is missing (scripts/install-deps.sh installs it)" >&2
  exit 1
}
mkdir -p "$out"
out=$(cd "$out" && pwd)
perflogs=${XYLEM_PERFLOG_DIR:-$out/perflogs}

quick=()
if [ "${XYLEM_REFRAME_FULL:-0}" != 1 ]; then
  quick=(
    -S sqmr_check.num_iters=200 -S sqmr_check.max_msgsize=4096
    -S sqmr_built_check.num_iters=200 -S sqmr_built_check.max_msgsize=4096
    -S sqmr_netsel_check.num_iters=200 -S sqmr_netsel_check.max_msgsize=4096
    -S b_eff_io_check.scheduled_time=6 -S b_eff_io_check.memory_per_process=64M
    -S b_eff_io_check.require_valid=false
  )
fi
# The check that builds xylem from source (tag xylem-build) only when asked for: a release
# build per environment.
build=(-T xylem-build)
[ "${XYLEM_REFRAME_BUILD:-0}" = 1 ] && build=()
environs=$(IFS='|'; echo "${mpis[*]}")
cd "$root"
exec "$reframe" -C reframe/settings.py --system "$system" \
  -c reframe/checks/xylem_checks.py -p "^($environs)\$" \
  --prefix "$out" --perflogdir "$perflogs" --report-file "$out/report.json" \
  "${quick[@]}" "${build[@]}" "$@" -r
