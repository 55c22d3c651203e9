#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build selftests/ as static aarch64 binaries with the tree's lib.mk.
. "$(dirname "$0")/../lib/lib.sh"

require_cmds "${CROSS_COMPILE}gcc"
[ -d "$SRC/tools/testing/selftests" ] || die "no selftests in $SRC; run 'make tree'"
dir=$BUILD/selftests
build_selftests "$SRC/tools/testing/selftests" "$dir"
linmap_progs "$SRC/tools/testing/selftests" >"$dir/progs"
for p in $(cat "$dir/progs"); do
	file "$dir/$p" 2>/dev/null | grep -q 'statically linked' ||
		[ ! -x /usr/bin/file ] || die "$dir/$p is not a static binary"
done
