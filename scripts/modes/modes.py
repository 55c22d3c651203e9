#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The boot-mode matrix of 'make check', 'make soak' and
'make check-geometries', from scripts/modes/modes.tsv and scripts/modes/geometries.tsv.

usage:
  modes.py geometries JOB TREE       the geometries JOB builds by default
  modes.py list JOB TREE GEOMETRY... one guest a line, in boot order:
                                     geometry, name, cmdline, stress, smp,
                                     checks, tab-separated, '-' for none
  modes.py names JOB TREE [PREFIX]   the names of JOB's modes for TREE (that
                                     start with PREFIX), one line
  modes.py show                      every job and tree with its default
                                     geometries, as 'list' prints them
  modes.py kind WORD...              for each WORD 'geometry', 'mode' (of
                                     any job or tree) or 'none', a line
Environment: CHURN_SECS (5), SOAK_SECS (600), STRESS (replaces a mode's
stress), CHECK_MODES (only the modes named, e.g. "bbml2-all rodata-on").
"""
import fnmatch
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
JOBS = ("check", "soak", "geometries")
TREES = ("series", "core", "base")


def rows(name):
    """Non-comment lines of a table, split on tabs; the last column is
    the rest of the line."""
    for line in open(os.path.join(HERE, name)):
        line = line.rstrip("\n")
        if line.strip() and not line.startswith("#"):
            yield [f for f in line.split("\t") if f]


def geometries(job, tree):
    out = []
    for name, _page, _va, jobs in rows("geometries.tsv"):
        if any(j in (job, "%s:%s" % (job, tree)) for j in jobs.split()):
            out.append(name)
    return out


def table():
    macros, modes = {}, []
    for r in rows("modes.tsv"):
        if r[0].startswith("{"):
            macros[r[0]] = r[1]
            continue
        if len(r) != 8:
            sys.exit("modes.tsv: want 8 columns, got %d: %s" % (len(r), r))
        modes.append(dict(zip(("name", "geometries", "tree", "job", "stress",
                               "smp", "checks", "cmdline"), r)))
    return macros, modes


def matches(pattern, geometry):
    """pattern: comma-separated shell patterns, each one or its negation
    (!): the geometry must match no negation and, where there is one
    without !, one of those."""
    terms = pattern.split(",")
    if any(fnmatch.fnmatchcase(geometry, t[1:]) for t in terms if t.startswith("!")):
        return False
    wanted = [t for t in terms if not t.startswith("!")]
    return not wanted or any(fnmatch.fnmatchcase(geometry, t) for t in wanted)


def guests(job, tree, geos, env=os.environ):
    macros, modes = table()
    secs = env.get("SOAK_SECS") or "600" if job == "soak" else env.get("CHURN_SECS") or "5"
    macros["{churn}"] = "linmap.churn=" + secs
    only = (env.get("CHECK_MODES") or "").split()
    for g in geos:
        for m in modes:
            # "*" is the series or the base tree; the core tree is named.
            wanted = m["tree"] == tree or (m["tree"] == "*" and tree != "core")
            if m["job"] != job or not wanted:
                continue
            if not matches(m["geometries"], g) or (only and m["name"] not in only):
                continue
            cmd = re.sub(r"\{\w+\}", lambda x: macros[x.group(0)], m["cmdline"])
            stress = m["stress"]
            if stress != "-":
                stress = (env.get("STRESS") or stress.replace(",", " "))
            yield (g, m["name"], " ".join(cmd.split()) or "-", stress,
                   m["smp"], m["checks"])


def main(argv):
    if len(argv) == 3 and argv[0] == "geometries":
        print(" ".join(geometries(argv[1], argv[2])))
    elif len(argv) >= 3 and argv[0] == "list":
        for g in guests(argv[1], argv[2], argv[3:]):
            print("\t".join(g))
    elif len(argv) in (3, 4) and argv[0] == "names":
        _, modes = table()
        names = []
        for m in modes:
            wanted = m["tree"] == argv[2] or (m["tree"] == "*" and argv[2] != "core")
            if m["job"] == argv[1] and wanted and m["name"].startswith(argv[3:] and argv[3] or ""):
                if m["name"] not in names:
                    names.append(m["name"])
        print(" ".join(names))
    elif len(argv) >= 2 and argv[0] == "kind":
        geos = [r[0] for r in rows("geometries.tsv")]
        names = [m["name"] for m in table()[1]]
        for w in argv[1:]:
            print("geometry" if w in geos else "mode" if w in names else "none")
    elif argv == ["show"]:
        for job in JOBS:
            for tree in TREES:
                print("## %s, %s tree" % (job, tree))
                for g in guests(job, tree, geometries(job, tree)):
                    print("%s-%s\t%s" % (g[0], g[1], "\t".join(g[2:])))
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
