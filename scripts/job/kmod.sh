#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build kmod/ against the selected kernel build, from a copy under out/.
. "$(dirname "$0")/../lib/lib.sh"

[ -f "$BUILD/Module.symvers" ] || die "kernel not built at $BUILD; run 'make kernel'"
msg "building kmod/ against $BUILD"
build_kmod "$BUILD/kmod" kmake
if grep -E 'warning:' "$BUILD/kmod/build.log" >&2; then
	die "module build has warnings; see $BUILD/kmod/build.log"
fi
# The KUnit suite is built exactly when the kernel has KUnit.
if grep -qx CONFIG_KUNIT=y "$BUILD/.config"; then
	[ -f "$BUILD/kmod/linmap_kunit.ko" ] ||
		die "the kernel has KUnit but $BUILD/kmod/linmap_kunit.ko was not built"
else
	rm -f "$BUILD/kmod/linmap_kunit.ko"
fi
