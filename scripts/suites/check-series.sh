#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Checks of both series (the core, patches/*.patch, and the healing one on
# top, patches/heal/*.patch), behind 'make check-series':
#   - scripts/checkpatch.pl --strict on every patch (both series, their
#     testing/ and base-testing/): no error, warning or check;
#   - a Signed-off-by and a commit message body on every patch;
#   - bisectability: the kernel builds after each patch, in the order the
#     kit applies them (core, testing/, heal/, heal/testing/; PAGE_SIZE, default 4K;
#     SERIES_BUILDS=0 skips the builds) and boots under QEMU with the module
#     and the quick selftests (SERIES_STEP_TESTS), with no failed test and no
#     kernel splat (SERIES_BOOTS=0 skips the boots). The per-patch kernels
#     have the base configuration without debug options; their CPUs claim
#     BBML2_NOABORT by MIDR (SERIES_STEP_CPU) from the patch that reads it.
#     Each step's result goes to SERIES_RECORD (Documentation/bisection.tsv),
#     keyed by the patches up to it and the configuration: a step recorded
#     as passed is not run again, so a run stopped by SERIES_BUDGET (seconds
#     of per-patch steps) resumes where it stopped;
#   - the core series applies to the base alone and the healing series to
#     the core alone;
#   - b4: git format-patch --thread --cover-letter --base output of each
#     series, run through 'b4 --offline-mode am', gives back the same tree;
#   - sparse (C=1) and W=1 on the objects of the .c files the series
#     touch, built on the base and after both series: no new warning
#     (SERIES_WARNINGS=0 skips this).
# Ends with 'N passed, N failed, N skipped'.
. "$(dirname "$0")/../lib/lib.sh"

require_cmds git b4 sparse
"$TOP/scripts/job/tree.sh" >/dev/null
base=$(git -C "$KSRC" rev-parse HEAD)
mapfile -t patches < <(series_patches)
[ ${#patches[@]} -gt 0 ] || die "no patches in $PATCHDIR"
mapfile -t bpatches < <(base_patches)
W=$OUT/check-series

# The objects of the .c files the upstream patches touch.
series_objects() {
	sed -n 's|^diff --git a/\([^ ]*\.c\) b/.*|\1|p' "$@" | sort -u | sed 's/\.c$/.o/'
}

# build_warnings OUT OBJ...: build the objects in KIT_BUILD from KIT_SRC with
# sparse and W=1 and write their warnings to OUT, one 'file: message' a
# line, sorted: no line or column numbers, which the series moves.
build_warnings() {
	local out=$1 o
	shift
	"$TOP/scripts/job/config.sh" >"$out.log" 2>&1 || return 1
	# An object that is up to date would be neither compiled nor checked.
	for o in "$@"; do
		rm -f "$KIT_BUILD/$o"
	done
	# lib.sh set SRC and BUILD before KIT_SRC and KIT_BUILD were exported.
	SRC=$KIT_SRC BUILD=$KIT_BUILD kmake -k C=1 W=1 "$@" >>"$out.log" 2>&1 || return 1
	sed -nE 's#^([^ :]+):[0-9]+(:[0-9]+)?: (warning|error): #\1: \3: #p' "$out.log" |
		sed "s|^$KIT_SRC/||; s|^\(\.\./\)*||" | sort >"$out"
}

# warnings_check NEW_OBJS: compare the series' warnings with the base's.
warnings_check() {
	local name="sparse (C=1) and W=1: no new warning in ${*}" new
	if ! build_warnings "$W/warnings.series" "$@"; then
		bad "$name" "build failed; see $W/warnings.series.log"
		return 0
	fi
	new=$(comm -13 "$W/warnings.base" "$W/warnings.series")
	if [ -z "$new" ]; then
		ok "$name ($(wc -l <"$W/warnings.base") on the base, $(wc -l <"$W/warnings.series") after)"
	else
		bad "$name" "new after the series (file: message, logs $W/warnings.*.log):
$new"
	fi
}

# A clean worktree at the base, reused between runs (its build too).
src=$W/src
if [ -d "$src" ]; then
	git -C "$src" am --abort >/dev/null 2>&1 || true
	git -C "$src" checkout -q --detach "$base"
else
	mkdir -p "$W"
	git -C "$KSRC" worktree add -q --detach "$src" "$base"
fi

# patches/fixes/ is in both lists: check each patch once.
mapfile -t checked < <(printf '%s\n' "${patches[@]}" "${bpatches[@]}" | awk '!seen[$0]++')
for p in "${checked[@]}"; do
	name=${p#$PATCHDIR/}
	# The base is a tarball imported as one commit: no upstream commit ID
	# (Fixes:) can be looked up in it. A new file (the trace events'
	# header) always draws "does MAINTAINERS need updating?"; everything
	# the series adds lies under arch/arm64/ and Documentation/arch/arm64/,
	# which ARM64 PORT already covers.
	# A finding is a FAIL line, not the end of the run (set -e).
	# Debian's python3 for checkpatch's SPDX helper: it has the
	# python3-ply and python3-git that 'make deps' installs, whatever
	# python3 comes first in PATH.
	out=$(cd "$src" && PATH=/usr/bin:$PATH ./scripts/checkpatch.pl --strict --quiet \
		--ignore UNKNOWN_COMMIT_ID,FILE_PATH_CHANGES "$p" 2>&1) || true
	if [ -z "$out" ]; then
		ok "checkpatch --strict: $name"
	else
		bad "checkpatch --strict: $name" "$out"
	fi
	if grep -q '^Signed-off-by: ' "$p" &&
	   [ "$(sed -n '/^Subject:/,/^---$/p' "$p" | grep -vc '^\(Subject:\|Signed-off-by:\|---\|\s*\)$')" -ge 3 ]; then
		ok "commit message and Signed-off-by: $name"
	else
		bad "commit message and Signed-off-by: $name"
	fi
done

export KIT_SRC=$src KIT_BUILD=$W/build-$PAGE_SIZE
# The upstream patches: both series, not their test-only patches.
mapfile -t upstream < <(printf '%s\n' "${patches[@]}" | grep -v '/testing/')
mapfile -t objs < <(series_objects "${upstream[@]}")
warn_base=
if [ "${SERIES_WARNINGS:-1}" = 0 ]; then
	skip "sparse (C=1) and W=1 on the files the series touches" "SERIES_WARNINGS=0"
elif [ ${#objs[@]} = 0 ]; then
	skip "sparse (C=1) and W=1 on the files the series touches" "the series touches no .c file"
else
	msg "sparse and W=1 on the base: ${objs[*]}"
	if build_warnings "$W/warnings.base" "${objs[@]}"; then
		warn_base=1
	else
		bad "sparse (C=1) and W=1 on the base" "build failed; see $W/warnings.base.log"
	fi
fi
# The quick selftests, run after each patch: the boot layout the kernel
# claims, lookups, read-only enforcement, a single-page split and the
# auditor; not the long stress, injection or hotplug tests.
STEP_TESTS=${SERIES_STEP_TESTS:-state_sane,counts_consistent,boot_layout,leaf_lookup,ro_enforced,ro_single_page_split,audit_clean,audit_detects}
# The per-patch kernels: the kit's base configuration without its debug
# options (a whole build is about 3 minutes on 2 cores; the headers 11
# patches change make most of one), in a build of their own. Their CPUs
# claim BBML2_NOABORT through the real allowlist (Neoverse-V3 r0p2's
# MIDR) from the patch that adds it, with no test-only patch.
STEP_ENV=(KIT_BUILD="$W/step-$PAGE_SIZE" DEBUG=off KASAN=off)
STEP_CPU=${SERIES_STEP_CPU:-max,midr=0x410fd842,pauth-impdef=on}
# Results of the per-patch steps, kept in the repository so that a run
# cut short by SERIES_BUDGET resumes where it stopped: one line per step,
# keyed by a hash of the patches up to it and of everything else the
# step depends on. A step recorded as passed with the same key is not
# built again; a failed one always is.
RECORD=${SERIES_RECORD:-$TOP/Documentation/bisection.tsv}
BUDGET=${SERIES_BUDGET:-0}
case $BUDGET in
''|*[!0-9]*) die "SERIES_BUDGET must be a number of seconds (0: no limit), not '$BUDGET'" ;;
esac
step_key=$(printf '%s\n' "$base" "$PAGE_SIZE" "$VA_BITS" "$STEP_TESTS" "$STEP_CPU" \
	"$(stamp_of "$TOP"/scripts/configs/{base,"$PAGE_SIZE",thp}.config)" | sha256sum | cut -c1-16)
# recorded KEY: the date of a passed step with KEY, if any.
recorded() {
	[ -f "$RECORD" ] || return 0
	awk -F'\t' -v k="$1" '$1 == k && $4 == "pass" { d = $6 } END { if (d != "") print d }' "$RECORD"
}
record() {	# KEY STEP PATCH RESULT SECONDS DETAIL
	local kit
	[ -f "$RECORD" ] ||
		printf '# key\tstep\tpatch\tresult\tseconds\tdate\tkit\tdetail\n' >"$RECORD"
	kit=$(git -C "$TOP" rev-parse --short HEAD 2>/dev/null || echo unknown)
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" \
		"$(date -u +%Y-%m-%d)" "$kit" "$(printf '%s' "$6" | tr '\t\n' '  ' | cut -c1-200)" >>"$RECORD"
}

# boot_step N NAME: boot the kernel built after patch N with the module and
# the quick selftests; pass if the guest finishes, the log has no kernel
# splat and the TAP output has no failure.
# boot_step N NAME: boot the kernel built after patch N with the module and
# the quick selftests; pass if the guest finishes, the log has no kernel
# splat and the TAP output has no failure. Sets step_detail.
boot_step() {
	local n=$1 name=$2 log=$W/logs/step-$1 totals fails
	step_detail=
	if ! env "${STEP_ENV[@]}" bash -c '"$1/scripts/job/kmod.sh" && "$1/scripts/job/selftests.sh" &&
	       "$1/scripts/job/initramfs.sh"' _ "$TOP" >"$log.build" 2>&1; then
		step_detail="module, selftests or initramfs failed; see $log.build"
		bad "boots ($PAGE_SIZE) after: $name" "$step_detail"
		return 1
	fi
	msg "booting after $name"
	if ! env "${STEP_ENV[@]}" JOB=check NAME=step-$n LOGDIR=$W/logs BBML2=off QEMU_CPU="$STEP_CPU" \
	     QEMU_TIMEOUT=600 CMDLINE="linmap.only=$STEP_TESTS" \
	     "$TOP/scripts/job/boot.sh" >"$log.boot" 2>&1; then
		step_detail=$(tail -8 "$log.boot")
		bad "boots ($PAGE_SIZE) after: $name" "$step_detail"
		return 1
	fi
	totals=$(linmap_data totals "$log.data") || true
	fails=$(linmap_data tap "$log.data" | awk -F'\t' '$1 == "fail" { print "not ok " $2 }')
	if [[ "$totals" != "Totals: pass:"[1-9]* ]] || [ -n "$fails" ]; then
		step_detail="$fails${fails:+$'\n'}${totals:-no Totals line}"
		bad "boots ($PAGE_SIZE) after: $name" "$step_detail"
		return 1
	fi
	step_detail=$totals
	ok "boots ($PAGE_SIZE) after: $name ($totals)"
}

mkdir -p "$W/logs"
applied=0 key=$step_key started=$(date +%s) budget_hit=
for p in "${patches[@]}"; do
	name=${p#$PATCHDIR/}
	if ! git -C "$src" "${GIT_ID[@]}" am -q "$p" >/dev/null 2>&1; then
		bad "applies: $name"
		git -C "$src" am --abort >/dev/null 2>&1 || true
		break
	fi
	applied=$((applied + 1))
	key=$(printf '%s\n' "$key" "$(sha256sum <"$p")" | sha256sum | cut -c1-16)
	[ "${SERIES_BUILDS:-1}" = 0 ] && continue
	# A step needs its boot too, unless boots are off: then a build is
	# a step of its own kind.
	kkey=$key
	[ "${SERIES_BOOTS:-1}" != 0 ] || kkey+=-build
	if when=$(recorded "$kkey") && [ -n "$when" ]; then
		ok "builds and boots ($PAGE_SIZE) after: $name (recorded $when in ${RECORD#$TOP/}, same patches and configuration)"
		continue
	fi
	if [ "$BUDGET" != 0 ] && [ $(($(date +%s) - started)) -ge "$BUDGET" ]; then
		budget_hit=${budget_hit:-$name}
		skip "builds and boots ($PAGE_SIZE) after: $name" "SERIES_BUDGET=$BUDGET s reached; run make check-series again to resume from $budget_hit"
		continue
	fi
	t0=$(date +%s)
	msg "building after $name (step $applied of ${#patches[@]})"
	if env "${STEP_ENV[@]}" bash -c '"$1/config.sh" && "$1/kernel.sh"' _ "$TOP/scripts/job" \
		>"$W/logs/step-$applied.kernel" 2>&1; then
		ok "builds ($PAGE_SIZE) after: $name"
	else
		detail=$(grep -E 'error' "$W/step-$PAGE_SIZE/build.log" | head -10)
		bad "builds ($PAGE_SIZE) after: $name" "$detail"
		record "$kkey" "$applied" "$name" fail "$(($(date +%s) - t0))" "build: $detail"
		continue
	fi
	if [ "${SERIES_BOOTS:-1}" = 0 ]; then
		record "$kkey" "$applied" "$name" pass "$(($(date +%s) - t0))" "built, not booted"
		continue
	fi
	if boot_step "$applied" "$name"; then
		record "$kkey" "$applied" "$name" pass "$(($(date +%s) - t0))" "$step_detail"
	else
		record "$kkey" "$applied" "$name" fail "$(($(date +%s) - t0))" "$step_detail"
	fi
done

# The upstream series alone, without test-only patches: the core on the
# base, then the healing series on the core, as a user applies them.
git -C "$src" am --abort >/dev/null 2>&1 || true
git -C "$src" checkout -q --detach "$base"
mapfile -t core < <(patches_in "$PATCHDIR"/*.patch)
mapfile -t heal < <(patches_in "$PATCHDIR"/heal/*.patch)
# applies_alone WHAT PATCH...: git am onto HEAD; the new HEAD in $applied_head.
applies_alone() {
	local what=$1
	shift
	applied_head=
	if git -C "$src" "${GIT_ID[@]}" am -q "$@" >/dev/null 2>&1; then
		applied_head=$(git -C "$src" rev-parse HEAD)
		ok "$what ($# patches)"
	else
		bad "$what"
		git -C "$src" am --abort >/dev/null 2>&1 || true
	fi
}
applies_alone "the core series applies to the base alone" "${core[@]}"
core_head=$applied_head heal_head=
if [ -n "$core_head" ] && [ ${#heal[@]} -gt 0 ]; then
	applies_alone "the healing series applies to the core alone" "${heal[@]}"
	heal_head=$applied_head
fi

# The warnings after both series (test-only patches are not part of them).
if [ -n "$warn_base" ]; then
	if [ -n "$core_head" ]; then
		git -C "$src" checkout -q --detach "${heal_head:-$core_head}"
		msg "sparse and W=1 after the series"
		warnings_check "${objs[@]}"
	else
		bad "sparse (C=1) and W=1 after the series" "not run: the series did not apply"
	fi
fi

# b4 round trip of each series: FROM..TO sent with --base=FROM. A series
# that did not apply alone (no TO) has no tree to send: a SKIP, not silence.
b4_check() {	# NAME FROM TO
	local what=$1 from=$2 to=$3 d=$W/b4/$1 n mbx
	if [ -z "$to" ]; then
		skip "b4 --offline-mode am round trip ($what)" "the $what series did not apply alone"
		return
	fi
	n=$(git -C "$src" rev-list --count "$from..$to")
	rm -rf "$d" && mkdir -p "$d/out"
	git -C "$src" "${GIT_ID[@]}" format-patch -q --thread --cover-letter --base="$from" \
		-o "$d/fp" "$from..$to"
	cat "$d/fp"/*.patch >"$d/series.mbox"
	if (cd "$d" && b4 -q --offline-mode am -m series.mbox -o out >b4.log 2>&1) &&
	   mbx=$(ls "$d"/out/*.mbx 2>/dev/null | head -1) && [ -n "$mbx" ]; then
		git -C "$src" checkout -q --detach "$from"
		if git -C "$src" "${GIT_ID[@]}" am -q "$mbx" >/dev/null 2>&1 &&
		   [ "$(git -C "$src" rev-parse 'HEAD^{tree}')" = "$(git -C "$src" rev-parse "$to^{tree}")" ] &&
		   [ "$(git -C "$src" rev-list --count "$from..HEAD")" = "$n" ]; then
			ok "b4 --offline-mode am gives back the same $n patches and tree ($what)"
		else
			bad "b4 --offline-mode am gives back the same $n patches and tree ($what)"
			git -C "$src" am --abort >/dev/null 2>&1 || true
		fi
	else
		bad "b4 --offline-mode am reads the format-patch series ($what)" "$(tail -5 "$d/b4.log")"
	fi
}
rm -rf "$W/b4"
b4_check core "$base" "$core_head"
b4_check heal "$core_head" "$heal_head"

# The base kernel's test-only counters apply to the base on their own.
if [ ${#bpatches[@]} -gt 0 ]; then
	git -C "$src" am --abort >/dev/null 2>&1 || true
	git -C "$src" checkout -q --detach "$base"
	applies_alone "base-testing/ applies to the base alone" "${bpatches[@]}"
fi
tally
