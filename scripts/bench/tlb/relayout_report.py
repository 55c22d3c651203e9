#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The table of relayout.sh: one recording on several kernels' linear maps.

usage: relayout_report.py WINDOWS NAME=JSON...
  WINDOWS: make bench-tlb's out/tlb/windows (ID=WORKLOAD.RUN lines);
  each JSON a replay with "tlbsim replay --on", its "on" layout NAME's.
  For each workload, the kernel-mode L1 data TLB refills per 1000
  instructions (perf's dTLB-load-misses:k) of a Neoverse N1, median
  [min-max] over its runs: every linear-map page a PTE ("full"), the
  recording kernel's own layout ("recorded"), and each NAME's. Exit 1 if
  a layout maps other RAM than the recording's, or if two replays differ
  in what they share (the same recording must give the same "full").
"""
import json
import statistics
import sys

KMODE = ("kernel_linear", "kernel_other", "kernel_to_user")


def rates(path):
    """{window id: {layout: dTLB:k per 1000 instructions}}"""
    j = json.load(open(path))
    if j.get("on_mismatch"):
        sys.exit("relayout_report.py: %s: the layout maps other RAM than the recording's "
                 "(%d layouts)" % (path, j["on_mismatch"]))
    out = {}
    for w in j["windows"]:
        insns = w["insns_kernel"] + w["insns_user"]
        for lay, v in w["layouts"].items():
            for m in v["models"]:
                if m["core"] == "neoverse-n1" and m["variant"] == "base" and m["scale"] == 1:
                    miss = sum(m["stats"][c]["l1_miss"] for c in KMODE)
                    out.setdefault(w["id"], {})[lay] = 1000.0 * miss / insns if insns else 0.0
    return out


def med(xs):
    return "%.3f [%.3f-%.3f]" % (statistics.median(xs), min(xs), max(xs)) if xs else "-"


def main(argv):
    if len(argv) < 3 or any("=" not in a for a in argv[2:]):
        sys.stderr.write(__doc__)
        return 2
    windows = []
    for line in open(argv[1]):
        if "=" in line:
            i, name = line.strip().split("=", 1)
            windows.append((int(i), name.rsplit(".", 1)[0]))
    names = [a.split("=", 1) for a in argv[2:]]
    got = {n: rates(p) for n, p in names}
    first = names[0][0]
    for n, _ in names[1:]:
        for i, _ in windows:
            a, b = got[first].get(i, {}), got[n].get(i, {})
            for lay in ("full", "series"):
                if a.get(lay) != b.get(lay):
                    sys.exit("relayout_report.py: window %d: %s and %s differ in '%s' "
                             "(not the same recording?)" % (i, first, n, lay))
    workloads = []
    for _, wl in windows:
        if wl not in workloads:
            workloads.append(wl)
    print("| workload | runs | all PTEs (full) | recorded | "
          + " | ".join(n for n, _ in names) + " |")
    print("|---|---:|---:|---:|" + "---:|" * len(names))
    for wl in workloads:
        ids = [i for i, w in windows if w == wl and i in got[first]]
        cols = [med([got[first][i]["full"] for i in ids]),
                med([got[first][i]["series"] for i in ids])]
        cols += [med([got[n][i]["on"] for i in ids if "on" in got[n][i]]) for n, _ in names]
        print("| %s | %d | %s |" % (wl, len(ids), " | ".join(cols)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
