#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A layout for the TLB model (its format: layout_load() in tlbmodel.h),
from the kernel's ptdump.

A tlb guest (scripts/guest/init, job tlb) records
/sys/kernel/debug/kernel_page_tables as [tlb.layout.NAME] sections of
its NAME.data. Each ptdump line is a run of leaves of one level with one
set of attributes; CON marks contiguous ones.

usage:
  layout.py DATA SECTION PAGE_SIZE OUT [--linear-pte | --linear-from DATA2 SECTION2]
      OUT: the layout file of the page tables in
      SECTION; --linear-pte maps the linear map by base pages instead (the
      unpatched rodata=full layout); --linear-from takes the linear map's
      leaves from another dump (the rodata=on boot), the rest from SECTION.
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
from linmap_data import sections  # noqa: E402

LINE = re.compile(r"^(0x[0-9a-f]+)-(0x[0-9a-f]+)\s+\S+\s+(PGD|P4D|PUD|PMD|PTE)\s+(.*)$")
# log2 of the page size: PTE, CONT_PTE, PMD, CONT_PMD, PUD shifts.
SHIFTS = {
    12: {"PTE": 12, "CPTE": 16, "PMD": 21, "CPMD": 25, "PUD": 30},
    14: {"PTE": 14, "CPTE": 21, "PMD": 25, "CPMD": 30, "PUD": 36},
    16: {"PTE": 16, "CPTE": 21, "PMD": 29, "CPMD": 34, "PUD": 42},
}


def fail(msg):
    sys.stderr.write("layout.py: %s\n" % msg)
    sys.exit(2)


def leaves(data, section, page_shift):
    """[(start, end, shift, linear)] of the dump, and the linear map's range."""
    secs = sections(data)
    if section not in secs:
        fail("%s has no [%s] section" % (data, section))
    out, linear, lin = [], False, [None, None]
    for line in secs[section]:
        if "Linear Mapping start" in line:
            linear = True
        elif "Linear Mapping end" in line:
            linear = False
        m = LINE.match(line)
        if not m:
            continue
        a, b, level, attrs = int(m.group(1), 16), int(m.group(2), 16), m.group(3), m.group(4)
        if level in ("PGD", "P4D") or not attrs.strip() or attrs.startswith("F"):
            continue   # never a leaf on arm64; nothing mapped; not valid
        key = ("C" + level if " CON " in " %s " % attrs else level)
        shift = SHIFTS[page_shift][key]
        out.append((a, b, shift, linear))
        if linear:
            lin[0] = a if lin[0] is None else min(lin[0], a)
            lin[1] = b if lin[1] is None else max(lin[1], b)
    if lin[0] is None:
        fail("[%s] of %s has no Linear Mapping part" % (section, data))
    return out, lin


def main(argv):
    if len(argv) < 5:
        fail(__doc__)
    data, section, psize, out_path = argv[1:5]
    page_shift = {"4K": 12, "16K": 14, "64K": 16}.get(psize)
    if page_shift is None:
        fail("page size %s: 4K, 16K or 64K" % psize)
    ranges, lin = leaves(data, section, page_shift)
    rest = argv[5:]
    if rest == ["--linear-pte"]:
        ranges = [(a, b, page_shift if linear else s, linear) for a, b, s, linear in ranges]
    elif len(rest) == 3 and rest[0] == "--linear-from":
        other, olin = leaves(rest[1], rest[2], page_shift)
        ranges = [r for r in ranges if not r[3]] + [r for r in other if r[3]]
        lin = [min(lin[0], olin[0]), max(lin[1], olin[1])]
    elif rest:
        fail("unknown arguments %s" % " ".join(rest))
    ranges.sort()
    merged = []
    for a, b, s, _ in ranges:
        if merged and merged[-1][1] > a:
            fail("overlapping ranges at %#x in %s" % (a, data))
        if merged and merged[-1][1] == a and merged[-1][2] == s:
            merged[-1][1] = b
        else:
            merged.append([a, b, s])
    with open(out_path, "w") as f:
        f.write("linear %x %x\n" % (lin[0], lin[1]))
        for a, b, s in merged:
            f.write("%x %x %d\n" % (a, b, s))


if __name__ == "__main__":
    main(sys.argv)
