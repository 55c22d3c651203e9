#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# For a real arm64 board or server: build kmod/ against the kernel build in
# KDIR and the selftests, and pack them with kselftest's own runner into one
# tarball laid out as 'make -C tools/testing/selftests install' lays out its
# output, with scripts/bench/hw-bench.sh at its top. On the board, as
# root: tar xzf <tarball> && ./run_kselftest.sh
#   KDIR=<kernel build dir>   a built arm64 kernel (Module.symvers)
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
[ -f "$KDIR/.config" ] || die "KDIR=$KDIR has no .config: not a kernel build directory"
grep -qx 'CONFIG_ARM64=y' "$KDIR/.config" ||
	die "KDIR=$KDIR is not an arm64 kernel build (no CONFIG_ARM64=y in its .config)"
release=$(cat "$KDIR/include/config/kernel.release" 2>/dev/null) ||
	die "KDIR=$KDIR has no include/config/kernel.release: not a built kernel"
# Without these the module cannot find the helpers it needs and every test
# would skip on the board: say so now.
for opt in CONFIG_KPROBES CONFIG_KALLSYMS_ALL CONFIG_DEBUG_FS; do
	grep -qx "$opt=y" "$KDIR/.config" ||
		warn "$opt is not set in $KDIR/.config: linmap_test.ko will not load there"
done
require_cmds make "${CROSS_COMPILE}gcc" tar gzip

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
