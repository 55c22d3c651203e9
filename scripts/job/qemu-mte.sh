#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A QEMU that can run a KASAN_HW_TAGS (MTE) guest: prints its path and
# succeeds, or prints why there is none and fails. Progress goes to stderr.
#
# Before 8.0 QEMU keeps one MTE allocation tag per page rather than per
# 16-byte granule (QEMU issue 1416, fixed in 8.0 by "target/arm: Fix
# physical address resolution for MTE"), so no KASAN_HW_TAGS kernel boots
# under it, unpatched 6.12 included. Debian 12 has 7.2; its backports
# suite has a newer one. In that order:
#   QEMU_MTE=PATH      that binary, as it is;
#   the qemu-system-aarch64 in PATH, if it is 8.0 or later (or QEMU_MTE_OK=1
#                      says it has the fix);
#   the one fetched before into the kit's cache;
#   qemu-system-arm from Debian's bookworm-backports, fetched into the
#                      kit's cache with a private apt list (the system's
#                      sources and packages stay as they are), unless
#                      QEMU_MTE_FETCH=0.
. "$(dirname "$0")/../lib/lib.sh"

# The version of a qemu-system-aarch64, as MAJOR.MINOR, or nothing.
qemu_version() {
	{ "$1" --version 2>/dev/null || true; } |
		sed -n '1s/^QEMU emulator version \([0-9][0-9]*\)\.\([0-9][0-9]*\).*/\1.\2/p'
}
# Whether a QEMU of version $1 has the fix.
has_fix() {
	[ -n "$1" ] && [ "${1%%.*}" -ge 8 ]
}

if [ -n "${QEMU_MTE:-}" ]; then
	v=$(qemu_version "$QEMU_MTE")
	if [ -z "$v" ]; then
		echo "QEMU_MTE=$QEMU_MTE does not run as a QEMU ('$QEMU_MTE --version' printed no version)"
		exit 1
	fi
	echo "$QEMU_MTE"
	exit 0
fi

sys=$(command -v qemu-system-aarch64 || true)
sysv=
[ -z "$sys" ] || sysv=$(qemu_version "$sys")
if [ -n "$sys" ] && { [ "${QEMU_MTE_OK:-0}" = 1 ] || has_fix "$sysv"; }; then
	echo "$sys"
	exit 0
fi
why="QEMU ${sysv:-(none in PATH)} keeps one MTE tag per page, not per 16-byte granule (QEMU issue 1416, fixed in 8.0): no KASAN_HW_TAGS kernel boots under it, unpatched 6.12 included"

dir=$KIT_CACHE/qemu-mte
bin=$dir/root/usr/bin/qemu-system-aarch64
if [ -x "$bin" ] && has_fix "$(qemu_version "$bin")"; then
	echo "$bin"
	exit 0
fi
if [ "${QEMU_MTE_FETCH:-1}" = 0 ]; then
	echo "$why; put a QEMU of 8.0 or later first in PATH or in QEMU_MTE, set QEMU_MTE_OK=1 for one with the fix, or leave QEMU_MTE_FETCH unset to fetch Debian's from bookworm-backports"
	exit 1
fi

# The fetch: a private apt state (scripts/lib/debian.sh), the backports
# suite only.
msg "$why; fetching qemu-system-arm from Debian's bookworm-backports into $dir" >&2
. "$TOP/scripts/lib/debian.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/qemu-mte.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
if ! err=$(DEBIAN_MIRROR=${QEMU_MTE_MIRROR:-${DEBIAN_MIRROR:-}} \
	debian_fetch bookworm-backports "" "$tmp/root" qemu-system-arm); then
	echo "$why; and qemu-system-arm could not be fetched from bookworm-backports: $err"
	exit 1
fi
deb=$(cat "$tmp/root.packages")
got=$(qemu_version "$tmp/root/usr/bin/qemu-system-aarch64")
if ! has_fix "$got"; then
	missing=$(ldd "$tmp/root/usr/bin/qemu-system-aarch64" 2>/dev/null | awk '/not found/ { print $1 }' | tr '\n' ' ')
	echo "$why; and the QEMU fetched from bookworm-backports ($deb) does not run here${missing:+: libraries missing: $missing(install the Debian packages that hold them)}"
	exit 1
fi
rm -rf "$dir"
mkdir -p "$dir"
mv "$tmp/root" "$dir/root"
echo "$deb" >"$dir/package"
msg "QEMU $got for KASAN_HW_TAGS guests: $bin" >&2
echo "$bin"
