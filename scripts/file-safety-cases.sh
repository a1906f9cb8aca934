#!/usr/bin/env bash
# The file-safety cases a hostile user of a shared folder tries, one line each, against
# the xylem and b_eff_io binaries given (root; Open MPI's mpirun on PATH for case 4):
#   scripts/file-safety-cases.sh target/release/xylem target/release/b_eff_io now
# Writes its folders under /tmp/ev/LABEL. Each line gives the exit code and, where a
# victim tree is involved, its checksum before -> after (identical when nothing was
# touched). The tests in make test check the same cases (crates/*/tests/file_safety.rs,
# crates/xylem/tests/hostile_input.rs, beffio's run::rundir unit tests).
set -u
X=$1; B=$2; L=$3
J=/work/main/crates/analysis/tests/fixtures/sqmr-a.json
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
sum() { find "$1" -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16; }
victim() { rm -rf "$1"; mkdir -p "$1/sub"; echo 'root:x:0:0:root:/root:/bin/bash' > "$1/passwd"; head -c 100000 /dev/zero | tr '\0' Z > "$1/sub/data"; }
R=/tmp/ev/$L; rm -rf $R; mkdir -p $R
echo "## $L"
# 1. planted links at pid-derived temporaries
victim $R/v; mkdir $R/d; before=$(sum $R/v)
python3 -c "
import os
last=int(open('/proc/sys/kernel/ns_last_pid').read())
for p in range(last+1,last+3000):
    for n in ('.plot.svg.tmp.%d','.plot.svg.xylem-reservation.tmp.%d'):
        os.symlink('$R/v/passwd','$R/d/'+n%p)
"
timeout 60 $X plot $J -o $R/d/plot.svg >/dev/null 2>$R/e1; c=$?
echo "1 planted links: exit $c; victim $before -> $(sum $R/v); plot.svg is $(stat -c %F $R/d/plot.svg 2>/dev/null)"
# 2a. FIFO as the reservation
mkdir $R/f; mkfifo $R/f/.plot.svg.xylem-reservation
s=$(date +%s.%N); timeout 20 $X plot $J -o $R/f/plot.svg >/dev/null 2>$R/e2; c=$?; t=$(echo "$(date +%s.%N) - $s" | bc)
echo "2a FIFO reservation: exit $c after ${t%????????} s: $(head -c 160 $R/e2)"
# 2b. /dev/zero as the reservation
mkdir $R/z; ln -s /dev/zero $R/z/.plot.svg.xylem-reservation
s=$(date +%s.%N); ( ulimit -v 4000000; timeout 60 $X plot $J -o $R/z/plot.svg >/dev/null 2>$R/e3 ); c=$?; t=$(echo "$(date +%s.%N) - $s" | bc)
echo "2b /dev/zero reservation: exit $c after ${t%????????} s: $(head -c 160 $R/e3)"
# 3. b_eff_io --clean DIR with a forged b_eff_io.owner in DIR
victim $R/scratch; before=$(sum $R/scratch)
printf 'b_eff_io run directory\npid=999999\nhost=%s\n' "$(hostname)" > $R/scratch/b_eff_io.owner
timeout 60 $B --clean $R/scratch >$R/o4 2>&1; c=$?
echo "3 --clean forged owner: exit $c; DIR $( [ -d $R/scratch ] && echo kept || echo REMOVED ); victim files $before -> $( [ -d $R/scratch/sub ] && find $R/scratch -type f ! -name b_eff_io.owner -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16 || echo gone)"
# 4. run directory swapped for a link mid-run
victim $R/v4; mkdir $R/p4; before=$(sum $R/v4)
timeout 200 mpirun --oversubscribe -n 2 $B -T 12 -p $R/p4 --memory-per-process 64M >$R/o5 2>&1 &
for i in $(seq 600); do d=$(ls -d $R/p4/b_eff_io.* 2>/dev/null | head -1); [ -n "$d" ] && [ -d "$d/p0.n2" ] && break; sleep 0.1; done
mv "$d" $R/p4/moved; ln -s $R/v4 "$d"; wait
echo "4 swapped run directory: victim $before -> $(sum $R/v4) ($(find $R/v4 -type f | wc -l) files left of 2); moved-away dir holds $(find $R/p4/moved -type f | wc -l) files"
# 5. stale reservation of a run on another host (killed 20 min ago)
mkdir $R/s; printf '# xylem output-file reservation\ntarget plot.svg\npid 4242\nhost node-elsewhere\nprogram xylem\nstarted 1\nlease 60\n' > $R/s/.plot.svg.xylem-reservation; touch -d '20 minutes ago' $R/s/.plot.svg.xylem-reservation
timeout 60 $X plot $J -o $R/s/plot.svg >/dev/null 2>$R/e6; c=$?
echo "5 stale foreign reservation: exit $c: $(head -c 200 $R/e6)"
