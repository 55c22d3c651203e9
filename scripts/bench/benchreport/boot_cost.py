# SPDX-License-Identifier: GPL-2.0
"""Building the linear map at boot under -icount: map_mem(), the repaint,
and the test-only counters' page-table writes and barriers."""
from .common import IC_SETUPS, counts, insns, load, problem, sane_counts
from .setmem import setmem_icount


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
                                  ptes if setup in ("ic-full-unpatched", "ic-full-ptes") else 1),
             "table_pages": c["table_pages"], "leaves": c["n"]}
        if setup == "ic-repaint":
            r["repaint"] = step_cost(name, bc, cbc, "repaint",
                                     max(1, ptes - ptes_of.get("ic-full-patched", 0)))
        res["boot_cost"][mem][setup] = r
        if mem == "4G" and "setmem" in data:
            res["setmem_icount"][setup] = setmem_icount(name, data, cdata)


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
        pt = x.get("ic-full-ptes") or {}
        if (x.get("ic-full-unpatched") or {}).get("leaves") and pt.get("leaves"):
            # linear_map_ptes: the series' kernel with 6.12's layout, leaf
            # for leaf and table for table; its map_mem() batches barriers.
            un = x["ic-full-unpatched"]
            t["linear_map_ptes_layout_" + mem] = {
                "leaves": pt["leaves"], "table_pages": pt["table_pages"],
                "unpatched_leaves": un["leaves"], "unpatched_table_pages": un["table_pages"],
                "map_mem_insns_ratio": round(pt["map_mem"]["insns"] / u["insns"], 3)
                if u and pt.get("map_mem") else None,
                "met": pt["leaves"] == un["leaves"] and pt["table_pages"] == un["table_pages"]}
            if not t["linear_map_ptes_layout_" + mem]["met"]:
                problem("ic-full-ptes-%s: linear_map_ptes left %s leaves and %s tables, "
                        "unpatched rodata=full %s and %s" % (mem, pt["leaves"], pt["table_pages"],
                                                             un["leaves"], un["table_pages"]))
        if pa and rp.get("map_mem"):
            # Same code through map_mem() in both boots, so the same count,
            # to the one tick (16 instructions) a window can straddle.
            t["map_mem_repeats_" + mem] = {
                "ticks_bbml2_all": pa["ticks"], "ticks_bbml2_boot": rp["map_mem"]["ticks"],
                "met": abs(pa["ticks"] - rp["map_mem"]["ticks"]) <= 1}


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
