#!/usr/bin/env python3
"""Writes the summary.md of a demo results folder to standard output: the headline
figures of sqmr.json and b_eff_io.json, and links to their plots, CSV and JSON files.
Usage: scripts/demo-summary.py RESULTS_DIR"""

import json
import os
import sys


def size(n):
    for factor, suffix in ((1 << 20, " MiB"), (1 << 10, " KiB")):
        if n >= factor and n % factor == 0:
            return f"{n // factor}{suffix}"
    return f"{n} B"


def links(name):
    return (f"[plot (SVG)]({name}.svg), [CSV]({name}.csv), [JSON]({name}.json), "
            f"[text]({name}.txt)\n\n![{name}]({name}.png)\n")


def sqmr(doc):
    sizes = doc["sizes"]
    rate = max(sizes, key=lambda s: s["rates"]["average"]["msgs_per_s"])
    bw = max(sizes, key=lambda s: s["rates"]["average"]["mib_per_s"])
    cfg = doc["config"]
    lib = doc["environment"]["mpi_library"].split(",")[0]
    out = ["## sqmr: message rate of one node\n",
           f"{cfg['num_cores']} core rank(s) x {cfg['num_nbors']} neighbour(s), window "
           f"{cfg['win_size']}, {size(sizes[0]['msgsize'])} .. {size(sizes[-1]['msgsize'])}, {lib}"
           f"{'' if doc['complete'] else ' (INCOMPLETE)'}.\n",
           "| figure | value | at |", "| --- | ---: | ---: |",
           f"| peak message rate | {rate['rates']['average']['msgs_per_s']:,.0f} msgs/s "
           f"| {size(rate['msgsize'])} |",
           f"| peak bandwidth | {bw['rates']['average']['mib_per_s']:,.1f} MiB/s "
           f"| {size(bw['msgsize'])} |", ""]
    return "\n".join(out) + "\n" + links("sqmr")


def beffio(doc):
    out = ["## b_eff_io: effective I/O bandwidth\n",
           f"{doc['processes']} processes, T = {doc['scheduled_time_s']:g} s, "
           f"MPART = {doc['mpart_bytes'] >> 20} MB, path {doc['path']}.\n",
           "| figure | MB/s (10^6 B/s) |", "| --- | ---: |",
           f"| **b_eff_io** (best partition, n = {doc['best_partition']}) "
           f"| **{doc['b_eff_io_mb_s']:,.1f}** |"]
    for p in doc["partitions"]:
        out.append(f"| partition n = {p['processes']} | {p['b_eff_io_mb_s']:,.1f} |")
    out.append("")
    if doc["valid"]:
        out.append("The run is VALID.\n")
    else:
        out.append("The run is NOT VALID: " + "; ".join(doc["invalid_reasons"]) + ".\n")
    return "\n".join(out) + "\n" + links("b_eff_io")


def main():
    folder = sys.argv[1]
    parts = [f"# xylem demo, {os.path.basename(os.path.normpath(folder))}\n"]
    for name, render in (("sqmr", sqmr), ("b_eff_io", beffio)):
        path = os.path.join(folder, name + ".json")
        if os.path.exists(path):
            with open(path) as f:
                parts.append(render(json.load(f)))
    print("\n".join(parts), end="")


if __name__ == "__main__":
    main()
