#!/usr/bin/env python3
"""Instructions a program executed in its own code, from a callgrind output file.

    scripts/callgrind-own.py CALLGRIND_OUT OBJECT

Sums the self cost (the first event, Ir) of every cost line recorded under the object
(`ob=`) whose path ends with OBJECT, whatever file or function it is attributed to: code
inlined from another source file (Rust's `core` iterators, C headers) changes `fi=`/`fe=`,
never `ob=`, so it is counted with the object it runs in. The inclusive costs of calls
(the line after `calls=`) are not self cost and are skipped. Prints one integer.
"""
import sys


def own_instructions(path, obj):
    names = {}  # compressed "(n)" ids of object names (ob= and cob= lines)
    current = None
    skip_next = False
    total = 0
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            if skip_next:
                skip_next = False
                continue
            if line.startswith("ob="):
                current = resolve(names, line[3:])
                continue
            if line.startswith("cob="):
                # Object names share one table of ids, defined on either line.
                resolve(names, line[4:])
                continue
            if line.startswith("calls="):
                skip_next = True
                continue
            head = line[0]
            if head.isdigit() or head in "+-*":
                if current is not None and current.endswith(obj):
                    fields = line.split()
                    if len(fields) >= 2:
                        total += int(fields[1])
    return total


def resolve(names, value):
    """`(3) /path` defines id 3, `(3)` refers to it; a plain path has no id."""
    value = value.strip()
    if value.startswith("("):
        close = value.index(")")
        key = value[1:close]
        rest = value[close + 1 :].strip()
        if rest:
            names[key] = rest
        return names.get(key)
    return value


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: callgrind-own.py CALLGRIND_OUT OBJECT")
    print(own_instructions(sys.argv[1], sys.argv[2]))
