#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# usage: boots.sh N DIR
# The spread between boots: make bench-tlb N times, each a boot of its
# own (TLB_REPLAY=0: the plugin's models, no recording), into DIR/boot1
# to DIR/bootN, then boots_report.py's table of them in DIR/report.md.
# make bench-tlb's other settings (TLB_SIZE, TLB_WORKLOADS, TLB_RUNS...)
# come from the environment. A boot already in DIR (its tlb.json) is
# kept: a run cut short goes on from the next.
set -eu
n=${1:?usage: boots.sh N DIR}
dir=${2:?usage: boots.sh N DIR}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
[[ "$n" =~ ^[1-9][0-9]?$ ]] || { echo "boots.sh: N takes 1 to 99 boots (got '$n')" >&2; exit 2; }
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
for i in $(seq "$n"); do
	b=$dir/boot$i
	if [ -f "$b/tlb.json" ]; then
		echo "boots.sh: boot $i of $n is in $b already" >&2
		continue
	fi
	echo "boots.sh: boot $i of $n into $b" >&2
	TLB_OUT=$b TLB_REPLAY=0 make -s -C "$top" bench-tlb >"$dir/boot$i.log" 2>&1 ||
		{ echo "boots.sh: boot $i failed; see $dir/boot$i.log" >&2; exit 1; }
done
dirs=()
for i in $(seq "$n"); do dirs+=("$dir/boot$i"); done
python3 "$here/boots_report.py" "${dirs[@]}" | tee "$dir/report.md"
