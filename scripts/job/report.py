#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn a guest data block (NAME.data) into JSON and a readable report.

usage: report.py DATA JSON_OUT [LABEL]
       report.py --check JSON ROUNDS
Prints the report on stdout. Exits 1 if the data is incomplete or the
stress reported errors. --check: exit 1 unless the report JSON is complete
and sane (leaves and table pages at every point, table bytes that are
table pages x page size, ROUNDS timed rounds, no error, no problem).
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from linmap_data import KINDS, module, parse  # noqa: E402


def human(n):
    for unit, size in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= size and n % size == 0:
            return "%d%s" % (n // size, unit)
    return str(n)


def mib(b):
    return "%.2f MiB" % (b / 1048576.0)


def counts_of(sec, prefix=""):
    out = {}
    for k in KINDS:
        key = prefix + "all." + k
        if key in sec:
            out[k] = sec[key]
    for k in ("table_pages", "table_bytes", "mapped_bytes"):
        if prefix + k in sec:
            out[k] = sec[prefix + k]
    return out


def check(jpath, nrounds):
    """What is wrong with a report JSON, as a list."""
    r = json.load(open(jpath))
    wrong = []
    for point in ("boot", "during", "after"):
        c = r["counts"].get(point, {})
        if sum(c.get(k, 0) for k in KINDS) <= 0 or not c.get("table_pages"):
            wrong.append("%s: no leaves or table pages" % point)
        else:
            # PTEs and contiguous PTEs live in tables of page_size / 8.
            ptes = c.get("pte", 0) + c.get("cont_pte", 0)
            per = max(r["state"].get("page_size", 0) // 8, 1)
            if c["table_pages"] < -(-ptes // per):
                wrong.append("%s: %d table pages cannot hold %d PTEs"
                             % (point, c["table_pages"], ptes))
    if len(r["rounds_ns"]) != nrounds or not all(x["ro"] for x in r["rounds_ns"]):
        wrong.append("%d timed rounds, wanted %d" % (len(r["rounds_ns"]), nrounds))
    if r["stress"].get("errors") != 0:
        wrong.append("stress errors: %s" % r["stress"].get("errors"))
    return wrong + r["problems"]


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--check":
        wrong = check(sys.argv[2], int(sys.argv[3]))
        for w in wrong:
            print("report: " + w)
        return 1 if wrong else 0
    if len(sys.argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    data, jout = sys.argv[1], sys.argv[2]
    label = sys.argv[3] if len(sys.argv) > 3 else ""
    s = parse(data)
    meta, state = s.get("meta", {}), s.get("state", {})
    stress = s.get("stress", {})
    problems = []
    if module(data) != "loaded":
        problems.append("the test module did not load")
    for need in ("state", "counts.boot", "stress", "counts.after"):
        if need not in s:
            problems.append("missing section [%s]" % need)

    points = {"boot": counts_of(s.get("counts.boot", {})),
              "during": counts_of(stress, "during."),
              "after": counts_of(s.get("counts.after", {}))}
    ps = state.get("page_size", 4096)
    size = {k: s.get("counts.boot", {}).get(k + "_size") for k in KINDS}
    group = {"cont_pte": state.get("cont_ptes", 1),
             "cont_pmd": state.get("cont_pmds", 1)}
    rounds = []
    for i in range(1, int(stress.get("rounds", 0) or 0) + 1):
        r = {f: stress.get("round.%d.%s_ns" % (i, f))
             for f in ("alloc", "ro", "probe", "rw", "free")}
        if any(v is not None for v in r.values()):
            rounds.append(r)
    report = {
        "label": label,
        "meta": meta,
        "state": state,
        "counts": points,
        "stress": {k: v for k, v in stress.items()
                   if not k.startswith(("during.", "round."))},
        "rounds_ns": rounds,
        "meminfo_after_kb": s.get("meminfo.after", {}),
        "problems": problems,
    }
    with open(jout, "w") as f:
        json.dump(report, f, indent=2, sort_keys=True)

    w = sys.stdout.write
    w("Linear-map report %s\n" % (label and "(%s)" % label))
    w("  kernel %s, %s CPUs, MemTotal %s kB, MemFree %s kB\n" % (
        meta.get("kernel"), meta.get("cpus"), meta.get("MemTotal"),
        meta.get("MemFree")))
    w("  cmdline: %s\n" % meta.get("cmdline"))
    w("  page size %d, rodata_full=%s, bbml2=%s, debug_pagealloc=%s, "
      "kfence=%s\n\n" % (ps, state.get("rodata_full"), state.get("bbml2"),
                         state.get("debug_pagealloc"), state.get("kfence")))
    w("  %-22s %12s %12s %12s\n" % ("leaf entries", "boot", "during",
                                    "after"))
    for k in KINDS:
        if size.get(k) is None:
            continue
        name = "%s (%s)" % (k, human(size[k] * group.get(k, 1)))
        w("  %-22s %12s %12s %12s\n" % (name, *[
            points[p].get(k, "-") for p in ("boot", "during", "after")]))
    for key, fmt in (("table_pages", str), ("table_bytes", mib),
                     ("mapped_bytes", mib)):
        w("  %-22s %12s %12s %12s\n" % (key, *[
            fmt(points[p][key]) if key in points[p] else "-"
            for p in ("boot", "during", "after")]))
    w("\n  stress: %s rounds x %s threads, %s pages (%s), errors %s\n" % (
        stress.get("rounds"), stress.get("threads"), stress.get("pages"),
        mib(int(stress.get("pages", 0) or 0) * ps), stress.get("errors")))
    w("  RO enforcement: vmalloc writable while RO %s, alias writable "
      "while RO %s%s, not writable after RW %s\n" % (
          stress.get("vmalloc_writable_when_ro"),
          stress.get("alias_writable_when_ro"),
          "" if stress.get("alias_checked") else
          " (alias not checked: rodata_full=0 leaves it writable)",
          stress.get("not_writable_when_rw")))
    if rounds:
        w("  %-8s %10s %10s %10s %10s %10s   (ms, slowest thread)\n" % (
            "round", "vmalloc", "set_ro", "probes", "set_rw", "vfree"))
        for i, r in enumerate(rounds, 1):
            w("  %-8d %s\n" % (i, " ".join(
                "%10.1f" % ((r[f] or 0) / 1e6)
                for f in ("alloc", "ro", "probe", "rw", "free"))))
    if stress.get("errors"):
        problems.append("stress reported %s errors" % stress.get("errors"))
    for p in problems:
        w("  PROBLEM: %s\n" % p)
    w("  JSON: %s\n" % jout)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
