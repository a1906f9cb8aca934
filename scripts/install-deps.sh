#!/usr/bin/env bash
# Installs what xylem needs on Debian/Ubuntu: both MPI libraries (Open MPI and MPICH),
# libclang for the mpi crate's bindings, iproute2 for the multi-host tests, Python for
# the benchmark scripts, Slurm (controller, node daemon, client) for the local multi-node
# Slurm tests (testing/slurmtest), DejaVu fonts for the text of `xylem plot`'s pictures,
# fincore (util-linux-extra on Debian 12; part of util-linux on older releases) for the
# test that --drop-cache empties the page cache, GlusterFS (server and FUSE client) for
# b_eff_io on a distributed file system across the namespace hosts, strace for the tests that
# check how every output file is created (O_EXCL|O_NOFOLLOW), ucx_info and fi_info (UCX's and
# libfabric's own views of the host, which `xylem net resolve` checks its choice against); then the three MPI libraries that come as
# packages of the Python registry (scripts/install-mpis.sh: Open MPI 5, MPICH 5, Intel MPI,
# each in a virtual environment of its own under .mpi/), and ReFrame for the checks
# under reframe/ (scripts/install-reframe.sh: reframe-hpc, pinned, in .reframe/), and
# EasyBuild with Lmod for the easyconfig and module-file tests (scripts/install-easybuild.sh,
# pinned, in .easybuild/). mdBook, for the manual, is built by `make book` itself
# (scripts/install-mdbook.sh).
# Idempotent and quiet when everything is already there.
set -euo pipefail

packages=(
  openmpi-bin libopenmpi-dev
  mpich libmpich-dev
  ucx-utils libfabric-bin
  libclang-dev clang pkg-config
  iproute2 iputils-ping procps util-linux
  python3 python3-venv time bc valgrind strace
  slurm-wlm slurmctld slurmd slurm-client libpmi2-0
  glusterfs-server glusterfs-client
  fonts-dejavu-core
  lmod
)
# PACKAGE:COMMAND, installed where the release has the package and COMMAND is missing.
optional=(util-linux-extra:fincore)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
wanted=()
for entry in "${optional[@]}"; do
  command -v "${entry#*:}" >/dev/null || wanted+=("${entry%%:*}")
done
mpis="$(dirname "$0")/install-mpis.sh"
reframe="$(dirname "$0")/install-reframe.sh"
easybuild="$(dirname "$0")/install-easybuild.sh"
if [ ${#missing[@]} -eq 0 ] && [ ${#wanted[@]} -eq 0 ]; then
  "$mpis"
  "$reframe"
  exec "$easybuild"
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]} ${wanted[*]}" >&2; exit 1; }
  sudo=(sudo)
fi
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
for p in "${wanted[@]}"; do
  apt-cache show "$p" >/dev/null 2>&1 && missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}" >&2
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
"$mpis"
"$reframe"
exec "$easybuild"
