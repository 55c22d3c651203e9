#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench-upstream: the series and upstream's own implementation side by
# side, in one run, on one QEMU with the same CPUs (Neoverse-V3's MIDR, so
# that every kernel claims BBML2_NOABORT through its own allowlist), memory
# and command line. The kernels (UPBENCH_KERNELS, all by default):
#   series        the kit's 4K kernel without debug options (both series
#                 and the test-only patches), with the BPF JIT; collapse
#                 as the kernel has it by default (off)
#   upstream      linux-source of the upstream peer's release built with
#                 the same configuration (scripts/job/upstream-kernel.sh):
#                 the comparison of code
#   series-collapse  the series' kernel with linear_map_collapse=on
#   upstream-deb  Debian's prebuilt kernel of that release
#                 (scripts/job/upstream.sh): what a distribution ships
# Each boots the guest job 'life' (scripts/guest/init) at 4 GiB: the linear
# map at boot, after 20 module loads, a BPF JIT storm, secretmem churn,
# UPBENCH_CHURN_ROUNDS (100) rounds of mixed churn (3000 changes by each
# thread, one a CPU, of the shadow-model stress, a module load, each
# secondary CPU offline and online) and UPBENCH_IDLE_SECS (60) idle: the same work on every kernel;
# and again at UPBENCH_LARGE_MEM (64G; empty: none) for the layout at
# boot alone. UPBENCH_PLAN=1 prints what would run and stops.
# Writes out/bench-upstream/report.rst (tables, each ratio series/upstream)
# and keeps each guest's log and data there.

# The kernels without debug options, before lib.sh names their builds,
# with the BPF JIT for the guest's JIT storm.
export DEBUG=off SERIES=on
export EXTRA_CONFIG="$(cd "$(dirname "$0")/../configs" && pwd)/bpf-jit.config"
. "$(dirname "$0")/../lib/lib.sh"

CHURN=${UPBENCH_CHURN_ROUNDS:-100}
KERNELS=${UPBENCH_KERNELS:-series upstream series-collapse upstream-deb}
IDLE=${UPBENCH_IDLE_SECS:-60}
LARGE=${UPBENCH_LARGE_MEM-64G}
[[ "$CHURN" =~ ^[1-9][0-9]*$ ]] || die "UPBENCH_CHURN_ROUNDS takes a number of rounds (got '$CHURN')"
for k in $KERNELS; do
	case $k in series|upstream|series-collapse|upstream-deb) ;;
	*) die "UPBENCH_KERNELS: no kernel '$k' (series upstream series-collapse upstream-deb)" ;;
	esac
done
want() { [[ " $KERNELS " == *" $1 "* ]]; }
[[ "$IDLE" =~ ^[0-9]+$ ]] || die "UPBENCH_IDLE_SECS takes seconds (got '$IDLE')"
[ -z "$LARGE" ] || [[ "$LARGE" =~ ^[1-9][0-9]*G$ ]] ||
	die "UPBENCH_LARGE_MEM takes a size in GiB, e.g. 64G, or nothing (got '$LARGE')"
[ "$PAGE_SIZE" = 4K ] || die "make bench-upstream compares 4K kernels (Debian's upstream kernel is 4K; got PAGE_SIZE=$PAGE_SIZE)"
# UPBENCH_PLAN=1: say what would run, and stop.
if [ "${UPBENCH_PLAN:-0}" = 1 ]; then
	echo "kernels: $KERNELS; churn: $CHURN rounds; idle: ${IDLE}s; large: ${LARGE:-none}"
	exit 0
fi
DIR=$OUT/bench-upstream
rm -rf "$DIR"
mkdir -p "$DIR"
start=$(date +%s)
V3=0x410fd842

# The kernels: NAME|SRC|BUILD|IMAGE|COLLAPSE (IMAGE empty: the build's).
kernels=()
if want series || want series-collapse; then
	msg "bench-upstream: the series' kernel (4K, no debug options)"
	kit_make initramfs || die "the series' kernel, module or initramfs failed"
	! want series || kernels+=("series|$SRC|$BUILD||default")
fi
if want upstream || want upstream-deb; then
	# Its source, and the module build directory of Debian's kernel.
	up=$("$TOP/scripts/job/upstream-kbuild.sh") || die "upstream's source: $up"
	kb=$(sed -n 1p <<<"$up")
	usrc=$(sed -n 2p <<<"$up")
fi
if want upstream; then
	msg "bench-upstream: upstream's kernel with the same configuration"
	ub=$("$TOP/scripts/job/upstream-kernel.sh") || die "upstream's kernel: $ub"
	KIT_SRC=$usrc KIT_BUILD=$ub module_initramfs ||
		die "upstream's kernel: its module, selftests or initramfs failed"
	kernels+=("upstream|$usrc|$ub||default")
fi
! want series-collapse || kernels+=("series-collapse|$SRC|$BUILD||on")
if want upstream-deb; then
	msg "bench-upstream: Debian's prebuilt upstream kernel"
	if image=$("$TOP/scripts/job/upstream.sh"); then
		KIT_SRC=$usrc KIT_BUILD=$kb module_initramfs ||
			die "Debian's upstream kernel: its module, selftests or initramfs failed"
		kernels+=("upstream-deb|$usrc|$kb|$image|default")
	else
		warn "Debian's prebuilt upstream kernel left out: $image"
	fi
fi

# life NAME MEM CMDLINE: one guest of each kernel; a guest that fails is
# reported in the table, not fatal.
life() {
	local k name src build image collapse
	for k in "${kernels[@]}"; do
		IFS='|' read -r name src build image collapse <<<"$k"
		# At boot collapse changes nothing: the large guests leave it out.
		[ -n "$3" ] || [ "$collapse" != on ] || continue
		KIT_SRC=$src KIT_BUILD=$build KIT_IMAGE=${image:-$build/arch/arm64/boot/Image} \
			JOB=life NAME="$name-$1" LOGDIR="$DIR" MEM="$2" SMP=4 BBML2=off COLLAPSE=$collapse \
			QEMU_CPU="max,midr=$V3,pauth-impdef=on" QEMU_TIMEOUT=$((10 * CHURN + IDLE + 1800)) \
			CMDLINE="linmap.claims=bbml2 $3" "$TOP/scripts/job/boot.sh" ||
			warn "$name-$1: the guest failed; see $DIR/$name-$1.log"
	done
}
msg "bench-upstream: 4 GiB, $CHURN rounds of churn, ${IDLE}s idle, each kernel in turn"
life 4G 4G "linmap.life_churn=$CHURN linmap.life_idle=$IDLE"
if [ -n "$LARGE" ]; then
	msg "bench-upstream: $LARGE, the layout at boot"
	life "$LARGE" "$LARGE" ""
fi
names=()
# The kernels with collapse on boot at 4 GiB only (see life).
for k in "${kernels[@]}"; do
	names+=("${k%%|*}$([ "${k##*|}" != on ] || echo :4G)")
done
python3 "$TOP/scripts/bench/upstream_report.py" "$DIR" "${LARGE:-}" "${names[@]}" >"$DIR/report.rst" ||
	die "no report; the guests' data is in $DIR"
cat "$DIR/report.rst"
msg "bench-upstream: $DIR/report.rst ($(( ($(date +%s) - start) / 60 )) min)"
