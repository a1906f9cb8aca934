#!/usr/bin/env python3
"""Fails when a relative link of the project's Markdown documents points to nothing.

Scans README.md, docs/*.md, BENCHMARKS.md, CHANGELOG.md, crates/*/README.md, testing/*/README.md,
packaging/README.md and reframe/*.md for
inline links and images, [text](target), and checks that each target that is not a URL
or a pure #anchor names a file of the repository, or a folder with a README.md
(relative to the document)."""

import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^(```|~~~)")


def documents():
    for pattern in ("README.md", "docs/*.md", "BENCHMARKS.md", "CHANGELOG.md", "crates/*/README.md", "testing/README.md", "testing/*/README.md", "packaging/README.md",
                    "reframe/*.md"):
        yield from sorted(glob.glob(os.path.join(ROOT, pattern)))


def broken(path):
    inside_fence = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if FENCE.match(line.strip()):
                inside_fence = not inside_fence
                continue
            if inside_fence:
                continue
            # Inline code is not a link.
            text = re.sub(r"`[^`]*`", "", line)
            for target in LINK.findall(text):
                if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                    continue
                file = target.split("#", 1)[0]
                full = os.path.join(os.path.dirname(path), file)
                if not os.path.exists(full):
                    yield number, target
                elif os.path.isdir(full) and not os.path.exists(os.path.join(full, "README.md")):
                    yield number, target + " (a folder without README.md)"


def main():
    failures = 0
    checked = 0
    for doc in documents():
        checked += 1
        for number, target in broken(doc):
            print(f"check-links: {os.path.relpath(doc, ROOT)}:{number}: {target} does not exist",
                  file=sys.stderr)
            failures += 1
    if failures:
        sys.exit(1)
    print(f"check-links: the relative links of {checked} documents resolve", file=sys.stderr)


if __name__ == "__main__":
    main()
