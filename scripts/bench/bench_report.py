#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the guests' data blocks of 'make bench' into a report.

usage: bench_report.py DIR "MEMS" [CONFIG-DESCRIPTION ["HOTPLUG-SIZES" [HEAL-SECS]]]
Reads DIR/<setup>-<mem>.data (and DIR/hp-<setup>-<size>.data for each
hot-plug size), writes DIR/report.md, DIR/bench.json and
DIR/*.png (gnuplot). Exits 1 if a figure is missing or not sane: zero, or
inconsistent with the leaf counts it came with.

One module per report section in scripts/bench/benchreport/.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from benchreport.boot_cost import boot_cost_setups, boot_cost_targets, write_boot_cost  # noqa: E402
from benchreport.collapse import (  # noqa: E402
    collapse_cost,
    collapse_rounds_target,
    heal_charts,
    heal_workload,
    write_collapse,
)
from benchreport.common import problems  # noqa: E402
from benchreport.contpte import contpte_costs, write_contpte  # noqa: E402
from benchreport.hotplug import hotplug_icount, write_hotplug  # noqa: E402
from benchreport.kexec import kexec_copy, write_kexec_copy  # noqa: E402
from benchreport.memory import (  # noqa: E402
    charts,
    memory_setups,
    memory_targets,
    write_fragmentation,
    write_memory,
)
from benchreport.setmem import setmem_targets, write_setmem, write_setmem_icount  # noqa: E402


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


def write_md(d, res):
    L = []
    w = L.append
    w("# Linear map benchmark: unpatched 6.12 against the series\n")
    w("Produced by `make bench` (figures in `bench.json`). 4K pages, %s "
      "for both kernels, QEMU TCG `-cpu max`; every boot has a " % res["config"] +
      "KFENCE pool set up at boot (`kfence.sample_interval=1000000`). The "
      "patched kernel claims BBML2_NOABORT on all CPUs (`bbml2_test=all`).\n")
    write_memory(w, res)
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
    write_fragmentation(w, res)
    write_setmem(w, res)
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
