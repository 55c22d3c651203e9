#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Pack the initramfs: Debian's static arm64 busybox, the test module, the
# selftest binaries and the guest init.
#   KSELFTEST_TAR=<tarball>  also carry a 'make install-tests' tarball as
#                            /kselftest.tar.gz (job kselftest-install), in
#                            INITRD (default: the build's initramfs.cpio.gz)
. "$(dirname "$0")/../lib/lib.sh"

BUSYBOX=$OUT/deps/busybox
KO=$BUILD/kmod/linmap_test.ko
ST=$BUILD/selftests
[ -x "$BUSYBOX" ] || die "no arm64 busybox at $BUSYBOX; run 'make deps'"
[ -f "$KO" ] || die "no module at $KO; run 'make kmod'"
[ -f "$ST/progs" ] || die "no selftests in $ST; run 'make selftests'"

INITRD=${INITRD:-$BUILD/initramfs.cpio.gz}
root=${INITRD%.cpio.gz}
[ "$root" != "$INITRD" ] || die "INITRD must end in .cpio.gz (got '$INITRD')"
KSELFTEST_TAR=${KSELFTEST_TAR:-}
[ -z "$KSELFTEST_TAR" ] || [ -f "$KSELFTEST_TAR" ] || die "no tarball at $KSELFTEST_TAR"
rm -rf "$root"
mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,lib/modules}
install -m 755 "$BUSYBOX" "$root/bin/busybox"
for app in $("$TOP/scripts/guest/applets"); do
	ln -sf busybox "$root/bin/$app"
done
install -m 755 "$TOP/scripts/guest/init" "$root/init"
install -m 755 "$TOP/scripts/guest/workloads" "$root/bin/linmap_workloads"
# What a user runs on a server, run by the hwbench workload in Debian's root.
install -m 755 "$TOP/scripts/bench/hw-bench.sh" "$root/bin/hw-bench.sh"
install -m 644 "$KO" "$BUILD/kmod/linmap_churn.ko" "$root/lib/modules/"
# Built only for kernels with KUnit.
[ ! -f "$BUILD/kmod/linmap_kunit.ko" ] ||
	install -m 644 "$BUILD/kmod/linmap_kunit.ko" "$root/lib/modules/"
# The kernel's own modules (the workload kernels build some: see
# scripts/configs/workload.config), as modules_install lays them out, for
# Debian's depmod and modprobe in the workload guests' module loop.
if [ -s "$BUILD/modules.order" ]; then
	mods=$root/lib/modules/intree
	while read -r m; do
		m=${m%.o}.ko
		[ -f "$BUILD/$m" ] || die "modules.order names $m, which is not in $BUILD: build the kernel again"
		install -D -m 644 "$BUILD/$m" "$mods/kernel/$m"
	done <"$BUILD/modules.order"
	for f in modules.order modules.builtin modules.builtin.modinfo; do
		[ ! -f "$BUILD/$f" ] || install -m 644 "$BUILD/$f" "$mods/"
	done
fi
mkdir -p "$root/etc"
install -m 644 "$ST/progs" "$root/etc/linmap_progs"
for p in $(cat "$ST/progs") linmap_secret linmap_contpte linmap_jit; do
	install -m 755 "$ST/$p" "$root/bin/"
done
install -m 755 "$TOP/scripts/guest/linmap_tests" "$root/bin/linmap_tests"
# The markers of the TLB measurement (scripts/bench/tlb.sh), a few KiB.
submake -s -C "$TOP/scripts/bench/tlb" O="$root/bin" \
	CROSS_COMPILE="$CROSS_COMPILE" guest || die "cannot build scripts/bench/tlb/tlbmark.c"
# The kdump guests' check of the dump (scripts/guest/vmcore.c).
"${CROSS_COMPILE}gcc" -static -O2 -Wall -o "$root/bin/linmap_vmcore" \
	"$TOP/scripts/guest/vmcore.c" || die "cannot build scripts/guest/vmcore.c"
[ -z "$KSELFTEST_TAR" ] || install -m 644 "$KSELFTEST_TAR" "$root/kselftest.tar.gz"
(cd "$root" && find . | sort | cpio -o -H newc -R 0:0 --quiet) |
	gzip -n -1 >"$INITRD.tmp"
mv "$INITRD.tmp" "$INITRD"
msg "initramfs: $INITRD ($(du -k "$INITRD" | cut -f1) KiB)"
