#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Leaf counts of the linear map from the kernel's own ptdump.

The guest saves the "Linear Mapping" part of
/sys/kernel/debug/kernel_page_tables before the test module loads, as the
[ptdump.boot] section of NAME.data. This gives an independent view of the
linear map at boot, untouched by anything the tests do.

usage:
  ptdump.py show DATA             print leaf counts per kind
  ptdump.py same DATA_A DATA_B    exit 1 unless both have the same leaf
                                  distribution outside the kernel image
                                  alias and the KFENCE pool
  ptdump.py ptes DATA             exit 1 unless every leaf there is a
                                  plain PTE (no block, no contiguous range)
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from linmap_data import parse, sections  # noqa: E402

LINE = re.compile(r"^(0x[0-9a-f]+)-(0x[0-9a-f]+)\s+\S+\s+(PUD|PMD|PTE)\s+(.*)$")


def state(path):
    return {k: str(v) for k, v in parse(path).get("state", {}).items()}


def ranges(st):
    out = []
    for key in ("kimage_alias", "kfence_pool"):
        v = st.get(key, "none")
        if v != "none" and "-" in v:
            a, b = v.split("-")
            out.append((int(a, 16), int(b, 16)))
    return out


def counts(path, exclude=()):
    st = state(path)
    ps = int(st.get("page_size", "4096"))
    size = {"PTE": ps, "PMD": ps * (ps // 8), "PUD": ps * (ps // 8) ** 2}
    lines = sections(path).get("ptdump.boot")
    if not lines:
        raise SystemExit("%s: no [ptdump.boot] section" % path)
    n = {}
    for line in lines:
        m = LINE.match(line)
        if not m:
            continue
        start, end = int(m.group(1), 16), int(m.group(2), 16)
        level, attrs = m.group(3), m.group(4).split()
        kind = level.lower()
        if "CON" in attrs:
            kind = "cont_" + kind
        step = size[level]
        for addr in range(start, end, step):
            if any(addr < b and addr + step > a for a, b in exclude):
                continue
            n[kind] = n.get(kind, 0) + 1
    return n


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "show":
        print(counts(sys.argv[2]))
        return 0
    if len(sys.argv) == 3 and sys.argv[1] == "ptes":
        n = counts(sys.argv[2], ranges(state(sys.argv[2])))
        print(n)
        return 0 if n.get("pte") and set(n) == {"pte"} else 1
    if len(sys.argv) == 4 and sys.argv[1] == "same":
        a, b = sys.argv[2], sys.argv[3]
        ex = ranges(state(a)) + ranges(state(b))
        ca, cb = counts(a, ex), counts(b, ex)
        print("%s: %s" % (a, ca))
        print("%s: %s" % (b, cb))
        return 0 if ca == cb else 1
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
