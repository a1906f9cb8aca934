#!/usr/bin/env bash
# The main job on this machine: sqmr on local ranks over a short size range, then a
# one-minute b_eff_io on the local disk, tables on the terminal and the results in a
# fresh folder under results/ (results/latest points there): each benchmark's JSON, CSV,
# text and plots (SVG and PNG, from `xylem plot`), and summary.md with the headline
# figures and links to the plots.
set -euo pipefail
cd "$(dirname "$0")/.."

# The binaries (make demo builds them in target/release; XYLEM_BIN_DIR overrides).
bin=${XYLEM_BIN_DIR:-target/release}

stamp=$(date +%Y%m%d-%H%M%S)
out="results/$stamp"
mkdir -p "$out"
ln -sfn "$stamp" results/latest

launcher=(mpirun -n 2)
if [ "$(id -u)" -eq 0 ]; then
  launcher+=(--allow-run-as-root)
fi
launcher+=(--oversubscribe --bind-to none)

echo "== sqmr: 1 core rank x 1 neighbour on this machine, 0 B .. 64 KiB" >&2
"${launcher[@]}" "$bin/sqmr" --num_iters 2000 --max_msgsize 64K --json "$out/sqmr.json" \
  --csv "$out/sqmr.csv" | tee "$out/sqmr.txt"

echo >&2
echo "== b_eff_io: 2 ranks, partitions 2 and 1, one minute in all, files under $out/" >&2
"${launcher[@]}" "$bin/b_eff_io" -T 40 -p "$out" --memory-per-process 256M \
  --json "$out/b_eff_io.json" --csv "$out/b_eff_io.csv" --prefix "$out/b_eff_io" \
  | tee "$out/b_eff_io.txt"

echo >&2
echo "== plots and summary" >&2
for bench in sqmr b_eff_io; do
  for ext in svg png; do
    "$bin/xylem" plot "$out/$bench.json" -o "$out/$bench.$ext"
  done
done
"$bin/xylem" summary "$out" > "$out/summary.md"

echo >&2
echo "results in $out/ (results/latest points there):" >&2
ls -1 "$out" | sed 's/^/  /' >&2
