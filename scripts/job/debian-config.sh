#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Usage: scripts/job/debian-config.sh [FLAVOUR]
# Prints the path of Debian's own arm64 configuration of Linux 6.12 for
# FLAVOUR (arm64 by default; also arm64-16k, cloud-arm64, rt-arm64), as
# Debian's arm64 package linux-config-6.12 ships it. The package is
# downloaded once with apt-get (any host architecture: the kit's 'make
# deps' adds arm64 to dpkg) and the configuration kept in the kit's cache.
. "$(dirname "$0")/../lib/lib.sh"

flavour=${1:-${DEBIAN_FLAVOUR:-arm64}}
case $flavour in
rt-arm64) file=config.arm64_rt_arm64.xz ;;
arm64|arm64-16k|cloud-arm64) file=config.arm64_none_$flavour.xz ;;
*) die "unknown Debian flavour '$flavour' (arm64, arm64-16k, cloud-arm64 or rt-arm64)" ;;
esac
require_cmds apt-get dpkg-deb xz
CACHE=$KIT_CACHE/debian-config
mkdir -p "$CACHE"
if ! ls "$CACHE"/linux-config-6.12_*_arm64.deb >/dev/null 2>&1; then
	dpkg --print-foreign-architectures | grep -qx arm64 ||
		[ "$(dpkg --print-architecture)" = arm64 ] ||
		die "dpkg has no arm64 architecture; run 'make deps'"
	msg "downloading Debian's linux-config-6.12 (arm64)"
	tmp=$(mktemp -d "$CACHE/dl.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	# As root, apt's sandbox user cannot write a directory of ours.
	chmod 777 "$tmp"
	(cd "$tmp" && apt-get download -q linux-config-6.12:arm64) >"$tmp/apt.log" 2>&1 ||
		die "apt-get download linux-config-6.12:arm64 failed: $(tail -2 "$tmp/apt.log" | tr '\n' ' ')(run 'apt-get update' if the lists are old)"
	mv "$tmp"/linux-config-6.12_*_arm64.deb "$CACHE/"
fi
deb=$(ls "$CACHE"/linux-config-6.12_*_arm64.deb | tail -1)
ver=$(basename "$deb" | cut -d_ -f2)
out=$CACHE/config-$ver-$flavour
if [ ! -s "$out" ]; then
	dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/src/linux-config-6.12/$file" | xz -dc >"$out.tmp" ||
		die "$deb has no $file"
	mv "$out.tmp" "$out"
fi
echo "$out"
