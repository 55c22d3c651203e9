#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Usage: make check-configs [CONFIGS="name ..."]
# Both series (the core, patches/*.patch, then the healing one,
# patches/heal/*.patch, no test-only patch) build with CONFIG_WERROR in
# the configurations of scripts/suites/check-configs.tsv, not only in the kit's
# own. For each configuration, with its scope EACH/LAST:
#   - the base 6.12 builds (vmlinux, or with EACH=objects the directories
#     the series touches): if it does not, the configuration is a SKIP
#     with that reason, as nothing after it would mean anything;
#   - the patches are applied one at a time, and after each one EACH is
#     built: 'dirs', the directories the series touches, or 'objects',
#     the objects of the files the series touches that this configuration
#     builds (for the large configurations); the first failure names the
#     patch;
#   - after the last patch LAST is built: 'vmlinux', which also covers
#     every other user of the headers the series changes, or 'dirs'.
# Randconfig rows name a seed of scripts/suites/check-configs.seeds; debian:FLAVOUR
# is Debian's own configuration (scripts/job/debian-config.sh).
# Logs under out/check-configs/NAME/, a table in results.tsv.
# Ends with 'N passed, N failed, N skipped'.
. "$(dirname "$0")/../lib/lib.sh"

require_cmds git
"$TOP/scripts/job/tree.sh" >/dev/null
base=$(git -C "$KSRC" rev-parse HEAD)
W=$OUT/check-configs
TSV=$TOP/scripts/suites/check-configs.tsv
SEEDS=$TOP/scripts/suites/check-configs.seeds
RESULTS_LOG=$W/results.log
RESULTS_TSV=$W/results.tsv
mkdir -p "$W"
: >"$RESULTS_LOG"
: >"$RESULTS_TSV"
pass=0 failed=0 skipped=0

mapfile -t upstream < <(patches_in "$PATCHDIR"/*.patch "$PATCHDIR"/heal/*.patch)
[ ${#upstream[@]} -gt 0 ] || die "no patches in $PATCHDIR"
# The directories of the .c files the series touches.
mapfile -t dirs < <(cat "${upstream[@]}" |
	sed -n 's|^diff --git a/\([^ ]*\)/[^/ ]*\.c b/.*|\1/|p' | sort -u)
# And the objects of those files.
mapfile -t objs < <(cat "${upstream[@]}" |
	sed -n 's|^diff --git a/\([^ ]*\)\.[cS] b/.*|\1.o|p' | sort -u)

# A clean worktree at the base, reused between runs.
src=$W/src
if [ -d "$src" ]; then
	git -C "$src" am --abort >/dev/null 2>&1 || true
	git -C "$src" checkout -q -f --detach "$base"
else
	git -C "$KSRC" worktree prune
	git -C "$KSRC" worktree add -q --detach "$src" "$base"
fi

# configure NAME BASE OPTIONS: the .config of $build; every option given
# must hold in it.
configure() {
	local name=$1 kind=$2 opts=$3 frag=$build/check-configs.config line opt
	mkdir -p "$build"
	# An option NAME.config is the kit's fragment scripts/configs/NAME.config.
	{
		echo CONFIG_WERROR=y
		for opt in ${opts//,/ }; do
			case $opt in
			-) ;;
			*.config) sed 's/#.*//; /^$/d' "$TOP/scripts/configs/$opt" || return 1 ;;
			*) echo "$opt" ;;
			esac
		done
	} >"$frag"
	case $kind in
	kit)
		kmake -s tinyconfig &&
		echo "CONFIG_ARM64_VA_BITS_48=y" >"$build/va.config" &&
		"$src/scripts/kconfig/merge_config.sh" -m -O "$build" "$build/.config" \
			"$TOP/scripts/configs/base.config" "$TOP/scripts/configs/4K.config" \
			"$build/va.config" "$frag" ;;
	defconfig|allmodconfig)
		kmake -s "$kind" &&
		"$src/scripts/kconfig/merge_config.sh" -m -O "$build" "$build/.config" "$frag" ;;
	randconfig:*)
		KCONFIG_SEED=${kind#randconfig:} kmake -s randconfig &&
		"$src/scripts/kconfig/merge_config.sh" -m -O "$build" "$build/.config" "$frag" ;;
	debian:*)
		local dc
		dc=$("$TOP/scripts/job/debian-config.sh" "${kind#debian:}") &&
		cp "$dc" "$build/.config" &&
		"$src/scripts/kconfig/merge_config.sh" -m -O "$build" "$build/.config" "$frag" ;;
	*) echo "unknown base '$kind'"; return 1 ;;
	esac >"$build/config.log" 2>&1 && kmake -s olddefconfig >>"$build/config.log" 2>&1 || return 1
	while IFS= read -r line; do
		opt=${line%%=*}
		case $line in
		*=n) ! grep -q "^$opt=" "$build/.config" ;;
		*) grep -qxF "$line" "$build/.config" ;;
		esac || { echo "$line did not take effect" >>"$build/config.log"; return 1; }
	done <"$frag"
}

# errors LOG: the compiler's errors, for a FAIL's details.
errors() {
	grep -E 'error:' "$1" | head -12 | grep . || grep -E 'Error [0-9]' "$1" | head -3
}

# The rows: the table's, and one per seed of the seeds file.
rows() {
	awk -F'\t+' '!/^#/ && NF >= 3 { print $1 "|" $2 "|" $3 "|" $4 }' "$TSV"
	sed 's/#.*//; /^[[:space:]]*$/d' "$SEEDS" | while read -r seed scope opts; do
		echo "rand-$seed|randconfig:$seed|$scope|${opts:-}"
	done
}

# built_objs: the objects of the files the series touches that this
# configuration built at the base (the others it does not build).
built_objs() {
	local o
	for o in "${objs[@]}"; do
		[ -f "$build/$o" ] && echo "$o"
	done
	return 0
}

# one_config NAME KIND SCOPE OPTIONS
one_config() {
	local name=$1 kind=$2 scope=$3 opts=$4 each last logs started n p pname fail
	local basewhat eachwhat lastwhat
	each=${scope%/*} last=${scope#*/}
	case $each/$last in
	dirs/vmlinux|objects/vmlinux|objects/dirs) ;;
	*) bad "configs $name: scope" "unknown scope '$scope' in $TSV"; return 0 ;;
	esac
	build=$W/$name
	logs=$W/$name/logs
	rm -rf "$logs" && mkdir -p "$logs"
	git -C "$src" am --abort >/dev/null 2>&1 || true
	git -C "$src" checkout -q -f --detach "$base"
	started=$(date +%s)
	msg "check-configs $name ($kind${opts:+ + $opts}, CONFIG_WERROR, $scope)"
	export KIT_SRC=$src KIT_BUILD=$build
	SRC=$src BUILD=$build
	if ! configure "$name" "$kind" "$opts"; then
		bad "configs $name: configure ($kind${opts:+, $opts})" "$(tail -5 "$build/config.log")"
		return 0
	fi
	cp "$build/.config" "$logs/config"
	if [ "$each" = objects ]; then
		basewhat=("${dirs[@]}")
	else
		basewhat=(vmlinux)
	fi
	if ! with_progress "building the base 6.12 ($name: ${basewhat[*]})" "$logs/base.log" \
		'^  CC' objects '' kmake "${basewhat[@]}"; then
		skip "configs $name: every patch builds with CONFIG_WERROR" \
			"the base 6.12 does not build in it: $(errors "$logs/base.log" | head -1)"
		return 0
	fi
	if [ "$each" = objects ]; then
		mapfile -t eachwhat < <(built_objs)
		if [ ${#eachwhat[@]} -eq 0 ]; then
			skip "configs $name: every patch builds with CONFIG_WERROR" \
				"it builds none of the files the series touches"
			return 0
		fi
	else
		eachwhat=("${dirs[@]}")
	fi
	n=0 fail=
	for p in "${upstream[@]}"; do
		n=$((n + 1))
		pname=${p#"$PATCHDIR"/}
		printf '\r    %s: patch %d/%d' "$name" "$n" "${#upstream[@]}" >&2
		if ! git -C "$src" "${GIT_ID[@]}" am -q "$p" >"$logs/am-$n.log" 2>&1; then
			bad "configs $name: applies: $pname" "$(tail -5 "$logs/am-$n.log")"
			fail=1
			break
		fi
		if ! kmake "${eachwhat[@]}" >"$logs/patch-$n.log" 2>&1; then
			bad "configs $name: builds with CONFIG_WERROR after $pname" \
				"$(errors "$logs/patch-$n.log") (log: $logs/patch-$n.log)"
			fail=1
			break
		fi
	done
	printf '\n' >&2
	[ -z "$fail" ] || return 0
	ok "configs $name: ${eachwhat[*]} build after each of the ${#upstream[@]} patches"
	if [ "$last" = vmlinux ]; then
		lastwhat=(vmlinux)
	else
		lastwhat=("${dirs[@]}")
	fi
	if with_progress "building ${lastwhat[*]} with both series ($name)" "$logs/series.log" \
		'^  CC' objects '' kmake "${lastwhat[@]}"; then
		ok "configs $name: ${lastwhat[*]} build with both series ($(( $(date +%s) - started ))s)"
	else
		bad "configs $name: ${lastwhat[*]} build with both series" \
			"$(errors "$logs/series.log") (log: $logs/series.log)"
	fi
}

mapfile -t table < <(rows)
for row in "${table[@]}"; do
	IFS='|' read -r name kind scope opts <<<"$row"
	if [ -n "${CONFIGS:-}" ] && [[ " $CONFIGS " != *" $name "* ]]; then
		continue
	fi
	mkdir -p "$W/$name"
	from=$(wc -l <"$RESULTS_LOG")
	one_config "$name" "$kind" "$scope" "$opts"
	# Each configuration's results stay beside its logs across runs.
	tail -n +"$((from + 1))" "$RESULTS_LOG" >"$W/$name/results.log"
	printf '%s\t%s\t%s\t%s\n' "$name" "$kind" "$(date -u +%F)" \
		"$(grep -c '^FAIL' "$W/$name/results.log" || true) failed" >>"$W/history.tsv"
done
git -C "$src" am --abort >/dev/null 2>&1 || true
tally
