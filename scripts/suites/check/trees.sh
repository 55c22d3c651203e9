# SPDX-License-Identifier: GPL-2.0
# make check, group 3a. the core series alone, and the unpatched base.
# Sourced by scripts/suites/check.sh, not run alone.

# ---- 3a. the core series alone, and the unpatched base ---------------------
# A distribution may take the core series without the healing one: its
# kernel, with the core's test-only patches (CHECK_CORE_PAGE_SIZES, 4K by
# default), boots in the core tree's modes of scripts/modes/modes.tsv; the tests
# that need the healing series skip there and say so. Then the unpatched
# 6.12 (4K) runs the real workloads, the yardstick for the series' own
# workload guests (CHECK_BASE_MODES, by default its workload-* modes), and
# its layout-* guests, whose linear map at boot the series' pte-layout
# guest (linear_map_ptes) must match.
# Results are prefixed "core: " and "base: ", logs in out/check/core/ and
# out/check/base/.
nested_tree() {	# SERIES PREFIX PAGE_SIZES MODES
	local line tallied=
	msg "the $1 tree: ${4:-its modes}"
	# Its results are in RESULTS_LOG already; its tally adds them up here.
	while IFS= read -r line; do
		if [[ $line =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed,\ ([0-9]+)\ skipped$ ]]; then
			pass=$((pass + BASH_REMATCH[1]))
			failed=$((failed + BASH_REMATCH[2]))
			skipped=$((skipped + BASH_REMATCH[3]))
			tallied=1
			continue
		fi
		printf '%s\n' "$line"
	done < <(SERIES=$1 CHECK_PART=trees CHECK_DIR="$CHECK/$2" RESULT_PREFIX="$2: " \
		SERIES_CHECK_DIR="$CHECK" \
		CHECK_PAGE_SIZES="$3" CHECK_MODES="$4" "$TOP/scripts/suites/check.sh" 2>&1)
	# A run that died (an error before its tally) must not pass unseen.
	[ -n "$tallied" ] || bad "$2: the $1 tree's run ended without its tally" \
		"see the lines above and $CHECK/$2"
}
# The check modes of tree $1 that CHECK_MODES names (all without it).
named_modes() {
	local m
	for m in $(python3 "$TOP/scripts/modes/modes.py" names check "$1"); do
		[ -z "${CHECK_MODES:-}" ] || [[ " $CHECK_MODES " == *" $m "* ]] || continue
		echo "$m"
	done
}
# None of the core tree's is a SKIP, not a run that fails for want of
# guests.
if [ "$TREE" = series ] && [ -n "$(patches_in "$PATCHDIR"/heal/*.patch)" ]; then
	if [ -n "$(named_modes core)" ]; then
		nested_tree core core "${CHECK_CORE_PAGE_SIZES:-4K}" "${CHECK_MODES:-}"
	else
		skip "core: the core series' guests" "CHECK_MODES names none of its modes"
	fi
fi
base_modes() {
	local m out=
	[ -z "${CHECK_BASE_MODES:-}" ] || { echo "$CHECK_BASE_MODES"; return; }
	for m in $(named_modes base); do
		case $m in workload-*|layout-*) ;; *) continue ;; esac
		out+="${out:+ }$m"
	done
	echo "$out"
}
if [ "$TREE" = series ]; then
	bm=$(base_modes)
	if [ -n "$bm" ]; then
		nested_tree off base 4K "$bm"
	else
		skip "base: the unpatched tree's workload guests" "CHECK_MODES leaves them out"
	fi
fi
