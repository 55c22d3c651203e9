#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench-tlb: kernel-mode TLB refills per thousand instructions,
# simulated. The patched kernel (4K pages, rodata=full, BBML2 claimed by
# all CPUs) runs TLB_WORKLOADS under QEMU -icount with the tlbtrace
# plugin, which runs a Neoverse N1's TLBs (scripts/bench/tlb/neoverse-n1.tsv,
# the model in scripts/bench/tlb/tlbmodel.h) on every vCPU's accesses from
# the guest's first layout on (warm), for three layouts of the linear map
# at once: the series' own (the guest sends its page tables before and
# after each workload), every page a PTE (unpatched rodata=full) and
# rodata=on's (a boot of the same kernel with rodata=on). The plugin also
# records what it modelled; tlbsim replays the recording against the
# model's variants (tlbmodel.h) and any further core (TLB_CORES), and the
# report checks that the replay counts what the plugin counted.
#   TLB_WORKLOADS  memcached fio_dmcrypt seqread modload
#   TLB_RUNS       "5 3": runs of memcached, then of each other workload
#   TLB_SECS       2: memcaslap's run, in virtual seconds
#   TLB_CORES      c1-ultra.tsv: further cores' tables (scripts/bench/tlb/) to replay
# Writes out/tlb/report.md, tlb.json and tlb.png; the recording is
# out/tlb/rec.zst.
. "$(dirname "$0")/../lib/lib.sh"

WORKLOADS=${TLB_WORKLOADS:-memcached fio_dmcrypt seqread modload}
RUNS=${TLB_RUNS:-5 3}
SECS=${TLB_SECS:-2}
[[ "$SECS" =~ ^[1-9][0-9]*$ ]] || die "TLB_SECS takes whole seconds (got '$SECS')"
[[ "$RUNS" =~ ^[1-9][0-9]?\ [1-9][0-9]?$ ]] ||
	die "TLB_RUNS takes two counts, memcached's and the others' (got '$RUNS')"
list=
for w in $WORKLOADS; do
	case $w in
	memcached|fio_dmcrypt|seqread|modload|stress_ng) ;;
	*) die "TLB_WORKLOADS: no workload '$w' (memcached fio_dmcrypt seqread modload stress_ng)" ;;
	esac
	n=${RUNS#* }
	[ "$w" != memcached ] || n=${RUNS% *}
	for _ in $(seq "$n"); do list+=${list:+,}$w; done
done
[ "$(echo "$list" | tr ',' '\n' | wc -l)" -le 200 ] || die "TLB_RUNS: over 200 windows"
cores=() names=
for c in ${TLB_CORES-c1-ultra.tsv}; do
	[ -f "$c" ] || c=$TOP/scripts/bench/tlb/$c
	[ -f "$c" ] || die "TLB_CORES: no parameter table '$c'"
	cores+=(--params "$c")
	names+=" ${c##*/}"
done
[ "$PAGE_SIZE" = 4K ] || die "make bench-tlb measures 4K pages only (the workload guests' kernels)"
[ "$DEBUG" = on ] || die "make bench-tlb needs DEBUG=on: only the debug kernels have the workload guests' options"
require_cmds gcc qemu-system-aarch64 python3 gnuplot zstd
T=$OUT/tlb
N1=$TOP/scripts/bench/tlb/neoverse-n1.tsv
rm -rf "$T"
mkdir -p "$T"
start=$(date +%s)

msg "bench-tlb: the plugin and the model"
tlb_tools "$T" || die "bench-tlb: building scripts/bench/tlb failed"
"$T/tlbsim" --selftest "$TOP/scripts/bench/tlb" >"$T/selftest.tap" ||
	die "bench-tlb: the model's self-test failed: $T/selftest.tap"
for step in apply kernel kmod selftests initramfs; do
	SERIES=on "$TOP/scripts/job/$step.sh" || die "bench-tlb: '$step' failed"
done
ROOTFS_IMG=$("$TOP/scripts/job/rootfs.sh") || die "bench-tlb: no Debian userspace (scripts/job/rootfs.sh)"

# KFENCE's pool set up at boot, as in make bench: without it 6.12 keeps
# even rodata=on page-mapped. nokaslr: both boots' linear maps the same.
common="nokaslr kfence.sample_interval=1000000"
msg "bench-tlb: rodata=on's layout (a boot without the plugin)"
SERIES=on JOB=tlb NAME=rodata-on LOGDIR=$T MEM=4G SMP=2 ICOUNT=0 \
	CMDLINE="rodata=on $common" "$TOP/scripts/job/boot.sh" ||
	die "bench-tlb: the rodata=on boot failed; see $T/rodata-on.log"

python3 "$TOP/scripts/bench/tlb/layout.py" "$T/rodata-on.data" tlb.layout.boot 4K "$T/layout-on" ||
	die "bench-tlb: no rodata=on layout in $T/rodata-on.data"

msg "bench-tlb: $(echo "$list" | tr ',' '\n' | sort | uniq -c | awk '{printf "%s%s x%s", NR > 1 ? ", " : "", $2, $1}') under the plugin (slow: every memory access is modelled)"
SERIES=on JOB=tlb NAME=traced LOGDIR=$T MEM=4G SMP=2 ICOUNT=0 QEMU_TIMEOUT=5400 \
	ROOTFS=$ROOTFS_IMG \
	QEMU_PLUGIN="$T/tlbtrace.so,out=$T/results.json,params=$N1,on=$T/layout-on,rec=$T/rec.zst" \
	CMDLINE="rodata=full bbml2_test=all $common brd.rd_nr=1 brd.rd_size=40960 linmap.workloads=$list linmap.wl_secs=$SECS" \
	"$TOP/scripts/job/boot.sh" || die "bench-tlb: the traced boot failed; see $T/traced.log"
grep -q '^not ok' "$T/traced.data" && warn "bench-tlb: a workload failed; see $T/traced.log"
linmap_data section "$T/traced.data" tlb.windows >"$T/windows"
dcz=$(linmap_data section "$T/traced.data" tlb.dcz_bytes | head -1)
[[ "$dcz" =~ ^[0-9]+$ ]] || die "bench-tlb: the guest did not say how many bytes a DC ZVA zeroes"
msg "bench-tlb: replaying $(du -h "$T/rec.zst" | cut -f1) of recording with the model's variants${names:+ and$names}"
"$T/tlbsim" replay --variants --params "$N1" "${cores[@]}" "$T/rec.zst" "$T/replay.json" ||
	die "bench-tlb: the replay failed"
python3 "$TOP/scripts/bench/tlb/report.py" "$T" "$dcz" || die "bench-tlb: the report failed"
msg "bench-tlb: $T/report.md, $T/tlb.png ($(( $(date +%s) - start ))s)"
cat "$T/report.md"
