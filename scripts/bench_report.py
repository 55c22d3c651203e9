#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the guests' data blocks of 'make bench' into a report.

usage: bench_report.py DIR "MEMS"
Reads DIR/<setup>-<mem>.data, writes DIR/report.md, DIR/bench.json and
DIR/*.png (gnuplot). Exits 1 if a figure is missing or not sane: zero, or
inconsistent with the leaf counts it came with.
"""
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report import KINDS, parse  # noqa: E402

SETUPS = [
    ("full-unpatched", "unpatched 6.12, rodata=full"),
    ("full-patched", "patched, rodata=full, BBML2"),
    ("on-unpatched", "unpatched 6.12, rodata=on (floor)"),
]
BLOCKS = ("pud", "cont_pmd", "pmd")
problems = []


def problem(msg):
    problems.append(msg)
    print("bench: " + msg, file=sys.stderr)


def counts(sec, prefix=""):
    """Leaf entries, bytes per kind, table pages/bytes of a counts block."""
    c = {"n": {}, "bytes": {}}
    for k in KINDS:
        if prefix + "all." + k in sec:
            c["n"][k] = sec[prefix + "all." + k]
            c["bytes"][k] = sec[prefix + "all." + k + "_bytes"]
    for k in ("table_pages", "table_bytes", "mapped_bytes"):
        c[k] = sec.get(prefix + k)
    return c


def sane_counts(name, c, page_size, mem_kb=None):
    if not c["n"] or c["table_pages"] in (None, 0):
        problem("%s: no leaf or table counts" % name)
        return
    if c["table_bytes"] != c["table_pages"] * page_size:
        problem("%s: table_bytes %s != table_pages %s x %d"
                % (name, c["table_bytes"], c["table_pages"], page_size))
    if sum(c["bytes"].values()) != c["mapped_bytes"]:
        problem("%s: mapped bytes disagree with the leaves" % name)
    if mem_kb and c["mapped_bytes"] < mem_kb * 1024:
        problem("%s: maps %d bytes, less than MemTotal" % (name, c["mapped_bytes"]))
    # PTE and contiguous PTE entries live in PTE tables of PTRS_PER_PTE.
    ptes = c["n"].get("pte", 0) + c["n"].get("cont_pte", 0)
    if c["table_pages"] < -(-ptes // (page_size // 8)):
        problem("%s: %d table pages cannot hold %d PTEs"
                % (name, c["table_pages"], ptes))


def block_share(c):
    total = c["mapped_bytes"] or 1
    blocks = sum(c["bytes"].get(k, 0) for k in BLOCKS)
    cont = c["bytes"].get("cont_pte", 0)
    return 100.0 * blocks / total, 100.0 * (blocks + cont) / total


def med(xs):
    return statistics.median(xs) if xs else 0


def load(d, name):
    path = os.path.join(d, name + ".data")
    if not os.path.exists(path):
        problem("%s: no data (see %s.log)" % (name, name))
        return None
    data = parse(path)
    if data.get("end", {}).get("rc") != "0":
        problem("%s: the guest job failed (see %s.log)" % (name, name))
    return data


def setmem(sec):
    out = {}
    sizes = str(sec.get("pages", "")).split(":") if sec else []
    for s in sizes:
        if not s:
            continue
        p = int(s)
        if sec.get("size.%d.ret" % p) != 0:
            problem("set_memory of %d pages failed: %s" % (p, sec.get("size.%d.ret" % p)))
            continue

        def lst(key):
            v = str(sec.get("size.%d.%s" % (p, key), ""))
            return [int(x) for x in v.split(":") if x]
        ro, rw = lst("ro_ns"), lst("rw_ns")
        pair = [a + b for a, b in zip(ro, rw)]
        out[p] = {
            "first_ro_ns": sec.get("size.%d.first_ro_ns" % p),
            "first_rw_ns": sec.get("size.%d.first_rw_ns" % p),
            "ro_ns": ro, "rw_ns": rw,
            "pair_median_ns": med(pair),
            "pair_min_ns": min(pair) if pair else 0,
            "pair_max_ns": max(pair) if pair else 0,
        }
        if not pair or min(pair) <= 0 or not out[p]["first_ro_ns"]:
            problem("set_memory of %d pages: no timings" % p)
    return out


def gnuplot(script):
    try:
        subprocess.run(["gnuplot"], input=script.encode(), check=True,
                       stderr=subprocess.PIPE)
    except (OSError, subprocess.CalledProcessError) as e:
        problem("gnuplot failed: %s" % getattr(e, "stderr", e))


def main():
    d, mems = sys.argv[1], sys.argv[2].split()
    res = {"mems": mems, "memory": {}, "fragmentation": {}, "setmem": {},
           "targets": {}, "not_measured": {}}
    page_size = 4096
    for mem in mems:
        res["memory"][mem] = {}
        for setup, _ in SETUPS:
            data = load(d, "%s-%s" % (setup, mem))
            if not data:
                continue
            page_size = data.get("state", {}).get("page_size", page_size)
            meta = data.get("meta", {})
            c = counts(data.get("counts.boot", {}))
            sane_counts("%s-%s" % (setup, mem), c, page_size, meta.get("MemTotal"))
            if not meta.get("MemTotal") or not meta.get("MemFree"):
                problem("%s-%s: no MemTotal/MemFree" % (setup, mem))
            res["memory"][mem][setup] = {
                "MemTotal_kB": meta.get("MemTotal"), "MemFree_kB": meta.get("MemFree"),
                "leaves": c["n"], "table_pages": c["table_pages"],
                "table_bytes": c["table_bytes"], "mapped_bytes": c["mapped_bytes"],
            }
            if mem == "4G" and setup != "on-unpatched":
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
                res["fragmentation"][setup] = {
                    "boot": c, "boot_block_share_pct": block_share(c)[0],
                    "rounds": rounds}
                res["setmem"][setup] = setmem(data.get("setmem"))

    # Targets, from the figures; a miss is reported, never tuned away.
    t = res["targets"]
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
    sm = res["setmem"]
    if "full-patched" in sm and "full-unpatched" in sm:
        for p in sorted(sm["full-patched"]):
            a, b = sm["full-patched"][p], sm["full-unpatched"].get(p)
            if b and b["pair_median_ns"]:
                r = a["pair_median_ns"] / b["pair_median_ns"]
                t["steady_setmem_not_slower_%d" % p] = {
                    "ratio_patched_to_unpatched": round(r, 3), "met": r <= 1.0}
    res["not_measured"] = {
        "barriers_per_batch": "needs a test-only DSB/ISB counter in both kernels",
        "map_mem_icount": "needs test-only instrumentation of map_mem() in both kernels",
        "repaint_time": "needs test-only instrumentation of the repaint",
    }
    res["problems"] = problems
    json.dump(res, open(os.path.join(d, "bench.json"), "w"), indent=1, sort_keys=True)
    charts(d, res)
    write_md(d, res)
    return 1 if problems else 0


def charts(d, res):
    mems = [m for m in res["mems"] if res["memory"].get(m)]
    if mems:
        with open(os.path.join(d, "tables.dat"), "w") as f:
            for m in mems:
                row = [m.rstrip("G")]
                for s, _ in SETUPS:
                    tb = res["memory"][m].get(s, {}).get("table_bytes")
                    row.append("%.3f" % (tb / 1048576.0) if tb else "NaN")
                f.write(" ".join(row) + "\n")
        gnuplot("""set terminal png size 800,500 noenhanced
set output '%s/tables.png'
set title 'Linear-map page tables at boot (4K pages)'
set xlabel 'RAM (GiB)'
set ylabel 'page-table MiB'
set logscale xy
set key top left
set grid
plot '%s/tables.dat' using 1:2 with linespoints title '%s', \\
     '' using 1:3 with linespoints title '%s', \\
     '' using 1:4 with linespoints title '%s'
""" % (d, d, SETUPS[0][1], SETUPS[1][1], SETUPS[2][1]))
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


def write_md(d, res):
    L = []
    w = L.append
    w("# Linear map benchmark: unpatched 6.12 against the series\n")
    w("Produced by `make bench` (figures in `bench.json`). 4K pages, the kit's "
      "test config for both kernels, QEMU TCG `-cpu max`; every boot has a "
      "KFENCE pool set up at boot (`kfence.sample_interval=1000000`). The "
      "patched kernel claims BBML2_NOABORT on all CPUs (`bbml2_test=all`).\n")
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
    w("## Targets\n")
    for k, v in sorted(res["targets"].items()):
        if isinstance(v, dict) and "met" in v:
            w("- %s: %s — %s" % (k, "met" if v["met"] else "**missed**",
                                 ", ".join("%s=%s" % (a, b) for a, b in sorted(v.items())
                                           if a != "met")))
        else:
            w("- %s: %s" % (k, v))
    for k, v in sorted(res["not_measured"].items()):
        w("- %s: not measured here (%s)" % (k, v))
    w("")
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
    if res["problems"]:
        w("## Problems\n")
        for p in res["problems"]:
            w("- " + p)
    open(os.path.join(d, "report.md"), "w").write("\n".join(L) + "\n")
    print("\n".join(L))


if __name__ == "__main__":
    sys.exit(main())
