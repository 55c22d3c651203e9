#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The sensitivity table of sweep.sh's replays.

usage: sweep_report.py [--check] JSON...
  For each core of the replays (the N1 as published, and each variant of
  its table), the kernel-mode L1 data TLB refills per 1000 instructions
  (perf's dTLB-load-misses:k) under rodata=full's layout and the series',
  over all windows, and the series' change.
  --check: exit 1 unless the L1D sizes behave as LRU must (no more
  refills with more entries, in each layout: the inclusion property of a
  fully associative LRU level; and fewer with 128 than with 16), and the
  N1 figure is the same in every replay.
"""
import json
import sys

KMODE = ("kernel_linear", "kernel_other", "kernel_to_user")
ENTRIES = ["l1d-16", "l1d-32", "neoverse-n1", "l1d-64", "l1d-96", "l1d-128"]


def totals(paths):
    """{core: {layout: [kernel l1 misses, instructions]}}, one per replay for the N1."""
    out, n1 = {}, []
    for p in paths:
        j = json.load(open(p))
        mine = {}
        for w in j["windows"]:
            insns = w["insns_kernel"] + w["insns_user"]
            for lay in ("full", "series"):
                for m in w["layouts"].get(lay, {}).get("models", []):
                    if m["variant"] != "base" or m["scale"] != 1:
                        continue
                    t = mine.setdefault(m["core"], {}).setdefault(lay, [0, 0])
                    t[0] += sum(m["stats"][c]["l1_miss"] for c in KMODE)
                    t[1] += insns
        n1.append(mine.get("neoverse-n1"))
        out.update(mine)
    return out, n1


def main(argv):
    check = "--check" in argv
    paths = [a for a in argv[1:] if a != "--check"]
    if not paths:
        sys.stderr.write(__doc__)
        return 2
    t, n1 = totals(paths)
    rows = []
    for core in sorted(t, key=lambda c: (c != "neoverse-n1", ENTRIES.index(c) if c in ENTRIES else 99, c)):
        full, ser = t[core].get("full"), t[core].get("series")
        if not full or not ser or not full[1]:
            continue
        f, s = 1000.0 * full[0] / full[1], 1000.0 * ser[0] / ser[1]
        rows.append((core, f, s, 100.0 * (s - f) / f if f else 0.0))
    print("%-14s %12s %12s %10s" % ("core", "full dTLB:k", "series", "change"))
    for r in rows:
        print("%-14s %12.4f %12.4f %+9.1f%%" % r)
    if not check:
        return 0
    bad = []
    for lay in ("full", "series"):
        seq = [(c, t[c][lay][0]) for c in ENTRIES if c in t and lay in t[c]]
        if len(seq) != len(ENTRIES):
            bad.append("%s: %d of the %d L1D sizes replayed" % (lay, len(seq), len(ENTRIES)))
            continue
        for (a, x), (b, y) in zip(seq, seq[1:]):
            if y > x:
                bad.append("%s: %s refilled %d times, more than %s's %d" % (lay, b, y, a, x))
        # The tables were applied at all: 16 entries miss more than 128.
        if seq[0][1] <= seq[-1][1]:
            bad.append("%s: 16 L1D entries refilled no more than 128 (%d, %d)" % (lay, seq[0][1], seq[-1][1]))
    if any(x != n1[0] for x in n1):
        bad.append("the N1's figures differ between replays of one recording")
    for b in bad:
        print("FAIL: " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
