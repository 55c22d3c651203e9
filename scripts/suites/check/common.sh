# SPDX-License-Identifier: GPL-2.0
# make check, what every group uses: the closing table, expected failures,
# fake trees, the cut .cmd file of an interrupted build.
# Sourced by scripts/suites/check.sh, not run alone.

finish() {
	if [ "$CHECK_PART" = all ]; then
		summary_table
		disk_report
		msg "check took $(( $(date +%s) - start ))s; logs in $CHECK, results in $RESULTS_LOG"
	else
		msg "check took $(( $(date +%s) - start ))s; logs in $CHECK"
	fi
	tally
	exit
}

# The results per group (a guest, a build, the kit's checks), in the order
# they ran, each with the time since the result before it; the failures'
# names again below.
summary_table() {
	echo
	awk -F'\t' -v t0="$start" '
	{
		if (!($3 in seen)) { seen[$3] = 1; order[n++] = $3 }
		c[$3, $2]++
		secs[$3] += $1 - (prev ? prev : t0)
		prev = $1
	}
	END {
		printf "%-44s %7s %7s %7s %7s\n", "group", "passed", "failed", "skipped", "time"
		for (i = 0; i < n; i++) {
			g = order[i]
			printf "%-44s %7d %7d %7d %6ds\n", g, c[g, "PASS"], c[g, "FAIL"], c[g, "SKIP"], secs[g]
		}
	}' "$RESULTS_TSV"
	if grep -q '^FAIL: ' "$RESULTS_LOG"; then
		echo
		echo "failed:"
		grep '^FAIL: ' "$RESULTS_LOG" | sed 's/^FAIL: /  /'
	fi
	echo
}

# Free space at the start, at the lowest and now, and what holds the disk:
# $OUT's parts and the caches (ccache, the userspace images).
disk_report() {
	local low now
	kill "${disk_sampler:-}" 2>/dev/null || true
	now=$(free_mib "$OUT")
	[ -n "$now" ] && [ -n "${disk_start:-}" ] || return 0
	low=$( { grep -x '[0-9][0-9]*' "$CHECK/disk.samples"; echo "$now"; } | sort -n | head -1)
	msg "disk: $disk_start MiB free at the start, $low at the lowest (the run took up to $((disk_start - low)) MiB), $now now"
	du -sm "$OUT"/* "$CCACHE_DIR" "${ROOTFS_CACHE:-$KIT_CACHE}" 2>/dev/null |
		sort -rn | head -8 | awk '{ printf "    %7d MiB  %s\n", $1, $2 }' >&2 || true
}

# expect_fail NAME PATTERN CMD...: CMD must fail and say PATTERN.
expect_fail() {
	local name=$1 pat=$2 out rc
	shift 2
	set +e
	out=$("$@" 2>&1)
	rc=$?
	set -e
	if [ $rc != 0 ] && grep -qE -- "$pat" <<<"$out"; then
		ok "$name"
	else
		bad "$name" "exit $rc, wanted failure matching '$pat'; got:
$out"
	fi
}

# dir_disk DIR LABEL IMAGE: an ext4 image of DIR's files, labelled for
# the guest to find, with 16 MiB to spare (mke2fs's words go to stderr).
dir_disk() {
	mke2fs -q -t ext4 -L "$2" -d "$1" "$3" "$(( $(du -sm "$1" | cut -f1) + 16 ))M" >&2
}

fake_tree() {	# DIR VERSION PATCHLEVEL: a tiny git tree that looks like Linux
	mkdir -p "$1"
	printf 'VERSION = %s\nPATCHLEVEL = %s\nSUBLEVEL = 1\n' "$2" "$3" >"$1/Makefile"
	printf 'one\ntwo\nthree\n' >"$1/file.txt"
	git -C "$1" init -q
	git -C "$1" add -A
	git -C "$1" -c user.name=t -c user.email=t@t commit -q -m base
}

# truncate_cmd BUILD: cut the newest .cmd file of a kernel object in BUILD
# inside its first $(wildcard ...), as a make killed while fixdep writes
# leaves it (the interrupt check of main-job.sh, and the kit's own case).
truncate_cmd() {
	local f= n=
	# The newest .cmd of a kernel object: a host program's (scripts/dtc,
	# scripts/mod), which make may write last, has no $(wildcard ...).
	while IFS= read -r f; do
		n=$(grep -b -m1 -o 'wildcard include/config/' "$f" | cut -d: -f1) || true
		[ -z "$n" ] || break
	done < <(find "$1" -name '.*.o.cmd' -newer "$1/.config" -printf '%T@ %p\n' |
		sort -rn | cut -d' ' -f2-)
	if [ -z "$n" ]; then
		bad "interrupt: a cut-off .cmd file after the kill in the build step" \
			"no .cmd file with a \$(wildcard ...) in $1 to cut"
		return 0
	fi
	truncate -s $((n + 12)) "$f"
	echo "    cut $f after $((n + 12)) bytes" >&2
}

# The guests' and the upstream peer's results (guests.sh, upstream.sh).
# Count the TAP results of one guest's kselftest run.
count_tap() {
	local mode=$1 data=$2 status name reason seen=0
	while IFS=$'\t' read -r status name reason; do
		seen=1
		case "$status" in
		ok) ok "$mode: $name${reason:+ # $reason}" ;;
		skip) skip "$mode: $name" "$reason" ;;
		*) bad "$mode: $name${reason:+ # $reason}" "$(linmap_data log "$data" "$name")" ;;
		esac
	done < <(linmap_data tap "$data")
	[ $seen = 1 ] || bad "$mode: kselftests produced no results" "$(tail -20 "$data")"
}

module_loaded() {	# MODE DATA
	if [ "$(linmap_data module "$2")" = loaded ]; then
		ok "$1: module loads"
	else
		bad "$1: module loads" "$(sed -n '/insmod failed/,/^\[/p' "$2")"
		return 1
	fi
}
