# SPDX-License-Identifier: GPL-2.0
"""What every section shares: the setups of scripts/bench/bench-setups.tsv,
the problems found, loading a guest's data (scripts/lib/linmap_data.py, the
parser make check uses) and reading its counts and timings, gnuplot."""
import os
import statistics
import subprocess
import sys

from linmap_data import KINDS, parse

# The table of setups, beside bench.sh.
SETUPS_TSV = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                          "bench-setups.tsv")


def bench_work(kind, name):
    """The work column of one setup of scripts/bench/bench-setups.tsv."""
    for line in open(SETUPS_TSV):
        f = line.rstrip("\n").split("\t")
        if not line.startswith("#") and f[0] == kind and f[1] == name:
            return f[3].split(",")
    return []


def bench_setups(kind, prefix=""):
    """[(name, label)] of one kind of scripts/bench/bench-setups.tsv."""
    out = []
    for line in open(SETUPS_TSV):
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


def kilo(v):
    return "%.1f" % (v / 1000.0) if v else "-"


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
