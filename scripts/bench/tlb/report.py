#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""make bench-tlb's report: DIR/report.md, DIR/tlb.json, DIR/tlb.png.

Reads what scripts/bench/tlb.sh left in DIR: the windows (ID=NAME.RUN
lines), the plugin's results.json and the replays' replay-*.json (the
same recording, the variants and other cores). The headline counts what perf counts on arm64
(drivers/perf/arm_pmuv3.c maps dTLB-load-misses to L1D_TLB_REFILL and
iTLB-load-misses to L1I_TLB_REFILL): first-level TLB refills made by
kernel-mode instructions, to any address, per 1000 instructions of every
vCPU (kernel and user), the :k-like figures. A walk is a second-level
miss (DTLB_WALK-like). Each figure is the median over a workload's runs,
with the range.

usage: report.py DIR [DCZ_BYTES]
"""
import bisect
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from layout import leaves  # noqa: E402

LAYOUTS = [("full", "unpatched rodata=full (all PTEs)"),
           ("series", "patched, rodata=full, BBML2"),
           ("on", "rodata=on")]
KMODE = ("kernel_linear", "kernel_other", "kernel_to_user")


def measured(workload, event):
    """(reduction in %, machine, source) from measured.tsv."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "measured.tsv")
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        f = line.rstrip("\n").split("\t")
        if len(f) == 5 and f[0] == workload and f[1] == event:
            return -float(f[2]), f[3], f[4]
    sys.exit("report.py: no %s %s figure in %s" % (workload, event, path))


HW, HW_MACHINE, HW_SOURCE = measured("memcached", "dTLB-load-misses:k")


def unmodelled(full, series, hw):
    """The refill rate X, the same in both layouts, at which the model's
    change (series + X) / (full + X) - 1 equals the measured -hw%; None
    where no X >= 0 does (the model's change already as small)."""
    m = hw / 100.0
    if full is None or series is None or m <= 0 or m >= 1:
        return None
    x = ((1 - m) * full - series) / m
    return x if x >= 0 else None


def agreement(full_runs, series_runs, hw):
    """The report's "what would have to be true" line, from each run's
    rodata=full and series rates: none where no unmodelled rate does."""
    full, ser = med(full_runs), med(series_runs)
    x = unmodelled(full and full[0], ser and ser[0], hw)
    if x is None:
        return []
    return ["What would have to be true for the two to agree: refills the model "
            "does not see, alike in both layouts, at %s per 1000 instructions "
            "(the model's own rodata=full rate is %s)." % (fmt(x), fmt(full))]


def per_k(n, insns):
    return 1000.0 * n / insns if insns else 0.0


def figures(w, st):
    """The rates of one model's stats in window w."""
    insns = w["insns_kernel"] + w["insns_user"]
    d = {c: st[c] for c in st}
    return {
        "dtlb_k": per_k(sum(d[c]["l1_miss"] for c in KMODE), insns),
        "dtlb_k_per_kinsn": per_k(sum(d[c]["l1_miss"] for c in KMODE), w["insns_kernel"]),
        "itlb_k": per_k(d["insn_kernel"]["l1_miss"], insns),
        "walk_k": per_k(sum(d[c]["walk"] for c in KMODE), insns),
        "iwalk_k": per_k(d["insn_kernel"]["walk"], insns),
        "dtlb_k_kaddr": per_k(d["kernel_linear"]["l1_miss"] + d["kernel_other"]["l1_miss"], insns),
        "walk_k_kaddr": per_k(d["kernel_linear"]["walk"] + d["kernel_other"]["walk"], insns),
        "by_class": {c: per_k(d[c]["l1_miss"], insns) for c in KMODE},
    }


def model_key(m):
    v = m["variant"]
    if m["core"] != "neoverse-n1":
        return m["core"] + ("" if v == "base" else "+" + v)
    if v == "base":
        return "base" if m["scale"] == 1 else "l2x%g" % m["scale"]
    return v


def summarise(w):
    out = {"insns": w["insns_kernel"] + w["insns_user"], "insns_kernel": w["insns_kernel"],
           "tlbi": [w["tlbi_all"], w["tlbi_user"], w["tlbi_va"]],
           "dc_zva": [w["dc_zva_user"], w["dc_zva_kernel"]],
           # Counted since the plugin decodes prefetches; None before.
           "prfm": [w["prfm_user"], w["prfm_kernel"]] if "prfm_kernel" in w else None,
           # ... and those before an exclusive load of their address
           # (the LL/SC atomics'), apart since the plugin tells them.
           "prfm_excl": [w["prfm_excl_user"], w["prfm_excl_kernel"]] if "prfm_excl_kernel" in w else None,
           "linear_bytes": w["linear_bytes"], "on_linear_bytes": w["on_linear_bytes"],
           "models": {}, "footprint": {}}
    for name, _ in LAYOUTS:
        lay = w["layouts"].get(name)
        if lay is None:
            continue
        out["footprint"][name] = lay["fp_distinct"] / lay["fp_windows"] if lay["fp_windows"] else None
        for m in lay["models"]:
            out["models"].setdefault(model_key(m), {})[name] = figures(w, m["stats"])
    return out


def symbolize(system_map):
    """A function that names a kernel address "symbol+0xoff" from a
    System.map, or None without one."""
    if not os.path.exists(system_map):
        return None
    syms = []
    for line in open(system_map):
        f = line.split()
        if len(f) >= 3 and f[1] in "tTwW":
            syms.append((int(f[0], 16), f[2]))
    syms.sort()
    addrs = [a for a, _ in syms]

    def name(pc):
        i = bisect.bisect_right(addrs, pc) - 1
        if i < 0 or pc - addrs[i] > 0x100000:
            return "%x (a module or outside the kernel image)" % pc
        return "%s+0x%x" % (syms[i][1], pc - addrs[i])
    return name


def sites_table(d, top=8):
    """The kernel's DC ZVA and PRFM instructions that ran most inside the
    windows (the plugin's sites= file), each with its share of its kind."""
    path = os.path.join(d, "sites.tsv")
    if not os.path.exists(path):
        return []
    name = symbolize(os.path.join(d, "System.map")) or (lambda pc: "%x" % pc)
    rows = {}
    for line in open(path):
        kind, pc, n = line.split()
        rows.setdefault(kind, []).append((int(pc, 16), int(n)))
    md = ["", "## Where the unseen instructions are (inside the windows, kernel only)", "",
          "| kind | instruction | runs | share of its kind |", "|---|---|---:|---:|"]
    for kind in ("prfm", "prfm-excl", "zva"):
        k = [(pc, n) for pc, n in rows.get(kind, []) if pc >> 63]
        total = sum(n for _, n in k)
        for pc, n in k[:top if kind != "prfm-excl" else 3]:
            md.append("| %s | %s | %d | %.1f%% |" % (kind, name(pc), n, 100.0 * n / total))
    return md


def change(a, b):
    return 100.0 * (b - a) / a if a else None


def unseen_bounds(full, series, x):
    """The series' change against rodata=full if refills the model cannot
    see, at x per 1000 instructions, cost rodata=full alone (the most the
    series could gain) and both alike (the least)."""
    return change(full + x, series), change(full + x, series + x)


def med(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return None
    return (statistics.median(xs), min(xs), max(xs))


def fmt(x, pct=False):
    if x is None:
        return "-"
    if isinstance(x, tuple):
        m, lo, hi = x
        if pct:
            return "%+.1f%% [%+.1f, %+.1f]" % (m, lo, hi)
        return "%.3g [%.3g-%.3g]" % (m, lo, hi)
    return ("%+.1f%%" % x) if pct else ("%.3g" % x)


def main(d, dcz=64):
    windows = []
    for line in open(os.path.join(d, "windows")):
        if "=" in line:
            i, name = line.strip().split("=", 1)
            windows.append((int(i), name))
    if not windows:
        raise SystemExit("report.py: no measured windows in %s/windows" % d)
    inline = json.load(open(os.path.join(d, "results.json")))
    replays = [json.load(open(os.path.join(d, f))) for f in sorted(os.listdir(d))
               if f.startswith("replay") and f.endswith(".json")]
    for r in [inline] + replays:
        if r["layouts_damaged"]:
            raise SystemExit("report.py: %d layouts arrived damaged" % r["layouts_damaged"])
        if r.get("on_mismatch"):
            raise SystemExit("report.py: rodata=on's layout maps other RAM than the guest's "
                             "(%d layouts)" % r["on_mismatch"])
    # Each replay must count what the plugin counted, model for model;
    # then their other models join the plugin's.
    ib = {w["id"]: w for w in inline["windows"]}
    agree = 0
    for replay in replays:
        for w in replay["windows"]:
            for name in w["layouts"]:
                models = w["layouts"][name]["models"]
                plain = [m for m in models if m["variant"] == "base" and m["core"] == "neoverse-n1"]
                want = ib[w["id"]]["layouts"][name]["models"]
                if plain != [m for m in want if m["variant"] == "base" and m["core"] == "neoverse-n1"]:
                    raise SystemExit("report.py: the replay of window %d (%s) differs from the plugin's"
                                     % (w["id"], name))
                agree += len(plain)
                want.extend(m for m in models if m not in plain)
    by_id = ib
    runs = {}
    for i, name in windows:
        if i not in by_id:
            raise SystemExit("report.py: no results for window %d (%s)" % (i, name))
        runs.setdefault(name.rsplit(".", 1)[0], []).append((name, summarise(by_id[i])))

    def series_of(wl, key, model="base", layout="series"):
        return [r["models"][model][layout][key] for _, r in runs[wl]
                if model in r["models"] and layout in r["models"][model]]

    def red(wl, key, model="base", a="full", b="series"):
        return med([change(r["models"][model][a][key], r["models"][model][b][key])
                    for _, r in runs[wl] if model in r["models"]
                    and a in r["models"][model] and b in r["models"][model]])

    md = ["# Kernel TLB misses, simulated (make bench-tlb)", "",
          "A Neoverse N1's TLBs (scripts/bench/tlb/neoverse-n1.tsv), warm from the first "
          "layout on; figures per 1000 instructions of all vCPUs, median [min-max] over "
          "the runs. dTLB:k and iTLB:k count what perf's dTLB-load-misses:k and "
          "iTLB-load-misses:k count on arm64 (L1D_TLB_REFILL, L1I_TLB_REFILL) made by "
          "kernel-mode instructions to any address; walks: second-level misses.", "",
          "| workload | runs | Minsns | dTLB:k full | dTLB:k series | dTLB:k on | "
          "series vs full | iTLB:k series vs full | walks series vs full | series vs on |",
          "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for wl in runs:
        md.append("| %s | %d | %.0f | %s | %s | %s | %s | %s | %s | %s |" % (
            wl, len(runs[wl]), statistics.median(r["insns"] for _, r in runs[wl]) / 1e6,
            fmt(med(series_of(wl, "dtlb_k", layout="full"))),
            fmt(med(series_of(wl, "dtlb_k"))), fmt(med(series_of(wl, "dtlb_k", layout="on"))),
            fmt(red(wl, "dtlb_k"), True), fmt(red(wl, "itlb_k"), True),
            fmt(red(wl, "walk_k"), True), fmt(red(wl, "dtlb_k", a="on"), True)))
    md += ["", ("Each replayed window's plain models equal the plugin's (%d models compared, "
                "%d replays)." % (agree, len(replays))) if replays else
           "No replay: the variants and other cores are not in this report."]

    md += ["", "## Where kernel-mode data refills go (series against full, median)", "",
           "| workload | to the linear map | other kernel addresses | user addresses (copy_*_user) |",
           "|---|---:|---:|---:|"]
    for wl in runs:
        cells = []
        for c in KMODE:
            f = med([r["models"]["base"]["full"]["by_class"][c] for _, r in runs[wl]])
            s = med([r["models"]["base"]["series"]["by_class"][c] for _, r in runs[wl]])
            cells.append("%s -> %s" % (fmt(f[0] if f else None), fmt(s[0] if s else None)))
        md.append("| %s | %s |" % (wl, " | ".join(cells)))

    # The unseen: DC ZVA stores and prefetches (PRFM) have no memory
    # callback. Each page the kernel clears, each prefetch it issues, is
    # at most one more data refill (and walk) in any layout (the N1's
    # L1D_TLB_REFILL counts a prefetch's); the reduction lies between
    # these bounds.
    def unseen(title, what, rate):
        md.extend(["", "## Not seen: %s (a bound, not a figure)" % title, "",
                   "| workload | %s per 1000 insns | dTLB:k series vs full, as modelled "
                   "| if each costs full a refill and series none | if each costs both |" % what,
                   "|---|---:|---:|---:|---:|"])
        for wl in runs:
            lo, hi, xs = [], [], []
            for _, r in runs[wl]:
                x = rate(r)
                if x is None:
                    continue
                f, s = (r["models"]["base"][n]["dtlb_k"] for n in ("full", "series"))
                xs.append(x)
                h, low = unseen_bounds(f, s, x)
                hi.append(h)
                lo.append(low)
            if not xs:
                md.append("| %s | not counted (a recording made before the plugin counted it) | %s | - | - |"
                          % (wl, fmt(red(wl, "dtlb_k"), True)))
                continue
            md.append("| %s | %s | %s | %s | %s |" % (wl, fmt(med(xs)), fmt(red(wl, "dtlb_k"), True),
                                                       fmt(med(hi), True), fmt(med(lo), True)))

    unseen("page clearing by DC ZVA", "pages cleared (kernel)",
           lambda r: per_k(r["dc_zva"][1] * dcz / 4096.0, r["insns"]))
    unseen("prefetches by PRFM", "kernel PRFMs",
           lambda r: None if r["prfm"] is None else per_k(r["prfm"][1], r["insns"]))
    ex = [per_k(r["prfm_excl"][1], r["insns"]) for wl in runs for _, r in runs[wl] if r["prfm_excl"]]
    if ex:
        md.extend(["", "Left out of the PRFM bound: the prefetches before an exclusive load of their "
                   "address (the LL/SC atomics' PRFM PSTL1STRM), %s per 1000 instructions (median over "
                   "every window): their lookup is the load's, which the model sees." % fmt(med(ex))])
    md += sites_table(d)

    md += ["", "## Sensitivity (replayed): series vs full under each variant, dTLB:k, then walks", "",
           "| workload | " + " | ".join(k for k in sorted(next(iter(runs.values()))[0][1]["models"])) + " |",
           "|---|" + "---:|" * len(next(iter(runs.values()))[0][1]["models"])]
    keys = sorted(next(iter(runs.values()))[0][1]["models"])
    for wl in runs:
        md.append("| %s dTLB:k | %s |" % (wl, " | ".join(fmt(red(wl, "dtlb_k", k), True) for k in keys)))
        md.append("| %s walks | %s |" % (wl, " | ".join(fmt(red(wl, "walk_k", k), True) for k in keys)))
    md += ["", "base: the N1 as published; l2xN: its L2 TLB N times as large; coalesce4, "
           "walk_cache, tlbi_va_l1, tlbi_va_all, thp_user, end_layout: tlbmodel.h's variants; another "
           "core's name: that core's published TLBs."]

    mc = "memcached_host" if "memcached_host" in runs else "memcached"
    if mc in runs:
        r = red(mc, "dtlb_k")
        md += ["", "## Against the hardware measurement (%s): a calibration" % mc, "",
               "The model is not a measurement: the one measurement is %.1f%% fewer "
               "dTLB-load-misses:k (perf, memcached, %s; %s). Model, median "
               "[range] over %d runs:" % (HW, HW_MACHINE, HW_SOURCE, len(runs[mc])), "",
               "| what is counted | series vs full |", "|---|---:|",
               "| dTLB:k-like, L1 refills of kernel-mode accesses (perf's count) | %s |" % fmt(r, True),
               "| ... of kernel-mode accesses to kernel addresses only | %s |"
               % fmt(red(mc, "dtlb_k_kaddr"), True),
               "| walks of kernel-mode accesses (DTLB_WALK-like) | %s |" % fmt(red(mc, "walk_k"), True),
               "| walks to kernel addresses only (the old headline's count) | %s |"
               % fmt(red(mc, "walk_k_kaddr"), True),
               "| iTLB:k-like | %s |" % fmt(red(mc, "itlb_k"), True),
               "| dTLB:k-like, layout as after the window (end_layout) | %s |"
               % fmt(red(mc, "dtlb_k", "end_layout"), True), ""]
        fp = med([x[1]["footprint"].get("full") for x in runs[mc]])
        md += ["Footprint: %s distinct linear-map pages per million instructions per vCPU "
               "under rodata=full (the guest's, far below a 256 GB server's); the model's "
               "dTLB:k rate is %s per 1000 instructions under rodata=full." %
               (fmt(fp), fmt(med(series_of(mc, "dtlb_k", layout="full"))))]
        if r:
            md += ["Model / measurement: %.2f (median)." % (-r[0] / HW)]
            md += agreement(series_of(mc, "dtlb_k", layout="full"),
                            series_of(mc, "dtlb_k", layout="series"), HW)

    path = os.path.join(d, "mcload.json")
    if os.path.exists(path):
        lines = [json.loads(x) for x in open(path) if x.strip()]
        pre = [x for x in lines if "preload_items" in x]
        rr = [x for x in lines if "run" in x]
        md += ["", "## memcached_host: the host's load (host time, under the plugin)", ""]
        if pre:
            md += ["Item set: %d items of %d bytes (%.0f MiB), stored in %.0f s." % (
                pre[0]["preload_items"], pre[0]["value_bytes"],
                pre[0]["preload_items"] * pre[0]["value_bytes"] / 1048576.0,
                pre[0]["preload_host_secs"]), ""]
        md += ["| run | connections | ops | misses | P50 ms | P99 ms |", "|---:|---:|---:|---:|---:|---:|"]
        for x in rr:
            md.append("| %s | %d | %d | %d | %.2f | %.2f |" % (
                x["run"] or "0 (warm-up)", x["conns"], x["ops"], x["misses"],
                x["p50_ms"] or 0, x["p99_ms"] or 0))
        md += ["", "Latencies are of an emulated guest under a TLB model, in host time: "
               "they say the load ran, not how fast a server would serve it."]

    md += ["", "## Distinct linear-map translations per million instructions", "",
           "| workload | " + " | ".join(n for n, _ in LAYOUTS) + " |", "|---|---:|---:|---:|"]
    for wl in runs:
        md.append("| %s | %s |" % (wl, " | ".join(
            fmt(med([x[1]["footprint"].get(n) for x in runs[wl]])) for n, _ in LAYOUTS)))

    data = os.path.join(d, "traced.data")
    if os.path.exists(data):
        md += ["", "## The linear map after each window (the end_layout variant's)", "",
               "| after | KiB by PTEs | by contiguous PTEs | by blocks |", "|---|---:|---:|---:|"]
        for _, name in windows:
            try:
                ranges, _ = leaves(data, "tlb.layout." + name, 12)
            except SystemExit:
                continue
            by = {"pte": 0, "cont": 0, "block": 0}
            for a, b, shift, linear in ranges:
                if linear:
                    by["pte" if shift == 12 else "cont" if shift == 16 else "block"] += (b - a) >> 10
            md.append("| %s | %d | %d | %d |" % (name, by["pte"], by["cont"], by["block"]))
    md += ["", "Layouts: " + "; ".join("%s: %s" % x for x in LAYOUTS) + "."]
    open(os.path.join(d, "report.md"), "w").write("\n".join(md) + "\n")
    json.dump({wl: [r for _, r in runs[wl]] for wl in runs},
              open(os.path.join(d, "tlb.json"), "w"), indent=1, sort_keys=True)

    dat = os.path.join(d, "tlb.dat")
    with open(dat, "w") as f:
        for wl in runs:
            f.write("%s %s\n" % (wl, " ".join(
                "%.6f %.6f" % ((med(series_of(wl, "dtlb_k", layout=n)) or [0])[0],
                               (med(series_of(wl, "itlb_k", layout=n)) or [0])[0])
                for n, _ in LAYOUTS)))
    gp = """set terminal pngcairo size 1200,480 noenhanced
set output '%s'
set multiplot layout 1,2 title 'Kernel-mode TLB refills per 1000 instructions, simulated Neoverse N1 (median of the runs)'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set yrange [0:*]
set key below
set grid ytics
# Long workload names overlap when level.
set xtics rotate by -20
set title 'dTLB:k (L1 data TLB refills)'
plot '%s' using 2:xtic(1) title '%s', '' using 4 title '%s', '' using 6 title '%s'
set title 'iTLB:k (L1 instruction TLB refills)'
plot '%s' using 3:xtic(1) title '%s', '' using 5 title '%s', '' using 7 title '%s'
unset multiplot
""" % ((os.path.join(d, "tlb.png"),) + (dat, LAYOUTS[0][1], LAYOUTS[1][1], LAYOUTS[2][1]) * 2)
    try:
        subprocess.run(["gnuplot"], input=gp.encode(), check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        sys.stderr.write("report.py: gnuplot failed (%s); no chart\n" % e)
        return 1
    return 0


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        raise SystemExit(__doc__)
    sys.exit(main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) == 3 else 64))
