#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The guest's data block (NAME.data), for every script that reads one.

The guest prints, between '@@LINMAP-BEGIN' and '@@LINMAP-END rc=N',
sections: a '[name]' line, then 'key=value' lines (or raw lines, as in
[ptdump.boot]); 'module=loaded' or 'module=failed' stands in whichever
section is open when the module is loaded; [tap], the kselftests' output,
comes last and runs to the end marker.

usage:
  linmap_data.py tap FILE [--nested]   one TAP result a line:
        ok|fail|skip<TAB>NUMBER NAME<TAB>reason (a SKIP's reason, or a
        failure's directive); --nested: the results one level down
        ('# ok ...', as run_kselftest.sh prints its tests' own)
  linmap_data.py plans FILE            each TAP stream's plan against the
        tests it ran; exit 1 on a broken one or no stream at all
  linmap_data.py ktap FILE             the KUnit results in [ktap], one a
        line as for tap, named SUITE.TEST[.CASE]; a suite or test that
        failed without a failed case below it is a result of its own
  linmap_data.py totals FILE           kselftest's 'Totals: pass:...' line
  linmap_data.py log FILE NAME         the output of test NAME, from its
                                       RUN line to its result (25 lines)
  linmap_data.py get FILE SECTION KEY  a value; exit 1 if there is none
  linmap_data.py has FILE SECTION      exit 0 if the section is there
  linmap_data.py section FILE SECTION  the section's lines as printed
  linmap_data.py module FILE           loaded, failed or missing
  linmap_data.py map FILE              each workload's linear map against
        what the kernel's state implies, one a line:
        ok|fail|skip<TAB>WORKLOAD<TAB>expectation<TAB>detail
  linmap_data.py maptable FILE         those workloads as a table: result
        and figures from the TAP, leaves before > after > after the
        checks, splits and folds
"""
import re
import sys

KINDS = ["pud", "cont_pmd", "pmd", "cont_pte", "pte"]
TAP_RESULT = re.compile(r"^(not ok|ok) (\d+)(?: (.*?))?(?: # (.*))?$")
TAP_PLAN = re.compile(r"^1\.\.(\d+)")


def sections(path):
    """{section: [lines]}, in order; 'end' holds the end marker's rc."""
    out, cur = {}, None
    for line in open(path, errors="replace"):
        line = line.rstrip("\r\n")
        if line.startswith("@@LINMAP-END"):
            out["end"] = ["rc=" + line.split("rc=")[-1]]
            cur = None
            continue
        if line.startswith("@@LINMAP"):
            continue
        # [tap] is the kselftests' own text: nothing in it opens a section.
        if cur != "tap" and line.startswith("[") and line.endswith("]"):
            cur = line[1:-1]
            out.setdefault(cur, [])
            continue
        if cur is not None:
            out[cur].append(line)
    return out


def num(v):
    try:
        return int(v, 0)
    except ValueError:
        return v


def parse(path):
    """{section: {key: value}}, values as numbers where they are."""
    out = {}
    for name, lines in sections(path).items():
        if name == "tap":
            continue
        sec = out.setdefault(name, {})
        for line in lines:
            k, eq, v = line.partition("=")
            if eq:
                # The end marker's rc stays a string, as the guest wrote it.
                sec[k] = v if name == "end" else num(v)
    return out


def module(path):
    for lines in sections(path).values():
        for line in lines:
            if line in ("module=loaded", "module=failed"):
                return line[len("module="):]
    return "missing"


def tap(path, nested=False):
    """[(status, 'NUMBER NAME', reason)] of one level of the TAP output."""
    prefix = "# " if nested else ""
    out = []
    for line in sections(path).get("tap", []):
        if not line.startswith(prefix) or (not nested and line.startswith("#")):
            continue
        m = TAP_RESULT.match(line[len(prefix):])
        if not m:
            continue
        name = m.group(2) + (" " + m.group(3) if m.group(3) else "")
        directive = m.group(4) or ""
        if m.group(1) == "not ok":
            out.append(("fail", name, directive))
        elif directive.upper().startswith("SKIP"):
            out.append(("skip", name, directive[4:].strip()))
        else:
            out.append(("ok", name, directive))
    return out


def plans(path):
    """[(program, problem)]: each TAP stream of the [tap] section (from its
    'TAP version' line) must run the tests its '1..N' plan announces, 1 to
    N in order, each once; a stream without a plan or a result after the
    plan's last is a problem too. A stream is named by its first test."""
    problems, streams, cur = [], [], None
    for line in sections(path).get("tap", []):
        if line.startswith("TAP version"):
            cur = {"plan": None, "nums": [], "name": None}
            streams.append(cur)
            continue
        if cur is None:
            # Output with no 'TAP version' line (the workloads' own).
            if not (TAP_RESULT.match(line) or TAP_PLAN.match(line)):
                continue
            cur = {"plan": None, "nums": [], "name": None}
            streams.append(cur)
        m = TAP_PLAN.match(line)
        if m and cur["plan"] is None:
            cur["plan"] = int(m.group(1))
            continue
        m = TAP_RESULT.match(line)
        if m:
            cur["nums"].append(int(m.group(2)))
            cur["name"] = cur["name"] or (m.group(3) or "").split(" ")[0]
    for i, st in enumerate(streams):
        name = st["name"] or "program %d" % (i + 1)
        if st["plan"] is None:
            problems.append((name, "no plan"))
        elif st["nums"] != list(range(1, st["plan"] + 1)):
            problems.append((name, "plan 1..%d, ran %s" % (
                st["plan"], ",".join(map(str, st["nums"])) or "nothing")))
    return len(streams), problems


KTAP_SUBTEST = re.compile(r"^(\s*)# Subtest: (\S+)")


def ktap(path):
    """[(status, name, reason)] of the innermost KTAP results; a parent's
    own line counts only when it failed and none below it did."""
    out, stack = [], []	# stack: [indent, name, failed below]
    for line in sections(path).get("ktap", []):
        m = KTAP_SUBTEST.match(line)
        if m:
            stack.append([len(m.group(1)), m.group(2), False])
            continue
        indent = len(line) - len(line.lstrip())
        m = TAP_RESULT.match(line.strip())
        if not m:
            continue
        failed = m.group(1) == "not ok"
        directive = m.group(4) or ""
        name = m.group(3) or m.group(2)
        if stack and stack[-1][0] > indent:
            # The line that closes a subtest.
            _, _, below = stack.pop()
            if not failed or below:
                if failed and stack:
                    stack[-1][2] = True
                continue
        path_name = ".".join([s[1] for s in stack] + [name])
        if failed:
            for s in stack:
                s[2] = True
            out.append(("fail", path_name, directive))
        elif directive.upper().startswith("SKIP"):
            out.append(("skip", path_name, directive[4:].strip()))
        else:
            out.append(("ok", path_name, directive))
    return out


def totals(path):
    for line in sections(path).get("tap", []):
        if line.startswith("# Totals:"):
            return line[2:]
    return None


def test_log(path, name, most=25):
    """The lines of one test, from '#  RUN name ...' to its result."""
    name = name.split()[-1]
    out, on = [], False
    for line in sections(path).get("tap", []):
        if re.match(r"^#\s+RUN\s+%s " % re.escape(name), line):
            on = True
        if on:
            out.append(line)
            if line.startswith("not ok ") or line.startswith("ok "):
                on = False
    return out[-most:]


MAP_PHASES = ["before", "after", "settled"]
# The workloads whose permission changes must split a block-mapped
# rodata=full map: secretmem, seccomp's JIT and module loads (stress_ng),
# the JIT alone (bpfjit), module loads.
MAP_SPLITTERS = ("stress_ng", "bpfjit", "modload")


def workloads_map(path):
    """[(NAME.RUN, {key: value})] of the [wl.NAME.RUN] sections, in order."""
    return [(k[3:], v) for k, v in parse(path).items() if k.startswith("wl.")]


def leaves_of(d, phase):
    return {k: d.get("%s.%s" % (phase, k)) for k in KINDS}


def leaves_total(d, phase):
    """All the leaves of a phase, None where one kind is missing."""
    vals = list(leaves_of(d, phase).values())
    return None if None in vals else sum(vals)


def map_text(d, kinds=KINDS):
    """'pte 128>544>130 ...': each kind's leaves in each phase there is."""
    out = []
    for k in kinds:
        vals = [d.get("%s.%s" % (p, k)) for p in MAP_PHASES]
        vals = [str(v) for v in vals if v is not None]
        if vals:
            out.append("%s %s" % (k, ">".join(vals)))
    return " ".join(out)


def map_judge(path):
    """[(status, workload, expectation, detail)]: each workload's linear
    map against what the kernel says of itself ([state]): a page-mapped
    map stays so; rodata=on's blocks stay (nothing splits where
    set_direct_map_*() cannot, else all folds back); with
    rodata=full and blocks, the workloads that change permissions split
    and, in a kernel that folds, fold back."""
    st = parse(path).get("state", {})
    blocks, full = st.get("linear_blocks"), st.get("rodata_full")
    out = []
    for name, d in workloads_map(path):
        detail = map_text(d)
        trace = "splits" in d
        if trace:
            lost = d.get("trace_written", 0) - d.get("trace_kept", 0)
            detail += "; splits %s, folds %s%s" % (
                d["splits"], d["folds"],
                " (%d events lost: lower bounds)" % lost if lost > 0 else "")
        if "settled.pte" not in d:
            # kexec and kdump hand over to another kernel by design.
            if name.split(".")[0] not in ("kexec", "kdump"):
                out.append(("skip", name, "the linear map after it",
                            "the kernel kept no record after it"))
            continue
        if blocks == 0:
            what = "the linear map stays page-mapped: no PUD or PMD leaf, no split"
            good = all(d.get("%s.%s" % (p, k)) == 0 for p in MAP_PHASES
                       for k in ("pud", "cont_pmd", "pmd"))
            good = good and (not trace or d["splits"] == 0)
        elif blocks == 1 and full == 0 and st.get("can_set_direct_map") == 0:
            what = "rodata=on keeps its blocks: no split, the same leaves after"
            good = leaves_of(d, "before") == leaves_of(d, "settled")
            good = good and (not trace or d["splits"] == 0)
        elif blocks == 1 and full == 0:
            # set_direct_map_*() works here (a late KFENCE pool): secretmem
            # may split, and what it gives back must fold. Splits the churn
            # left before it may fold too: a fold takes leaves away, a split
            # adds them, so no more leaves after its checks than before.
            what = "rodata=on's blocks come back: no more leaves after its checks than before"
            after, before = leaves_total(d, "settled"), leaves_total(d, "before")
            good = after is not None and before is not None and after <= before
        elif blocks == 1 and full == 1 and name.split(".")[0] in MAP_SPLITTERS:
            if not trace:
                out.append(("skip", name, "its permission changes split blocks",
                            "no linear_map trace events in this kernel"))
                continue
            if d.get("collapse") == 1:
                what = "its permission changes split blocks, and they fold back"
                good = d["splits"] > 0 and d["folds"] > 0
            else:
                what = "its permission changes split blocks"
                good = d["splits"] > 0
        else:
            continue
        out.append(("ok" if good else "fail", name, what, detail))
    return out


def map_table(path):
    """Lines of a table of the workloads: the TAP result and figures, the
    leaves (before > after > after the checks), splits and folds."""
    results = {}
    for status, name, reason in tap(path):
        n = name.split(" ", 1)[-1]
        if n.startswith("workload.") and ".after." not in n:
            results.setdefault(n[len("workload."):], []).append((status, reason))
    seen, lines = {}, []
    for name, d in workloads_map(path):
        base = name.rsplit(".", 1)[0]
        i = seen.get(base, 0)
        seen[base] = i + 1
        r = results.get(base, [])
        status, reason = r[i] if i < len(r) else (
            "-", "no result" + (": handed over" if "settled.pte" not in d else ""))
        tr = "splits %s folds %s" % (d["splits"], d["folds"]) if "splits" in d else "no trace"
        lines.append("%-18s %-4s %s" % (name, status, reason))
        lines.append("%-18s      %s; %s" % ("", map_text(d) or "no leaves", tr))
    return lines


def main(argv):
    if len(argv) in (2, 3) and argv[0] == "tap" and argv[2:] in ([], ["--nested"]):
        for r in tap(argv[1], nested=len(argv) == 3):
            print("\t".join(r))
        return 0
    if len(argv) == 2 and argv[0] == "plans":
        n, problems = plans(argv[1])
        for name, why in problems:
            print("%s: %s" % (name, why))
        print("%d TAP streams, %d with a broken plan" % (n, len(problems)))
        return 1 if problems or not n else 0
    if len(argv) == 2 and argv[0] == "ktap":
        for r in ktap(argv[1]):
            print("\t".join(r))
        return 0
    if len(argv) == 2 and argv[0] == "totals":
        t = totals(argv[1])
        if t:
            print(t)
        return 0 if t else 1
    if len(argv) == 3 and argv[0] == "log":
        print("\n".join(test_log(argv[1], argv[2])))
        return 0
    if len(argv) == 4 and argv[0] == "get":
        v = parse(argv[1]).get(argv[2], {}).get(argv[3])
        if v is None:
            return 1
        print(v)
        return 0
    if len(argv) == 3 and argv[0] == "has":
        return 0 if argv[2] in sections(argv[1]) else 1
    if len(argv) == 3 and argv[0] == "section":
        lines = sections(argv[1]).get(argv[2])
        if lines is None:
            return 1
        print("\n".join(lines))
        return 0
    if len(argv) == 2 and argv[0] == "map":
        for r in map_judge(argv[1]):
            print("\t".join(r))
        return 0
    if len(argv) == 2 and argv[0] == "maptable":
        for line in map_table(argv[1]):
            print(line)
        return 0
    if len(argv) == 2 and argv[0] == "module":
        print(module(argv[1]))
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
