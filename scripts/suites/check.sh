#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The test suite behind 'make check' and 'make check-kit', one file per
# group in scripts/suites/check/, run in this order:
#   kit.sh       make check-kit: the kit's own checks on the host (bad input
#                is refused), no kernel;
#   build.sh     kernel, module, selftests and initramfs per geometry;
#   guests.sh    one guest per mode of scripts/modes/modes.tsv, judged by
#                the expectations beside it (scripts/modes/expect.sh);
#   trees.sh     the core series alone, and the unpatched base;
#   upstream.sh  upstream's own implementation (Debian's prebuilt kernel)
#                as a peer: its claim by MIDR, its saving beside the series';
#   board.sh     the install-tests tarball run as on a board;
#   drills.sh    a hung guest, a panicking guest, a module that fails to
#                load must all be reported as failures;
#   main-job.sh  the main job interrupted, cancelled, and to its report;
#   bench.sh     make bench-quick as a smoke test;
#   tlb.sh       the TLB model and its QEMU plugin.
# common.sh holds what they share, guest-boot.sh a guest's boot (one at a
# time, or the next beside it).
# Usage: make check (CHECK_PART, CHECK_JOB, CHECK_PAGE_SIZES, CHECK_MODES:
# scripts/lib/variables.tsv). One file per group in scripts/suites/check/.
# Ends with 'N passed, N failed, N skipped'. A SKIP is never a pass.
. "$(dirname "$0")/../lib/lib.sh"

# CHECK_PART=trees: only build and boot this tree's guests (the nested run
# for the core series alone, below), its results in CHECK_DIR.
CHECK_PART=${CHECK_PART:-all}

G=$TOP/scripts/suites/check
GROUPS_ALL="kit build guests trees upstream board drills main-job bench tlb"
# CHECK_GROUPS: only these groups (build runs too where a later one needs
# its kernels). A group not run is not counted. The kit's tests of itself
# are make check-kit's (CHECK_GROUPS=kit), not make check's.
# ONLY: what to run in one list, each word a group, a page size (a
# geometry of scripts/modes/geometries.tsv) or a mode (make modes); it
# stands for CHECK_GROUPS, CHECK_PAGE_SIZES and CHECK_MODES. Sizes or
# modes without a group run the groups that boot them: build, guests and
# trees.
if [ -n "${ONLY:-}" ] && [ "$CHECK_PART" = all ]; then
	[ -z "${CHECK_GROUPS:-}${CHECK_PAGE_SIZES:-}${CHECK_MODES:-}" ] ||
		die "ONLY stands for CHECK_GROUPS, CHECK_PAGE_SIZES and CHECK_MODES: give it or them, not both"
	only_groups= only_sizes= only_modes=
	mapfile -t kinds < <(python3 "$TOP/scripts/modes/modes.py" kind $ONLY)
	i=0
	for w in $ONLY; do
		if [[ " $GROUPS_ALL " == *" $w "* ]]; then
			only_groups+=" $w"
		elif [ "${kinds[$i]}" = geometry ]; then
			only_sizes+=" $w"
		elif [ "${kinds[$i]}" = mode ]; then
			only_modes+=" $w"
		else
			die "ONLY: '$w' is no group ($GROUPS_ALL), page size (scripts/modes/geometries.tsv) or mode (make modes)"
		fi
		i=$((i + 1))
	done
	[ -n "$only_groups" ] || only_groups=" build guests trees"
	CHECK_GROUPS=${only_groups# }
	[ -z "$only_sizes" ] || export CHECK_PAGE_SIZES=${only_sizes# }
	[ -z "$only_modes" ] || export CHECK_MODES=${only_modes# }
	msg "ONLY=\"$ONLY\": groups $CHECK_GROUPS; page sizes ${CHECK_PAGE_SIZES:-every one}; modes ${CHECK_MODES:-every one}"
fi
CHECK_GROUPS=${CHECK_GROUPS:-${GROUPS_ALL#kit }}
for group in $CHECK_GROUPS; do
	[[ " $GROUPS_ALL " == *" $group "* ]] || die "CHECK_GROUPS: no group '$group' (groups: $GROUPS_ALL)"
done
# CHECK_PLAN=1: say what would run, and stop.
if [ "${CHECK_PLAN:-0}" = 1 ]; then
	echo "groups: $CHECK_GROUPS; page sizes: ${CHECK_PAGE_SIZES:-the default ones}; modes: ${CHECK_MODES:-every one}"
	exit 0
fi
CHECK=${CHECK_DIR:-$OUT/check}
rm -rf "$CHECK"
mkdir -p "$CHECK"
start=$(date +%s)

# Every result goes to results.log; stdout gets the FAILs as they come
# (RESULTS_ALL=1: every line) and, at the end, a table per group.
if [ "$CHECK_PART" = all ]; then
	export RESULTS_LOG=$CHECK/results.log RESULTS_TSV=$CHECK/results.tsv
	: >"$RESULTS_LOG"
	: >"$RESULTS_TSV"
	msg "every PASS, FAIL and SKIP line goes to $RESULTS_LOG; FAILs show here too"
	# The disk: free space at the start, then every 20 s while this runs;
	# the lowest sample is the room the run needed at its peak.
	disk_start=$(free_mib "$OUT")
	msg "disk: $disk_start MiB free under $OUT; $(disk_need)"
	[ "${disk_start:-0}" -ge $((CHECK_DISK_GIB * 1024)) ] ||
		warn "only $disk_start MiB free under $OUT: a step may fail with 'No space left on device'"
	( while kill -0 $$ 2>/dev/null; do free_mib "$OUT"; sleep 20; done ) \
		>"$CHECK/disk.samples" 2>/dev/null &
	disk_sampler=$!
fi

want() { [[ " $CHECK_GROUPS " == *" $1 "* ]]; }
. "$G/common.sh"
. "$TOP/scripts/modes/expect.sh"
[ "$CHECK_PART" != all ] || ! want kit || . "$G/kit.sh"
[ "$CHECK_GROUPS" != kit ] || finish
. "$G/build.sh"
. "$G/guest-boot.sh"
! want guests || . "$G/guests.sh"
# soak, check-geometries and a nested tree's run stop after their guests.
[ "$CHECK_JOB" = check ] && [ "$CHECK_PART" = all ] || finish
for group in trees upstream board drills main-job bench tlb; do
	! want "$group" || . "$G/$group.sh"
done
finish
