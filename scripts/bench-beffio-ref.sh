#!/usr/bin/env bash
# b_eff_io beside the 2.1 reference itself (b_eff_io.c revision 2.1, Rabenseifner, HLRS),
# through the same MPI library, on the same scratch folder, in interleaved pairs (the
# order alternates, so a drift of the machine shows on both):
#
#  (1) per pattern type and access method, the bandwidth of each type as 2.1 counts it
#      (its bytes over open + patterns + close), xylem / 2.1 per pair, and the median;
#  (2) the time-driven writes (the measured patterns of types 0 to 2) that ended before
#      nine tenths of their budget, per run, for both programs (2.1's from its .prot);
#  (3) with STRACE=1, one more pair under `strace -f`: the fsync and fdatasync calls of
#      each rank of each program.
#
# Both get the same -T, -N and memory per process; 2.1 runs with -rewrite (xylem always
# rewrites every type) and -keep (xylem keeps its files until the end of the partition,
# 2.1 would delete each at its close, inside the timed window). LOAD=N runs N busy loops
# beside every run (a loaded node), nothing by default. XYLEM_T gives xylem another -T
# than 2.1's (2.1 does not budget its syncs, so its patterns run longer than their time
# and move more bytes: a larger XYLEM_T compares the two on similar volumes). DROP=1
# writes back and drops the page cache before every run (root), so that each program
# starts with the cache and writeback in the same state, whatever the one before it wrote.
#
# 2.1: $REF, a built binary, or $REF_SRC, the path of b_eff_io.c, built here with the
# MPI's mpicc (`mpicc -O2 -o b_eff_io b_eff_io.c -lm`). xylem: target/$MPI/release/b_eff_io
# (built if missing), or $XYLEM, another build (a commit to compare against).
# Not part of the test suite: a measurement. Raw files in bench/out/beffio-ref/, the
# summary on stdout and in bench/out/beffio-ref.md.
#
#   MPI=openmpi4 RANKS=2 PAIRS=6 T=60 MB=256 REF_SRC=/path/to/b_eff_io.c scripts/bench-beffio-ref.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

mpi=${MPI:-openmpi4}
ranks=${RANKS:-2}
pairs=${PAIRS:-6}
T=${T:-60}
xylem_t=${XYLEM_T:-$T}
mb=${MB:-256}
load=${LOAD:-0}
trace=${STRACE:-0}
drop=${DROP:-0}
out=$root/bench/out/beffio-ref
scratch=${SCRATCH:-$(mktemp -d /var/tmp/xylem-ref.XXXXXX)}
mkdir -p "$out"
rm -rf "${out:?}"/*
hogs=()
cleanup() {
  for h in "${hogs[@]}"; do kill "$h" 2>/dev/null || true; done
  rm -rf "$scratch"
}
trap cleanup EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

ref=$(scripts/beffio-ref-binary.sh "$mpi" "$out")
xylem=${XYLEM:-target/$mpi/release/b_eff_io}
[ -x "$xylem" ] || scripts/with-mpi "$mpi" -- cargo build --release -p beffio >&2
xylem=$(realpath "$xylem")

launch() { # the MPI launcher of $mpi for $ranks ranks, then the program
  "$root"/scripts/mpi-launch.sh "$mpi" "$ranks" "$@"
}

# A rank's number from the launcher's environment, for the strace file names.
traced() { # OUT PROGRAM ARGS...
  local o=$1
  shift
  launch sh -c 'r=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}; o=$1; shift; exec strace -f -qq -e trace=fsync,fdatasync -o "$o.rank$r" "$@"' sh "$o" "$@"
}

for ((i = 0; i < load; i++)); do
  (while :; do :; done) &
  hogs+=($!)
done

# The page cache as the run before left it, or (DROP=1) written back and dropped.
settle() {
  rm -rf "${scratch:?}"/*
  [ "$drop" = 1 ] || return 0
  sync
  echo 3 > /proc/sys/vm/drop_caches || {
    echo "bench-beffio-ref: DROP=1 needs root (/proc/sys/vm/drop_caches)" >&2
    exit 1
  }
}

run_xylem() { # NAME [traced]
  local name=$1 wrap=launch
  [ "${2:-}" = traced ] && wrap="traced $out/$name.strace"
  settle
  $wrap "$xylem" -T "$xylem_t" -N "$ranks" -p "$scratch" --memory-per-process-mb "$mb" \
    --json "$out/$name.json" -f "$out/$name" > "$out/$name.out" 2>&1
}
run_ref() { # NAME [traced]
  local name=$1 wrap=launch
  [ "${2:-}" = traced ] && wrap="traced $out/$name.strace"
  settle
  (cd "$scratch" && $wrap "$ref" -MB "$mb" -MT $((mb * ranks)) -T "$T" -N "$ranks" -rewrite -keep \
    -p "$scratch" -f "$(pwd -P)/.ref") > "$out/$name.out" 2>&1
  mv "$scratch/.ref.sum" "$out/$name.sum"
  mv "$scratch/.ref.prot" "$out/$name.prot"
}

for ((i = 1; i <= pairs; i++)); do
  echo "bench-beffio-ref: pair $i/$pairs" >&2
  if ((i % 2)); then
    run_xylem "xylem-$i"; run_ref "ref-$i"
  else
    run_ref "ref-$i"; run_xylem "xylem-$i"
  fi
done
if [ "$trace" = 1 ]; then
  echo "bench-beffio-ref: a pair under strace" >&2
  run_xylem xylem-traced traced
  run_ref ref-traced traced
fi

python3 - "$out" "$pairs" "$trace" "$mpi" "$ranks" "$T" "$mb" "$load" "$xylem_t" "$drop" <<'PY' | tee bench/out/beffio-ref.md
import glob, json, os, re, statistics, sys
out, pairs, trace, mpi, ranks, T, mb, load, xylem_t, drop = sys.argv[1:]
pairs = int(pairs)
ACCESS = ["write", "rewrite", "read"]
NAMES = {"write": "write", "rewrite": "rewrite", "read": "read"}

def xylem_types(path):
    doc = json.load(open(path))
    p = doc["partitions"][0]
    bw = {}
    for a in ACCESS:
        for t in p["types"][a]:
            bw[(a, t["type"])] = t["bandwidth_mb_s"]
    # From the patterns, so that builds from before the JSON counted them compare too.
    timed = [x for x in p["access"]["write"] if x["type"] <= 2 and x["u"] > 0]
    early = (sum(x["time_s"] < 0.9 * x["scheduled_s"] for x in timed),
             sum(x["time_s"] < 0.25 * x["scheduled_s"] for x in timed))
    written = sum(x["bytes"] for x in p["access"]["write"])
    return bw, early, written

TYPE_NAMES = ["scatter", "shared", "separated", "segmented", "seg_coll"]
def ref_types(prot):
    bw, early, written = {}, (0, 0), 0.0
    for line in open(prot):
        m = re.match(r"n=\s*\d+\s+a=(\d)\s+type=(\d)\s+p=\s*(\d+)\s+Tp=\s*([\d.]+).*?\bt=\s*([\d.]+)", line)
        if m:
            a, t, _, tp, took = int(m[1]), int(m[2]), int(m[3]), float(m[4]), float(m[5])
            if a == 0:
                written += float(re.search(r"S=\s*([\d.]+) MB", line)[1]) * 1e6
            if a == 0 and t <= 2 and tp > 0:
                early = (early[0] + (took < 0.9 * tp), early[1] + (took < 0.25 * tp))
        m = re.search(r"total pattern type:.*b_eff_io_(write|rewrite|read)_(\w+)=\s*([\d.]+) MB/s", line)
        if m:
            bw[(m[1], TYPE_NAMES.index(m[2]))] = float(m[3])
    return bw, early, written

rows = {}
volumes = []
early_x, early_r = [], []
for i in range(1, pairs + 1):
    bx, ex, wx = xylem_types(f"{out}/xylem-{i}.json")
    br, er, wr = ref_types(f"{out}/ref-{i}.prot")
    volumes.append(wx / wr)
    early_x.append(ex)
    early_r.append(er)
    for key in bx:
        if key in br and br[key] > 0:
            rows.setdefault(key, []).append(bx[key] / br[key])

t = T if xylem_t == T else f"{T} (xylem -T {xylem_t})"
cache = ", page cache dropped before each run" if drop == "1" else ""
print(f"## b_eff_io against 2.1 ({mpi}, {ranks} ranks, -T {t}, {mb} MB per process, {pairs} interleaved pairs, {load} busy loops beside{cache})\n")
print("| access | type | median xylem/2.1 | min | max |")
print("|---|---:|---:|---:|---:|")
for a in ACCESS:
    for t in range(5):
        r = rows.get((a, t))
        if r:
            print(f"| {a} | {t} | {statistics.median(r):.2f} | {min(r):.2f} | {max(r):.2f} |")
print()
print(f"bytes written (all patterns), xylem / 2.1: median {statistics.median(volumes):.2f} ({min(volumes):.2f}-{max(volumes):.2f})")
print("time-driven writes (22 per run) that ended before 0.9 and before 0.25 of their budget, per run:")
print(f"  xylem {early_x}")
print(f"  2.1   {early_r}")
if trace == "1":
    print()
    for prog in ["xylem", "ref"]:
        counts = []
        for f in sorted(glob.glob(f"{out}/{prog}-traced.strace.rank*")):
            n = sum(1 for l in open(f) if re.search(r"\b(fsync|fdatasync)\(", l))
            counts.append(f"{os.path.basename(f).split('.')[-1]} {n}")
        print(f"fsync + fdatasync per rank, {'xylem' if prog == 'xylem' else '2.1'}: {', '.join(counts)}")
PY
