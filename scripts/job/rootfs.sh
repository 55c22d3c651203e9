#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the workload guests' Debian arm64 userspace as an ext4 image and
# print its path: the packages of scripts/job/rootfs.pkgs and their
# dependencies, from Debian's arm64 archive, unpacked with dpkg-deb.
# Nothing of the packages runs at build time (no maintainer scripts, no
# emulation of arm64 programs on the host), so the build needs neither
# qemu-user nor binfmt_misc, which containers and CI machines may not
# allow; the programs the guests run need no configuration step.
# The image is cached outside the clone, as ccache is, keyed by the
# package list and this script (a new image leaves two older ones):
#   ROOTFS_CACHE=<dir>  the cache (default ~/.cache/linmap-kit)
#   ROOTFS_PKGS=<file>  another package list (default scripts/job/rootfs.pkgs)
. "$(dirname "$0")/../lib/lib.sh"

PKGS_FILE=${ROOTFS_PKGS:-$TOP/scripts/job/rootfs.pkgs}
CACHE=${ROOTFS_CACHE:-$KIT_CACHE}
[ -f "$PKGS_FILE" ] || die "no package list at $PKGS_FILE"
mapfile -t pkgs < <(sed 's/#.*//; s/[[:space:]]//g; /^$/d' "$PKGS_FILE")
[ ${#pkgs[@]} -gt 0 ] || die "the package list $PKGS_FILE names no package"
require_cmds apt-get apt-cache dpkg-deb mke2fs
key=$(stamp_of "$PKGS_FILE" "$0")
img=$CACHE/rootfs-$key.ext4
if [ -f "$img" ]; then
	echo "$img"
	exit 0
fi

dpkg --print-foreign-architectures | grep -qx arm64 ||
	die "dpkg has no arm64 architecture; run 'make deps'"
# A package the lists do not know is named, with what to do.
missing=()
for p in "${pkgs[@]}"; do
	apt-cache show --no-all-versions "$p:arm64" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	die "Debian package(s) not found for arm64: ${missing[*]} (in $PKGS_FILE); run 'apt-get update' if the lists are old, or fix the list"
fi

mkdir -p "$CACHE"
work=$(mktemp -d "$CACHE/build.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/debs/partial" "$work/apt" "$work/root"
: >"$work/status"
msg "rootfs: downloading ${#pkgs[@]} packages and their dependencies (arm64)"
# apt with an empty package database of its own: it resolves the whole
# dependency closure for arm64 alone and only downloads it.
apt_opts=(-o APT::Architecture=arm64 -o APT::Architectures::=arm64
	  -o Dir::State::status="$work/status" -o Dir::Cache="$work/apt"
	  -o Dir::Cache::archives="$work/debs" -o Debug::NoLocking=1)
if ! with_progress "rootfs: downloading" "$work/apt.log" '^Get:' "packages" '' \
	apt-get install -y -q --download-only --no-install-recommends "${apt_opts[@]}" \
	"${pkgs[@]}"; then
	tail -15 "$work/apt.log" >&2
	cp "$work/apt.log" "$CACHE/apt-failed.log"
	die "apt-get could not download the rootfs packages (list: $PKGS_FILE)"
fi
debs=("$work"/debs/*.deb)
msg "rootfs: unpacking ${#debs[@]} packages"
unpack() {	# DEB...: into the root, each named in the manifest
	local d
	for d; do
		dpkg-deb -x "$d" "$work/root" || { echo "cannot unpack $d"; return 1; }
		dpkg-deb -W --showformat='${Package} ${Version}\n' "$d" >>"$work/manifest" ||
			return 1
		echo "unpacked ${d##*/}"
	done
}
with_progress "rootfs: unpacking" "$work/unpack.log" '^unpacked ' "packages" "${#debs[@]}" \
	unpack "${debs[@]}" || { tail -3 "$work/unpack.log" >&2; die "cannot unpack the packages"; }
for p in "${pkgs[@]}"; do
	grep -q "^$p " "$work/manifest" || die "package $p was not downloaded: apt-get resolved it away (see its log above)"
done
# What the guest mounts or writes into, and the users the programs ask for.
r=$work/root
mkdir -p "$r"/{dev,proc,sys,tmp,run,mnt,root,var/tmp}
chmod 1777 "$r/tmp" "$r/var/tmp"
printf 'root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n' >"$r/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$r/etc/group"
# The link mawk's maintainer script makes (update-alternatives): Debian's
# scripts and hw-bench.sh call awk.
[ -e "$r/usr/bin/awk" ] || ln -s mawk "$r/usr/bin/awk"
sort -o "$work/manifest" "$work/manifest"
cp "$work/manifest" "$r/etc/linmap-packages"
size=$(( $(du -sm "$r" | cut -f1) * 5 / 4 + 64 ))
mke2fs -q -t ext4 -L linmap-root -d "$r" "$work/rootfs.ext4" "${size}M" >&2 ||
	die "mke2fs could not build the image"
mv "$work/rootfs.ext4" "$img"
cp "$work/manifest" "${img%.ext4}.manifest"
# An image of another package list or script is not used again once they
# change (about 850 MB each): the two newest besides this one stay, for
# other clones of the kit, and older ones go.
ls -t "$CACHE"/rootfs-*.ext4 | { grep -vxF "$img" || true; } | tail -n +3 | while read -r old; do
	rm -f "$old" "${old%.ext4}.manifest"
	msg "rootfs: removed the older image ${old##*/}"
done
msg "rootfs: $img (${size} MiB, ${#debs[@]} packages; list: ${img%.ext4}.manifest)"
echo "$img"
