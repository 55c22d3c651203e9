#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Upstream's own block-mapped linear map, as a peer of the series: Debian's
# prebuilt kernel of UPSTREAM_VERSION (flavour UPSTREAM_FLAVOUR), from the
# unstable suite, unpacked into the kit's cache with a private apt list
# (scripts/lib/debian.sh) the first time and reused after. Prints the path
# of its Image and succeeds, or prints why there is none and fails.
# UPSTREAM_FETCH=0: use the cache only. Progress goes to stderr.
. "$(dirname "$0")/../lib/lib.sh"
. "$TOP/scripts/lib/debian.sh"

ver=${UPSTREAM_VERSION:-7.2.13+deb14}
flavour=${UPSTREAM_FLAVOUR:-cloud-arm64}
pkg=linux-binary-unsigned-$ver-$flavour
dir=$KIT_CACHE/upstream/$ver-$flavour
image=$dir/usr/lib/modules/$ver-$flavour/vmlinuz.unsigned

if [ -f "$image" ]; then
	echo "$image"
	exit 0
fi
if [ "${UPSTREAM_FETCH:-1}" = 0 ]; then
	echo "no upstream kernel $ver-$flavour in $dir, and UPSTREAM_FETCH=0"
	exit 1
fi
msg "fetching upstream Linux $ver ($pkg) from Debian's unstable suite into $dir" >&2
rm -rf "$dir"
if ! err=$(debian_fetch unstable arm64 "$dir" "$pkg:arm64"); then
	echo "upstream Linux $ver could not be fetched ($pkg from Debian's unstable suite): $err"
	exit 1
fi
if [ ! -f "$image" ]; then
	echo "$pkg has no $image: $(find "$dir" -name 'vmlinu*' | head -3 | tr '\n' ' ')"
	rm -rf "$dir"
	exit 1
fi
msg "upstream kernel: $image ($(cat "$dir.packages"))" >&2
echo "$image"
