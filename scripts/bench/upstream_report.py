#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""make bench-upstream's report: the linear map of each kernel after each
phase of the guest job 'life', side by side, with series / upstream.

usage: upstream_report.py DIR LARGE_MEM NAME[:4G]...
  DIR holds NAME-4G.data and, if LARGE_MEM is given, NAME-LARGE_MEM.data
  for each kernel NAME (series first, upstream second) but those marked
  :4G, which boot at 4 GiB only.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import linmap_data  # noqa: E402

PHASES = ["boot", "modules", "bpf_jit", "secretmem", "churn", "idle"]
# Row label, and the value from a [life.PHASE] section's keys.
METRICS = [
    ("PUD leaves (1G)", lambda s: s.get("all.pud", 0)),
    ("PMD leaves (2M)", lambda s: s.get("all.pmd", 0) + s.get("all.cont_pmd", 0)),
    ("PTE leaves (4K)", lambda s: s.get("all.pte", 0) + s.get("all.cont_pte", 0)),
    ("... of them contiguous", lambda s: s.get("all.cont_pte", 0)),
    ("table pages", lambda s: s.get("table_pages", 0)),
    ("MemFree (kB)", lambda s: s.get("MemFree", 0)),
]


def ratio(a, b):
    if not isinstance(a, int) or not isinstance(b, int) or not b:
        return ""
    return "%.3f" % (a / b)


def table(head, rows):
    if not rows:
        return "(no figures)"
    cols = list(zip(*([head] + rows)))
    width = [max(len(str(c)) for c in col) for col in cols]
    rule = "  ".join("=" * w for w in width)
    line = lambda r: "  ".join(str(c).ljust(w) for c, w in zip(r, width)).rstrip()
    out = [rule, line(head), rule]
    out += [line(r) for r in rows]
    out.append(rule)
    return "\n".join(out)


def load(path):
    if not os.path.exists(path):
        return None, "no data (the guest did not finish; see its log)"
    d = linmap_data.parse(path)
    return d, None


def phase_rows(data, names, phases):
    rows = []
    for ph in phases:
        secs = [d.get("life." + ph) if d else None for d in data]
        if not any(secs):
            continue
        for label, f in METRICS:
            vals = [f(s) if s else "-" for s in secs]
            row = ["%s: %s" % (ph, label), vals[0], vals[1] if len(vals) > 1 else "-",
                   ratio(vals[0], vals[1]) if len(vals) > 1 else ""]
            row += vals[2:]
            rows.append(row)
        bad = ["%s %s" % (n, s.get("status")) for n, s in zip(names, secs)
               if s and s.get("status") != "ok"]
        missing = [n for n, s in zip(names, secs) if not s]
        if bad or missing:
            rows.append(["%s: not as planned" % ph, "; ".join(bad + ["%s: no record" % m for m in missing]),
                         "", ""] + [""] * (len(names) - 2))
    return rows


def main(argv):
    if len(argv) < 4:
        sys.stderr.write(__doc__)
        return 2
    out, large = argv[1], argv[2]
    only4g = [n[:-3] for n in argv[3:] if n.endswith(":4G")]
    every = [n for n in argv[3:] if not n.endswith(":4G")]
    ok = True
    for mem, phases, names in (("4G", PHASES, every + only4g), (large, ["boot"], every)):
        if not mem or not names:
            continue
        head = ["", names[0], names[1] if len(names) > 1 else "-", "ratio"] + names[2:]
        data = []
        for n in names:
            d, why = load(os.path.join(out, "%s-%s.data" % (n, mem)))
            if why:
                print("%s at %s: %s" % (n, mem, why))
                ok = False
            data.append(d)
        title = "At %s: the linear map after each phase" % mem if len(phases) > 1 \
            else "At %s: the linear map at boot" % mem
        print(title)
        print("-" * len(title))
        print()
        print(table(head, phase_rows(data, names, phases)))
        print()
        if len(phases) > 1:
            # What each kernel did in the same time: the churn's own counts.
            rows = []
            for key, sec in (("jit_filters", "life.bpf_jit"), ("bpf_jit_enable", "life.bpf_jit"),
                             ("rounds", "churn"), ("ops", "churn"), ("module_cycles", "churn"),
                             ("cpu_cycles", "churn"), ("failures", "churn")):
                vals = [d.get(sec, {}).get(key, "-") if d else "-" for d in data]
                if all(v == "-" for v in vals):
                    continue
                rows.append(["%s %s" % (sec, key), vals[0], vals[1] if len(vals) > 1 else "-",
                             ratio(vals[0], vals[1]) if len(vals) > 1 else ""] + vals[2:])
            print(table(head, rows))
            print()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
