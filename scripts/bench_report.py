#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the guests' data blocks of 'make bench' into a report.

usage: bench_report.py DIR "MEMS" [CONFIG-DESCRIPTION ["HOTPLUG-SIZES" [HEAL-SECS]]]
Reads DIR/<setup>-<mem>.data (and DIR/hp-<setup>-<size>.data for each
hot-plug size), writes DIR/report.md, DIR/bench.json and
DIR/*.png (gnuplot). Exits 1 if a figure is missing or not sane: zero, or
inconsistent with the leaf counts it came with.
"""
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from linmap_data import KINDS, parse  # noqa: E402



def bench_work(kind, name):
    """The work column of one setup of scripts/bench-setups.tsv."""
    for line in open(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                  "bench-setups.tsv")):
        f = line.rstrip("\n").split("\t")
        if not line.startswith("#") and f[0] == kind and f[1] == name:
            return f[3].split(",")
    return []


def bench_setups(kind, prefix=""):
    """[(name, label)] of one kind of scripts/bench-setups.tsv."""
    out = []
    for line in open(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                  "bench-setups.tsv")):
        f = line.rstrip("\n").split("\t")
        if not line.startswith("#") and f[0] == kind:
            out.append((prefix + f[1], f[5]))
    return out


SETUPS = bench_setups("wall")
# Boots under QEMU -icount shift=0: one instruction is one ns of virtual
# time, so the counter ticks the kernel prints are instruction counts.
IC_SETUPS = bench_setups("icount", "ic-")
# Hot-add and hot-remove under -icount: boots named hp-<setup>-<size>.
HP_SETUPS = bench_setups("hotplug")
# The heal workload under -icount: boots named heal-<setup>.
HEAL_SETUPS = bench_setups("heal", "heal-")
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


def cost_line(name, sec, step, counting):
    """A 'STEP=ticks=T hz=H entries=E barriers=B lazy=L counting=C' line."""
    line = sec.get(step) if sec else None
    if not isinstance(line, str):
        problem("%s: the kernel printed no %s cost (no test-only counter?)" % (name, step))
        return None
    v = {}
    for kv in line.split():
        k, _, x = kv.partition("=")
        v[k] = int(x) if x.isdigit() else x
    if not all(isinstance(v.get(k), int)
               for k in ("ticks", "hz", "entries", "barriers", "lazy", "counting")):
        problem("%s: cannot read the %s cost '%s'" % (name, step, line))
        return None
    if v["counting"] != counting:
        problem("%s: counting=%d, expected %d" % (name, v["counting"], counting))
        return None
    return v


def step_cost(name, tsec, csec, step, min_entries=1):
    """Instructions from the timing boot, writes from the counting boot."""
    t = cost_line("ic-" + name, tsec, step, 0)
    c = cost_line("cnt-" + name, csec, step, 1)
    if not t or not c:
        return None
    v = {"ticks": t["ticks"], "hz": t["hz"], "entries": c["entries"],
         "barriers": c["barriers"], "lazy": c["lazy"]}
    if v["ticks"] <= 0 or v["hz"] <= 0 or v["entries"] < min_entries or v["barriers"] <= 0:
        problem("%s: %s cost not sane: %s (needs >= %d entries)" % (name, step, v, min_entries))
    if t["entries"] or t["barriers"]:
        problem("%s: %s counted with the counters off" % (name, step))
    v["us"] = v["ticks"] * 1e6 / v["hz"]
    v["insns"] = insns(v["ticks"], v["hz"])
    return v


def insns(ticks, hz):
    """Counter ticks at hz under -icount shift=0: 1 ns per instruction."""
    return int(round(ticks * 1e9 / hz))


def pgt(v):
    """'e/b/l:e/b/l' -> [(entries, barriers, lazy), ...]"""
    return [tuple(int(y) for y in x.split("/")) for x in str(v).split(":") if x.count("/") == 2]


def setmem(sec, counted=False):
    """Timings of a setmem block; with counted, its page-table writes."""
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
        if counted and sec.get("pgt_count") != 1:
            problem("set_memory of %d pages: not counted (pgt_count=%s)"
                    % (p, sec.get("pgt_count")))
        elif counted:
            for key in ("first_ro", "first_rw", "ro", "rw"):
                calls = pgt(sec.get("size.%d.%s_pgt" % (p, key), ""))
                out[p][key + "_pgt"] = calls
                # Each call rewrites every page's PTE, with a barrier pair.
                if not calls or any(e < p or b < 1 for e, b, _ in calls):
                    problem("set_memory of %d pages: %s page-table writes "
                            "not sane: %s" % (p, key, calls))
    return out


def gnuplot(script):
    try:
        subprocess.run(["gnuplot"], input=script.encode(), check=True,
                       stderr=subprocess.PIPE)
    except (OSError, subprocess.CalledProcessError) as e:
        problem("gnuplot failed: %s" % getattr(e, "stderr", e))


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


def boot_cost_setups(d, mem, res):
    """map_mem() and repaint costs per -icount setup; at 4G, setmem."""
    res["boot_cost"][mem] = {}
    ptes_of = {}
    for setup, _ in IC_SETUPS:
        name = "%s-%s" % (setup[3:], mem)
        data, cdata = load(d, "ic-" + name), load(d, "cnt-" + name)
        if not data or not cdata:
            continue
        bc, cbc = data.get("boot_cost", {}), cdata.get("boot_cost", {})
        c = counts(data.get("counts.boot", {}))
        sane_counts(setup + "-" + mem, c, res["page_size"])
        ptes = ptes_of[setup] = c["n"].get("pte", 0) + c["n"].get("cont_pte", 0)
        # The unpatched rodata=full map_mem() writes every PTE there is;
        # the repaint every PTE that the same kernel without a repaint
        # does not have.
        r = {"map_mem": step_cost(name, bc, cbc, "map_mem",
                                  ptes if setup == "ic-full-unpatched" else 1),
             "table_pages": c["table_pages"]}
        if setup == "ic-repaint":
            r["repaint"] = step_cost(name, bc, cbc, "repaint",
                                     max(1, ptes - ptes_of.get("ic-full-patched", 0)))
        res["boot_cost"][mem][setup] = r
        if mem == "4G" and "setmem" in data:
            res["setmem_icount"][setup] = setmem_icount(name, data, cdata)


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


def boot_cost_targets(res, t):
    """map_mem() and repaint against the unpatched map_mem()."""
    bc = res["boot_cost"]
    for mem in res["mems"]:
        x = bc.get(mem, {})
        u = (x.get("ic-full-unpatched") or {}).get("map_mem")
        pa = (x.get("ic-full-patched") or {}).get("map_mem")
        rp = (x.get("ic-repaint") or {})
        if u and pa:
            t["map_mem_insns_ratio_" + mem] = round(pa["insns"] / u["insns"], 4)
        on = (x.get("ic-on-unpatched") or {}).get("map_mem")
        if on and pa:
            # The same leaves as rodata=on: the series may cost 5% more.
            r = pa["insns"] / on["insns"]
            t["map_mem_vs_rodata_on_" + mem] = {
                "patched_insns": pa["insns"], "rodata_on_insns": on["insns"],
                "ratio": round(r, 3), "met": r <= 1.05}
        if u and rp.get("repaint"):
            t["repaint_vs_unpatched_map_mem_ratio_" + mem] = round(
                rp["repaint"]["insns"] / u["insns"], 3)
        if pa and rp.get("map_mem"):
            # Same code through map_mem() in both boots, so the same count,
            # to the one tick (16 instructions) a window can straddle.
            t["map_mem_repeats_" + mem] = {
                "ticks_bbml2_all": pa["ticks"], "ticks_bbml2_boot": rp["map_mem"]["ticks"],
                "met": abs(pa["ticks"] - rp["map_mem"]["ticks"]) <= 1}


def main():
    d, mems = sys.argv[1], sys.argv[2].split()
    config = sys.argv[3] if len(sys.argv) > 3 else "the kit's test config"
    res = {"mems": mems, "config": config, "memory": {}, "fragmentation": {}, "setmem": {},
           "boot_cost": {}, "setmem_icount": {}, "targets": {}, "page_size": 4096}
    for mem in mems:
        memory_setups(d, mem, res)
        boot_cost_setups(d, mem, res)
    del res["page_size"]
    # Targets, from the figures; a miss is reported, never tuned away.
    memory_targets(res, res["targets"])
    setmem_targets(res, res["targets"])
    boot_cost_targets(res, res["targets"])
    res["hotplug"] = hotplug_icount(d, sys.argv[4].split() if len(sys.argv) > 4 else [],
                                    res["targets"])
    collapse_rounds_target(res, res["targets"])
    if "4G" in mems:
        res["collapse_cost"] = collapse_cost(d, res, res["targets"])
        res["contpte"] = contpte_costs(d, res["targets"])
    res["kexec_copy"] = kexec_copy(d, mems, res["targets"])
    res["heal"] = heal_workload(d, sys.argv[5] if len(sys.argv) > 5 else "0")
    res["problems"] = problems
    json.dump(res, open(os.path.join(d, "bench.json"), "w"), indent=1, sort_keys=True)
    charts(d, res)
    heal_charts(d, res["heal"])
    write_md(d, res)
    return 1 if problems else 0


def hotplug_icount(d, sizes, targets):
    """Instructions to hot-add and hot-remove each size, per setup."""
    out = {}
    for size in sizes:
        out[size] = {}
        for setup, _ in HP_SETUPS:
            name = "hp-%s-%s" % (setup, size)
            data = load(d, name)
            h = (data or {}).get("hotplug")
            if not isinstance(h, dict):
                if data:
                    problem("%s: no hotplug section" % name)
                continue
            r = {k: h.get(k) for k in ("add_ret", "remove_ret", "add_ns", "remove_ns",
                                       "tables_added", "want_blocks", "map_ticks",
                                       "unmap_ticks", "timer_hz")}
            for k in ("map", "unmap"):
                t = r.get(k + "_ticks")
                if not isinstance(t, int) or t <= 0 or not r.get("timer_hz"):
                    problem("%s: no %s ticks (test-only counters missing?)" % (name, k))
                    r[k + "_insns"] = None
                else:
                    r[k + "_insns"] = insns(t, r["timer_hz"])
            r["leaves"] = {k: h.get("added." + k, 0) for k in KINDS}
            if r["add_ret"] != 0 or r["remove_ret"] != 0:
                problem("%s: add_ret=%s remove_ret=%s" % (name, r["add_ret"], r["remove_ret"]))
            if not r["add_ns"] or not r["remove_ns"]:
                problem("%s: no add or remove time" % name)
            page_size = data.get("state", {}).get("page_size", 4096)
            if h.get("unmapped_pages_after") != (int(size[:-1]) << 30) // page_size:
                problem("%s: %s pages unmapped after the removal" % (name, h.get("unmapped_pages_after")))
            out[size][setup] = r
        u, p = out[size].get("unpatched"), out[size].get("patched")
        for k in ("map", "unmap"):
            if u and p and u.get(k + "_insns") and p.get(k + "_insns"):
                targets["hotplug_%s_insns_ratio_%s" % (k, size)] = round(
                    p[k + "_insns"] / u[k + "_insns"], 4)
    return out


def kexec_copy(d, mems, targets):
    """kexec's copy of the linear map in each -icount boot that made one:
    the live map's leaves and table pages, the copy's, the pages it
    allocated and its instructions (the fastest of its runs)."""
    out = {}
    for mem in mems:
        out[mem] = {}
        for setup, _ in IC_SETUPS:
            if "kexec" not in bench_work("icount", setup[len("ic-"):]):
                continue
            name = "%s-%s" % (setup, mem)
            data = load(d, name)
            k = (data or {}).get("kexec_copy")
            if not isinstance(k, dict):
                if data:
                    problem("%s: no kexec_copy section" % name)
                continue
            if k.get("skip"):
                problem("%s: kexec_copy skipped: %s" % (name, k["skip"]))
                continue
            r = {f: k.get(f) for f in ("ret", "live_leaves", "live_tables", "copy_leaves",
                                       "copy_tables", "copy_allocated", "copy_ns")}
            if r["ret"] != 0 or not r["copy_ns"] or not r["copy_allocated"]:
                problem("%s: kexec_copy ret=%s, %s ns, %s pages" % (
                    name, r["ret"], r["copy_ns"], r["copy_allocated"]))
            # The copy maps what the live map maps, entry for entry.
            if r["copy_leaves"] != r["live_leaves"]:
                problem("%s: the copy has %s leaves, the live map %s" % (
                    name, r["copy_leaves"], r["live_leaves"]))
            out[mem][setup] = r
        u, p = out[mem].get("ic-full-unpatched"), out[mem].get("ic-full-patched")
        if u and p and u.get("copy_ns") and p.get("copy_ns"):
            targets["kexec_copy_insns_ratio_%s" % mem] = round(p["copy_ns"] / u["copy_ns"], 4)
            targets["kexec_copy_pages_ratio_%s" % mem] = round(
                p["copy_allocated"] / u["copy_allocated"], 4)
    return out


def write_kexec_copy(w, res):
    kc = res.get("kexec_copy") or {}
    if not any(kc.values()):
        return
    w("## kexec's copy of the linear map under -icount\n")
    w("`trans_pgd_create_copy()` over the whole linear map, as "
      "`machine_kexec_post_load()` makes it for the relocation (and "
      "hibernation for its restore), from freshly allocated pages, of the "
      "map as booted (before the other measurements), under `-icount shift=0`, 2 CPUs: the fastest of 3 runs "
      "(module command `kexec_copy`). Leaves and tables: the live map's "
      "and the copy's (the same leaves, entry for entry); pages: what the "
      "copy allocated.\n")
    w("| RAM | setup | leaves | live tables | copy tables | pages | Minsns |")
    w("|---|---|---|---|---|---|---|")
    labels = dict(IC_SETUPS)
    for mem in res["mems"]:
        for setup, r in kc.get(mem, {}).items():
            w("| %s | %s | %s | %s | %s | %s | %.3f |" % (
                mem, labels.get(setup, setup), r["live_leaves"], r["live_tables"],
                r["copy_tables"], r["copy_allocated"], (r["copy_ns"] or 0) / 1e6))
    w("")


def kilo(v):
    return "%.1f" % (v / 1000.0) if v else "-"


def write_hotplug(w, res):
    hp = res.get("hotplug") or {}
    if not hp:
        return
    w("## Memory hot-add and hot-remove under -icount\n")
    w("Hot-add SIZE at 4G above the guest's 3G (not onlined), then hot-remove "
      "it (its first memory block alone, then the rest), under `-icount "
      "shift=0`, 2 CPUs. Map and unmap: thousands of instructions spent "
      "building and taking down its linear map, from the test-only counters "
      "(repeatable to a few percent: an interrupt in the call adds its own). Add and remove: millions of instructions of virtual time for "
      "the whole calls, which sleep and wait (noisy). Tables and leaves: what "
      "the hot-add put in the linear map.\n")
    w("| size | setup | map kinsns | unmap kinsns | add Minsns | remove Minsns "
      "| tables | pud | cont_pmd | pmd | cont_pte | pte |")
    w("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for size in sorted(hp, key=lambda x: int(x[:-1])):
        for setup, label in HP_SETUPS:
            r = hp[size].get(setup)
            if not r:
                w("| %s | %s | missing | | | | | | | | | |" % (size, label))
                continue
            w("| %s | %s | %s | %s | %.2f | %.2f | %s | %s |" % (
                size, label, kilo(r["map_insns"]), kilo(r["unmap_insns"]),
                (r["add_ns"] or 0) / 1e6, (r["remove_ns"] or 0) / 1e6,
                r["tables_added"], " | ".join(str(r["leaves"].get(k, 0)) for k in KINDS)))
    w("")


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


# The contiguous user PTE figures: by the clock, then under -icount.
CONTPTE_BOOTS = (("full-unpatched", "wall"), ("full-patched", "wall"),
                 ("ic-full-unpatched", "icount"), ("ic-full-nobbml2", "icount"),
                 ("ic-full-patched", "icount"))
CONTPTE_KEYS = ("mprotect_pair_ns.median", "unfold_ns.median", "fold_ns.median")


def contpte_costs(d, t):
    """mprotect() of one page and back, and contpte_convert() alone (4G)."""
    labels = dict(SETUPS + IC_SETUPS)
    out = {}
    for name, kind in CONTPTE_BOOTS:
        if name not in labels:
            continue
        data = load(d, name + "-4G")
        sec = (data or {}).get("contpte")
        if not sec:
            if data is not None:
                problem("%s-4G: no contpte block" % name)
            continue
        if sec.get("status") != 0 or any(not sec.get(k) for k in CONTPTE_KEYS):
            problem("%s-4G: contpte figures not sane: %s" % (name, sec))
            continue
        out[name] = dict({k: sec[k] for k in CONTPTE_KEYS},
                         kind=kind, label=labels[name], bbml2=sec.get("bbml2"),
                         cont_ptes=sec.get("cont_ptes"), rounds=sec.get("rounds"))
    a, b = out.get("ic-full-patched"), out.get("ic-full-unpatched")
    if a and b:
        conv = lambda x: x["unfold_ns.median"] + x["fold_ns.median"]
        t["contpte_convert_cheaper_with_bbml2"] = {
            "met": conv(a) < conv(b), "patched_insns": conv(a),
            "unpatched_insns": conv(b), "ratio": round(conv(a) / conv(b), 3)}
    return out


def write_contpte(w, res):
    ct = res.get("contpte")
    if not ct:
        return
    w("## Contiguous user PTEs: contpte_convert() (4G)\n")
    w("A 64K block of anonymous memory (16 PTEs) faulted in as one mTHP. "
      "mprotect pair: mprotect() of its last page to read-only and back, "
      "an unfold and a fold with the page-table updates around them. "
      "Unfold and fold: contpte_convert() alone, timed by the test module "
      "with the page table lock held. Medians; by the clock in "
      "microseconds (TCG: a broadcast TLBI is costly to emulate), under "
      "-icount in instructions (a TLBI counts as one). Ratio: against "
      "unpatched 6.12 of the same kind.\n")
    w("| setup | timing | mprotect pair | unfold | fold | unfold+fold ratio |")
    w("|---|---|---|---|---|---|")
    base = {"wall": ct.get("full-unpatched"), "icount": ct.get("ic-full-unpatched")}
    for name, kind in CONTPTE_BOOTS:
        x = ct.get(name)
        if not x:
            continue
        div, unit = (1000.0, "µs") if kind == "wall" else (1.0, "instr")
        b = base[kind]
        conv = x["unfold_ns.median"] + x["fold_ns.median"]
        ratio = "%.3f" % (conv / (b["unfold_ns.median"] + b["fold_ns.median"])) if b else "-"
        w("| %s | %s | %.1f | %.1f | %.1f | %s |" % (
            x["label"], unit, x["mprotect_pair_ns.median"] / div,
            x["unfold_ns.median"] / div, x["fold_ns.median"] / div, ratio))
    w("")


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


def line_chart(d, name, title, ylabel, rows, labels):
    """A log-log chart against RAM: rows are [GiB, y1, y2, ...], None for a gap."""
    if not rows:
        return
    with open(os.path.join(d, name + ".dat"), "w") as f:
        for r in rows:
            f.write(" ".join([str(r[0])] + ["NaN" if v is None else "%.6f" % v
                                            for v in r[1:]]) + "\n")
    gnuplot("""set terminal png size 800,500 noenhanced
set output '%s/%s.png'
set title '%s'
set xlabel 'RAM (GiB)'
set ylabel '%s'
set logscale xy
set key top left
set grid
plot %s
""" % (d, name, title, ylabel, ", \\\n     ".join(
        "'%s/%s.dat' using 1:%d with linespoints title '%s'" % (d, name, i + 2, label)
        for i, label in enumerate(labels))))


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


def cost_cell(v):
    if not v:
        return "- | - | - | -"
    return "%.0f | %d | %d | %d" % (v["insns"] / 1000.0, v["entries"], v["barriers"], v["lazy"])


def write_boot_cost(w, res):
    bc = res["boot_cost"]
    if not any(bc.values()):
        return
    w("## Building the linear map at boot (QEMU -icount)\n")
    w("Under `-icount shift=0` each instruction is 1 ns of virtual time, so the "
      "virtual-counter ticks the test-only patches print around map_mem() and "
      "the repaint are instruction counts (to 16 instructions, one tick at 62.5 MHz). "
      "Entries: valid kernel page-table entries written; barrier pairs: DSB+ISB "
      "issued for them; batches: lazy MMU sections entered. 2 CPUs.\n")
    w("| RAM | setup | map_mem kinsns | entries | barrier pairs | batches | tables after boot |")
    w("|---|---|---|---|---|---|---|")
    for m in res["mems"]:
        for s, label in IC_SETUPS:
            r = bc.get(m, {}).get(s)
            if not r:
                w("| %s | %s | missing | | | | |" % (m, label))
                continue
            w("| %s | %s | %s | %s |" % (m, label, cost_cell(r["map_mem"]), r["table_pages"]))
    w("")
    w("![map_mem and repaint cost against RAM](boot_cost.png)\n")
    w("### Repaint (BBML2 on the boot CPU only) against the unpatched PTE map_mem()\n")
    w("| RAM | repaint kinsns | entries | barrier pairs | batches | unpatched map_mem kinsns | ratio |")
    w("|---|---|---|---|---|---|---|")
    for m in res["mems"]:
        rp = (bc.get(m, {}).get("ic-repaint") or {}).get("repaint")
        u = (bc.get(m, {}).get("ic-full-unpatched") or {}).get("map_mem")
        w("| %s | %s | %s | %s |" % (
            m, cost_cell(rp), "%.0f" % (u["insns"] / 1000.0) if u else "-",
            "%.2f" % (rp["insns"] / u["insns"]) if rp and u else "-"))
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


def write_md(d, res):
    L = []
    w = L.append
    w("# Linear map benchmark: unpatched 6.12 against the series\n")
    w("Produced by `make bench` (figures in `bench.json`). 4K pages, %s "
      "for both kernels, QEMU TCG `-cpu max`; every boot has a " % res["config"] +
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
    w("")
    write_boot_cost(w, res)
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
    write_setmem_icount(w, res)
    write_hotplug(w, res)
    write_kexec_copy(w, res)
    write_collapse(w, res)
    write_contpte(w, res)
    if res["problems"]:
        w("## Problems\n")
        for p in res["problems"]:
            w("- " + p)
    open(os.path.join(d, "report.md"), "w").write("\n".join(L) + "\n")
    print("\n".join(L))


if __name__ == "__main__":
    sys.exit(main())
