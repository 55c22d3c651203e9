# SPDX-License-Identifier: GPL-2.0
"""set_memory_ro + set_memory_rw on a vmalloc area, by the clock and under
-icount."""
from .common import problem, setmem


def setmem_icount(name, data, cdata):
    """setmem timings of the -icount boot with the counting boot's writes."""
    sm = setmem(data["setmem"])
    counted = setmem(cdata.get("setmem"), counted=True)
    if sm and not counted:
        problem("cnt-%s: no set_memory counts" % name)
    for p in sm:
        for key in ("first_ro", "first_rw", "ro", "rw"):
            sm[p][key + "_pgt"] = counted.get(p, {}).get(key + "_pgt", [])
    return sm


def setmem_targets(res, t):
    """Steady set_memory not slower; one barrier pair per batch."""
    for tag, sm, pre in (("wall", res["setmem"], ""), ("icount", res["setmem_icount"], "ic-")):
        a_all, b_all = sm.get(pre + "full-patched"), sm.get(pre + "full-unpatched")
        if not a_all or not b_all:
            continue
        for p in sorted(a_all):
            a, b = a_all[p], b_all.get(p)
            if b and b["pair_median_ns"]:
                r = a["pair_median_ns"] / b["pair_median_ns"]
                t["steady_setmem_not_slower_%s_%d" % (tag, p)] = {
                    "ratio_patched_to_unpatched": round(r, 3), "met": r <= 1.0}
            # One barrier pair per batch (lazy MMU section), not per entry.
            calls = a.get("ro_pgt", []) + a.get("rw_pgt", [])
            if tag == "icount" and calls:
                worst = max(calls, key=lambda x: x[1] - x[2])
                t["barriers_one_pair_per_batch_%d" % p] = {
                    "entries": worst[0], "barrier_pairs": worst[1],
                    "batches": worst[2],
                    "unpatched_barrier_pairs": max(x[1] for x in b.get("ro_pgt", []) + [(0, 0, 0)]),
                    "met": worst[1] <= worst[2]}


def write_setmem(w, res):
    sm = res["setmem"]
    if sm:
        w("## set_memory_ro + set_memory_rw on a vmalloc area (4G)\n")
        w("First: a fresh area (includes any split). Steady: median [min-max] "
          "of the repetitions on the same area, in microseconds. Ratio: "
          "patched / unpatched steady medians. Timings under TCG are noisy.\n")
        w("| pages | unpatched first | unpatched steady | patched first | patched steady | ratio |")
        w("|---|---|---|---|---|---|")
        for p in sorted(set(sm.get("full-patched", {})) | set(sm.get("full-unpatched", {}))):
            cells = []
            for s in ("full-unpatched", "full-patched"):
                x = sm.get(s, {}).get(p)
                if not x:
                    cells += ["-", "-"]
                    continue
                cells.append("%.0f" % ((x["first_ro_ns"] + x["first_rw_ns"]) / 1000.0))
                cells.append("%.0f [%.0f-%.0f]" % (x["pair_median_ns"] / 1000.0,
                                                   x["pair_min_ns"] / 1000.0,
                                                   x["pair_max_ns"] / 1000.0))
            a = sm.get("full-patched", {}).get(p)
            b = sm.get("full-unpatched", {}).get(p)
            ratio = "%.2f" % (a["pair_median_ns"] / b["pair_median_ns"]) if a and b and b["pair_median_ns"] else "-"
            w("| %d | %s | %s |" % (p, " | ".join(cells), ratio))
        w("")


def write_setmem_icount(w, res):
    sm = res["setmem_icount"]
    if not sm:
        return
    a_all, b_all = sm.get("ic-full-patched", {}), sm.get("ic-full-unpatched", {})
    w("## set_memory_ro + set_memory_rw under -icount (4G)\n")
    w("Thousands of instructions per ro+rw pair (first, then the steady "
      "median [min-max]), and the page-table writes of one steady "
      "set_memory_ro call: entries / barrier pairs / batches.\n")
    w("| pages | unpatched first | unpatched steady | unpatched ro writes | "
      "patched first | patched steady | patched ro writes | ratio |")
    w("|---|---|---|---|---|---|---|---|")
    for p in sorted(set(a_all) | set(b_all)):
        cells = []
        for x in (b_all.get(p), a_all.get(p)):
            if not x:
                cells += ["-", "-", "-"]
                continue
            cells.append("%.1f" % ((x["first_ro_ns"] + x["first_rw_ns"]) / 1000.0))
            cells.append("%.1f [%.1f-%.1f]" % (x["pair_median_ns"] / 1000.0,
                                               x["pair_min_ns"] / 1000.0,
                                               x["pair_max_ns"] / 1000.0))
            ro = x.get("ro_pgt")
            cells.append("%d / %d / %d" % ro[-1] if ro else "-")
        a, b = a_all.get(p), b_all.get(p)
        ratio = "%.3f" % (a["pair_median_ns"] / b["pair_median_ns"]) if a and b and b["pair_median_ns"] else "-"
        w("| %d | %s | %s |" % (p, " | ".join(cells), ratio))
    w("")
