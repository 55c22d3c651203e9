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
    if len(argv) == 2 and argv[0] == "module":
        print(module(argv[1]))
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
