# SPDX-License-Identifier: GPL-2.0
# Common helpers for the build/boot/test scripts. Sourced, not executed.

set -euo pipefail

TOP=${TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
OUT=${OUT:-$TOP/out}
ARCH=arm64
# Cross compile unless the host is arm64 itself; an empty CROSS_COMPILE
# given by the caller also means the native compiler.
if [ -z "${CROSS_COMPILE+set}" ]; then
	case "$(uname -m)" in
	aarch64) CROSS_COMPILE= ;;
	*) CROSS_COMPILE=aarch64-linux-gnu- ;;
	esac
fi
PAGE_SIZE=${PAGE_SIZE:-4K}
SERIES=${SERIES:-on}
DEBUG=${DEBUG:-on}
JOBS=${JOBS:-$(nproc)}
export ARCH CROSS_COMPILE

msg()  { printf '==> %s\n' "$*" >&2; }
warn() { printf 'warning: %s\n' "$*" >&2; }

# A step started by make or by hand, not by another step, is the step's
# guard: it runs the step as its child and, on TERM, INT or HUP, stops the
# child and everything below it before it exits. make passes a TERM on to
# its own children only, and bash runs a trap only after the command in
# the foreground ends, so without the guard a cancelled run's git am or
# build went on as orphans and collided with the next run. The step stays
# in the guard's process group, so that a kill of the group still reaches
# it. The guard also refuses a second run in an OUT where one is alive,
# naming its PID. From a terminal (stdin a tty) there is no guard: ^C
# reaches every process there already.
kit_stop_tree() {	# PID SIGNAL: the process and all below it
	local p pids=() todo=("$1")
	# Stopped top down, so that none forks while we look.
	while [ ${#todo[@]} -gt 0 ]; do
		p=${todo[0]}
		todo=("${todo[@]:1}")
		kill -STOP "$p" 2>/dev/null || continue
		pids+=("$p")
		mapfile -t -O ${#todo[@]} todo < <(pgrep -P "$p" || true)
	done
	[ ${#pids[@]} -gt 0 ] || return 0
	kill -"$2" "${pids[@]}" 2>/dev/null || true
	kill -CONT "${pids[@]}" 2>/dev/null || true
}
kit_guard() {
	local pidf=$OUT/.kit-run.pid other child rc
	mkdir -p "$OUT"
	if ! (set -C; echo $$ >"$pidf") 2>/dev/null; then
		other=$(cat "$pidf" 2>/dev/null || true)
		# A live process of the kit's, not a PID used again since.
		if [ -n "$other" ] && [ "$other" != $$ ] && kill -0 "$other" 2>/dev/null &&
		   tr '\0' ' ' </proc/"$other"/cmdline 2>/dev/null | grep -q 'scripts/[a-z/-]*\.sh'; then
			printf 'error: another kit run is using %s: PID %s (%s); wait for it, or stop it with kill %s\n' \
				"$OUT" "$other" "$(tr '\0' ' ' </proc/"$other"/cmdline 2>/dev/null | cut -c1-120)" \
				"$other" >&2
			exit 1
		fi
		echo $$ >"$pidf"
	fi
	export KIT_STEP=$$
	"$BASH" "$0" "$@" <&0 &
	child=$!
	trap 'kit_stop_tree "$child" TERM' TERM INT HUP
	trap 'rm -f "$pidf"' EXIT
	# wait returns early when a trapped signal arrives: wait again.
	while :; do
		rc=0
		wait "$child" || rc=$?
		kill -0 "$child" 2>/dev/null || exit "$rc"
	done
}
if [ -z "${KIT_STEP:-}" ] && [ ! -t 0 ]; then
	kit_guard "$@"
fi
die()  { printf 'error: %s\n' "$*" >&2; exit 1; }

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

# The base tree: KSRC if given, else Debian's linux-source-6.12 under out/.
DEFAULT_KSRC=$OUT/linux
KSRC=${KSRC:-$DEFAULT_KSRC}
KSRC=$(realpath -m "$KSRC")

# Upstream series and test-only patches, in application order: fixes to
# 6.12 itself that the kit's workflows need (patches/fixes/), the core
# series and its test-only patches, then (unless SERIES=core) the healing
# series on top and its own test-only patches.
PATCHDIR=${PATCHDIR:-$TOP/patches}
series_patches() {
	patches_in "$PATCHDIR"/fixes/*.patch "$PATCHDIR"/*.patch "$PATCHDIR"/testing/*.patch
	[ "$SERIES" = core ] ||
		patches_in "$PATCHDIR"/heal/*.patch "$PATCHDIR"/heal/testing/*.patch
}

# make deb's tree (DEB_TREE=1, set by scripts/job/deb.sh): what a user
# installs, the fixes and the core series (and the healing series unless
# SERIES=core), without the test-only patches. DEB_TESTING=on adds them,
# for a package booted under QEMU, whose CPUs claim BBML2_NOABORT only
# through bbml2_test=: that is the kit's own tree (see tree_name).
deb_patches() {
	patches_in "$PATCHDIR"/fixes/*.patch "$PATCHDIR"/*.patch
	[ "$SERIES" = core ] || patches_in "$PATCHDIR"/heal/*.patch
}

# The patches of the tree TREE names.
tree_patches() {
	case $TREE in
	base) base_patches ;;
	deb-*) deb_patches ;;
	*) series_patches ;;
	esac
}

# The unpatched kernel: 6.12 with the same fixes, and test-only
# instrumentation, the counters the series' testing patches add, so the
# benchmarks compare like with like.
base_patches() {
	patches_in "$PATCHDIR"/fixes/*.patch "$PATCHDIR"/base-testing/*.patch
}

patches_in() {	# GLOB...: the patches that exist, without a cover letter
	local p
	for p in "$@"; do
		case "$p" in
		*/0000-cover-letter.patch) continue ;;
		esac
		[ -e "$p" ] && printf '%s\n' "$p"
	done
	return 0
}

# Which source tree a build uses: series (core and heal), core (the core
# series alone) or base. With no patches at all a patched tree would be
# identical to the base tree, so share it (and its builds).
tree_name() {
	if [ -n "${DEB_TREE:-}" ] && [ "${DEB_TESTING:-off}" = off ]; then
		echo "deb-$([ "$SERIES" = core ] && echo core || echo all)"
	elif [ "$SERIES" = off ] || [ -z "$(series_patches)" ]; then
		echo base
	elif [ "$SERIES" = core ]; then
		echo core
	else
		echo series
	fi
}

# KIT_TREE: a name for a tree the kit does not patch (the upstream peer).
TREE=${KIT_TREE:-$(tree_name)}
# qemu_mte_broken: prints why no QEMU here can run a KASAN_HW_TAGS guest,
# and succeeds, if none can; fetches one if need be (scripts/job/qemu-mte.sh:
# QEMU_MTE, QEMU_MTE_OK, QEMU_MTE_FETCH).
qemu_mte_broken() {
	local out
	out=$("$TOP/scripts/job/qemu-mte.sh") && return 1
	echo "$out"
}

# The build directory's name: page size, VA size unless the default, KASAN
# if on, debug.
variant_of() {	# PAGE_SIZE VA_BITS [KASAN]
	local kasan=${3:-$KASAN}
	echo "$1$([ "$2" = "$(default_va_bits "$1")" ] || echo "-va$2")$([ "$kasan" = off ] ||
		echo "-kasan-$kasan")$([ "$DEBUG" = on ] || echo -nodebug)$([ "${WORKLOAD_KERNEL:-off}" = off ] ||
		[ "$DEBUG" = on ] || echo -wl)"
}
# geometry NAME: "PAGE_SIZE VA_BITS LEVELS BUILD KASAN" of a geometry name
# (4K, 16K-va47, 4K-kasan-sw), for scripts that handle several.
geometry() {
	local name=$1 kasan=off ps va
	case "$name" in
	*-kasan-sw) kasan=sw name=${name%-kasan-sw} ;;
	*-kasan-hw) kasan=hw name=${name%-kasan-hw} ;;
	esac
	ps=${name%%-va*} va=${name##*-va}
	[ "$va" != "$name" ] || va=$(default_va_bits "$ps")
	echo "$ps $va $(pt_levels "$ps" "$va") $OUT/trees/$TREE/build-$(variant_of "$ps" "$va" "$kasan") $kasan"
}
VARIANT=$(variant_of "$PAGE_SIZE" "$VA_BITS")
# KIT_SRC/KIT_BUILD point the build scripts at another tree (check-series).
SRC=${KIT_SRC:-$OUT/trees/$TREE/src}
BUILD=${KIT_BUILD:-$OUT/trees/$TREE/build-$VARIANT}
# KIT_IMAGE: another kernel to boot (make check's installed package).
IMAGE=${KIT_IMAGE:-$BUILD/arch/arm64/boot/Image}

# ccache: builds from different trees see the same relative paths
# (build-X/../src), so a shared cache works across them.
export CCACHE_DIR=${CCACHE_DIR:-${HOME:-/root}/.cache/ccache}
export CCACHE_BASEDIR=$OUT
export CCACHE_NOHASHDIR=1
export CCACHE_COMPILERCHECK=content
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
# The kit's own cache outside the clone, shared by clones as ccache is:
# the userspace images (ROOTFS_CACHE), Debian's configuration packages and
# the QEMU for KASAN=hw guests (scripts/job/qemu-mte.sh).
KIT_CACHE=${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/linmap-kit
export KBUILD_BUILD_TIMESTAMP='Thu Jan  1 00:00:00 UTC 2026'
export KBUILD_BUILD_USER=kit KBUILD_BUILD_HOST=kit

# submake ARGS...: make from inside a step or a make recipe, without the
# caller's MAKEFLAGS and MFLAGS (their jobserver and options belong to the
# make that ran us).
submake() { env -u MAKEFLAGS -u MFLAGS make "$@"; }

# The kit's own make flags (make -s, its command-line variables) are not
# the kernel build's: -s would hide the objects its progress counts.
kmake() {
	local pahole=()
	# The upstream peer's build directory carries a stand-in for the pahole
	# its kernel was built with (scripts/job/upstream-kbuild.sh).
	[ ! -x "$BUILD/bin/pahole" ] || pahole=(PAHOLE="$BUILD/bin/pahole")
	submake -C "$SRC" O="$BUILD" -j"$JOBS" ARCH=$ARCH \
		CROSS_COMPILE="$CROSS_COMPILE" CC="ccache ${CROSS_COMPILE}gcc" \
		HOSTCC="ccache gcc" "${pahole[@]}" "$@"
}

# build_begin DIR / build_end DIR bracket a make in DIR. A make killed
# outright (SIGKILL, a closed terminal, a CI job stopped) can leave a file
# half written that the next make takes as up to date: a .cmd file that
# fixdep did not finish breaks every later build of its directory
# ("unterminated call to function 'wildcard'"), and a module's CRCs are
# appended after its object. So a marker stays in DIR while make runs; a
# run that finds it removes what the killed make wrote after it, to be made
# again (from ccache).
build_begin() {
	local mark=$1/.kit-building n
	if [ -e "$mark" ]; then
		n=$(find "$1" -type f -newer "$mark" ! -name build.log ! -name '.kit-*' \
			! -name .config -print -delete | wc -l)
		msg "the last build in $1 did not finish (killed): removed the $n files it wrote"
	fi
	touch "$mark"
}
build_end() { rm -f "$1/.kit-building"; }

# kbuild_step WHAT LOG TOTAL KMAKE-ARGS...: kmake in $BUILD (bracketed by
# build_begin before it), its output in LOG and its progress as objects
# compiled against TOTAL (the count an earlier build saw); ends the
# bracket, prints make's errors on failure and records a larger count in
# $BUILD/.kit-objects for the next progress.
kbuild_step() {
	local what=$1 log=$2 total=$3 n
	shift 3
	if ! with_progress "$what" "$log" '^  CC ' "objects compiled" "$total" kmake "$@"; then
		build_end "$BUILD"
		make_errors "$log" >&2
		return 1
	fi
	build_end "$BUILD"
	n=$(grep -c '^  CC ' "$log") || true
	[ "${n:-0}" -le "${total:-0}" ] || echo "$n" >"$BUILD/.kit-objects"
}

# make_errors LOG: the lines of a failed make's log that say why.
make_errors() {
	grep -E 'error|Error|\*\*\*' "$1" | grep -v '^make.*\] Error [0-9]' | head -20
}

# build_kmod DIR MAKE...: build kmod/ with 'MAKE M=DIR modules'. 6.12's
# Kbuild writes external-module objects next to the sources, so they are
# built from a copy in DIR, which keeps the repository clean.
build_kmod() {
	local dir=$1 f
	shift
	mkdir -p "$dir"
	build_begin "$dir"
	# Sources no longer in kmod/ (renamed or removed) must not be built.
	for f in "$dir"/*.c "$dir"/*.h; do
		[ -e "$f" ] || continue
		[ -e "$TOP/kmod/${f##*/}" ] || rm -f "$f" "${f%.*}.o"
	done
	# Copy only what changed, so an unchanged module is not rebuilt.
	for f in "$TOP"/kmod/*.c "$TOP"/kmod/*.h "$TOP"/kmod/Makefile; do
		[ -e "$f" ] || continue
		cmp -s "$f" "$dir/${f##*/}" || cp "$f" "$dir/"
	done
	"$@" M="$dir" modules >"$dir/build.log" 2>&1 || {
		build_end "$dir"
		tail -30 "$dir/build.log" >&2
		die "module build failed; see $dir/build.log"
	}
	build_end "$dir"
	ls "$dir"/linmap_test.ko "$dir"/linmap_churn.ko >/dev/null
}

# build_selftests KSELFTEST DIR: selftests/linmap as static aarch64
# binaries in DIR, with the lib.mk of KSELFTEST (<linux>/tools/testing/selftests).
build_selftests() {
	mkdir -p "$2"
	make -s -C "$TOP/selftests/linmap" KSELFTEST="$1" \
		CC="${CROSS_COMPILE}gcc" OUTPUT="$2" >"$2/build.log" 2>&1 || {
		cat "$2/build.log" >&2
		die "selftests build failed; see $2/build.log"
	}
}

# The selftest programs in run order (selftests/linmap/Makefile's
# TEST_GEN_PROGS; lib.mk needs a KSELFTEST to be read at all).
linmap_progs() {
	make -s -C "$TOP/selftests/linmap" KSELFTEST="$1" linmap-progs
}

# copy_selftests DIR: selftests/linmap into DIR/linmap, with the interface
# header it shares with kmod/ (its Makefile finds it there outside this repo).
copy_selftests() {
	cp -a "$TOP/selftests/linmap" "$1/" && cp "$TOP/kmod/linmap_uapi.h" "$1/linmap/"
}

require_cmds() {
	local c missing=()
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || missing+=("$c")
	done
	[ ${#missing[@]} -eq 0 ] ||
		die "missing tools: ${missing[*]} (run 'make deps')"
}

# The identity of commits the kit makes (base tree, git am).
GIT_ID=(-c user.name="linmap kit" -c user.email=kit@localhost)

# Does the source tree have the test-only bbml2_test= parameter?
has_bbml2_test() {
	grep -q bbml2_test "$SRC/arch/arm64/kernel/cpufeature.c" 2>/dev/null
}

# Does the tree's kernel fold split linear-map leaves back (heal series)?
has_collapse() {
	grep -q linear_map_collapse "$SRC/arch/arm64/mm/mmu.c" 2>/dev/null
}

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

# kit_make TARGET...: the kit's own make targets from a script: the
# Makefile's graph alone orders the steps (a step never runs the one
# before it). The settings go through the environment.
kit_make() { submake -s --no-print-directory -C "$TOP" "$@"; }

# module_initramfs: the module, the selftests and the initramfs of the
# tree and build KIT_SRC and KIT_BUILD name, one the Makefile does not
# build (the upstream peer's); with those set on the call.
module_initramfs() {
	"$TOP/scripts/job/kmod.sh" && "$TOP/scripts/job/selftests.sh" && "$TOP/scripts/job/initramfs.sh"
}

# The guest's data block, read by scripts/lib/linmap_data.py (see its usage).
linmap_data() { python3 "$TOP/scripts/lib/linmap_data.py" "$@"; }

# stamp_of FILE...: a hash of the files' contents, in order (not of their
# paths: the same rootfs or config from another clone has the same stamp).
stamp_of() {
	local f
	for f in "$@"; do
		if [ -f "$f" ]; then sha256sum <"$f"; else echo "no ${f##*/}"; fi
	done | sha256sum | cut -c1-16
}

# with_progress WHAT LOG PATTERN UNIT TOTAL CMD...: run CMD, its output in
# LOG, and say how it goes while it runs: the time taken and, with a
# PATTERN, how many lines of LOG match it, as UNIT (of about TOTAL if
# known; a number of seconds for a TOTAL of "Ns"). On a terminal
# one line updates every second; in a log (CI) a line every PROGRESS_SECS
# (30) seconds, none for a step that ends sooner.
with_progress() {
	local rc=0 tick log=$2
	_ticker "$1" "$2" "$3" "$4" "$5" "$$" &
	shift 5
	tick=$!
	"$@" >"$log" 2>&1 || rc=$?
	kill "$tick" 2>/dev/null || true
	wait "$tick" 2>/dev/null || true
	[ ! -t 2 ] || printf '\r\033[K' >&2
	return $rc
}

_ticker() {	# WHAT LOG PATTERN UNIT TOTAL PID: until PID (the caller) is gone
	local t0 secs last=0 every=${PROGRESS_SECS:-30} line n
	[ -t 2 ] && every=1
	t0=$(date +%s)
	# A background job ignores SIGINT: it stops when its caller is gone.
	while sleep 1 && kill -0 "$6" 2>/dev/null; do
		secs=$(($(date +%s) - t0))
		[ $((secs - last)) -ge "$every" ] || continue
		last=$secs
		line="$1: $((secs / 60))m$(printf %02d $((secs % 60)))s"
		case $5 in
		*s) line+=" of at most ${5%s}s" ;;
		esac
		if [ -n "$3" ]; then
			n=$(grep -cE -- "$3" "$2" 2>/dev/null) || true
			line+=", ${n:-0}"
			[[ ! $5 =~ ^[0-9]+$ ]] || line+=" of about $5"
			line+=" $4"
		fi
		if [ -t 2 ]; then
			printf '\r\033[K... %s' "$line" >&2
		else
			printf '... %s (log: %s)\n' "$line" "$2" >&2
		fi
	done
}

# The TLB measurement's host tools (scripts/bench/tlb/Makefile): the QEMU
# plugin and the model's replay, built into DIR.
tlb_tools() {	# DIR
	submake -s -C "$TOP/scripts/bench/tlb" O="$1" host
}
