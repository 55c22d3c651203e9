#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build kmod/ against the selected kernel build. 6.12's Kbuild writes
# external-module objects next to the sources, so they are built from a
# copy under out/ to keep the repository clean.
. "$(dirname "$0")/lib.sh"

[ -f "$BUILD/Module.symvers" ] || die "kernel not built at $BUILD; run 'make kernel'"
dir=$BUILD/kmod
mkdir -p "$dir"
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
msg "building kmod/ against $BUILD"
kmake M="$dir" modules >"$dir/build.log" 2>&1 || {
	cat "$dir/build.log" >&2
	die "module build failed; see $dir/build.log"
}
if grep -E 'warning:' "$dir/build.log" >&2; then
	die "module build has warnings; see $dir/build.log"
fi
ls "$dir"/linmap_test.ko "$dir"/linmap_churn.ko >/dev/null
# The KUnit suite is built exactly when the kernel has KUnit.
if grep -qx CONFIG_KUNIT=y "$BUILD/.config"; then
	[ -f "$dir/linmap_kunit.ko" ] || die "kernel has KUnit but $dir/linmap_kunit.ko was not built"
else
	rm -f "$dir/linmap_kunit.ko"
fi
