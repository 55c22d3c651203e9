#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The sensitivity table of sweep.sh's replays.

usage: sweep_report.py [--check] JSON...
  For each core of the replays (the N1 as published, and each variant of
  its table), the kernel-mode L1 data TLB refills per 1000 instructions
  (perf's dTLB-load-misses:k) under rodata=full's layout and the series',
  over all windows, and the series' change. Then, for a replay with
  injected invalidations (tlbsim --inject), the same and the walks for
  each kind and rate.
  --check: exit 1 unless, of what the replays hold, the L1D sizes
  behave as LRU must (no more refills with more entries, in each layout:
  the inclusion property of a fully associative LRU level; and fewer
  with 128 than with 16), the
  N1 figure is the same in every replay, and injections behave as they
  must: an emptied LRU level holds a subset of what it would have held,
  so no fewer L1 refills at a higher rate than at a lower one or none;
  and both kinds empty the L1s at the same points, so the same L1
  refills at one rate.
"""
import json
import sys

KMODE = ("kernel_linear", "kernel_other", "kernel_to_user")
ENTRIES = ["l1d-16", "l1d-32", "neoverse-n1", "l1d-64", "l1d-96", "l1d-128"]


def models(j):
    """(layout, model, instructions) for each rodata=full and series model
    of each window of one replay."""
    for w in j["windows"]:
        insns = w["insns_kernel"] + w["insns_user"]
        for lay in ("full", "series"):
            for m in w["layouts"].get(lay, {}).get("models", []):
                yield lay, m, insns


def kernel(m, what):
    """A model's kernel-mode data l1_miss or walk count."""
    return sum(m["stats"][c][what] for c in KMODE)


def totals(replays):
    """{core: {layout: [kernel l1 misses, instructions]}}, one per replay for the N1."""
    out, n1 = {}, []
    for j in replays:
        mine = {}
        for lay, m, insns in models(j):
            if m["variant"] != "base" or m["scale"] != 1:
                continue
            t = mine.setdefault(m["core"], {}).setdefault(lay, [0, 0])
            t[0] += kernel(m, "l1_miss")
            t[1] += insns
        n1.append(mine.get("neoverse-n1"))
        out.update(mine)
    return out, n1


def injected(replays):
    """{(kind, rate): {layout: [kernel l1 misses, walks, instructions]}},
    the N1 without injection as ("none", 0), from the replays that inject."""
    out = {}
    for j in replays:
        if not any(m["variant"].startswith("inject_") for _, m, _ in models(j)):
            continue
        for lay, m, insns in models(j):
            v = m["variant"]
            if m["core"] != "neoverse-n1" or m["scale"] != 1:
                continue
            if v == "base":
                key = ("none", 0.0)
            elif v.startswith("inject_"):
                kind, rate = v[len("inject_"):].split("@")
                key = (kind, float(rate))
            else:
                continue
            t = out.setdefault(key, {}).setdefault(lay, [0, 0, 0])
            t[0] += kernel(m, "l1_miss")
            t[1] += kernel(m, "walk")
            t[2] += insns
    return out


def inject_table(inj):
    """Prints the injection table; returns the --check failures."""
    print()
    print("%-14s %12s %12s %10s %12s %12s %10s" % (
        "injected", "full dTLB:k", "series", "change", "full walks", "series", "change"))
    for key in sorted(inj, key=lambda k: (k[0] != "none", k[0], k[1])):
        full, ser = inj[key].get("full"), inj[key].get("series")
        if not full or not ser or not full[2]:
            continue
        f, s = 1000.0 * full[0] / full[2], 1000.0 * ser[0] / ser[2]
        fw, sw = 1000.0 * full[1] / full[2], 1000.0 * ser[1] / ser[2]
        print("%-14s %12.4f %12.4f %+9.1f%% %12.4f %12.4f %+9.1f%%" % (
            "none" if key[0] == "none" else "%s@%g" % key, f, s,
            100.0 * (s - f) / f if f else 0.0, fw, sw, 100.0 * (sw - fw) / fw if fw else 0.0))
    bad = []
    rates = sorted({r for k, r in inj if k != "none"})
    for lay in ("full", "series"):
        for kind in ("all", "l1"):
            seq = [("none", inj.get(("none", 0.0), {}).get(lay))] + \
                [("%s@%g" % (kind, r), inj.get((kind, r), {}).get(lay)) for r in rates]
            seq = [(n, t) for n, t in seq if t]
            for (a, x), (b, y) in zip(seq, seq[1:]):
                if y[0] < x[0]:
                    bad.append("%s: %s refilled the L1 %d times, fewer than %s's %d" % (lay, b, y[0], a, x[0]))
        for r in rates:
            a, b = inj.get(("all", r), {}).get(lay), inj.get(("l1", r), {}).get(lay)
            if a and b and a[0] != b[0]:
                bad.append("%s: all@%g and l1@%g refilled the L1 %d and %d times" % (lay, r, r, a[0], b[0]))
    return bad


def main(argv):
    check = "--check" in argv
    paths = [a for a in argv[1:] if a != "--check"]
    if not paths:
        sys.stderr.write(__doc__)
        return 2
    replays = [json.load(open(p)) for p in paths]
    t, n1 = totals(replays)
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
    inj = injected(replays)
    bad = inject_table(inj) if inj else []
    if not check:
        return 0
    # The L1D sizes, where the replays hold them (sweep.sh's entries.json).
    sized = any(c in t for c in ENTRIES if c != "neoverse-n1")
    for lay in ("full", "series") if sized else ():
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
