#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# usage: relayout.sh TLBSIM TLBDIR OUTDIR NAME=DATA[:SECTION]...
# The accesses of make bench-tlb's recording (TLBDIR/rec.zst, its windows
# in TLBDIR/windows) replayed on other kernels' linear maps: for each
# NAME, the layout in section SECTION (default tlb.layout.life, what make
# bench-upstream's guests dump after their churn) of the data block DATA
# stands in for rodata=on's ("tlbsim replay --on"). The same accesses, so
# the difference between two NAMEs is their linear maps' alone; the
# kernel text, modules and vmalloc stay the recording kernel's.
# Writes OUTDIR/NAME.layout and OUTDIR/NAME.json, then the table of
# relayout_report.py.
set -eu
usage="usage: relayout.sh TLBSIM TLBDIR OUTDIR NAME=DATA[:SECTION]..."
tlbsim=${1:?$usage}
tlbdir=${2:?$usage}
out=${3:?$usage}
shift 3
[ $# -gt 0 ] || { echo "$usage" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
[ -x "$tlbsim" ] || { echo "relayout.sh: no tlbsim at $tlbsim (make -C $here O=DIR host)" >&2; exit 1; }
for f in rec.zst windows; do
	[ -f "$tlbdir/$f" ] || { echo "relayout.sh: no $tlbdir/$f (make bench-tlb writes out/tlb/)" >&2; exit 1; }
done
mkdir -p "$out"
names=()
for arg in "$@"; do
	name=${arg%%=*} spec=${arg#*=}
	data=${spec%%:*} section=tlb.layout.life
	[ "$spec" = "$data" ] || section=${spec#*:}
	[[ "$name" =~ ^[A-Za-z0-9._-]+$ ]] && [ "$name" != "$arg" ] ||
		{ echo "relayout.sh: '$arg' is not NAME=DATA[:SECTION]" >&2; exit 2; }
	python3 "$here/layout.py" "$data" "$section" 4K "$out/$name.layout"
	echo "relayout.sh: $name: the recording on the linear map of $data [$section]" >&2
	"$tlbsim" replay --on "$out/$name.layout" --params "$here/neoverse-n1.tsv" \
		"$tlbdir/rec.zst" "$out/$name.json" 2>"$out/$name.log" ||
		{ echo "relayout.sh: $name: the replay failed: $(tail -2 "$out/$name.log")" >&2; exit 1; }
	names+=("$name=$out/$name.json")
done
python3 "$here/relayout_report.py" "$tlbdir/windows" "${names[@]}" | tee "$out/report.md"
