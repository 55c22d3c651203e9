# SPDX-License-Identifier: GPL-2.0
"""Memory right after boot and fragmentation over the stress rounds, with
the charts of both."""
import os

from linmap_data import KINDS
from .common import (
    SETUPS,
    block_share,
    counts,
    gnuplot,
    line_chart,
    load,
    problem,
    sane_counts,
    setmem,
)


def memory_setups(d, mem, res):
    """Memory after boot per setup; at 4G, the stress rounds and setmem."""
    res["memory"][mem] = {}
    for setup, _ in SETUPS:
        name = "%s-%s" % (setup, mem)
        data = load(d, name)
        if not data:
            continue
        res["page_size"] = data.get("state", {}).get("page_size", res["page_size"])
        meta = data.get("meta", {})
        c = counts(data.get("counts.boot", {}))
        sane_counts(name, c, res["page_size"], meta.get("MemTotal"))
        if not meta.get("MemTotal") or not meta.get("MemFree"):
            problem("%s: no MemTotal/MemFree" % name)
        res["memory"][mem][setup] = {
            "MemTotal_kB": meta.get("MemTotal"), "MemFree_kB": meta.get("MemFree"),
            "leaves": c["n"], "table_pages": c["table_pages"],
            "table_bytes": c["table_bytes"], "mapped_bytes": c["mapped_bytes"],
        }
        if mem == "4G" and setup != "on-unpatched":
            res["fragmentation"][setup] = {
                "boot": c, "boot_block_share_pct": block_share(c)[0],
                "rounds": stress_rounds(setup, data, res["page_size"])}
            res["setmem"][setup] = setmem(data.get("setmem"))


def stress_rounds(setup, data, page_size):
    """The map during and after each stress round of one boot."""
    rounds = []
    i = 1
    while "counts.round.%d" % i in data:
        during = counts(data.get("stress.%d" % i, {}), "during.")
        after = counts(data["counts.round.%d" % i])
        sane_counts("%s round %d" % (setup, i), after, page_size)
        rounds.append({"during": during, "after": after,
                       "block_share_pct": block_share(after)[0],
                       "block_cont_share_pct": block_share(after)[1]})
        i += 1
    return rounds


def memory_targets(res, t):
    """Page tables within 1% of the rodata=on floor; MemFree gained."""
    mems = res["mems"]
    for mem in mems:
        m = res["memory"].get(mem, {})
        if all(s in m for s, _ in SETUPS):
            p, u, f = m["full-patched"], m["full-unpatched"], m["on-unpatched"]
            pct = 100.0 * (p["table_bytes"] - f["table_bytes"]) / f["table_bytes"]
            t["tables_within_1pct_of_floor_" + mem] = {
                "patched_bytes": p["table_bytes"], "floor_bytes": f["table_bytes"],
                "diff_pct": round(pct, 2), "met": abs(pct) <= 1.0}
            gain = (p["MemFree_kB"] - u["MemFree_kB"]) / 1024.0
            t["memfree_gain_MiB_" + mem] = round(gain, 1)
    if "256G" in mems and "memfree_gain_MiB_256G" in t:
        t["memfree_gain_500MB_at_256G"] = {
            "gain_MB": round(t["memfree_gain_MiB_256G"] * 1.048576, 1),
            "met": t["memfree_gain_MiB_256G"] * 1.048576 >= 500}


def charts(d, res):
    mems = [m for m in res["mems"] if res["memory"].get(m)]
    rows = []
    for m in mems:
        tbs = [res["memory"][m].get(s, {}).get("table_bytes") for s, _ in SETUPS]
        rows.append([m.rstrip("G")] + [tb / 1048576.0 if tb else None for tb in tbs])
    line_chart(d, "tables", "Linear-map page tables at boot (4K pages)",
               "page-table MiB", rows, [label for _, label in SETUPS])
    bc = res["boot_cost"]
    cols = [("ic-full-unpatched", "map_mem", "unpatched 6.12 map_mem, rodata=full"),
            ("ic-full-patched", "map_mem", "patched map_mem, rodata=full, BBML2"),
            ("ic-on-unpatched", "map_mem", "unpatched 6.12 map_mem, rodata=on"),
            ("ic-repaint", "repaint", "patched repaint (BBML2 on the boot CPU only)")]
    rows = []
    for m in res["mems"]:
        if bc.get(m):
            vs = [(bc[m].get(setup) or {}).get(step) for setup, step, _ in cols]
            rows.append([m.rstrip("G")] + [v["insns"] / 1e6 if v else None for v in vs])
    line_chart(d, "boot_cost", "Building the linear map (QEMU -icount, 4K pages)",
               "million instructions", rows, [c[2] for c in cols])
    fr = res["fragmentation"].get("full-patched")
    if fr and fr["rounds"]:
        points = [("boot", fr["boot"]), ("during 1", fr["rounds"][0]["during"])]
        points += [("after %d" % (i + 1), r["after"]) for i, r in enumerate(fr["rounds"])]
        with open(os.path.join(d, "leaves.dat"), "w") as f:
            f.write("point " + " ".join(KINDS) + "\n")
            for label, c in points:
                total = sum(c["bytes"].values()) or 1
                f.write('"%s" ' % label + " ".join(
                    "%.2f" % (100.0 * c["bytes"].get(k, 0) / total) for k in KINDS) + "\n")
        gnuplot("""set terminal png size 900,500 noenhanced
set output '%s/leaves.png'
set title 'Patched, rodata=full: share of the linear map by leaf size (4G)'
set ylabel '%% of mapped bytes'
set style data histograms
set style histogram rowstacked
set style fill solid 0.8 border -1
set boxwidth 0.7
set key outside right
set yrange [0:100]
plot for [i=2:6] '%s/leaves.dat' using i:xtic(1) title columnheader(i)
""" % (d, d))


def write_memory(w, res):
    w("## Memory right after boot\n")
    w("| RAM | setup | MemTotal MiB | MemFree MiB | table pages | table MiB | "
      + " | ".join(KINDS) + " |")
    w("|---|---|---|---|---|---|" + "---|" * len(KINDS))
    for m in res["mems"]:
        for s, label in SETUPS:
            r = res["memory"].get(m, {}).get(s)
            if not r:
                w("| %s | %s | missing | | | |%s" % (m, label, " |" * len(KINDS)))
                continue
            w("| %s | %s | %.1f | %.1f | %d | %.2f | %s |" % (
                m, label, r["MemTotal_kB"] / 1024.0, r["MemFree_kB"] / 1024.0,
                r["table_pages"], r["table_bytes"] / 1048576.0,
                " | ".join(str(r["leaves"].get(k, 0)) for k in KINDS)))
    w("\n![page tables against RAM](tables.png)\n")


def write_fragmentation(w, res):
    fr = res["fragmentation"]
    if fr:
        w("## Fragmentation over stress rounds (4G)\n")
        w("Each round: vmalloc 80% of free memory, set_memory_ro, probe, "
          "set_memory_rw, vfree.\n")
        w("| setup | point | table pages | table MiB | blocks % | blocks+cont PTE % |")
        w("|---|---|---|---|---|---|")
        for s, label in SETUPS:
            f = fr.get(s)
            if not f:
                continue
            b = block_share(f["boot"])
            w("| %s | boot | %d | %.2f | %.1f | %.1f |" % (
                label, f["boot"]["table_pages"], f["boot"]["table_bytes"] / 1048576.0, b[0], b[1]))
            for i, r in enumerate(f["rounds"]):
                a = r["after"]
                w("| %s | after round %d | %d | %.2f | %.1f | %.1f |" % (
                    label, i + 1, a["table_pages"], a["table_bytes"] / 1048576.0,
                    r["block_share_pct"], r["block_cont_share_pct"]))
        w("\n![leaf sizes](leaves.png)\n")
