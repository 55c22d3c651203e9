#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the kernel Image and module support for the selected variant.
. "$(dirname "$0")/../lib/lib.sh"

require_cmds "${CROSS_COMPILE}gcc" ccache make
[ -f "$BUILD/.config" ] || die "no configuration in $BUILD; run 'make config' first"
build_begin "$BUILD"
log=$BUILD/build.log
msg "building $TREE kernel $VARIANT ($PAGE_SIZE pages, $VA_BITS-bit VA$([ "$KASAN" = off ] || echo ", KASAN_${KASAN^^}_TAGS")) in $BUILD (log: $log)"
start=$(date +%s)
# How many objects a whole build of this configuration compiles, as the
# largest count an earlier build of it (in any tree) saw, for the progress.
total=$(cat "$OUT"/trees/*/"build-$VARIANT/.kit-objects" 2>/dev/null | sort -n | tail -1) || true
kbuild_step "building the kernel" "$log" "${total:-}" Image modules ||
	die "kernel build failed; see $log"
msg "kernel built in $(( $(date +%s) - start ))s: $IMAGE"
