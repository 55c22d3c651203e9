#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench-tlb: kernel TLB misses per thousand instructions, simulated.
# The patched kernel (4K pages, rodata=full, BBML2 claimed by all CPUs)
# runs TLB_WORKLOADS under QEMU -icount with the tlbtrace plugin, which
# runs a Neoverse N1's TLBs (scripts/bench/tlb/neoverse-n1.tsv, the model in
# scripts/bench/tlb/tlbmodel.h) on every vCPU's accesses while each workload
# runs, for three layouts of the linear map at once: the series' own (the
# guest sends its page tables before each workload), every page a PTE
# (unpatched rodata=full) and rodata=on's (a boot of the same kernel with
# rodata=on), each with the second-level TLB at half, the published and
# twice its size.
#   TLB_WORKLOADS  memcached fio_dmcrypt seqread modload
#   TLB_SECS       2: memcaslap's run, in virtual seconds
# Writes out/tlb/report.md, tlb.json and tlb.png.
. "$(dirname "$0")/../lib/lib.sh"

WORKLOADS=${TLB_WORKLOADS:-memcached fio_dmcrypt seqread modload}
SECS=${TLB_SECS:-2}
[[ "$SECS" =~ ^[1-9][0-9]*$ ]] || die "TLB_SECS takes whole seconds (got '$SECS')"
for w in $WORKLOADS; do
	case $w in
	memcached|fio_dmcrypt|seqread|modload|stress_ng) ;;
	*) die "TLB_WORKLOADS: no workload '$w' (memcached fio_dmcrypt seqread modload stress_ng)" ;;
	esac
done
[ "$PAGE_SIZE" = 4K ] || die "make bench-tlb measures 4K pages only (the workload guests' kernels)"
[ "$DEBUG" = on ] || die "make bench-tlb needs DEBUG=on: only the debug kernels have the workload guests' options"
require_cmds gcc qemu-system-aarch64 python3 gnuplot
T=$OUT/tlb
rm -rf "$T"
mkdir -p "$T"
start=$(date +%s)

msg "bench-tlb: the plugin and the model"
tlb_tools "$T" || die "bench-tlb: building scripts/bench/tlb failed"
"$T/tlbsim" --selftest >"$T/selftest.tap" ||
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

list=$(echo $WORKLOADS | tr ' ' ',')
msg "bench-tlb: $list under the plugin (slow: every memory access is modelled)"
SERIES=on JOB=tlb NAME=traced LOGDIR=$T MEM=4G SMP=2 ICOUNT=0 QEMU_TIMEOUT=5400 \
	ROOTFS=$ROOTFS_IMG \
	QEMU_PLUGIN="$T/tlbtrace.so,out=$T/results.json,params=$TOP/scripts/bench/tlb/neoverse-n1.tsv,on=$T/layout-on" \
	CMDLINE="rodata=full bbml2_test=all $common brd.rd_nr=1 brd.rd_size=40960 linmap.workloads=$list linmap.wl_secs=$SECS" \
	"$TOP/scripts/job/boot.sh" || die "bench-tlb: the traced boot failed; see $T/traced.log"
grep -q '^not ok' "$T/traced.data" && warn "bench-tlb: a workload failed; see $T/traced.log"
linmap_data section "$T/traced.data" tlb.windows >"$T/windows"
python3 "$TOP/scripts/bench/tlb/report.py" "$T" || die "bench-tlb: the report failed"
msg "bench-tlb: $T/report.md, $T/tlb.png ($(( $(date +%s) - start ))s)"
cat "$T/report.md"
