#!/usr/bin/env bash
# Installs mdBook (the crate registry's mdbook, pinned, without its server, watcher and
# search index) into .tools/ in the checkout (XYLEM_TOOLS overrides), for the manual under
# docs/ (`make book`, and `make lint`, which builds it and checks its links). Called by
# `make book`. Idempotent: an installation of the same version is left alone.
set -euo pipefail

version=0.5.4
root=$(cd "$(dirname "$0")/.." && pwd)
prefix=${XYLEM_TOOLS:-$root/.tools}

if [ -x "$prefix/bin/mdbook" ] && [ "$("$prefix/bin/mdbook" --version)" = "mdbook v$version" ]; then
  exit 0
fi
echo "install-mdbook: building mdbook $version into $prefix (a few minutes)" >&2
cargo install --quiet --locked --debug --no-default-features --version "$version" --root "$prefix" mdbook
got=$("$prefix/bin/mdbook" --version)
[ "$got" = "mdbook v$version" ] || {
  echo "install-mdbook: $prefix/bin/mdbook says '$got', not mdbook v$version" >&2
  exit 1
}
