# SPDX-License-Identifier: GPL-2.0
"""Collapse: fragmentation with and without it, the cost of a pass, and
the heal workload over virtual time."""
import os

from .common import HEAL_SETUPS, gnuplot, load, problem


def collapse_rounds_target(res, t):
    """With collapse, each round ends as the boot began (within 1%)."""
    f = res["fragmentation"].get("full-patched")
    if not f or not f["rounds"]:
        return
    boot_share, boot_tables = f["boot_block_share_pct"], f["boot"]["table_pages"]
    drop = max(boot_share - r["block_share_pct"] for r in f["rounds"])
    extra = max(r["after"]["table_pages"] - boot_tables for r in f["rounds"])
    t["collapse_rounds_4G"] = {
        "boot_block_share_pct": round(boot_share, 2), "max_share_drop_pct": round(drop, 2),
        "boot_table_pages": boot_tables, "max_extra_table_pages": extra,
        "met": drop <= 1.0 and extra <= 0}


def collapse_cost(d, res, t):
    """Instructions of a full collapse pass per table it folds (-icount)."""
    data = load(d, "ic-full-patched-4G")
    sec = (data or {}).get("collapse_cost")
    if not sec:
        if data is not None:
            problem("ic-full-patched-4G: no collapse_cost block")
        return None
    out = {k: sec.get(k) for k in ("blocks", "taken", "split_errors", "tables_split",
                                   "tables_folded", "pass_ns", "empty_pass_ns",
                                   "fold_ns", "empty_fold_ns",
                                   "ns_per_table_folded", "pass_ret")}
    if not out["tables_folded"] or out["split_errors"] or out["pass_ret"]:
        problem("ic-full-patched-4G: collapse cost not sane: %s" % out)
    elif out["tables_folded"] != out["tables_split"]:
        problem("ic-full-patched-4G: %s tables split, %s folded"
                % (out["tables_split"], out["tables_folded"]))
    if out.get("ns_per_table_folded"):
        t["collapse_insns_per_folded_table"] = out["ns_per_table_folded"]
    return out


def heal_samples(sec):
    """[{column: value}] of a [heal] block, in time order."""
    cols = str(sec.get("columns", "")).split()
    rows, i = [], 0
    while "s.%d" % i in sec:
        vals = [int(x) for x in str(sec["s.%d" % i]).split()]
        if len(vals) == len(cols):
            rows.append(dict(zip(cols, vals)))
        else:
            problem("heal sample %d: %d values for %d columns" % (i, len(vals), len(cols)))
        i += 1
    return rows


def heal_workload(d, secs):
    """Table pages and DirectMap over time, per heal setup."""
    out = {}
    if not secs or int(secs) == 0:
        return out
    for name, label in HEAL_SETUPS:
        data = load(d, name)
        sec = (data or {}).get("heal")
        if not sec:
            if data is not None:
                problem("%s: no heal block" % name)
            continue
        rows = heal_samples(sec)
        if len(rows) < 2:
            problem("%s: %d heal samples" % (name, len(rows)))
        if sec.get("failures"):
            problem("%s: %s module loads or memfd_secret() rounds failed"
                    % (name, sec.get("failures")))
        out[name] = {"label": label, "samples": rows, "loads": sec.get("loads"),
                     "secrets": sec.get("secrets"), "failures": sec.get("failures")}
    return out


def heal_block_share(row):
    """% of the linear map in PMD-or-larger leaves, from DirectMap (kB)."""
    dm = [(k, v) for k, v in row.items() if k.startswith("DirectMap")]
    total = sum(v for _, v in dm) or 1
    # The two smallest sizes are the PTE levels (page, contiguous pages).
    return 100.0 * sum(v for _, v in dm[2:]) / total


def heal_charts(d, heal):
    if not heal:
        return
    for name, h in heal.items():
        with open(os.path.join(d, name + ".dat"), "w") as f:
            for r in h["samples"]:
                f.write("%d %d %.3f\n" % (r["t"], r["table_pages"], heal_block_share(r)))
    for col, png, title, ylabel in (
            (2, "heal_tables", "Module loads and memfd_secret(): linear-map table pages",
             "table pages"),
            (3, "heal_blocks", "Module loads and memfd_secret(): linear map in blocks",
             "% of the linear map in PMD or larger leaves")):
        gnuplot("""set terminal png size 900,500 noenhanced
set output '%s/%s.png'
set title '%s'
set xlabel 'virtual time (s)'
set ylabel '%s'
set key top left
set grid
plot %s
""" % (d, png, title, ylabel, ", \\\n     ".join(
            "'%s/%s.dat' using 1:%d with lines title '%s'" % (d, name, col, h["label"])
            for name, h in heal.items())))


def write_collapse(w, res):
    cc, heal = res.get("collapse_cost"), res.get("heal")
    if not cc and not heal:
        return
    w("## Collapse\n")
    w("The fragmentation table above has the stress rounds with collapse on "
      "(a full pass after each round) and off.\n")
    if cc:
        w("A full pass that folds the blocks split by %s set_direct_map_invalid/"
          "default pairs, one per PMD-sized run, under `-icount` at 4G: its "
          "walk folded %s table pages in %s instructions, against %s for a "
          "walk with nothing to fold: **%s instructions per folded table**. "
          "The whole call, which also waits for an RCU grace period before "
          "it frees the tables, took %s ns of virtual time (%s with nothing "
          "to fold).\n" % (
              cc["taken"], cc["tables_folded"], cc["fold_ns"], cc["empty_fold_ns"],
              cc.get("ns_per_table_folded"), cc["pass_ns"], cc["empty_pass_ns"]))
    if heal:
        w("A workload no one tuned for, under `-icount` (virtual time): load and "
          "unload a module, take 64 pages out of the linear map with "
          "memfd_secret() for 100 ms, rest a second, again and again.\n")
        w("The last sample is taken after the loop stops and 70 quiet seconds "
          "have passed.\n")
        w("| setup | samples | module loads | secret rounds | table pages: first / max / last | blocks %: first / min / last |")
        w("|---|---|---|---|---|---|")
        for name, h in heal.items():
            sm = h["samples"]
            if not sm:
                continue
            tp = [r["table_pages"] for r in sm]
            bs = [heal_block_share(r) for r in sm]
            w("| %s | %d (%d s) | %s | %s | %d / %d / %d | %.1f / %.1f / %.1f |" % (
                h["label"], len(sm), sm[-1]["t"], h["loads"], h["secrets"],
                tp[0], max(tp), tp[-1], bs[0], min(bs), bs[-1]))
        w("\n![table pages over time](heal_tables.png)\n")
        w("![blocks over time](heal_blocks.png)\n")
