#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The table of relayout.sh: one recording on several kernels' linear maps.

usage: relayout_report.py WINDOWS NAME=JSON...
  WINDOWS: make bench-tlb's out/tlb/windows (ID=WORKLOAD.RUN lines);
  each JSON a replay with "tlbsim replay --on", its "on" layout NAME's.
  For each workload, the kernel-mode L1 data TLB refills per 1000
  instructions (perf's dTLB-load-misses:k) of a Neoverse N1, median
  [min-max] over its runs: every linear-map page a PTE ("full"), the
  recording kernel's own layout ("recorded"), and each NAME's. Another
  kernel's linear map may cover a little more or less RAM than the
  recording kernel's (its own reserved, unmapped ranges): the difference
  is printed, and over 1% of the linear map is refused, as are two
  replays that differ in what they share (the same recording must give
  the same "full").
"""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report import figures, model_key  # noqa: E402


def rates(path, diffs=None):
    """{window id: {layout: dTLB:k per 1000 instructions}}; the bytes by
    which the "on" layout's linear map differs from the recording's are
    added to the list diffs."""
    j = json.load(open(path))
    out = {}
    for w in j["windows"]:
        d = w.get("on_linear_bytes", 0) - w["linear_bytes"]
        if w.get("on_linear_bytes") and abs(d) > w["linear_bytes"] / 100:
            sys.exit("relayout_report.py: %s: the layout maps %d bytes of linear map against "
                     "the recording's %d" % (path, w["on_linear_bytes"], w["linear_bytes"]))
        if diffs is not None:
            diffs.append(d)
        for lay, v in w["layouts"].items():
            for m in v["models"]:
                if model_key(m) == "base":
                    out.setdefault(w["id"], {})[lay] = figures(w, m["stats"])["dtlb_k"]
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
    diffs = {n: [] for n, _ in names}
    got = {n: rates(p, diffs[n]) for n, p in names}
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
    print()
    for n, _ in names:
        d = max(diffs[n], key=abs) if diffs[n] else 0
        print("%s's linear map covers %+d KiB against the recording kernel's%s." % (
            n, d // 1024, "" if not d else " (ranges one kernel keeps out of its map)"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
