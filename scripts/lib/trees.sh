# SPDX-License-Identifier: GPL-2.0
# Trees and builds: the base tree, the patches of each tree, the tree and
# build directory a run uses, and the caches they share.
# Sourced by lib.sh, in its order; not on its own.

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
