# SPDX-License-Identifier: GPL-2.0
# Common helpers for the build/boot/test scripts. Sourced, not executed.

set -euo pipefail

TOP=${TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
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
die()  { printf 'error: %s\n' "$*" >&2; exit 1; }

case "$PAGE_SIZE" in
4K|16K|64K) ;;
*) die "PAGE_SIZE must be 4K, 16K or 64K (got '$PAGE_SIZE')" ;;
esac
# The kit's geometry for each page size: between them, 4 (4K/48), 2 (16K/36)
# and 3 (64K/48) levels of tables. VA_BITS picks any other that 6.12 offers.
default_va_bits() {
	case "$1" in 4K) echo 48 ;; 16K) echo 36 ;; 64K) echo 48 ;; esac
}
VA_BITS=${VA_BITS:-$(default_va_bits "$PAGE_SIZE")}
case "$PAGE_SIZE/$VA_BITS" in
4K/39|4K/48|4K/52|16K/36|16K/47|16K/48|16K/52|64K/42|64K/48|64K/52) ;;
*) die "VA_BITS=$VA_BITS is not offered with $PAGE_SIZE pages (4K: 39 48 52; 16K: 36 47 48 52; 64K: 42 48 52)" ;;
esac
# Levels of translation: each level resolves PAGE_SHIFT - 3 bits.
pt_levels() {	# PAGE_SIZE VA_BITS
	local shift
	case "$1" in 4K) shift=12 ;; 16K) shift=14 ;; 64K) shift=16 ;; esac
	echo $(( ($2 - shift + shift - 4) / (shift - 3) ))
}

case "$SERIES" in
on|off) ;;
*) die "SERIES must be on or off (got '$SERIES')" ;;
esac
case "$DEBUG" in
on|off) ;;
*) die "DEBUG must be on or off (got '$DEBUG')" ;;
esac

# The base tree: KSRC if given, else Debian's linux-source-6.12 under out/.
DEFAULT_KSRC=$OUT/linux
KSRC=${KSRC:-$DEFAULT_KSRC}
KSRC=$(realpath -m "$KSRC")

# Upstream series and test-only patches, in application order.
PATCHDIR=${PATCHDIR:-$TOP/patches}
series_patches() {
	local p
	for p in "$PATCHDIR"/*.patch "$PATCHDIR"/testing/*.patch; do
		case "$p" in
		*/0000-cover-letter.patch) continue ;;
		esac
		[ -e "$p" ] && printf '%s\n' "$p"
	done
	return 0
}

# Test-only instrumentation for the unpatched kernel: the same counters the
# series' testing patches add, so the benchmarks compare like with like.
base_patches() {
	local p
	for p in "$PATCHDIR"/base-testing/*.patch; do
		[ -e "$p" ] && printf '%s\n' "$p"
	done
	return 0
}

# Which source tree a build uses. With no patches at all the series tree
# would be identical to the base tree, so share it (and its builds).
tree_name() {
	if [ "$SERIES" = on ] && [ -n "$(series_patches)" ]; then
		echo series
	else
		echo base
	fi
}

TREE=$(tree_name)
VARIANT=$PAGE_SIZE$([ "$VA_BITS" = "$(default_va_bits "$PAGE_SIZE")" ] ||
	echo "-va$VA_BITS")$([ "$DEBUG" = on ] || echo -nodebug)
# KIT_SRC/KIT_BUILD point the build scripts at another tree (check-series).
SRC=${KIT_SRC:-$OUT/trees/$TREE/src}
BUILD=${KIT_BUILD:-$OUT/trees/$TREE/build-$VARIANT}
IMAGE=$BUILD/arch/arm64/boot/Image

# ccache: builds from different trees see the same relative paths
# (build-X/../src), so a shared cache works across them.
export CCACHE_DIR=${CCACHE_DIR:-${HOME:-/root}/.cache/ccache}
export CCACHE_BASEDIR=$OUT
export CCACHE_NOHASHDIR=1
export CCACHE_COMPILERCHECK=content
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
export KBUILD_BUILD_TIMESTAMP='Thu Jan  1 00:00:00 UTC 2026'
export KBUILD_BUILD_USER=kit KBUILD_BUILD_HOST=kit

kmake() {
	make -C "$SRC" O="$BUILD" -j"$JOBS" ARCH=$ARCH \
		CROSS_COMPILE="$CROSS_COMPILE" CC="ccache ${CROSS_COMPILE}gcc" \
		HOSTCC="ccache gcc" "$@"
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

stamp_of() { sha256sum "$@" 2>/dev/null | sha256sum | cut -c1-16; }
