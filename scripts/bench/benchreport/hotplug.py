# SPDX-License-Identifier: GPL-2.0
"""Memory hot-add and hot-remove under -icount."""
from linmap_data import KINDS
from .common import HP_SETUPS, insns, kilo, load, problem


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
