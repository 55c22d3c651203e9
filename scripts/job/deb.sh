#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make deb: Debian packages of the kernel with the series, as the kernel's
# own bindeb-pkg makes them (linux-image-REL, linux-headers-REL), cross-built
# on any host. Prints the packages' paths, one a line.
#   SERIES=on|core      both series (default) or the core series alone
#   DEB_CONFIG=debian   Debian's own arm64 configuration of 6.12, from its
#                       linux-config-6.12 package (default), with debug
#                       info off (no -dbg package) and no Debian keys;
#              kit      the kit's 4K test configuration (make check: a
#                       build of minutes, not hours)
#   DEBIAN_FLAVOUR=arm64  Debian's flavour: arm64, arm64-16k, cloud-arm64,
#                       rt-arm64
#   DEB_TESTING=on      with the test-only patches (the kit's own tree):
#                       bbml2_test= makes QEMU's CPUs claim BBML2_NOABORT
#   KDEB_COMPRESS       the packages' compression (default gzip)
# The kernel release, and so the package names, say which series and which
# commit of this repository: 6.12.N-linmap-all-g<commit>[-dirty]; the
# version 6.12.N-1+linmap.all.g<commit>. Packages go to out/deb/<release>/.
export DEB_TREE=1
. "$(dirname "$0")/../lib/lib.sh"

# lib.sh refused other values of these.
DEB_CONFIG=${DEB_CONFIG:-debian}
DEB_TESTING=${DEB_TESTING:-off}
[ "$SERIES" != off ] ||
	die "make deb packages the series: SERIES=on (both series) or SERIES=core, not off"
require_cmds dpkg-buildpackage dh_listpackages "${CROSS_COMPILE}gcc" ccache make
flavour=${DEBIAN_FLAVOUR:-arm64}
if [ "$DEB_CONFIG" = debian ]; then
	cfg=$("$TOP/scripts/job/debian-config.sh" "$flavour")
	# Debian's configuration sets the page size; the build directory and
	# the kit's geometry follow it.
	case $flavour in
	arm64-16k) PAGE_SIZE=16K ;;
	*) PAGE_SIZE=4K ;;
	esac
	BUILD=$OUT/trees/$TREE/build-deb-debian-$flavour
else
	[ "$PAGE_SIZE" = 4K ] || die "DEB_CONFIG=kit packages the 4K test kernel (PAGE_SIZE=$PAGE_SIZE)"
	BUILD=$OUT/trees/$TREE/build-deb-kit-$VARIANT
fi
export PAGE_SIZE KIT_BUILD=$BUILD
# make deb made and patched the tree first (the Makefile, with DEB_TREE).
[ -f "$OUT/trees/$TREE/applied" ] || die "the $TREE tree is not patched; run 'make deb'"

# What the release names: the series, the test-only patches if any, and
# this repository's commit (dirty if its files differ from it).
series=$([ "$SERIES" = core ] && echo core || echo all)
[ "$DEB_TESTING" = off ] || series+=-testing
if commit=$(git -C "$TOP" rev-parse --short=12 HEAD 2>/dev/null); then
	[ -z "$(git -C "$TOP" status --porcelain --untracked-files=no 2>/dev/null)" ] ||
		commit+=-dirty
	commit=g$commit
else
	commit=nogit
fi
kver=$(submake -s -C "$SRC" kernelversion 2>/dev/null) || die "cannot read the kernel version of $SRC"
localversion=-linmap-$series-$commit
release=$kver$localversion
pkgversion=$kver-1+linmap.${series//-/.}.${commit//-/.}

# The kit's own build of this tree and configuration, if finished, seeds
# the package's: make then redoes only what the release string changes
# (seconds, where a pass over ccache takes minutes).
seed=$OUT/trees/$TREE/build-$VARIANT
if [ "$DEB_CONFIG" = kit ] && [ ! -e "$BUILD" ] && [ -f "$seed/arch/arm64/boot/Image" ] &&
   [ ! -e "$seed/.kit-building" ]; then
	msg "starting from the kit's build in $seed"
	cp -a "$seed" "$BUILD.tmp" && mv "$BUILD.tmp" "$BUILD"
fi
mkdir -p "$BUILD"
build_begin "$BUILD"
if [ "$DEB_CONFIG" = kit ]; then
	"$TOP/scripts/job/config.sh"
else
	# Debian's file as it is, less what only Debian's own build has: its
	# signing keys (debian/certs) and the debug-info package.
	want=$(stamp_of "$cfg" "$SRC/Makefile" "$0")
	if [ "$(cat "$BUILD/.kit-config" 2>/dev/null)" != "$want" ]; then
		msg "configuring $BUILD: Debian's $flavour configuration (${cfg##*/})"
		cp "$cfg" "$BUILD/.config"
		"$SRC/scripts/config" --file "$BUILD/.config" \
			--set-str SYSTEM_TRUSTED_KEYS "" --set-str SYSTEM_REVOCATION_KEYS "" \
			--set-str LOCALVERSION "" --disable LOCALVERSION_AUTO \
			--disable DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT --disable DEBUG_INFO_DWARF4 \
			--disable DEBUG_INFO_DWARF5 --enable DEBUG_INFO_NONE
		kmake -s olddefconfig >"$BUILD/olddefconfig.log" 2>&1 ||
			die "olddefconfig failed on Debian's configuration; see $BUILD/olddefconfig.log"
		! grep -q '^CONFIG_DEBUG_INFO=y' "$BUILD/.config" ||
			die "debug info is still on in $BUILD/.config"
		echo "$want" >"$BUILD/.kit-config"
	fi
	# Module signing builds sign-file for arm64 into the headers package,
	# with arm64's OpenSSL headers.
	if grep -q '^CONFIG_MODULE_SIG_FORMAT=y' "$BUILD/.config" && [ -n "$CROSS_COMPILE" ] &&
	   ! dpkg-query -W -f='${Status}' libssl-dev:arm64 2>/dev/null | grep -q 'ok installed'; then
		[ "$(id -u)" = 0 ] ||
			die "Debian's configuration signs modules: the headers package needs arm64's OpenSSL headers; run: sudo apt-get install libssl-dev:arm64"
		msg "installing libssl-dev:arm64 (the headers package's sign-file)"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q libssl-dev:arm64 >"$BUILD/apt.log" 2>&1 ||
			die "apt-get install libssl-dev:arm64 failed; see $BUILD/apt.log"
	fi
fi
grep -q '^CONFIG_MODULES=y' "$BUILD/.config" ||
	die "$BUILD/.config has no CONFIG_MODULES: there would be no headers package"

log=$BUILD/deb.log
total=$(cat "$BUILD/.kit-objects" 2>/dev/null) || total=
msg "building the packages of $release ($DEB_CONFIG configuration$([ "$DEB_CONFIG" = kit ] || echo ", $flavour")) in $BUILD (log: $log)"
[ "$DEB_CONFIG" = kit ] || [ -n "$total" ] ||
	msg "Debian's whole configuration: hours on a few cores the first time, minutes again from ccache"
start=$(date +%s)
# dpkg-buildpackage leaves the packages beside the build directory. Its
# check of the build dependencies (-d: left out) asks for arm64's libssl-dev
# whatever the configuration; the one case that needs it is checked above.
rm -f "$BUILD"/../*.deb "$BUILD"/../*.changes "$BUILD"/../*.buildinfo
# Quiet kbuild lines (debian/rules turns them verbose unless told).
export KBUILD_VERBOSE=0
if ! kbuild_step "building the packages" "$log" "$total" bindeb-pkg \
	LOCALVERSION="$localversion" KDEB_PKGVERSION="$pkgversion" \
	KDEB_COMPRESS="${KDEB_COMPRESS:-gzip}" DPKG_FLAGS=-d; then
	grep -E '^(dpkg-[a-z]*|dh_[a-z]*): error' "$log" >&2 || true
	die "package build failed; see $log"
fi
dest=$OUT/deb/$release
rm -rf "$dest"
mkdir -p "$dest"
for p in linux-image linux-headers; do
	f=$BUILD/../${p}-${release}_${pkgversion}_arm64.deb
	[ -f "$f" ] || die "bindeb-pkg made no $p package for $release (see $log)"
	mv "$f" "$dest/"
done
mv "$BUILD"/../linux-libc-dev_*.deb "$BUILD"/../*.changes "$BUILD"/../*.buildinfo "$dest/" 2>/dev/null || true
msg "packages of $release in $dest, built in $(( $(date +%s) - start ))s:"
for f in "$dest"/linux-image-*.deb "$dest"/linux-headers-*.deb; do
	msg "  ${f##*/} ($(du -h "$f" | cut -f1))"
	echo "$f"
done
msg "on the arm64 machine: sudo dpkg -i linux-image-${release}_*.deb linux-headers-${release}_*.deb, then reboot into $release (README: On your own server)"
