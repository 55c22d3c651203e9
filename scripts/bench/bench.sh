#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench / make bench-quick: the unpatched and the patched kernel side
# by side, same config (4K pages; for make bench the kit's config without
# debug options, for bench-quick the caller's, debug by default), same QEMU.
#   setups: scripts/bench/bench-setups.tsv (unpatched rodata=full, patched
#           rodata=full with BBML2 claimed by all CPUs, unpatched rodata=on,
#           the floor; under -icount also the repaint and no BBML2)
#   memory: MemTotal/MemFree after boot, linear-map table pages, leaves, at
#           BENCH_MEMS (4G 64G 256G; quick: 4G)
#   fragmentation: BENCH_ROUNDS (5; quick: 1) rounds of the stress at 4G,
#           the map after each
#   set_memory_ro+rw: BENCH_SIZES pages, BENCH_REPS repetitions, at 4G
#   contiguous user PTEs: BENCH_CONTPTE_ROUNDS (256; quick: 64) of
#   mprotect() of one page of a block and back, and of contpte_convert()
#   alone (an unfold and a fold), at 4G, by the clock and under -icount
#   under QEMU -icount shift=0 (virtual time = instruction count, so the
#   figures repeat exactly), 2 CPUs, at each size: map_mem() and the repaint
#   (BBML2 on the boot CPU only), and set_memory_ro+rw at 4G; each boot
#   again with linmap_count for the test-only counters' page-table writes,
#   barriers and lazy MMU batches
#   hot-add and hot-remove: BENCH_HOTPLUG sizes (1G 16G; quick: 1G) under
#   -icount, added above the guest's 3G and removed again: unpatched,
#   patched with BBML2 and patched without
#   kexec's copy of the linear map (trans_pgd_create_copy() of all of it,
#   as machine_kexec_post_load() makes it): its leaves, table pages and
#   instructions, in the -icount boots at each size
#   collapse: the stress rounds with and without it (a full pass after
#   each round), the instructions of a pass per folded block
#   (BENCH_COST_BLOCKS), and BENCH_HEAL_SECS of virtual time of a workload
#   of module loads and memfd_secret() pages, sampled every 10 seconds
# Writes out/bench/report.md, bench.json and PNG charts.
. "$(dirname "$0")/../lib/lib.sh"

# make bench measures production-like kernels (no lockdep, DEBUG_VM and
# the like, whose costs would swamp small calls); bench-quick, a smoke test
# inside make check, reuses the kernels that make check built.
if [ "${BENCH_QUICK:-0}" = 1 ]; then
	DEBUG=${BENCH_DEBUG:-$DEBUG}
	MEMS=${BENCH_MEMS:-4G}
	ROUNDS=${BENCH_ROUNDS:-1}
	SIZES=${BENCH_SIZES:-1:16:512:4096}
	REPS=${BENCH_REPS:-5}
	HOTPLUG=${BENCH_HOTPLUG-1G}
	HEAL=${BENCH_HEAL_SECS:-60}
	COST=${BENCH_COST_BLOCKS:-16}
	CONTPTE=${BENCH_CONTPTE_ROUNDS:-64}
else
	DEBUG=${BENCH_DEBUG:-off}
	MEMS=${BENCH_MEMS:-4G 64G 256G}
	ROUNDS=${BENCH_ROUNDS:-5}
	SIZES=${BENCH_SIZES:-1:16:512:262144}
	REPS=${BENCH_REPS:-7}
	HOTPLUG=${BENCH_HOTPLUG-1G 16G}
	HEAL=${BENCH_HEAL_SECS:-600}
	COST=${BENCH_COST_BLOCKS:-256}
	CONTPTE=${BENCH_CONTPTE_ROUNDS:-256}
fi
for hp in $HOTPLUG; do
	[[ "$hp" =~ ^[1-9][0-9]*G$ ]] || die "BENCH_HOTPLUG takes sizes in GiB, e.g. '1G 16G' (got '$hp')"
done
case "$DEBUG" in on|off) ;; *) die "BENCH_DEBUG must be on or off (got '$DEBUG')" ;; esac
[[ "$CONTPTE" =~ ^[1-9][0-9]*$ ]] ||
	die "BENCH_CONTPTE_ROUNDS takes a number of rounds (got '$CONTPTE')"
[[ "$HEAL" =~ ^[0-9]+$ ]] || die "BENCH_HEAL_SECS takes seconds (got '$HEAL')"
[[ "$COST" =~ ^[1-9][0-9]*$ ]] && [ "$COST" -le 1024 ] ||
	die "BENCH_COST_BLOCKS takes 1 to 1024 blocks (got '$COST')"
export DEBUG
# A KFENCE pool set up at boot, sampling practically never: without it,
# 6.12 keeps even rodata=on page-mapped, as KFENCE might start late.
KFENCE=kfence.sample_interval=1000000
DIR=$OUT/bench
rm -rf "$DIR"
mkdir -p "$DIR"
require_cmds gnuplot python3
start=$(date +%s)

for series in off on; do
	msg "bench: build ($([ $series = on ] && echo patched || echo unpatched), 4K, DEBUG=$DEBUG)"
	SERIES=$series PAGE_SIZE=4K kit_make initramfs ||
		die "bench: the kernel, module or initramfs failed for SERIES=$series"
done

# boot NAME TREE MEM CMDLINE [ROUNDS SETMEM COST CONTPTE]; ICOUNT_BOOT and
# SMP from the caller
boot() {
	local name=$1 series=off mem=$3 cmd=$4 rounds=${5:-} setmem=${6:-}
	local cost=${7:-} contpte=${8:-} extra= timeout=900
	[ "$2" = series ] && series=on
	[ -n "$rounds" ] && extra+=" linmap.rounds=$rounds"
	[ -n "$setmem" ] && extra+=" linmap.setmem=$setmem"
	[ -n "$cost" ] && extra+=" linmap.collapse_cost=$cost"
	[ -n "$contpte" ] && extra+=" linmap.contpte=$contpte"
	case $mem in 64G) timeout=1800 ;; 256G) timeout=3600 ;; esac
	SERIES=$series PAGE_SIZE=4K JOB=bench NAME=$name LOGDIR=$DIR MEM=$mem \
		ICOUNT=${ICOUNT_BOOT:-} QEMU_TIMEOUT=$timeout CMDLINE="$cmd $KFENCE$extra" \
		"$TOP/scripts/job/boot.sh" || warn "bench: $name failed; see $DIR/$name.log"
}

# The same boot under -icount: one host thread, timings in instructions.
icount_boot() {
	ICOUNT_BOOT=0 SMP=2 boot "$@"
}

# The setups of one kind in scripts/bench/bench-setups.tsv: "name tree work cmdline".
mapfile -t all_setups < <(grep -v '^#' "$TOP/scripts/bench/bench-setups.tsv")
setups() {	# KIND
	local s
	for s in "${all_setups[@]}"; do
		[[ "$s" == "$1"$'\t'* ]] && printf '%s\n' "${s#*$'\t'}"
	done
	return 0
}

for mem in $MEMS; do
	while IFS=$'\t' read -r name tree work cmd _; do
		[ "$mem" = 4G ] || work=
		boot "$name-$mem" "$tree" "$mem" "$cmd" \
			"$([[ "$work" == *rounds* ]] && echo "$ROUNDS")" \
			"$([[ "$work" == *setmem* ]] && echo "$SIZES,$REPS")" "" \
			"$([[ "$work" == *contpte* ]] && echo "$CONTPTE")"
	done < <(setups wall)
	# Each setup twice: "ic" for instruction counts with the counters
	# off (one no-op each), "cnt" with linmap_count for what they count.
	for kind in ic cnt; do
		c=
		[ $kind = cnt ] && c=" linmap_count"
		while IFS=$'\t' read -r name tree work cmd _; do
			# kexec's copy of the linear map grows with RAM: every size.
			kx=
			[[ "$work" != *kexec* ]] || [ $kind != ic ] || kx=" linmap.kexec_copy=3"
			[ "$mem" = 4G ] || work=
			icount_boot "$kind-$name-$mem" "$tree" "$mem" "$cmd$c$kx" "" \
				"$([[ "$work" == *setmem* ]] && echo "$SIZES,$REPS")" \
				"$([[ "$work" == *cost* ]] && [ $kind = ic ] && echo "$COST")" \
				"$([[ "$work" == *contpte* ]] && [ $kind = ic ] && echo "$CONTPTE")"
		done < <(setups icount)
	done
done

# Hot-add SIZE at 4G, above the 3G the guest boots with (RAM starts at
# 1G), then hot-remove it: its first memory block alone, then the rest.
for hp in $HOTPLUG; do
	gib=${hp%G}
	range="0x100000000,$(printf '%#x' $((gib << 30)))"
	while IFS=$'\t' read -r name tree _ cmd _; do
		icount_boot "hp-$name-$hp" "$tree" "$((gib + 3))G" \
			"$cmd mem=3G linmap.hotplug=$range"
	done < <(setups hotplug)
done

# The workload, as long in virtual time as asked: idle seconds go by at
# once under -icount, so this takes far less than that on the host.
if [ "$HEAL" -gt 0 ]; then
	while IFS=$'\t' read -r name tree _ cmd _; do
		icount_boot "heal-$name" "$tree" 4G "$cmd linmap.heal=$HEAL"
	done < <(setups heal)
fi

msg "bench: report"
python3 "$TOP/scripts/bench/bench_report.py" "$DIR" "$MEMS" \
	"$([ "$DEBUG" = on ] && echo "the kit's debug config (lockdep, DEBUG_VM, ...)" ||
	   echo "the kit's config without debug options (DEBUG=off)")" "$HOTPLUG" "$HEAL" ||
	die "bench: the report found missing or insane figures (see above)"
msg "bench took $(( $(date +%s) - start ))s: $DIR/report.md"
