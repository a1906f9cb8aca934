#!/usr/bin/env bash
# Does a b_eff_io run end on time on a loaded machine? RUNS runs of
#   mpirun -n 4 --oversubscribe b_eff_io -MB 64 -T $T -N 4 -p SCRATCH
# (4 ranks on this machine's cores, one partition of 4, so the scheduled time is T), each
# beside a competing CPU load: one busy process per core (`yes > /dev/null`), started
# before the run and stopped after it. Wall time is mpirun's, start-up included.
#
# OLD_BEFFIO=path adds a second variant, that binary run the same way, interleaved with
# the first (the order alternates), so a build from before a change is measured in the
# same moments. BEFFIO overrides target/release/b_eff_io.
# Raw rows in bench/out/beffio-deadline.tsv, the summary on stdout and in
# bench/out/beffio-deadline.md (quoted in BENCHMARKS.md).
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${RUNS:-10}
T=${T:-30}
beffio=${BEFFIO:-target/release/b_eff_io}
old=${OLD_BEFFIO:-}
out=bench/out
mkdir -p "$out"
raw="$out/beffio-deadline.tsv"
: > "$raw"
scratch=$(mktemp -d /var/tmp/xylem-deadline.XXXXXX)
hogs=()
stop_hogs() {
  for pid in "${hogs[@]}"; do kill "$pid" 2> /dev/null || true; done
  for pid in "${hogs[@]}"; do wait "$pid" 2> /dev/null || true; done
  hogs=()
}
trap 'stop_hogs; rm -rf "$scratch"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# run VARIANT RUN BINARY: one loaded run, its wall time appended.
run() {
  local variant=$1 i=$2 binary=$3 t0 t1 code=0
  for ((c = 0; c < $(nproc); c++)); do
    yes > /dev/null &
    hogs+=($!)
  done
  t0=$(date +%s.%N)
  mpirun -n 4 --oversubscribe --bind-to none "$binary" -MB 64 -T "$T" -N 4 -p "$scratch" \
    -f "$scratch/b_eff_io" > "$out/beffio-deadline-$variant-$i.txt" 2>&1 || code=$?
  t1=$(date +%s.%N)
  stop_hogs
  if ((code != 0)); then
    echo "bench-beffio-deadline: $variant run $i exited with $code (see $out/beffio-deadline-$variant-$i.txt)" >&2
    exit 1
  fi
  echo -e "$variant\t$i\t$T\t$(echo "$t1 - $t0" | bc)" >> "$raw"
}

for ((i = 1; i <= runs; i++)); do
  echo "bench-beffio-deadline: run $i/$runs" >&2
  if [ -z "$old" ] || ((i % 2)); then
    run new "$i" "$beffio"
    [ -z "$old" ] || run old "$i" "$old"
  else
    run old "$i" "$old"
    run new "$i" "$beffio"
  fi
done

python3 - "$raw" "$runs" "$T" "$(nproc)" <<'PY' | tee "$out/beffio-deadline.md"
import collections, statistics, sys
raw, runs, T, cores = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
walls = collections.defaultdict(list)
for line in open(raw):
    variant, _, t, wall = line.split("\t")
    walls[variant].append(float(wall) / float(t))
print(f"mpirun -n 4 b_eff_io -MB 64 -T {T:g} -N 4, {runs} runs, each beside {cores} busy "
      f"processes (one per core), wall time (start-up included) over T:\n")
print("| binary | runs | median wall/T | largest wall/T |")
print("|---|---|---|---|")
names = {"new": "this build", "old": "before (OLD_BEFFIO)"}
for variant in ["new", "old"]:
    if walls[variant]:
        w = walls[variant]
        print(f"| {names[variant]} | {len(w)} | {statistics.median(w):.3f} | {max(w):.3f} |")
PY
