#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# usage: sweep.sh TLBSIM REC OUTDIR
# The sensitivity of the model's figures to what no manual gives: the
# recording REC (make bench-tlb's out/tlb/rec.zst) replayed against the
# Neoverse N1 as published and against each variant of its table below,
# one table a variant, written to OUTDIR (one replay's JSON per group;
# report.py reads them as further cores).
#   l1d-N        the L1 data TLB with N entries (16 to 128; the N1 has 48)
#   l1d-no512m   no 512M entries in the L1D: a 1G block takes 2M entries
#   l1d-no2m     neither 2M nor 512M: blocks take 64K entries
#   l1d-nocont   no 64K entries: the contiguous hint ignored at 4K
#   plru, random the replacement of every level
# and a third replay, inject.json: the N1 with injected invalidations
# (tlbsim --inject), all of a vCPU's TLBs or its L1s emptied 1, 10 or 100
# times per million of its instructions, as a many-core server's other
# cores would.
set -eu
tlbsim=${1:?usage: sweep.sh TLBSIM REC OUTDIR}
rec=${2:?usage: sweep.sh TLBSIM REC OUTDIR}
out=${3:?usage: sweep.sh TLBSIM REC OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
n1=$here/neoverse-n1.tsv
[ -x "$tlbsim" ] || { echo "sweep.sh: no tlbsim at $tlbsim (make -C $here O=DIR host)" >&2; exit 1; }
[ -f "$rec" ] || { echo "sweep.sh: no recording at $rec (make bench-tlb writes out/tlb/rec.zst)" >&2; exit 1; }
mkdir -p "$out/cores"

# variant NAME AWK-PROGRAM: the N1's table, changed by the program.
variant() {
	awk "$2" "$n1" >"$out/cores/$1.tsv"
}
for e in 16 32 64 96 128; do
	variant "l1d-$e" "BEGIN { OFS = \"\t\" } \$1 == \"l1d\" { \$2 = $e; \$3 = $e } { print }"
done
variant l1d-no512m 'BEGIN { OFS = "\t" } $1 == "l1d" { $4 = "4K,16K,64K,2M" } { print }'
variant l1d-no2m 'BEGIN { OFS = "\t" } $1 == "l1d" { $4 = "4K,16K,64K" } { print }'
variant l1d-nocont 'BEGIN { OFS = "\t" } $1 == "l1d" { $4 = "4K,16K,2M,512M" } { print }'
variant plru '{ print } END { print "replace\tplru" }'
variant random '{ print } END { print "replace\trandom" }'

# Two replays, five variant cores each beside the N1 (40 models at most).
group() {	# NAME TABLE...
	local name=$1 args=()
	shift
	for t in "$@"; do args+=(--params "$out/cores/$t.tsv"); done
	"$tlbsim" replay --variants tlbi_va_all --params "$n1" "${args[@]}" "$rec" "$out/$name.json" \
		2>"$out/$name.log"
}
group entries l1d-16 l1d-32 l1d-64 l1d-96 l1d-128 &
a=$!
group sizes l1d-no512m l1d-no2m l1d-nocont plru random
wait $a
"$tlbsim" replay --inject all@1,all@10,all@100,l1@1,l1@10,l1@100 --params "$n1" "$rec" \
	"$out/inject.json" 2>"$out/inject.log"
echo "$out/entries.json"
echo "$out/sizes.json"
echo "$out/inject.json"
