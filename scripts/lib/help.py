#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""make help: the targets (scripts/lib/help.txt); make help VARS=1: the
variables (scripts/lib/variables.tsv), each with its default and, in
brackets, the value the environment or the make command line gives it
where that is another."""
import os
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))


def variables():
    for line in open(os.path.join(HERE, "variables.tsv")):
        line = line.rstrip("\n")
        if line and not line.startswith("#"):
            yield line.split("\t")


def main():
    if os.environ.get("VARS", "") in ("", "0"):
        sys.stdout.write(open(os.path.join(HERE, "help.txt")).read())
        print("Variables: make help VARS=1 (scripts/lib/variables.tsv)")
        return 0
    print("Variables (default; [the value given now, where it is another]):")
    for name, default, meaning in variables():
        now = os.environ.get(name, "")
        head = "  %s=%s" % (name, default) if default else "  %s" % name
        if now and now != default:
            head += " [%s]" % now
        print(head)
        print(textwrap.fill(meaning, 76, initial_indent=" " * 6,
                            subsequent_indent=" " * 6))
    return 0


if __name__ == "__main__":
    sys.exit(main())
