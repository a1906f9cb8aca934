#!/usr/bin/env bash
# The MSRV the workspace declares (rust-version in Cargo.toml), checked without an old
# toolchain (none can be installed here: only the crate registry is reachable, not the
# toolchain server):
#  1. every package in the resolved dependency graph declares a rust-version no newer
#     than ours, or none (cargo metadata);
#  2. clippy's incompatible_msrv lint, which reads our rust-version, finds no standard
#     library item newer than it: the lint is on by default, so `make lint`'s clippy
#     (-D warnings, run before this script) already made that an error; here it is
#     checked that no crate of the workspace turns it off.
# When a toolchain of exactly the MSRV is installed (rustup toolchain list), the
# workspace is also built with it.
set -euo pipefail
cd "$(dirname "$0")/.."
CARGO=${CARGO:-cargo}

msrv=$(sed -n '/^\[workspace.package\]/,/^\[/s/^rust-version *= *"\(.*\)"/\1/p' Cargo.toml)
[ -n "$msrv" ] || { echo "check-msrv: no rust-version in [workspace.package]" >&2; exit 1; }

"$CARGO" metadata --format-version 1 --locked | python3 -c '
import json, sys
msrv = sys.argv[1]
key = lambda v: tuple(int(x) for x in (v.split(".") + ["0", "0"])[:3])
doc = json.load(sys.stdin)
ours = set(doc["workspace_members"])
newer = sorted("%s %s needs Rust %s" % (p["name"], p["version"], p["rust_version"])
               for p in doc["packages"]
               if p["id"] not in ours and p.get("rust_version")
               and key(p["rust_version"]) > key(msrv))
for line in newer:
    print(f"check-msrv: {line}, newer than our rust-version {msrv}", file=sys.stderr)
sys.exit(1 if newer else 0)
' "$msrv"

if grep -rn --include='*.rs' --include='Cargo.toml' -E 'incompatible_msrv|clippy::suspicious' \
    Cargo.toml crates testing 2>/dev/null | grep -vE '^\S+:[0-9]+:\s*//'; then
  echo "check-msrv: the lines above turn clippy's incompatible_msrv off; make lint relies on it" >&2
  exit 1
fi

if rustup toolchain list 2>/dev/null | grep -q "^$msrv"; then
  CARGO_TARGET_DIR=target/msrv "$CARGO" "+$msrv" build --workspace --all-targets
  echo "check-msrv: built with Rust $msrv" >&2
fi
echo "check-msrv: dependencies and standard library use fit rust-version $msrv" >&2
