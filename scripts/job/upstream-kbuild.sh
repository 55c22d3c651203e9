#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A build directory for out-of-tree modules of the upstream peer kernel
# (scripts/job/upstream.sh), so that the kit's module and selftests run on
# upstream's own block-mapped linear map: Debian's linux-source of the same
# release, configured with the prebuilt kernel's own .config (from its
# linux-headers package) and prepared for modules with the kit's cross
# compiler, and the kernel's Module.symvers, so that the module's version
# magic and symbol CRCs are those of the prebuilt kernel. Debian's headers
# package alone does not do: its build programs are arm64 binaries whose
# sources it lacks, and it names its compiler (gcc-16) and paths under
# /usr/src. Prints the directory (KIT_SRC is the source tree beside it,
# printed on a second line) and succeeds, or prints why not and fails.
# UPSTREAM_FETCH=0: use the cache only. Progress goes to stderr.
. "$(dirname "$0")/../lib/lib.sh"
. "$TOP/scripts/lib/debian.sh"

ver=${UPSTREAM_VERSION:-7.2.13+deb14}
flavour=${UPSTREAM_FLAVOUR:-cloud-arm64}
release=$ver-$flavour
# linux-source-7.2 for 7.2.13+deb14.
series=$(echo "$ver" | sed -n 's/^\([0-9]*\.[0-9]*\)\..*/\1/p')
[ -n "$series" ] || { echo "UPSTREAM_VERSION=$ver is not MAJOR.MINOR.PATCH[+suffix]"; exit 1; }
up=$KIT_CACHE/upstream
src=$up/linux-source-$series
headers=$up/$release-headers
kb=$up/$release-kbuild

if [ -f "$kb/.kit-ready" ] && [ -f "$src/Makefile" ]; then
	printf '%s\n%s\n' "$kb" "$src"
	exit 0
fi
if [ "${UPSTREAM_FETCH:-1}" = 0 ]; then
	echo "no module build directory for upstream $release in $kb, and UPSTREAM_FETCH=0"
	exit 1
fi
require_cmds make "${CROSS_COMPILE}gcc" tar xz
if [ ! -f "$headers/usr/src/linux-headers-$release/.config" ]; then
	msg "fetching linux-headers-$release (its .config and Module.symvers) from Debian's unstable suite" >&2
	rm -rf "$headers"
	if ! err=$(debian_fetch unstable arm64 "$headers" "linux-headers-$release:arm64"); then
		echo "linux-headers-$release could not be fetched: $err"
		exit 1
	fi
fi
hdir=$headers/usr/src/linux-headers-$release
[ -f "$hdir/.config" ] && [ -f "$hdir/Module.symvers" ] || {
	echo "linux-headers-$release has no .config or Module.symvers in $hdir"
	exit 1
}
if [ ! -f "$src/Makefile" ]; then
	msg "fetching linux-source-$series from Debian's unstable suite and unpacking it into $src (about 1.8 GB)" >&2
	rm -rf "$src" "$src.deb" "$src.deb.packages"
	if ! err=$(debian_fetch unstable "" "$src.deb" "linux-source-$series"); then
		echo "linux-source-$series could not be fetched: $err"
		exit 1
	fi
	tarball=$(ls "$src.deb"/usr/src/linux-source-"$series".tar.* 2>/dev/null | head -1)
	[ -n "$tarball" ] || { echo "linux-source-$series has no tarball under /usr/src"; exit 1; }
	mkdir -p "$src.tmp"
	tar -xf "$tarball" -C "$src.tmp" --strip-components=1 || { echo "cannot unpack $tarball"; exit 1; }
	rm -rf "$src.deb" "$src.deb.packages"
	mv "$src.tmp" "$src"
fi
want=$(sed -n 's/^VERSION = //p; s/^PATCHLEVEL = //p; s/^SUBLEVEL = //p' "$src/Makefile" | paste -sd.)
[ "$want" = "${ver%%+*}" ] ||
	{ echo "linux-source-$series is $want, the prebuilt kernel ${ver%%+*}: set UPSTREAM_VERSION to match"; exit 1; }

msg "preparing $kb for modules of $release" >&2
rm -rf "$kb"
mkdir -p "$kb"
cp "$hdir/.config" "$hdir/Module.symvers" "$kb/"
# Options that hang on BTF (DEBUG_INFO_BTF_MODULES, which sizes struct
# module; SCHED_CLASS_EXT, which sizes struct task_struct) need pahole's
# version: a stand-in reports the one the kernel was built with. No BTF is
# made for the module (there is no vmlinux here to base it on).
mkdir -p "$kb/bin"
pahole=$(sed -n 's/^CONFIG_PAHOLE_VERSION=//p' "$hdir/.config")
printf '#!/bin/sh\n[ "$1" = --version ] && echo v%s.%s\nexit 0\n' \
	"$((pahole / 100))" "$((pahole % 100))" >"$kb/bin/pahole"
chmod +x "$kb/bin/pahole"
up_make() {
	submake -C "$src" O="$kb" ARCH=arm64 \
		CROSS_COMPILE="$CROSS_COMPILE" KERNELRELEASE="$release" \
		PAHOLE="$kb/bin/pahole" -j"$JOBS" "$@"
}
# The kit's compiler is not Debian's: olddefconfig settles what depends on
# it. An option it turns off must be one that only says what the compiler,
# assembler, linker or Rust can do; any other would change the layout of
# the kernel's structures under the module.
if ! up_make olddefconfig >"$kb/prepare.log" 2>&1; then
	echo "olddefconfig of linux-source-$series failed; see $kb/prepare.log"
	exit 1
fi
lost=$(comm -23 <(grep '^CONFIG_.*=' "$hdir/.config" | sort) <(grep '^CONFIG_.*=' "$kb/.config" | sort) |
	grep -Ev '^CONFIG_(CC_HAS_|AS_HAS_|CC_OPT_|RUST|BINDGEN_|OPENSSL_|TOOLS_SUPPORT_)|_VERSION(_TEXT)?=|^CONFIG_(ARM64_LSUI|RELR|COMPAT_VDSO|THUMB2_COMPAT_VDSO|CC_VERSION_TEXT)=' || true)
if [ -n "$lost" ]; then
	echo "with the kit's compiler, linux-source-$series loses options of the prebuilt kernel that are not compiler capabilities: $(echo "$lost" | head -5 | tr '\n' ' ')"
	exit 1
fi
if ! up_make modules_prepare >>"$kb/prepare.log" 2>&1; then
	echo "modules_prepare of linux-source-$series failed; see $kb/prepare.log"
	exit 1
fi
[ "$(cat "$kb/include/config/kernel.release")" = "$release" ] ||
	{ echo "$kb's kernel.release is not $release"; exit 1; }
touch "$kb/.kit-ready"
printf '%s\n%s\n' "$kb" "$src"
