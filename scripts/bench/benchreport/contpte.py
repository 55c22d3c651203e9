# SPDX-License-Identifier: GPL-2.0
"""Contiguous user PTEs: contpte_convert(), by the clock and under
-icount."""
from .common import IC_SETUPS, SETUPS, load, problem


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
