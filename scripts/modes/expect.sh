# SPDX-License-Identifier: GPL-2.0
# The expectations of the guest modes of modes.tsv beside it: each
# function judges one check named in the table's checks column (host_checks
# dispatches them), from the guest's logs and data file. Sourced by
# scripts/suites/check.sh.

# The BBML2_NOABORT allowlist, which no emulated CPU matches: the test-only
# patch checks it at boot against revisions on both sides of each range.
check_allowlist() {
	local name="$1: the BBML2_NOABORT allowlist classifies each MIDR right" line
	line=$(grep -o 'bbml2_test: allowlist: [0-9]* of [0-9]* MIDRs classified right' "$2" | head -1)
	if [ -n "$line" ] && [ "$(cut -d' ' -f3 <<<"$line")" = "$(cut -d' ' -f5 <<<"$line")" ]; then
		ok "$name (${line#bbml2_test: allowlist: })"
	else
		bad "$name" "$(grep 'bbml2_test: ' "$2" | grep -v 'claimed by' || echo "no allowlist line in $2")"
	fi
}

# The SMMUv3 probe (arm-smmu-v3.c prints its feature word): SVA must be
# refused, saying why, where the CPUs claim BBML2_NOABORT and the SMMU has
# no BBM level 2, and allowed otherwise.
check_smmu() {
	local name="$1-$2: SVA follows the SMMU's BBM level and the CPUs' BBML2"
	local log=$CHECK/$1-$2.log data=$CHECK/$1-$2.data feat cpu sva smmu_bbml2 refused bit
	local hdr=$SRC/drivers/iommu/arm/arm-smmu-v3/arm-smmu-v3.h
	feat=$(sed -n 's/.*arm-smmu-v3.*(features \(0x[0-9a-f]*\)).*/\1/p' "$log" | head -1)
	cpu=$(linmap_data get "$data" state bbml2 || true)
	# The feature bit as the series defines it, not a copy of it here.
	bit=$(sed -n 's/^#define ARM_SMMU_FEAT_BBML2[[:space:]]*\(BIT(\|(1 << \)\([0-9]*\)).*/\2/p' "$hdr")
	if [ -z "$feat" ] || [ -z "$cpu" ] || [ -z "$bit" ]; then
		bad "$name" "no SMMUv3 probe line or no module state in $log, or no ARM_SMMU_FEAT_BBML2 in $hdr"
		return
	fi
	sva=$(( (feat >> 17) & 1 ))
	smmu_bbml2=$(( (feat >> bit) & 1 ))
	refused=$(grep -c 'SVA disabled: no BBM level 2' "$log" || true)
	if [ "$cpu" = 1 ] && [ $smmu_bbml2 = 0 ]; then
		[ $sva = 0 ] && [ "$refused" -ge 1 ] &&
			ok "$name (CPUs BBML2_NOABORT, SMMU BBM level < 2: SVA refused, features $feat)" ||
			bad "$name" "features $feat: SVA=$sva, refusal lines: $refused"
	else
		[ $sva = 1 ] && [ "$refused" = 0 ] &&
			ok "$name (CPUs bbml2=$cpu, SMMU BBML2=$smmu_bbml2: SVA allowed, features $feat)" ||
			bad "$name" "features $feat: SVA=$sva, refusal lines: $refused"
	fi
}

# The kernel's own BBML2_NOABORT decision, no bbml2_test=: BBM level 3 in
# ID_AA64MMFR2_EL1, or a MIDR the allowlist names (QEMU's implementer 0
# never is).
check_own_bbm() {
	local name="$1-$2: BBML2_NOABORT decided from the CPU's BBM level" data=$CHECK/$1-$2.data
	local level midr cpu want forced
	level=$(linmap_data get "$data" state bbm_level || true)
	midr=$(linmap_data get "$data" state midr || true)
	cpu=$(linmap_data get "$data" state bbml2 || true)
	if [ -z "$level" ] || [ -z "$cpu" ]; then
		bad "$name" "no bbm_level or bbml2 in the state of $data"
		return
	fi
	# The test-only bbml2_test_bbm= makes every CPU read another level.
	forced=$(sed -n 's/.*bbml2_test_bbm: CPUs [0-9,-]* read BBM level \([0-9]*\),.*/\1/p' \
		"$CHECK/$1-$2.log" | head -1)
	[ -z "$forced" ] || level=$forced
	want=0
	[ "$level" -ge 3 ] && want=1
	midr=$(printf '%#x' "$midr" 2>/dev/null || echo "$midr")
	[ "$cpu" = "$want" ] &&
		ok "$name (BBM level $level, MIDR $midr: BBML2_NOABORT=$cpu)" ||
		bad "$name" "BBM level $level, MIDR $midr, yet bbml2=$cpu"
}

# A split tried from a secondary CPU during SMP bring-up (test-only patch),
# before the capabilities are final: it must not be made.
check_bringup_split() {
	local name="$1: no split during SMP bring-up, before capabilities are final" line
	line=$(grep -o 'bbml2_test: split on CPU.*' "$2" | head -1)
	case "$line" in
	*"capabilities not final: not made"*) ok "$name" ;;
	*"nothing to split"*) skip "$name" "no block around the page the test allocated" ;;
	*) bad "$name" "${line:-no bring-up split line in $2}" ;;
	esac
}

# The churn phase, if the guest ran one: the shadow-model stress while a
# module was loaded and unloaded and CPUs went offline and online.
check_churn() {	# MODE DATA [CMDLINE: a churn it asks for must have run]
	local mode=$1 data=$2 k bad_keys= churn cpa audit
	if ! churn=$(linmap_data section "$data" churn); then
		[[ " ${3:-} " != *" linmap.churn="* ]] ||
			bad "$mode: churn: ran" "the guest was asked for it (linmap.churn=) and kept no [churn] section"
		return 0
	fi
	# Each section read once (a python3 start costs about 0.4 s here).
	cpa=$(linmap_data section "$data" cpa) || cpa=
	audit=$(linmap_data section "$data" churn_audit) || audit=
	kv() {	# VAR KEY: KEY's value in the section text held in VAR
		sed -n "s/^$2=//p" <<<"${!1}" | head -n 1
	}
	for k in mismatches call_errors collapse_errors table_violations directmap_mismatches; do
		[ "$(kv cpa "$k")" = 0 ] || bad_keys+=" $k=$(kv cpa "$k")"
	done
	[ "$(kv churn cpa_rc)" = 0 ] || bad_keys+=" cpa_rc=$(kv churn cpa_rc)"
	# The whole map, audited once the module and CPU loop had stopped.
	[ "$(kv audit violations)" = 0 ] ||
		bad_keys+=" audit after the churn: violations=$(kv audit violations) $(kv audit violation.0)"
	[ "$(kv cpa ops)" -gt 0 ] 2>/dev/null || bad_keys+=" ops=$(kv cpa ops)"
	[ -z "$bad_keys" ] || [ -z "$(kv cpa first)" ] || bad_keys+="
first: $(kv cpa first)"
	if [ -z "$bad_keys" ]; then
		ok "$mode: churn: $(kv cpa ops) random changes in $(( $(kv cpa elapsed_ms) / 1000 )) s (seed $(kv cpa seed), $(kv cpa threads) threads, a check every $(kv cpa batch)), $(kv cpa verified_pages) page checks, 0 mismatches, $(kv audit leaves) leaves audited after"
	else
		bad "$mode: churn: shadow-model stress clean" "$bad_keys
$cpa"
	fi
	if [ "$(kv churn module_cycles)" -gt 0 ] 2>/dev/null &&
	   [ "$(kv churn module_failures)" = 0 ]; then
		ok "$mode: churn: module loaded and unloaded $(kv churn module_cycles) times"
	else
		bad "$mode: churn: module load/unload during the stress" "$churn"
	fi
	if [ "$(kv churn cpu_cycles)" -gt 0 ] 2>/dev/null &&
	   [ "$(kv churn cpu_failures)" = 0 ]; then
		ok "$mode: churn: CPUs went offline and online $(kv churn cpu_cycles) times"
	else
		bad "$mode: churn: CPU offline/online during the stress" "$churn"
	fi
}

# The linear map around each workload ([wl.*] in the data) against what
# the kernel says of itself (linmap_data.py map), and a table of the
# workloads: result and figures, leaves before > after > after the
# checks, splits and folds.
check_map() {	# NAME DATA
	local status wl what detail
	while IFS=$'\t' read -r status wl what detail; do
		case $status in
		ok) ok "$1: map: $wl: $what" ;;
		skip) skip "$1: map: $wl: $what" "$detail" ;;
		*) bad "$1: map: $wl: $what" "$detail" ;;
		esac
	done < <(linmap_data map "$2")
	detail=$(linmap_data maptable "$2")
	[ -z "$detail" ] || printf '%s: workloads\n%s\n' "$1" "$(sed 's/^/    /' <<<"$detail")"
}

# same_layout PAGE_SIZE MODE_A MODE_B: the kernel's ptdump of the linear map
# at boot must have the same leaves in both, outside the kernel image alias
# and the KFENCE pool. MODE_A series:NAME is the series' guest NAME, from a
# nested tree's run (the unpatched base).
same_layout() {
	local name="$1-$2: linear map at boot has the same leaves as $1-$3"
	local out a=$CHECK/$1-$2.data
	if [[ $2 == series:* ]]; then
		a=${SERIES_CHECK_DIR:-}/$1-${2#series:}.data
		name="$1-$3: linear map at boot has the same leaves as the series' $1-${2#series:}"
		if [ -z "${SERIES_CHECK_DIR:-}" ] || [ ! -f "$a" ]; then
			skip "$name" "no $a: the series' guest did not run (CHECK_MODES, or not in make check)"
			return 0
		fi
	fi
	if out=$(python3 "$TOP/scripts/job/ptdump.py" same "$a" \
		"$CHECK/$1-$3.data" 2>&1); then
		ok "$name"
		printf '%s\n' "$out" | sed 's/^/    /'
	else
		bad "$name" "$out"
	fi
}

# The series booted with linear_map_ptes: the kernel says it kept the
# linear map in PTEs, and its ptdump at boot has nothing else.
check_pte_layout() {	# GEOMETRY MODE
	local log=$CHECK/$1-$2.log out
	local line='linear map: PTEs only, as without BBML2_NOABORT (linear_map_ptes)'
	if grep -qF "$line" "$log"; then
		ok "$1-$2: the kernel says linear_map_ptes kept PTEs"
	else
		bad "$1-$2: the kernel says linear_map_ptes kept PTEs" \
			"no '$line' in $log: $(grep -E 'linear map|linear_map_ptes|BBML2' "$log" | head -5)"
	fi
	if out=$(python3 "$TOP/scripts/job/ptdump.py" ptes "$CHECK/$1-$2.data" 2>&1); then
		ok "$1-$2: linear map at boot is all PTEs"
		printf '    %s\n' "$out"
	else
		bad "$1-$2: linear map at boot is all PTEs" "$out"
	fi
}

# hw-bench.sh in a workload guest (workload hwbench): its results.json,
# [hwbench.json] in the data, names the layout the mode boots, has a
# figure above 0 for each workload's own measure, and a median or a
# reason for every other; the second layout's run is joined with the
# first's by hw-bench.sh --compare, the table shown here.
check_hwbench() {	# GEOMETRY MODE LAYOUT
	local ps=$1 mode=$2 want=$3 j=$CHECK/$1-$2.hwbench.json name bad_m= m other
	name="$ps-$mode: hw-bench.sh reports the $want layout and a figure for every workload"
	linmap_data section "$CHECK/$ps-$mode.data" hwbench.json >"$j" 2>&1 || true
	for m in memcached:ops_per_s fio_randread:iops fio_randwrite:iops seqread:bandwidth; do
		awk -v w="${m%%:*}" -v m="${m#*:}" '
			index($0, "\"workload\": \"" w "\", \"metric\": \"" m "\"") &&
			match($0, /"median": [0-9.e+]+/) && substr($0, RSTART + 10, RLENGTH - 10) + 0 > 0 { f = 1 }
			END { exit !f }' "$j" || bad_m+=" $m"
	done
	# Every figure has a median or says why it has none.
	other=$(grep '"workload":' "$j" | grep -vc '"median":\|"missing": "[^"]' || true)
	if grep -q "^ *\"layout\": \"$want\"" "$j" && [ -z "$bad_m" ] && [ "$other" = 0 ]; then
		ok "$name"
		grep -o '"workload": "[a-z_]*", "metric": "[a-z0-9_]*".*"\(median\|missing\)": [^,}]*' "$j" |
			sed 's/"workload": "\([a-z_]*\)", "metric": "\([a-z0-9_]*\)".*"\(median\|missing\)": /\1 \2 \3 /; s/^/    /'
	else
		bad "$name" "layout $(sed -n 's/^ *"layout": "\(.*\)",$/\1/p' "$j") (want $want); no figure above 0:${bad_m:- none}; $other without median or reason; $j: $(head -c 600 "$j")"
	fi
	# The two layouts side by side, once both ran (PTE first in modes.tsv).
	[ "$want" = block ] || return 0
	local pj md=$CHECK/$ps-hwbench-compare.md
	pj=$(grep -l '^ *"layout": "pte"' "$CHECK"/"$ps"-*.hwbench.json 2>/dev/null | head -1)
	if [ -z "$pj" ]; then
		skip "$ps-$mode: hw-bench.sh --compare with the PTE layout's run" \
			"no PTE-layout hw-bench run in $CHECK (CHECK_MODES?)"
	elif "$TOP/scripts/bench/hw-bench.sh" --compare "$pj" "$j" --md "$md" >/dev/null 2>&1 &&
	     grep -q '^| memcached | ops_per_s .* | [-+][0-9.]*% |$' "$md" &&
	     grep -q '^| seqread | bandwidth .* | [-+][0-9.]*% |$' "$md"; then
		ok "$ps-$mode: hw-bench.sh --compare joins the PTE and block layouts' runs"
		sed 's/^/    /' "$md"
	else
		bad "$ps-$mode: hw-bench.sh --compare joins the PTE and block layouts' runs" "$(cat "$md" 2>&1)"
	fi
}

# make check's installed package (DEB_RELEASE, DEB_DIR: guests.sh). install:
# the guest installed the release make deb named; the kernel in the copy's
# /boot is the package's, byte for byte (the next guests boot it); make
# install-tests takes the headers in its /usr/src as KDIR (arm64's build
# programs, made again for this host) and builds kmod/ against them, for
# the next guests. run: the guest runs that release and loaded that module.
check_deb() {	# GEOMETRY MODE install|run
	local name=$1-$2 data=$CHECK/$1-$2.data rel sec
	sec=$(linmap_data section "$data" deb 2>/dev/null) || true
	rel=$(sed -n 's/^release=//p' <<<"$sec" | head -1)
	if [ -z "$DEB_RELEASE" ] || [ "$rel" != "$DEB_RELEASE" ]; then
		bad "$name: the package's release $DEB_RELEASE" "the guest's: ${rel:-none} ($data)"
		return 0
	fi
	case $3 in
	install) deb_installed "$name" "$rel" ;;
	run)
		if grep -qx "kernel=$rel" "$data" && grep -qx "kmod=run rc=0" <<<"$sec" &&
		   grep -qx "kmod_vermagic=$rel" <<<"$sec" &&
		   [ "$(linmap_data module "$data")" = loaded ]; then
			ok "$name: the installed kernel $rel loaded kmod/ built against its installed headers"
		else
			bad "$name: the installed kernel loaded kmod/ built against its installed headers" \
				"$(grep '^kernel=' "$data"); $(grep -E '^(release|kmod|kmod_vermagic)=' <<<"$sec" | tr '\n' ' ')module=$(linmap_data module "$data")"
		fi ;;
	esac
}

deb_installed() {	# NAME RELEASE
	local name=$1 rel=$2 img=$DEB_DIR/vmlinuz f hdr=$DEB_DIR/installed/linux-headers-$2 tb
	rm -rf "$img" "$DEB_DIR/installed" "$DEB_DIR/mods" "$DEB_DIR/mods.ext4"
	f=$(ls "$DEB_DIR"/debs/linux-image-"$rel"_*.deb)
	debugfs -R "dump /boot/vmlinuz-$rel $img.tmp" "$DEB_DIR/root.ext4" >/dev/null 2>&1 || true
	if [ -s "$img.tmp" ] && dpkg-deb --fsys-tarfile "$f" |
		tar -xO "./boot/vmlinuz-$rel" | cmp -s - "$img.tmp"; then
		mv "$img.tmp" "$img"
		ok "$name: the kernel dpkg put in /boot is the package's ($(wc -c <"$img") bytes)"
	else
		bad "$name: the kernel dpkg put in /boot is the package's" \
			"debugfs of $DEB_DIR/root.ext4: $(ls -l "$img.tmp" 2>&1)"
		return 0
	fi
	mkdir -p "$DEB_DIR/installed" "$DEB_DIR/mods"
	debugfs -R "rdump /usr/src/linux-headers-$rel $DEB_DIR/installed" "$DEB_DIR/root.ext4" \
		>"$DEB_DIR/rdump.log" 2>&1 || true
	if tb=$(KDIR="$hdr" INSTALL_OUT="$DEB_DIR/install-tests" \
		"$TOP/scripts/job/install-tests.sh" 2>"$DEB_DIR/install-tests.log") &&
	   cp "${tb%/*}"/kmod/linmap_test.ko "${tb%/*}"/kmod/linmap_churn.ko "$tb" "$DEB_DIR/mods/" &&
	   dir_disk "$DEB_DIR/mods" linmap-debs "$DEB_DIR/mods.ext4" 2>>"$DEB_DIR/install-tests.log"; then
		ok "$name: make install-tests KDIR=/usr/src/linux-headers-$rel (as dpkg installed it) builds kmod/ and its tarball"
	else
		bad "$name: make install-tests KDIR=/usr/src/linux-headers-$rel (as dpkg installed it) builds kmod/ and its tarball" \
			"$(tail -5 "$DEB_DIR/rdump.log"; tail -8 "$DEB_DIR/install-tests.log")"
		rm -f "$DEB_DIR/mods.ext4"
	fi
}

# The kexec and kdump guests: the first kernel loaded the second with
# kexec -s -l and rebooted into it, or loaded a crash kernel with kexec
# -s -p and panicked; the record is the second kernel's.
check_kexec() {	# GEOMETRY MODE kexec|kdump
	local log=$CHECK/$1-$2.log data=$CHECK/$1-$2.data boots what
	case $3 in
	kexec) what="kexec -s -l and -e booted the second kernel, which ran the tests" ;;
	kdump) what="kexec -s -p and a panic booted the crash kernel, which ran the tests" ;;
	esac
	boots=$(grep -c 'Booting Linux on physical CPU' "$log" 2>/dev/null || true)
	# The data file: written only by a kernel that finished its job.
	if [ "$boots" = 2 ] && [ -f "$data" ] &&
	   grep -q "Kernel command line:.*linmap\.$3=1" "$log"; then
		ok "$1-$2: $what"
	else
		bad "$1-$2: $what" \
			"$boots kernel boots in $log; $(grep -E '^(not ok|# kexec|# Cannot|# crash)' "$log" | head -8)"
	fi
	# The GIC's LPI tables in the second kernel (patches/fixes/0001):
	# QEMU boots without EFI, so a kexec'd kernel must refuse the first
	# one's tables and install its own; a crash kernel reuses them.
	local second lpi
	second=$(awk '/Booting Linux on physical CPU/ { n++ } n >= 2' "$log" 2>/dev/null)
	case $3 in
	kexec) what="the second kernel refused the first one's LPI tables (no EFI)"
		lpi='LPI table \[.*\] cannot have been reserved without EFI' ;;
	kdump) what="the crash kernel reused the first one's LPI tables"
		lpi='GICv3: Using preallocated redistributor tables' ;;
	esac
	if grep -qE "$lpi" <<<"$second"; then
		ok "$1-$2: $what"
	else
		bad "$1-$2: $what" "no '$lpi' after the second boot in $log: $(grep -E 'GICv3|ITS' <<<"$second" | head -6)"
	fi
}

# The kernel's own checks of rodata=full (scripts/configs/debug.config) ran
# and passed: a write to .rodata faulted, and no mapping is W+X. Each prints
# its success line only when it passed (their failure lines also fail the
# log scan, scripts/lib/scan-log.sh).
check_rodata() {	# GEOMETRY MODE
	local name="$1-$2: rodata read-only and no W+X mapping (rodata_test, W^X scan)"
	local log=$CHECK/$1-$2.log
	if grep -aq 'rodata_test: all tests were successful' "$log" &&
	   grep -aq 'Checked W+X mappings: passed' "$log"; then
		ok "$name"
	else
		bad "$name" "not both 'rodata_test: all tests were successful' and 'Checked W+X mappings: passed' in $log: $(grep -aE 'rodata_test:|Checked W[+]X' "$log" | head -4)"
	fi
}

# Collapse as the mode states it (on or off), from the state the module
# reported in the guest (collapse=1 or 0).
check_collapse() {	# GEOMETRY MODE on|off
	local name="$1-$2: collapse is $3" v
	v=$(linmap_data get "$CHECK/$1-$2.data" state collapse 2>/dev/null) || v=
	case "$3:$v" in
	on:1|off:0) ok "$name" ;;
	*) bad "$name" "the module's state has collapse=${v:-nothing} in $CHECK/$1-$2.data" ;;
	esac
}

# The mode's CPUs made the kernel repaint the linear map with PTEs, with no
# more tables than the linear map can need: one PTE table per PAGE_SIZE *
# PAGE_SIZE / 8 bytes of RAM (as the kernel counts it at boot), twice over
# for the levels above. A walk that strayed outside the linear map (a
# 52-bit kernel's PAGE_OFFSET without LPA2 wrapped over all of TTBR1)
# counts more.
check_repaint() {	# GEOMETRY MODE
	local name="$1-$2: the linear map was repainted with PTEs, and only it" line n kb ps max
	line=$(grep -ao 'linear map repainted with PTEs: .*' "$CHECK/$1-$2.log" | head -1) || true
	if [ -z "$line" ]; then
		bad "$name" "no 'linear map repainted with PTEs' in $CHECK/$1-$2.log"
		return 0
	fi
	n=$(sed -n 's/.*(\([0-9]*\) tables).*/\1/p' <<<"$line")
	kb=$(sed -n 's/.*Memory: [0-9]*K\/\([0-9]*\)K available.*/\1/p' "$CHECK/$1-$2.log" | head -n 1) || true
	ps=${1%%K*}
	if [ -z "$n" ] || [ -z "$kb" ]; then
		bad "$name" "no table count in '$line' or no 'Memory: ...K/...K available' in $CHECK/$1-$2.log"
		return 0
	fi
	max=$(( 2 * (kb * 1024 / (ps * 1024 * ps * 1024 / 8) + 1) + 64 ))
	if [ "$n" -le "$max" ]; then
		ok "$name ($n tables for $kb kB of RAM, at most $max)"
	else
		bad "$name" "$n tables for $kb kB of RAM: more than $max, the linear map's own"
	fi
}

# host_checks GEOMETRY MODE CHECKS: the modes.tsv checks after a guest.
host_checks() {
	local ps=$1 mode=$2 c
	for c in ${3//,/ }; do
		case "$c" in
		-) ;;
		allowlist) check_allowlist "$ps" "$CHECK/$ps-$mode.log" ;;
		bringup-split) check_bringup_split "$ps" "$CHECK/$ps-$mode.log" ;;
		smmu) check_smmu "$ps" "$mode" ;;
		own-bbm) check_own_bbm "$ps" "$mode" ;;
		kexec|kdump) check_kexec "$ps" "$mode" "$c" ;;
		pte-layout) check_pte_layout "$ps" "$mode" ;;
		rodata) check_rodata "$ps" "$mode" ;;
		repaint) check_repaint "$ps" "$mode" ;;
		collapse=on|collapse=off) check_collapse "$ps" "$mode" "${c#*=}" ;;
		hwbench=*) check_hwbench "$ps" "$mode" "${c#*=}" ;;
		deb=*) check_deb "$ps" "$mode" "${c#*=}" ;;
		same-layout=*)
			if [[ ${c#*=} != series:* ]] && [ -n "${CHECK_MODES:-}" ] &&
			   [[ " $CHECK_MODES " != *" ${c#*=} "* ]]; then
				skip "$ps-${c#*=}: linear map at boot has the same leaves as $ps-$mode" \
					"CHECK_MODES leaves out ${c#*=}"
			else
				same_layout "$ps" "${c#*=}" "$mode"
			fi ;;
		*) bad "$ps-$mode: unknown check '$c' in scripts/modes/modes.tsv" ;;
		esac
	done
}
