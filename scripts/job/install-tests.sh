#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# For a real arm64 board or server: build kmod/ against the kernel build in
# KDIR and the selftests, and pack them with kselftest's own runner into one
# tarball laid out as 'make -C tools/testing/selftests install' lays out its
# output, with scripts/bench/hw-bench.sh at its top. On the board, as
# root: tar xzf <tarball> && ./run_kselftest.sh
#   KDIR=<kernel build dir>   a built arm64 kernel (Module.symvers), or an
#                             installed headers package on the arm64
#                             machine (/usr/src/linux-headers-REL)
#   KSELFTEST=<dir>           <linux>/tools/testing/selftests for the runner
#                             and harness (default: KDIR's source tree)
# Prints the tarball's path on stdout.
. "$(dirname "$0")/../lib/lib.sh"

KDIR=${KDIR:-}
[ -n "$KDIR" ] ||
	die "no KDIR: make install-tests KDIR=<arm64 kernel build dir> (e.g. /lib/modules/<release>/build)"
[ -d "$KDIR" ] || die "KDIR=$KDIR is not a directory"
KDIR=$(realpath "$KDIR")
[ -f "$KDIR/Module.symvers" ] ||
	die "KDIR=$KDIR has no Module.symvers: not a built kernel (build it first: make Image modules)"
# A build directory has .config; an installed headers package
# (/usr/src/linux-headers-REL, make deb's) only what kbuild made of it.
config=$KDIR/.config
[ -f "$config" ] || config=$KDIR/include/config/auto.conf
[ -f "$config" ] ||
	die "KDIR=$KDIR has no .config and no include/config/auto.conf: not a kernel build directory or headers package"
grep -qx 'CONFIG_ARM64=y' "$config" ||
	die "KDIR=$KDIR is not an arm64 kernel build (no CONFIG_ARM64=y in ${config#$KDIR/})"
release=$(cat "$KDIR/include/config/kernel.release" 2>/dev/null) ||
	die "KDIR=$KDIR has no include/config/kernel.release: not a built kernel"
# Without these the module cannot find the helpers it needs and every test
# would skip on the board: say so now.
for opt in CONFIG_KPROBES CONFIG_KALLSYMS_ALL CONFIG_DEBUG_FS; do
	grep -qx "$opt=y" "$config" ||
		warn "$opt is not set in $config: linmap_test.ko will not load there"
done
require_cmds make "${CROSS_COMPILE}gcc" tar gzip
# A headers package made for arm64 (make deb's, installed on the machine
# or unpacked) carries arm64's fixdep and modpost: elsewhere they do not run
# (with no arguments fixdep prints its usage and exits 1; 126 is a program
# this machine cannot run), and are made again in a copy, below.
rc=0
[ ! -x "$KDIR/scripts/basic/fixdep" ] || "$KDIR/scripts/basic/fixdep" >/dev/null 2>&1 || rc=$?
foreign=$([ $rc -lt 126 ] || echo 1)

# The kselftest runner and harness come from the kernel's own source tree.
if [ -z "${KSELFTEST:-}" ]; then
	for d in "$KDIR/source" "$KDIR" "$KSRC"; do
		[ -f "$d/tools/testing/selftests/lib.mk" ] || continue
		KSELFTEST=$(realpath "$d/tools/testing/selftests")
		break
	done
fi
[ -n "${KSELFTEST:-}" ] && [ -f "$KSELFTEST/lib.mk" ] && [ -f "$KSELFTEST/run_kselftest.sh" ] ||
	die "no kselftest sources for the runner (KDIR's source tree has no tools/testing/selftests; give KSELFTEST=<linux>/tools/testing/selftests)"

W=${INSTALL_OUT:-$OUT/install-tests}/$release
stage=$W/kselftest_install
rm -rf "$W"
mkdir -p "$stage/kselftest" "$stage/linmap"

# fixdep with the host's compiler (kbuild needs it to build anything),
# then modpost by kbuild itself, as the kernel's install-extmod-build does
# the other way round.
if [ -n "$foreign" ]; then
	msg "KDIR=$KDIR: its build programs are another machine's (an arm64 headers package); making fixdep and modpost for this one in $W/kdir"
	cp -a "$KDIR" "$W/kdir"
	KDIR=$W/kdir
	hostprogs() {
		gcc -O2 -I "$KDIR/scripts/include" -o "$KDIR/scripts/basic/fixdep" \
			"$KDIR/scripts/basic/fixdep.c" || return 1
		# The copy as an external module whose only directory is scripts/,
		# there only fixdep and modpost.
		echo 'subdir-y := scripts' >"$KDIR/Kbuild"
		printf '%s\n' 'subdir-y := basic' 'hostprogs-always-y := mod/modpost' \
			'mod/modpost-objs := $(addprefix mod/, modpost.o file2alias.o sumversion.o symsearch.o)' \
			>"$KDIR/scripts/Kbuild"
		make -C "$KDIR" ARCH=arm64 CROSS_COMPILE="$CROSS_COMPILE" KBUILD_EXTMOD="$KDIR" scripts/ &&
			rm -f "$KDIR/Kbuild" "$KDIR/scripts/Kbuild"
	}
	hostprogs >"$W/kdir.log" 2>&1 ||
		die "cannot make KDIR's fixdep and modpost for this machine (its scripts/ lacks their sources?); see $W/kdir.log"
fi
msg "building kmod/ against $KDIR ($release, ${CROSS_COMPILE:-native} gcc)"
build_kmod "$W/kmod" make -C "$KDIR" ARCH=arm64 CROSS_COMPILE="$CROSS_COMPILE" -j"$JOBS"
# A kernel other than the kit's may warn (another compiler): show, go on.
grep -E 'warning:' "$W/kmod/build.log" >&2 && warn "module build warnings above ($W/kmod/build.log)"

msg "building selftests/linmap with $KSELFTEST"
build_selftests "$KSELFTEST" "$W/selftests"

# The files and modes of kselftest's install target (its Makefile lists the
# runner files, which change between releases).
mapfile -t runner < <(sed -n 's/^\tinstall -m 744 \(kselftest\/[^ ]*\) .*/\1/p' "$KSELFTEST/Makefile")
[ ${#runner[@]} -gt 0 ] || die "cannot find the runner files in $KSELFTEST/Makefile's install target"
for f in "${runner[@]}"; do
	install -m 744 "$KSELFTEST/$f" "$stage/kselftest/"
done
install -m 744 "$KSELFTEST/run_kselftest.sh" "$stage/"
# The workloads the series was measured with, to run on the machine itself.
install -m 755 "$TOP/scripts/bench/hw-bench.sh" "$stage/"
progs=$(linmap_progs "$KSELFTEST")
for p in $progs; do
	echo "linmap:$p"
	install -m 755 "$W/selftests/$p" "$stage/linmap/"
done >"$stage/kselftest-list.txt"
install -m 644 "$TOP/selftests/linmap/settings" "$TOP/selftests/linmap/config" \
	"$W/kmod/linmap_test.ko" \
	"$W/kmod/linmap_churn.ko" "$stage/linmap/"

tarball=$W/linmap-kselftest-$release.tar.gz
tar -C "$stage" --owner=0 --group=0 --sort=name -czf "$tarball" .
msg "on the board, as root: tar xzf ${tarball##*/} && ./run_kselftest.sh"
echo "$tarball"
