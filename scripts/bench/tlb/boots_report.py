#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The spread between boots of make bench-tlb (boots.sh).

usage: boots_report.py DIR...
  Each DIR is one boot's TLB_OUT (its tlb.json, report.py's). For each
  workload: per boot, the median over its windows of the series' change
  against rodata=full in kernel-mode L1 data refills (dTLB:k), with the
  range of its windows; then the spread of those medians between boots,
  and the same over every window of every boot. Where the plugin counted
  PRFM, the bound it puts on the change (each kernel PRFM one refill in
  rodata=full and none in the series, or one in both), and those it left
  out as the LL/SC atomics' (before an exclusive load of their address),
  or "not told apart" for a boot whose plugin counted them in.
"""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report import change, per_k, unseen_bounds  # noqa: E402


def pct(x):
    return "-" if x is None else "%+.1f%%" % x


def rng(xs):
    return "%s [%s, %s]" % (pct(statistics.median(xs)), pct(min(xs)), pct(max(xs)))


def main(argv):
    dirs = argv[1:]
    if not dirs:
        sys.stderr.write(__doc__)
        return 2
    boots = []
    for d in dirs:
        path = os.path.join(d, "tlb.json")
        if not os.path.exists(path):
            sys.stderr.write("boots_report.py: no %s (not a make bench-tlb directory?)\n" % path)
            return 1
        boots.append((d, json.load(open(path))))
    workloads = sorted({wl for _, j in boots for wl in j})
    print("| workload | boot | windows | dTLB:k full | series vs full, median [range of windows] "
          "| kernel PRFMs per 1000 insns | with PRFM: series none / both |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for wl in workloads:
        meds, every = [], []
        for d, j in boots:
            runs = j.get(wl, [])
            if not runs:
                continue
            ch, full, hi, lo, ps, ex = [], [], [], [], [], []
            for r in runs:
                f = r["models"]["base"]["full"]["dtlb_k"]
                s = r["models"]["base"]["series"]["dtlb_k"]
                ch.append(change(f, s))
                full.append(f)
                if r.get("prfm") is not None:
                    p = per_k(r["prfm"][1], r["insns"])
                    ps.append(p)
                    if r.get("prfm_excl") is not None:
                        ex.append(per_k(r["prfm_excl"][1], r["insns"]))
                    h, low = unseen_bounds(f, s, p)
                    hi.append(h)
                    lo.append(low)
            meds.append(statistics.median(ch))
            every += ch
            print("| %s | %s | %d | %.4f | %s | %s | %s |" % (
                wl, os.path.basename(os.path.normpath(d)), len(runs), statistics.median(full), rng(ch),
                ("%.4f (%s)" % (statistics.median(ps), "%.4f left out" % statistics.median(ex)
                                if ex else "LL/SC ones not told apart")) if ps else "not counted",
                "%s / %s" % (pct(statistics.median(hi)), pct(statistics.median(lo))) if ps else "-"))
        if len(meds) > 1:
            print("| %s | between boots: median of the boots' medians [lowest, highest] | %d boots | | %s | | |"
                  % (wl, len(meds), rng(meds)))
        print("| %s | every window of every boot | %d | | %s | | |" % (wl, len(every), rng(every)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
