#!/usr/bin/env bash
# What b_eff_io's own code costs per MPI-IO call, in instructions, beside the 2.1
# reference (b_eff_io.c revision 2.1, built here with the MPI's mpicc -O2 from $REF_SRC, or
# $REF, a built binary). valgrind's callgrind counts instructions, not seconds.
#
# xylem: callgrind collects only inside the function that makes one call of a pattern
# (`PartitionRun::call`: the watchdog's tick, the stop check, the markers, the MPI-IO
# wrapper and its checks of the count moved; the loop around it, the batch planning and
# the termination checks are per batch, not per call), and the instructions of xylem's
# own object there are divided by the calls rank 0 made (the JSON's repeats, every
# pattern of every access method). The markers (data validation 2.1 does not do: stamped
# into every chunk before a write, `beffio::markers::stamp`, checked after a read,
# `beffio::markers::check_with_limit`) are given apart.
# 2.1: its loop is inside main, so the cost per call is the difference of the own-object
# instructions of a run of -T T2 and one of -T T1 over the difference of their calls
# (rank 0's repeat factors in the .prot, every pattern of every access method).
#
#   MPI=openmpi4 REF_SRC=/path/to/b_eff_io.c scripts/bench-beffio-instructions.sh
#
# Not part of the test suite: a measurement. Callgrind files in bench/out/beffio-cg/, the
# figures on stdout and in bench/out/beffio-instructions.md.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
mpi=${MPI:-openmpi4}
t1=${T1:-3}
t2=${T2:-6}
mb=${MB:-16}
out=$root/bench/out/beffio-cg
scratch=$(mktemp -d /var/tmp/xylem-cg.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$out"
rm -f "$out"/*
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

ref=$(scripts/beffio-ref-binary.sh "$mpi" "$out")
xylem=$root/target/$mpi/release/b_eff_io
[ -x "$xylem" ] || scripts/with-mpi "$mpi" -- cargo build --release -p beffio >&2

launch() { # two ranks, then the program
  "$root"/scripts/mpi-launch.sh "$mpi" 2 "$@"
}
var=OMPI_COMM_WORLD_RANK
case $mpi in openmpi*) ;; *) var=PMI_RANK ;; esac
vg=(valgrind -q --tool=callgrind)

rm -rf "${scratch:?}"/*
launch "${vg[@]}" --toggle-collect='*PartitionRun>::call' --callgrind-out-file="$out/cg.xylem.%q{$var}" \
  "$xylem" -T "$t2" -N 2 -p "$scratch" --memory-per-process-mb "$mb" --json "$out/xylem.json" \
  -f "$out/xylem" > "$out/xylem.out" 2>&1
for t in "$t1" "$t2"; do
  rm -rf "${scratch:?}"/*
  (cd "$scratch" && launch "${vg[@]}" --callgrind-out-file="$out/cg.ref.$t.%q{$var}" \
    "$ref" -MB "$mb" -MT $((2 * mb)) -T "$t" -N 2 -rewrite -keep -p "$scratch" -f "$out/ref.$t") \
    > "$out/ref.$t.out" 2>&1
done

python3 - "$out" "$xylem" "$ref" "$t1" "$t2" "$mpi" <<'PY' | tee "$root/bench/out/beffio-instructions.md"
import json, re, subprocess, sys
out, xylem, ref, t1, t2, mpi = sys.argv[1:]
own = lambda f, obj: int(subprocess.check_output([sys.executable, "scripts/callgrind-own.py", f, obj]))

doc = json.load(open(f"{out}/xylem.json"))
p = doc["partitions"][0]
calls = sum(x["repeats"] for a in ("write", "rewrite", "read") for x in p["access"][a])
total = own(f"{out}/cg.xylem.0", xylem)
ann = subprocess.check_output(["callgrind_annotate", "--inclusive=no", "--threshold=100", f"{out}/cg.xylem.0"], text=True)
markers = 0
for line in ann.splitlines():
    m = re.match(r"\s*([\d,]+)\s.*beffio::markers::(stamp|check_with_limit)\b", line)
    if m:
        markers += int(m[1].replace(",", ""))

def ref_calls(prot):
    n = 0
    for line in open(prot):
        m = re.match(r"n=\s*\d+\s+a=\d\s+type=\d\s+p=\s*\d+.*?\br=\s*(\d+)", line)
        if m:
            n += int(m[1])
    return n

c1, c2 = ref_calls(f"{out}/ref.{t1}.prot"), ref_calls(f"{out}/ref.{t2}.prot")
o1, o2 = own(f"{out}/cg.ref.{t1}.0", ref), own(f"{out}/cg.ref.{t2}.0", ref)
print(f"## Own instructions per MPI-IO call, rank 0 ({mpi}, 2 ranks, {len(p['access']['write'])} patterns per access method)\n")
print("| program | calls | own instructions | per call | of which the markers |")
print("|---|---:|---:|---:|---:|")
print(f"| xylem, -T {t2} (inside `PartitionRun::call`) | {calls} | {total} | {total / calls:.0f} | {markers / calls:.0f} |")
print(f"| xylem without the markers | | | {(total - markers) / calls:.0f} | |")
print(f"| 2.1, -T {t2} minus -T {t1} | {c2 - c1} | {o2 - o1} | {(o2 - o1) / (c2 - c1):.0f} | — |")
PY
