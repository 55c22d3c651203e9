# SPDX-License-Identifier: GPL-2.0
# The settings a user gives (scripts/lib/variables.tsv), checked before any
# work: every make target starts with a script that sources lib.sh.
# Sourced by lib.sh, in its order; not on its own.

case "$PAGE_SIZE" in
4K|16K|64K) ;;
*) die "PAGE_SIZE must be 4K, 16K or 64K (got '$PAGE_SIZE')" ;;
esac
# The geometries 6.12 offers (scripts/modes/geometries.tsv): the one named after
# a page size is its default; VA_BITS picks any other.
GEOMETRIES_TSV=$TOP/scripts/modes/geometries.tsv
default_va_bits() {	# PAGE_SIZE
	awk -v n="$1" '!/^#/ && $1 == n { print $3 }' "$GEOMETRIES_TSV"
}
VA_BITS=${VA_BITS:-$(default_va_bits "$PAGE_SIZE")}
awk -v p="$PAGE_SIZE" -v v="$VA_BITS" '!/^#/ && $2 == p && $3 == v { f = 1 } END { exit !f }' \
	"$GEOMETRIES_TSV" ||
	die "VA_BITS must be a size 6.12 offers with $PAGE_SIZE pages:$(awk -v p="$PAGE_SIZE" \
		'!/^#/ && $2 == p { print $3 }' "$GEOMETRIES_TSV" | sort -nu | sed 's/^/ /' |
		tr -d '\n') (got '$VA_BITS')"
# Levels of translation: each level resolves PAGE_SHIFT - 3 bits.
pt_levels() {	# PAGE_SIZE VA_BITS
	local shift
	case "$1" in 4K) shift=12 ;; 16K) shift=14 ;; 64K) shift=16 ;; esac
	echo $(( ($2 - shift + shift - 4) / (shift - 3) ))
}

case "$SERIES" in
on|core|off) ;;
*) die "SERIES must be on, core or off (got '$SERIES')" ;;
esac
case "$DEBUG" in
on|off) ;;
*) die "DEBUG must be on or off (got '$DEBUG')" ;;
esac
case ${WORKLOAD_KERNEL:-off} in
on|off) ;;
*) die "WORKLOAD_KERNEL must be on or off (got '$WORKLOAD_KERNEL')" ;;
esac
# make deb's settings (scripts/job/deb.sh).
case ${DEB_CONFIG:-debian} in
debian|kit) ;;
*) die "DEB_CONFIG must be debian or kit (got '$DEB_CONFIG')" ;;
esac
case ${DEB_TESTING:-off} in
on|off) ;;
*) die "DEB_TESTING must be on or off (got '$DEB_TESTING')" ;;
esac
# KASAN with tags: sw (KASAN_SW_TAGS, tags in the top byte by TBI) or hw
# (KASAN_HW_TAGS on MTE; the guest gets -machine virt,mte=on).
KASAN=${KASAN:-off}
case "$KASAN" in
off|sw|hw) ;;
*) die "KASAN must be off, sw or hw (got '$KASAN')" ;;
esac

# The guest's settings are checked here too, before any work: every make
# target starts with a script that sources this file (deps), so a value
# the guest would ignore never costs a build first.
refuse() {	# NAME ALLOWED
	die "$1 must be $2 (got '${!1}')"
}
SMP=${SMP:-4}
[[ $SMP =~ ^[1-9][0-9]*$ ]] && [ "$SMP" -le 512 ] ||
	refuse SMP "a number of guest CPUs from 1 to 512 (QEMU virt with GICv3)"
MEM=${MEM:-4G}
[[ $MEM =~ ^[1-9][0-9]*[MGT]$ ]] && case $MEM in
	*M) [ "${MEM%M}" -ge 512 ] ;;
	*) true ;;
	esac || refuse MEM "guest RAM in M, G or T, at least 512M (e.g. 4G)"
case ${BBML2:-} in
''|all|none|boot|secondary|off) ;;
*)
	[[ $BBML2 =~ ^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$ ]] ||
		refuse BBML2 "all, none, boot, secondary, off or a CPU list such as 0,2-3"
	for _r in ${BBML2//,/ }; do
		[ "${_r%-*}" -le "${_r#*-}" ] ||
			refuse BBML2 "a CPU list with ranges low-high (0,2-3)"
		[ "${_r#*-}" -lt "$SMP" ] ||
			refuse BBML2 "a list of the guest's CPUs, 0 to $((SMP - 1)) with SMP=$SMP"
	done
	;;
esac
case ${COLLAPSE:-on} in
on|off|default) ;;
*) refuse COLLAPSE "on, off or default (the kernel's own default, off unless CONFIG_ARM64_LINEAR_MAP_COLLAPSE)" ;;
esac
# STRESS: the module's stress parameters, separated by spaces or commas.
for _r in ${STRESS:+${STRESS//,/ }}; do
	case $_r in
	pages=*|rounds=*|threads=*)
		[[ ${_r#*=} =~ ^([0-9]+|0x[0-9a-fA-F]+)$ ]] ||
			refuse STRESS "pages=N rounds=N threads=N with numbers (${_r%%=*}=${_r#*=})" ;;
	*) refuse STRESS "pages=N rounds=N threads=N (no '${_r%%=*}')" ;;
	esac
done
case ${EL2:-off} in
on|off) ;;
*) refuse EL2 "on or off" ;;
esac
case ${IOMMU:-} in
''|smmuv3) ;;
*) refuse IOMMU "smmuv3 or empty" ;;
esac
case ${ICOUNT_SLEEP:-off} in
on|off) ;;
*) die "ICOUNT_SLEEP must be on or off (got '$ICOUNT_SLEEP')" ;;
esac
[ -z "${ICOUNT:-}" ] || { [[ $ICOUNT =~ ^[0-9]+$ ]] && [ "$ICOUNT" -le 10 ]; } ||
	refuse ICOUNT "an -icount shift from 0 to 10, or empty"
[ -z "${QEMU_TIMEOUT:-}" ] || [[ $QEMU_TIMEOUT =~ ^[1-9][0-9]*$ ]] ||
	refuse QEMU_TIMEOUT "a number of seconds"
