#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench-tlb: kernel-mode TLB refills per thousand instructions,
# simulated. The patched kernel (4K pages, rodata=full, BBML2 claimed by
# all CPUs; TLB_SIZE=server: without debug options, 16 GiB, memcached
# driven from the host; small: make check's debug kernel, 4 GiB, every
# program inside the guest) runs TLB_WORKLOADS under QEMU -icount with the tlbtrace
# plugin, which runs a Neoverse N1's TLBs (scripts/bench/tlb/neoverse-n1.tsv,
# the model in scripts/bench/tlb/tlbmodel.h) on every vCPU's accesses from
# the guest's first layout on (warm), for three layouts of the linear map
# at once: the series' own (the guest sends its page tables before and
# after each workload), every page a PTE (unpatched rodata=full) and
# rodata=on's (a boot of the same kernel with rodata=on). The plugin also
# records what it modelled; tlbsim replays the recording against the
# model's variants (tlbmodel.h) and any further core (TLB_CORES), and the
# report checks that the replay counts what the plugin counted.
#   TLB_SIZE       server (16 GiB, 2 GiB item set, 64 connections from the
#                  host, 32 MiB written at random over 256 MiB under
#                  dm-crypt, one read of a 1 GiB file) or small
#   TLB_WORKLOADS  server: memcached_host fio_dmcrypt seqread modload;
#                  small: memcached fio_dmcrypt seqread modload
#   TLB_RUNS       "5 3": runs of memcached, then of each other workload
#   TLB_SECS       memcached's window in virtual seconds (server 1, small 2)
#   TLB_CORES      c1-ultra.tsv: further cores' tables (scripts/bench/tlb/) to replay
#   TLB_REPLAY     1; 0: no recording and no replay (the plugin's own models
#                  only: a further boot, for the spread between boots)
#   TLB_OUT        out/tlb: the directory it writes (emptied first)
#   TLB_VCPUS      2: the guest's vCPUs (1 to 8), each with its own TLBs
# Writes TLB_OUT/report.md, tlb.json and tlb.png; the recording is
# TLB_OUT/rec.zst.

# The kernel, before lib.sh names its build: server, without debug options
# but with the workloads' (scripts/job/config.sh WORKLOAD_KERNEL); small,
# make check's debug one.
case ${TLB_SIZE:-server} in
server) export DEBUG=off WORKLOAD_KERNEL=on ;;
small) export DEBUG=on WORKLOAD_KERNEL=off ;;
esac
. "$(dirname "$0")/../lib/lib.sh"

SIZE=${TLB_SIZE:-server}
case $SIZE in
server) WORKLOADS=${TLB_WORKLOADS:-memcached_host fio_dmcrypt seqread modload}
	SECS=${TLB_SECS:-1} MEMORY=16G ;;
small) WORKLOADS=${TLB_WORKLOADS:-memcached fio_dmcrypt seqread modload}
	SECS=${TLB_SECS:-2} MEMORY=4G ;;
*) die "TLB_SIZE takes server or small (got '$SIZE')" ;;
esac
RUNS=${TLB_RUNS:-5 3}
[[ "$SECS" =~ ^[1-9][0-9]*$ ]] || die "TLB_SECS takes whole seconds (got '$SECS')"
[[ "$RUNS" =~ ^[1-9][0-9]?\ [1-9][0-9]?$ ]] ||
	die "TLB_RUNS takes two counts, memcached's and the others' (got '$RUNS')"
list=
for w in $WORKLOADS; do
	case $w in
	memcached|fio_dmcrypt|seqread|modload|stress_ng|memcached_host) ;;
	*) die "TLB_WORKLOADS: no workload '$w' (memcached memcached_host fio_dmcrypt seqread modload stress_ng)" ;;
	esac
	n=${RUNS#* }
	[ "$w" != memcached ] || n=${RUNS% *}
	# memcached_host runs its runs itself: the item set is stored once.
	[ "$w" != memcached_host ] || n=1
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
require_cmds gcc qemu-system-aarch64 python3 gnuplot zstd
if [ "$SIZE" = server ]; then
	extra="linmap.mc_runs=${RUNS% *} linmap.mc_min_mb=2048 linmap.fio_mb=256 linmap.fio_io_mb=32 linmap.seq_mb=1024 linmap.seq_reads=2 brd.rd_nr=1 brd.rd_size=278528"
else
	extra="brd.rd_nr=1 brd.rd_size=40960"
fi
T=${TLB_OUT:-$OUT/tlb}
REPLAY=${TLB_REPLAY:-1}
case $REPLAY in 0|1) ;; *) die "TLB_REPLAY takes 1 or 0 (got '$REPLAY')" ;; esac
case $T in /*) ;; *) die "TLB_OUT takes an absolute path (got '$T')" ;; esac
VCPUS=${TLB_VCPUS:-2}
[[ "$VCPUS" =~ ^[1-8]$ ]] || die "TLB_VCPUS takes 1 to 8 vCPUs (got '$VCPUS')"
N1=$TOP/scripts/bench/tlb/neoverse-n1.tsv
rm -rf "$T"
mkdir -p "$T"
start=$(date +%s)

msg "bench-tlb: the plugin and the model"
tlb_tools "$T" || die "bench-tlb: building scripts/bench/tlb failed"
"$T/tlbsim" --selftest "$TOP/scripts/bench/tlb" >"$T/selftest.tap" ||
	die "bench-tlb: the model's self-test failed: $T/selftest.tap"
SERIES=on kit_make initramfs || die "bench-tlb: the kernel, module or initramfs failed"
ROOTFS_IMG=$("$TOP/scripts/job/rootfs.sh") || die "bench-tlb: no Debian userspace (scripts/job/rootfs.sh)"

# KFENCE's pool set up at boot, as in make bench: without it 6.12 keeps
# even rodata=on page-mapped. nokaslr: both boots' linear maps the same.
common="nokaslr kfence.sample_interval=1000000"
msg "bench-tlb: rodata=on's layout (a boot without the plugin)"
SERIES=on JOB=tlb NAME=rodata-on LOGDIR=$T MEM=$MEMORY SMP=$VCPUS ICOUNT=0 \
	CMDLINE="rodata=on $common" "$TOP/scripts/job/boot.sh" ||
	die "bench-tlb: the rodata=on boot failed; see $T/rodata-on.log"

python3 "$TOP/scripts/bench/tlb/layout.py" "$T/rodata-on.data" tlb.layout.boot 4K "$T/layout-on" ||
	die "bench-tlb: no rodata=on layout in $T/rodata-on.data"

msg "bench-tlb: $(echo "$list" | tr ',' '\n' | sort | uniq -c | awk '{printf "%s%s x%s", (NR > 1 ? ", " : ""), $2, $1}') under the plugin (slow: every memory access is modelled)"
# The host's load on memcached_host: mcload.py, through a forwarded port.
fwd=
if [[ ",$list," == *,memcached_host,* ]]; then
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	fwd=$port:11211
	python3 "$TOP/scripts/bench/tlb/mcload.py" "$port" "$T/mcload.json" --conns 64 \
		--items 524288 --value 4096 --timeout 5400 >"$T/mcload.log" 2>&1 &
	mcload=$!
	# Under set -e a failing trap sets the exit status: the load has
	# usually ended by then, and a kill of it must not fail the run.
	trap 'kill $mcload 2>/dev/null || true' EXIT
fi
SERIES=on JOB=tlb NAME=traced LOGDIR=$T MEM=$MEMORY SMP=$VCPUS ICOUNT=0 QEMU_TIMEOUT=5400 \
	ICOUNT_SLEEP=$([ -n "$fwd" ] && echo on || echo off) ROOTFS=$ROOTFS_IMG HOSTFWD=$fwd \
	QEMU_PLUGIN="$T/tlbtrace.so,out=$T/results.json,params=$N1,on=$T/layout-on,sites=$T/sites.tsv$([ "$REPLAY" = 0 ] || echo ",rec=$T/rec.zst")" \
	CMDLINE="rodata=full bbml2_test=all $common $extra linmap.workloads=$list linmap.wl_secs=$SECS" \
	"$TOP/scripts/job/boot.sh" || die "bench-tlb: the traced boot failed; see $T/traced.log${fwd:+ and $T/mcload.log}"
if [ -n "$fwd" ] && ! wait $mcload; then
	die "bench-tlb: the host's memcached load failed: $(tail -3 "$T/mcload.log")"
fi
grep -q '^not ok' "$T/traced.data" && warn "bench-tlb: a workload failed; see $T/traced.log"
linmap_data section "$T/traced.data" tlb.windows >"$T/windows"
# The kernel's symbols, for the report's sites of DC ZVA and PRFM.
cp "$BUILD/System.map" "$T/System.map" || warn "bench-tlb: no $BUILD/System.map: the report names no sites"
dcz=$(linmap_data section "$T/traced.data" tlb.dcz_bytes | head -1)
[[ "$dcz" =~ ^[0-9]+$ ]] || die "bench-tlb: the guest did not say how many bytes a DC ZVA zeroes"
if [ "$REPLAY" = 1 ]; then
	msg "bench-tlb: replaying $(du -h "$T/rec.zst" | cut -f1) of recording with the model's variants${names:+ and$names}"
	# Two replays side by side, a core each; each also runs the plugin's own
	# models, which the report checks against the plugin's counts.
	"$T/tlbsim" replay --variants coalesce4,walk_cache,tlbi_va_l1,tlbi_va_all --params "$N1" \
		"$T/rec.zst" "$T/replay-a.json" 2>"$T/replay-a.log" &
	ra=$!
	"$T/tlbsim" replay --variants thp_user,end_layout --params "$N1" "${cores[@]}" \
		"$T/rec.zst" "$T/replay-b.json" 2>"$T/replay-b.log" ||
		die "bench-tlb: the replay failed: $(tail -3 "$T/replay-b.log")"
	wait $ra || die "bench-tlb: the replay failed: $(tail -3 "$T/replay-a.log")"
else
	msg "bench-tlb: TLB_REPLAY=0: no recording, no replay (the plugin's own models only)"
fi
python3 "$TOP/scripts/bench/tlb/report.py" "$T" "$dcz" || die "bench-tlb: the report failed"
msg "bench-tlb: $T/report.md, $T/tlb.png ($(( $(date +%s) - start ))s)"
cat "$T/report.md"
