# SPDX-License-Identifier: GPL-2.0
# The test scripts' PASS, FAIL and SKIP lines and their tally.
# Sourced by lib.sh, in its order; not on its own.

# The test scripts' results: one PASS/FAIL/SKIP line each (a FAIL with its
# details indented below), and the tally, 'N passed, N failed, N skipped',
# that fails unless nothing failed. A SKIP is never a pass.
pass=0 failed=0 skipped=0
# RESULT_PREFIX names the tree of a nested run (check.sh's core tree).
RESULT_PREFIX=${RESULT_PREFIX:-}
# With RESULTS_LOG set (make check), every line goes to that file and a
# tab-separated record (time, status, group: the name up to its first
# ': ') to RESULTS_TSV, and only the FAILs to stdout unless RESULTS_ALL=1.
ok()   { pass=$((pass + 1)); result PASS "$1"; }
bad()  { failed=$((failed + 1)); result FAIL "$1" "${2:-}"; }
skip() { skipped=$((skipped + 1)); result SKIP "$1" "" " ($2)"; }
result() {	# STATUS NAME [DETAILS [REASON]]
	local line="$1: $RESULT_PREFIX$2${4:-}" name="$RESULT_PREFIX$2" details=${3:-}
	# A full disk fails whatever step meets it: say so once, with the room.
	[[ $details != *"No space left on device"* ]] ||
		details="a write found the disk full (now $(free_mib "$OUT" | grep . || echo "?") MiB free under $OUT; $(disk_need))"$'\n'$details
	[ -z "$details" ] || line+=$'\n'$(printf '%s\n' "$details" | sed 's/^/    /')
	if [ -n "${RESULTS_LOG:-}" ]; then
		printf '%s\n' "$line" >>"$RESULTS_LOG"
		printf '%s\t%s\t%s\n' "$(date +%s)" "$1" "$(result_group "$name")" >>"$RESULTS_TSV"
		[ "$1" = FAIL ] || [ "${RESULTS_ALL:-0}" = 1 ] || return 0
	fi
	printf '%s\n' "$line"
}
# The group of a result: its prefix (core: , base: ) and the first word
# group before ': ' (a guest, build 4K, kit, drill, ...).
result_group() {
	local n=$1 pre=
	case $n in core:\ *|base:\ *) pre="${n%%: *}: " n=${n#*: } ;; esac
	echo "$pre${n%%: *}"
}
# Free space on the file system that holds DIR, in MiB.
free_mib() { { df -Pm "$1" 2>/dev/null || true; } | awk 'NR == 2 { print $4 }'; }
# What make check needs, measured (README.md, "Two commands").
CHECK_DISK_GIB=${CHECK_DISK_GIB:-16}
disk_need() { echo "make check needs about $CHECK_DISK_GIB GiB free"; }
tally() { echo "$pass passed, $failed failed, $skipped skipped"; [ "$failed" = 0 ]; }
