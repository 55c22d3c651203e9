# SPDX-License-Identifier: GPL-2.0
"""kexec's copy of the linear map under -icount."""
from .common import IC_SETUPS, bench_work, load, problem


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
