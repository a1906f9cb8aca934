#!/usr/bin/env bash
# b_eff_io across the two namespace hosts (one rank on each), on a GlusterFS volume spread
# over both hosts' bricks (distributed, the clients coherent: direct-io-mode=enable and
# write-behind off) and, for comparison, on the local disk (/var/tmp) with the same hosts
# and launch; per MPI (Open MPI 4: ompio, MPICH 4: ROMIO), PAIRS interleaved pairs. Then the
# collective-buffering hint romio_cb_write=enable against =disable under MPICH, interleaved.
# Needs root (namespaces, glusterd, FUSE); netns's example on_gluster does the setting up.
# Raw JSON in bench/out/beffio-gluster/, the summary on stdout and in
# bench/out/beffio-gluster.md.
set -euo pipefail
cd "$(dirname "$0")/.."

pairs=${PAIRS:-3}
T=${T:-20}
mem=${MEM:-64M}
out=bench/out/beffio-gluster
mkdir -p "$out"
rm -f "$out"/*.json
cargo build -q -p netns --example on_gluster
run=target/debug/examples/on_gluster
local_dir=$(mktemp -d /var/tmp/xylem-bench-gluster.XXXXXX)
trap 'rm -rf "$local_dir"' EXIT

binary() { case $1 in openmpi4) echo "$PWD/target/release/b_eff_io" ;; *) echo "$PWD/target/$1/release/b_eff_io" ;; esac; }

beffio() { # MPI NAME PATH EXTRA...
  local mpi=$1 name=$2 path=$3; shift 3
  echo "bench-beffio-gluster: $mpi $name" >&2
  "$run" --mpi "$mpi" -o direct-io-mode=enable --set performance.write-behind=off -- \
    "$(binary "$mpi")" -T "$T" -p "$path" --memory-per-process "$mem" \
    --json "$PWD/$out/$name.json" "$@" > /dev/null 2> "$out/$name.log" ||
    { echo "bench-beffio-gluster: $mpi $name failed:" >&2; tail -5 "$out/$name.log" >&2; exit 1; }
}

for mpi in openmpi4 mpich4; do
  for ((i = 1; i <= pairs; i++)); do
    if ((i % 2)); then
      beffio "$mpi" "$mpi-gluster-$i" @MNT; beffio "$mpi" "$mpi-local-$i" "$local_dir"
    else
      beffio "$mpi" "$mpi-local-$i" "$local_dir"; beffio "$mpi" "$mpi-gluster-$i" @MNT
    fi
  done
done
for ((i = 1; i <= pairs; i++)); do
  if ((i % 2)); then order="enable disable"; else order="disable enable"; fi
  for v in $order; do
    beffio mpich4 "cb-$v-$i" @MNT --hint "romio_cb_write=$v"
  done
done

python3 - "$out" "$T" "$mem" "$pairs" <<'PY' | tee bench/out/beffio-gluster.md
import glob, json, statistics, sys
out, T, mem, pairs = sys.argv[1:]
def load(prefix):
    return [json.load(open(f)) for f in sorted(glob.glob(f"{out}/{prefix}-*.json"))]
med = statistics.median
print(f"b_eff_io, 2 ranks (one per namespace host), -T {T}, --memory-per-process {mem}, "
      f"{pairs} interleaved pairs per MPI; medians of the full partition's U-weighted "
      f"figure per type, MB/s.\n")
print("| MPI | file system | access | type 0 | type 1 | type 2 | type 3 | type 4 | b_eff_io |")
print("|---|---|---|---:|---:|---:|---:|---:|---:|")
for mpi in ("openmpi4", "mpich4"):
    for fs, label in (("gluster", "GlusterFS, 2 bricks"), ("local", "local ext4")):
        docs = load(f"{mpi}-{fs}")
        full = [d["partitions"][0] for d in docs]
        for access in ("write", "rewrite", "read"):
            cells = [med(p["types"][access][t]["weighted_mb_s"] for p in full) for t in range(5)]
            b = med(d["b_eff_io_mb_s"] for d in docs) if access == "write" else None
            print(f"| {mpi} | {label} | {access} | " + " | ".join(f"{c:,.1f}" for c in cells)
                  + f" | {'' if b is None else f'{b:,.1f}'} |")
print()
print("| MPICH 4, GlusterFS | type 0 write (collective), MB/s | type 4 write (collective), MB/s |")
print("|---|---:|---:|")
res = {}
for v in ("enable", "disable"):
    docs = load(f"cb-{v}")
    for d in docs:
        rep = d["partitions"][0]["hints"][0]["reported"].get("romio_cb_write")
        assert rep == v, f"romio_cb_write={v} reported back as {rep}"
    t0 = med(d["partitions"][0]["types"]["write"][0]["weighted_mb_s"] for d in docs)
    t4 = med(d["partitions"][0]["types"]["write"][4]["weighted_mb_s"] for d in docs)
    res[v] = (t0, t4)
    print(f"| romio_cb_write={v} (reported back: {v}) | {t0:,.1f} | {t4:,.1f} |")
print(f"| **enable / disable** | **{res['enable'][0] / res['disable'][0]:.2f}** | "
      f"**{res['enable'][1] / res['disable'][1]:.2f}** |")
PY
