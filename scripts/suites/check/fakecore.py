#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""fakecore.py FILE VARIANT: a made-up arm64 ELF core for make check's
test of linmap_vmcore check (scripts/guest/vmcore.c), sparse on disk.

The first kernel's RAM is 0x40000000-0x4fffffff, its crash kernel's
reservation 0x48000000-0x4bffffff, its release 6.12.0-linmap, and the
page at 0x41234000 holds the pattern of cookie 0x1234abcd. VARIANT good
is such a core; each other one breaks one thing the check requires:
machine (x86-64), outside (a PT_LOAD outside RAM), hole (1 MiB
missing), noinfo (no VMCOREINFO), release (another), pattern (a word
changed), nopage (the marked page in no PT_LOAD: the
mark argument is for 0x49000000 there).

For linmap_vmcore walk, cores with page tables: the mem_section root
array at 0x4f000000 with one section array at 0x4f010000, both in the
linear map, and swapper_pg_dir at 0x41000000. walk-block: 64K pages,
42-bit VA (2 levels), a 512 MiB block at the top level maps them
(makedumpfile's walk misreads it); walk-table: the same through a PTE
table (read right); walk-pud: 4K pages, 39-bit VA (3 levels), a 1 GiB
block at the top level (read right); walk-l0: 4K pages, 48-bit VA (4
levels), a block descriptor at level 0, where the architecture has none
(not mapped)."""
import struct
import sys

RAM = (0x40000000, 0x50000000)
CRASH = (0x48000000, 0x4C000000)
MARK, COOKIE = 0x41234000, 0x1234ABCD
PAGE = 4096
M64 = (1 << 64) - 1


def note(name, desc, ntype=0):
    name = name.encode() + b"\0"
    pad = lambda b: b + b"\0" * (-len(b) % 4)
    return struct.pack("<III", len(name), len(desc), ntype) + pad(name) + pad(desc)


def walk_core(variant):
    """VMCOREINFO lines and {physical address: bytes} of a walk variant."""
    voff = 0xFFFFFE003FE00000
    pgd, root, sec = 0x41000000, 0x4F000000, 0x4F010000
    q = lambda *v: struct.pack("<%dQ" % len(v), *v)
    if variant == "walk-pud":
        page, va_bits = 4096, 39
    elif variant == "walk-l0":
        page, va_bits = 4096, 48
    else:
        page, va_bits = 65536, 42
    lin = lambda pa: ((M64 << va_bits) & M64) + pa - RAM[0]
    mem = {root: q(lin(sec), 0)}
    if variant == "walk-table":
        pte = 0x41010000
        mem[pgd] = q(pte | 3)
        for pa in (root, sec):
            mem[pte + ((lin(pa) >> 16) & 8191) * 8] = q(pa | 0x703)
    else:
        mem[pgd] = q(RAM[0] | 0x705)
    info = ("NUMBER(VA_BITS)=%d\nSYMBOL(swapper_pg_dir)=%x\nNUMBER(kimage_voffset)=%#x\n"
            "SYMBOL(mem_section)=%x\nLENGTH(mem_section)=2\n"
            % (va_bits, pgd + voff, voff, lin(root)))
    return page, info, mem


def main(path, variant):
    loads = [(RAM[0], CRASH[0]), (CRASH[1], RAM[1])]
    page, extra, mem = 4096, "", {}
    if variant.startswith("walk-"):
        page, extra, mem = walk_core(variant)
    if variant == "hole":
        loads[1] = (CRASH[1] + 0x100000, RAM[1])
    if variant == "outside":
        loads.append((0x60000000, 0x60010000))
    release = "6.12.0-other" if variant == "release" else "6.12.0-linmap"
    info = ("OSRELEASE=%s\nPAGESIZE=%d\n%s" % (release, page, extra)).encode()
    notes = note("CORE", b"\0" * 392, 1)
    if variant != "noinfo":
        notes += note("VMCOREINFO", info)
    nph = 1 + len(loads)
    off = 64 + 56 * nph
    phdrs = struct.pack("<IIQQQQQQ", 4, 0, off, 0, 0, len(notes), 0, 4)
    data_off = (off + len(notes) + 0xFFFF) & ~0xFFFF
    placed = []
    for start, end in loads:
        phdrs += struct.pack("<IIQQQQQQ", 1, 7, data_off, 0xFFFF000000000000 + start,
                             start, end - start, end - start, PAGE)
        placed.append((start, end, data_off))
        data_off += end - start
    machine = 62 if variant == "machine" else 183
    ehdr = b"\x7fELF" + bytes([2, 1, 1]) + b"\0" * 9
    ehdr += struct.pack("<HHIQQQIHHHHHH", 4, machine, 1, 0, 64, 0, 0, 64, 56, nph, 0, 0, 0)
    words = [COOKIE ^ ((0x9E3779B97F4A7C15 * (i + 1)) & M64) for i in range(PAGE // 8)]
    if variant == "pattern":
        words[17] ^= 1
    with open(path, "wb") as f:
        f.write(ehdr + phdrs)
        f.write(notes)
        mem[MARK] = struct.pack("<%dQ" % len(words), *words)
        for pa, data in mem.items():
            for start, end, at in placed:
                if start <= pa < end:
                    f.seek(at + pa - start)
                    f.write(data)
        f.truncate(data_off)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
