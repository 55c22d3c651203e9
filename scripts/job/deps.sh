#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install the Debian packages the kit needs, and fetch Debian's arm64
# busybox for the initramfs. Idempotent: does nothing when all is present.
# python3-ply and python3-git: checkpatch's SPDX check of a new file;
# e2fsprogs: mke2fs for the workload guests' disk (scripts/job/rootfs.sh);
# procps: pgrep/pkill for make check's interrupted runs; file: the
# selftests' static-binary checks; zstd: make bench-tlb's recordings;
# debhelper: make deb's bindeb-pkg (dh_* commands).
. "$(dirname "$0")/../lib/lib.sh"

PKGS=(make gcc libc6-dev flex bison bc libssl-dev libelf-dev cpio xz-utils
      gzip kmod git python3 ccache qemu-system-arm linux-source-6.12 b4
      gnuplot-nox sparse python3-ply python3-git e2fsprogs procps file zstd
      debhelper)
# The cross compiler, except on an arm64 host, which builds natively
# (lib.sh leaves CROSS_COMPILE empty there).
[ -z "$CROSS_COMPILE" ] || PKGS+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross)

# --list: the packages, one line, for the kit's own test of this script.
if [ "${1:-}" = --list ]; then
	echo "${PKGS[*]}"
	exit 0
fi

# A fresh clone has no out/ yet: the apt log and busybox go there.
mkdir -p "$OUT"

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing+=("$p")
done

as_root() {
	if [ "$(id -u)" = 0 ]; then
		"$@"
	else
		die "not root; please run: sudo $*"
	fi
}

apt_updated=
apt_update() {
	[ -n "$apt_updated" ] && return 0
	msg "apt-get update"
	as_root apt-get update -q >/dev/null
	apt_updated=1
}

if [ ${#missing[@]} -gt 0 ]; then
	if [ "$(id -u)" != 0 ]; then
		die "missing packages; please run: sudo apt-get install -y ${missing[*]}"
	fi
	apt_update
	msg "installing: ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" \
		>"$OUT/apt.log" 2>&1 || {
		tail -20 "$OUT/apt.log" >&2
		die "apt-get install failed (full log: $OUT/apt.log)"
	}
fi

# Debian's static arm64 busybox, unpacked under out/deps.
BUSYBOX=$OUT/deps/busybox
if [ ! -x "$BUSYBOX" ]; then
	mkdir -p "$OUT/deps"
	if ! dpkg --print-foreign-architectures | grep -qx arm64; then
		[ "$(id -u)" = 0 ] ||
			die "arm64 busybox missing; please run: sudo dpkg --add-architecture arm64 && sudo apt-get update"
		msg "dpkg --add-architecture arm64"
		dpkg --add-architecture arm64
		apt_updated=
	fi
	tmp=$(mktemp -d)
	chmod 755 "$tmp"
	trap 'rm -rf "$tmp"' EXIT
	if ! (cd "$tmp" && apt-get download -q busybox-static:arm64 >/dev/null 2>&1); then
		apt_update
		(cd "$tmp" && apt-get download -q busybox-static:arm64 >/dev/null) ||
			die "cannot download busybox-static:arm64 from the Debian mirror"
	fi
	dpkg-deb -x "$tmp"/busybox-static_*_arm64.deb "$tmp/x"
	install -m 755 "$tmp/x/bin/busybox" "$BUSYBOX"
	msg "busybox: $(file -b "$BUSYBOX" 2>/dev/null | cut -d, -f1-2 || echo "$BUSYBOX")"
fi
exit 0
