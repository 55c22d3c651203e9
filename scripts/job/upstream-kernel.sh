#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Upstream's implementation built like the kit's own kernels: Debian's
# linux-source of the upstream peer's release (scripts/job/upstream-kbuild.sh
# fetches it) with the kit's configuration for PAGE_SIZE and DEBUG, so that
# a comparison with the series' kernel differs in code, not configuration.
# Builds into $OUT/upstream/build-$VARIANT and prints the
# directory; the kit's module and selftests build against it with
# KIT_SRC/KIT_BUILD as for any tree. UPSTREAM_FETCH=0: the cache only.
. "$(dirname "$0")/../lib/lib.sh"

out=$("$TOP/scripts/job/upstream-kbuild.sh") || die "upstream's source: $out"
src=$(echo "$out" | sed -n 2p)
build=$OUT/upstream/build-$VARIANT
# 7.2 maps the linear map's rodata alias read-only by default and has no
# option for it (6.12's RODATA_FULL_DEFAULT_ENABLED).
# A tree the kit does not patch, so not the Makefile's: configured, then
# built, here.
export KIT_SRC=$src KIT_BUILD=$build KIT_TREE=upstream KIT_CONFIG_ABSENT=RODATA_FULL_DEFAULT_ENABLED
"$TOP/scripts/job/config.sh" >&2 && "$TOP/scripts/job/kernel.sh" >&2 ||
	die "upstream's kernel did not build (see $build/build.log)"
echo "$build"
