#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The test suite behind 'make check':
#   1. the kit's own checks on the host (bad input is refused clearly);
#   2. build kernel, module, selftests and initramfs; the selftests also
#      build in place in a copy of the kernel tree's tools/;
#   3. boot one guest per mode and run the kselftests in each; then, as on
#      a board, unpack the 'make install-tests' tarball in one guest and
#      run its ./run_kselftest.sh;
#   4. failure drills: a hung guest, a panicking guest, a module that fails
#      to load must all be reported as failures;
#   5. the main job's report as a smoke test.
# Ends with 'N passed, N failed, N skipped'. A SKIP is never a pass.
. "$(dirname "$0")/lib.sh"

# CHECK_PART=trees: only build and boot this tree's guests (the nested run
# for the core series alone, below), its results in CHECK_DIR.
CHECK_PART=${CHECK_PART:-all}
CHECK=${CHECK_DIR:-$OUT/check}
rm -rf "$CHECK"
mkdir -p "$CHECK"
start=$(date +%s)

# Every result goes to results.log; stdout gets the FAILs as they come
# (RESULTS_ALL=1: every line) and, at the end, a table per group.
if [ "$CHECK_PART" = all ]; then
	export RESULTS_LOG=$CHECK/results.log RESULTS_TSV=$CHECK/results.tsv
	: >"$RESULTS_LOG"
	: >"$RESULTS_TSV"
	msg "every PASS, FAIL and SKIP line goes to $RESULTS_LOG; FAILs show here too"
fi

finish() {
	if [ "$CHECK_PART" = all ]; then
		summary_table
		msg "check took $(( $(date +%s) - start ))s; logs in $CHECK, results in $RESULTS_LOG"
	else
		msg "check took $(( $(date +%s) - start ))s; logs in $CHECK"
	fi
	tally
	exit
}

# The results per group (a guest, a build, the kit's checks), in the order
# they ran, each with the time since the result before it; the failures'
# names again below.
summary_table() {
	local counts
	counts=$(awk -F'\t' '{ c[$2]++ } END { print c["PASS"] + 0, c["FAIL"] + 0, c["SKIP"] + 0 }' \
		"$RESULTS_TSV")
	[ "$counts" = "$pass $failed $skipped" ] ||
		bad "check: $RESULTS_TSV holds every result" "it has $counts; the tally $pass $failed $skipped"
	echo
	awk -F'\t' -v t0="$start" '
	{
		if (!($3 in seen)) { seen[$3] = 1; order[n++] = $3 }
		c[$3, $2]++
		secs[$3] += $1 - (prev ? prev : t0)
		prev = $1
	}
	END {
		printf "%-44s %7s %7s %7s %7s\n", "group", "passed", "failed", "skipped", "time"
		for (i = 0; i < n; i++) {
			g = order[i]
			printf "%-44s %7d %7d %7d %6ds\n", g, c[g, "PASS"], c[g, "FAIL"], c[g, "SKIP"], secs[g]
		}
	}' "$RESULTS_TSV"
	if grep -q '^FAIL: ' "$RESULTS_LOG"; then
		echo
		echo "failed:"
		grep '^FAIL: ' "$RESULTS_LOG" | sed 's/^FAIL: /  /'
	fi
	echo
}

# expect_fail NAME PATTERN CMD...: CMD must fail and say PATTERN.
expect_fail() {
	local name=$1 pat=$2 out rc
	shift 2
	set +e
	out=$("$@" 2>&1)
	rc=$?
	set -e
	if [ $rc != 0 ] && grep -qE -- "$pat" <<<"$out"; then
		ok "$name"
	else
		bad "$name" "exit $rc, wanted failure matching '$pat'; got:
$out"
	fi
}

fake_tree() {	# DIR VERSION PATCHLEVEL: a tiny git tree that looks like Linux
	mkdir -p "$1"
	printf 'VERSION = %s\nPATCHLEVEL = %s\nSUBLEVEL = 1\n' "$2" "$3" >"$1/Makefile"
	printf 'one\ntwo\nthree\n' >"$1/file.txt"
	git -C "$1" init -q
	git -C "$1" add -A
	git -C "$1" -c user.name=t -c user.email=t@t commit -q -m base
}

# ---- 1. host-side checks of the kit --------------------------------------
if [ "$CHECK_PART" = all ]; then
msg "kit checks"
T=$CHECK/kit
fake_tree "$T/v611" 6 11
expect_fail "kit: KSRC that is not 6.12 is refused" '6\.12\.y only' \
	env KSRC="$T/v611" OUT="$T/out1" "$TOP/scripts/tree.sh"
fake_tree "$T/dirty" 6 12
echo change >>"$T/dirty/file.txt"
expect_fail "kit: KSRC with uncommitted changes is refused" 'uncommitted changes' \
	env KSRC="$T/dirty" OUT="$T/out2" "$TOP/scripts/tree.sh"
mkdir -p "$T/nogit" && cp "$T/v611/Makefile" "$T/nogit/" &&
	sed -i 's/= 11/= 12/' "$T/nogit/Makefile"
expect_fail "kit: KSRC that is not a git tree is refused" 'not a git repository' \
	env KSRC="$T/nogit" OUT="$T/out3" "$TOP/scripts/tree.sh"
# Bad values are refused by 'make run' before any work: nothing under
# its OUT, and the error names the values allowed.
refused() {	# VAR=VALUE PATTERN
	local o=$T/out-var
	rm -rf "$o"
	expect_fail "kit: make run $1 is refused up front" "${1%%=*} must be $2" \
		make -s -C "$TOP" run "$1" OUT="$o"
	[ ! -e "$o" ] || bad "kit: make run $1 did no work" "$(ls -A "$o")"
}
refused BBML2=bogus 'all, none, boot, secondary, off or a CPU list'
refused BBML2=0-9 "a list of the guest's CPUs, 0 to 3"
refused PAGE_SIZE=8K '4K, 16K or 64K'
refused VA_BITS=40 'a size 6.12 offers with 4K pages: 39 48 52'
refused SERIES=partial 'on, core or off'
refused DEBUG=yes 'on or off'
refused KASAN=generic 'off, sw or hw'
refused MEM=4 'guest RAM in M, G or T'
refused MEM=256M 'guest RAM in M, G or T, at least 512M'
refused SMP=0 'a number of guest CPUs from 1 to 512'
refused STRESS=pages=0,round=2 "pages=N rounds=N threads=N \\(no 'round'\\)"
refused STRESS=threads=four 'pages=N rounds=N threads=N with numbers'
expect_fail "kit: make bench-tlb refuses an unknown workload up front" "no workload 'bogus'" \
	env TLB_WORKLOADS="memcached bogus" OUT="$T/out-tlb" "$TOP/scripts/tlb.sh"
expect_fail "kit: make bench-tlb refuses TLB_SECS=1.5 up front" "TLB_SECS takes whole seconds" \
	env TLB_SECS=1.5 OUT="$T/out-tlb" "$TOP/scripts/tlb.sh"
[ ! -e "$T/out-tlb/tlb" ] || bad "kit: a refused make bench-tlb did no work" "$(ls -A "$T/out-tlb/tlb")"
refused EL2=yes 'on or off'
refused IOMMU=smmuv2 'smmuv3 or empty'
refused ICOUNT=11 'an -icount shift from 0 to 10'
refused QEMU_TIMEOUT=10m 'a number of seconds'
if out=$(env BBML2=0,2-3 SMP=4 MEM=512M STRESS="pages=0x100 rounds=2,threads=1" EL2=on \
	IOMMU=smmuv3 ICOUNT=0 bash -c ". '$TOP/scripts/lib.sh'" 2>&1); then
	ok "kit: good values of the checked variables are taken"
else
	bad "kit: good values of the checked variables are taken" "$out"
fi
fake_tree "$T/good" 6 12
mkdir -p "$T/patches"
cat >"$T/patches/0001-bad.patch" <<'P'
From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: Test <t@t>
Date: Thu, 1 Jan 2026 00:00:00 +0000
Subject: [PATCH] bad

---
 file.txt | 2 +-
 1 file changed, 1 insertion(+), 1 deletion(-)

diff --git a/file.txt b/file.txt
--- a/file.txt
+++ b/file.txt
@@ -1,3 +1,3 @@
 one
-not there
+2
 three
P
expect_fail "kit: a patch that does not apply is named, with how to go on" \
	'0001-bad.patch does not apply' \
	env KSRC="$T/good" OUT="$T/out4" PATCHDIR="$T/patches" "$TOP/scripts/apply.sh"
if grep -q 'am --continue' <(env KSRC="$T/good" OUT="$T/out5" PATCHDIR="$T/patches" \
	"$TOP/scripts/apply.sh" 2>&1); then
	ok "kit: the apply error says how to continue or abort"
else
	bad "kit: the apply error says how to continue or abort"
fi
# check-series: a patch checkpatch rejects is one FAIL line, and the run
# goes on to the other patches and its summary.
fake_tree "$T/cs" 6 12
mkdir -p "$T/cs/scripts" "$T/cspatches"
printf '#!/bin/sh\nfor f; do :; done\nif grep -q STYLE "$f"; then echo "ERROR: STYLE"; exit 1; fi\n' \
	>"$T/cs/scripts/checkpatch.pl"
chmod +x "$T/cs/scripts/checkpatch.pl"
git -C "$T/cs" add -A && git -C "$T/cs" -c user.name=t -c user.email=t@t commit -q -m checkpatch
for n in 1 2; do
	sed -i "s/^.*\$/line $n/; 1!d" "$T/cs/file.txt"
	git -C "$T/cs" -c user.name=t -c user.email=t@t commit -q -a \
		-m "change $n" -m "Line $n of a body$( [ $n = 2 ] && echo ' with STYLE')." \
		-m "It has three lines." -m "Signed-off-by: t <t@t>"
done
git -C "$T/cs" format-patch -q -o "$T/cspatches" HEAD~2
git -C "$T/cs" reset -q --hard HEAD~2
set +e
out=$(env -u RESULTS_LOG -u RESULTS_TSV KSRC="$T/cs" OUT="$T/out6" PATCHDIR="$T/cspatches" SERIES_BUILDS=0 \
	SERIES_WARNINGS=0 "$TOP/scripts/check-series.sh" 2>&1)
rc=$?
set -e
if [ $rc != 0 ] && grep -q '^FAIL: checkpatch --strict: 0002-' <<<"$out" &&
   grep -q '^PASS: checkpatch --strict: 0001-' <<<"$out" &&
   grep -qE '^[0-9]+ passed, 1 failed, [0-9]+ skipped$' <<<"$out"; then
	ok "kit: check-series reports a checkpatch finding and goes on"
else
	bad "kit: check-series reports a checkpatch finding and goes on" "exit $rc; got:
$out"
fi
printf '[    1.0] ok\n[    2.0] WARNING: CPU: 0 PID: 1 at mm/x.c:1 f+0x0/0x4\n' >"$T/splat.log"
expect_fail "kit: a WARNING in the console log fails the run" 'kernel splat' \
	"$TOP/scripts/scan-log.sh" "$T/splat.log"
printf 'BUG: sleeping function called from invalid context at mm/x.c:1\n' >"$T/sleep.log"
expect_fail "kit: a might-sleep report fails the run" 'kernel splat' \
	"$TOP/scripts/scan-log.sh" "$T/sleep.log"
printf '%s\n' 'linmap: exiting init to panic into the crash kernel' \
	'[    9.0] Kernel panic - not syncing: Attempted to kill init!' '[    9.1] Call trace:' \
	'[    0.0] Booting Linux on physical CPU 0x0' '[    1.0] ok' >"$T/kdump.log"
if "$TOP/scripts/scan-log.sh" "$T/kdump.log" >/dev/null 2>&1; then
	ok "kit: the kdump guests' own panic passes the scan when a crash kernel boots"
else
	bad "kit: the kdump guests' own panic passes the scan when a crash kernel boots"
fi
head -3 "$T/kdump.log" >"$T/kdump-dead.log"
expect_fail "kit: the same panic with no crash kernel after it fails the run" 'kernel splat' \
	"$TOP/scripts/scan-log.sh" "$T/kdump-dead.log"
b='linmap_test: expected warning: set_direct_map() with interrupts off'
printf '%s\n' "[ 2.0] $b, begin" '[ 2.1] ------------[ cut here ]------------' \
	'[ 2.1] WARNING: CPU: 1 PID: 9 at arch/arm64/mm/pageattr.c:1 set_direct_map+0x0/0x4' \
	'[ 2.2] Call trace:' "[ 2.3] $b, end" >"$T/dmirq.log"
if "$TOP/scripts/scan-log.sh" "$T/dmirq.log" >/dev/null 2>&1; then
	ok "kit: the one expected set_direct_map() warning passes the scan"
else
	bad "kit: the one expected set_direct_map() warning passes the scan"
fi
sed 's/set_direct_map+0x0/other_fn+0x0/' "$T/dmirq.log" >"$T/dmirq-other.log"
expect_fail "kit: another WARNING inside the expected window fails the run" 'kernel splat' \
	"$TOP/scripts/scan-log.sh" "$T/dmirq-other.log"
head -4 "$T/dmirq.log" >"$T/dmirq-open.log"
expect_fail "kit: an expected-warning window that never ends fails the run" 'kernel splat' \
	"$TOP/scripts/scan-log.sh" "$T/dmirq-open.log"
printf '[    1.0] Booting Linux\n[    2.0] Run /init as init process\n' >"$T/clean.log"
if "$TOP/scripts/scan-log.sh" "$T/clean.log"; then
	ok "kit: a clean console log passes the scan"
else
	bad "kit: a clean console log passes the scan"
fi

# The install path, on a machine where nothing is installed: stand-ins for
# the package tools report every package missing and record what they are
# asked; OUT does not exist yet, as in a fresh clone.
deps_standin() {	# DIR UID: run deps.sh as that uid with the stand-ins
	local d=$1
	mkdir -p "$d/bin"
	cat >"$d/bin/dpkg-query" <<'S'
#!/bin/sh
echo "dpkg-query $*" >>"$STANDIN_LOG"
exit 1
S
	cat >"$d/bin/apt-get" <<'S'
#!/bin/sh
echo "apt-get $*" >>"$STANDIN_LOG"
[ "$1" = download ] && : >busybox-static_1.35.0-4_arm64.deb
exit 0
S
	cat >"$d/bin/dpkg" <<'S'
#!/bin/sh
echo "dpkg $*" >>"$STANDIN_LOG"
exit 0
S
	cat >"$d/bin/dpkg-deb" <<'S'
#!/bin/sh
echo "dpkg-deb $*" >>"$STANDIN_LOG"
mkdir -p "$3/bin" && printf '#!/bin/sh\n' >"$3/bin/busybox"
S
	printf '#!/bin/sh\n[ "$1" = -u ] && echo %s && exit 0\nexec /usr/bin/id "$@"\n' "$2" >"$d/bin/id"
	chmod +x "$d/bin/"*
	: >"$d/log"
	env PATH="$d/bin:$PATH" STANDIN_LOG="$d/log" OUT="$d/out" \
		"$TOP/scripts/deps.sh" >"$d/stdout" 2>&1
}
deps_checks() {
	local d=$CHECK/deps pkgs rc
	pkgs=$("$TOP/scripts/deps.sh" --list)
	set +e
	deps_standin "$d/root" 0
	rc=$?
	set -e
	if [ $rc = 0 ] && grep -qxF "apt-get install -y -q $pkgs" "$d/root/log" &&
	   grep -qx 'apt-get update -q' "$d/root/log"; then
		ok "deps: on a bare machine, root installs every package in one apt-get line"
	else
		bad "deps: on a bare machine, root installs every package in one apt-get line" \
			"exit $rc; asked: $(grep -v "^dpkg-query" "$d/root/log"); said: $(cat "$d/root/stdout")"
	fi
	for p in gcc-aarch64-linux-gnu qemu-system-arm linux-source-6.12 ccache; do
		grep -qw -- "$p" <<<"$pkgs" || bad "deps: $p is in the package list"
	done
	if grep -qx 'dpkg --add-architecture arm64' "$d/root/log" &&
	   grep -qx 'apt-get download -q busybox-static:arm64' "$d/root/log" &&
	   [ -x "$d/root/out/deps/busybox" ]; then
		ok "deps: the arm64 busybox is fetched and unpacked into a fresh OUT"
	else
		bad "deps: the arm64 busybox is fetched and unpacked into a fresh OUT" \
			"asked: $(grep -v "^dpkg-query" "$d/root/log"); said: $(cat "$d/root/stdout")"
	fi
	set +e
	deps_standin "$d/user" 1000
	rc=$?
	set -e
	if [ $rc != 0 ] && grep -qxF "error: missing packages; please run: sudo apt-get install -y $pkgs" \
		"$d/user/stdout" && ! grep -q '^apt-get' "$d/user/log"; then
		ok "deps: not root, it prints the exact install line and installs nothing"
	else
		bad "deps: not root, it prints the exact install line and installs nothing" \
			"exit $rc; asked: $(grep -v "^dpkg-query" "$d/user/log"); said: $(cat "$d/user/stdout")"
	fi
}
deps_checks

# The Debian userspace: a package the archive does not have is named, and
# nothing is left in the cache.
printf 'fio\nlinmap-no-such-package\n' >"$T/rootfs.pkgs"
expect_fail "rootfs: a package missing from the archive is named" \
	'not found for arm64: linmap-no-such-package' \
	env ROOTFS_PKGS="$T/rootfs.pkgs" ROOTFS_CACHE="$T/rootfs-cache" "$TOP/scripts/rootfs.sh"
if [ -z "$(ls -A "$T/rootfs-cache" 2>/dev/null)" ]; then
	ok "rootfs: a failed build leaves nothing in the cache"
else
	bad "rootfs: a failed build leaves nothing in the cache" "$(ls -la "$T/rootfs-cache")"
fi

# make install-tests refuses what cannot give a module for an arm64 board.
mkdir -p "$T/kdir-nosym" "$T/kdir-x86/include/config"
echo CONFIG_X86_64=y >"$T/kdir-x86/.config"
: >"$T/kdir-x86/Module.symvers"
echo 6.12.1 >"$T/kdir-x86/include/config/kernel.release"
expect_fail "install-tests: no KDIR is refused" 'no KDIR' \
	env -u KDIR OUT="$T/out6" "$TOP/scripts/install-tests.sh"
expect_fail "install-tests: a KDIR without Module.symvers is refused" 'no Module\.symvers' \
	env KDIR="$T/kdir-nosym" OUT="$T/out6" "$TOP/scripts/install-tests.sh"
expect_fail "install-tests: a KDIR that is not an arm64 build is refused" 'not an arm64 kernel build' \
	env KDIR="$T/kdir-x86" OUT="$T/out6" "$TOP/scripts/install-tests.sh"
fi

# ---- 2. build -------------------------------------------------------------
# Page sizes need separate kernels; everything else is a boot parameter.
# The job: check (make check), soak (make soak: SOAK_SECS of churn per
# mode) or geometries (make check-geometries: the geometries make check
# does not build). Its guests are in scripts/modes.tsv, the geometries it
# builds in scripts/geometries.tsv.
CHECK_JOB=${CHECK_JOB:-check}
case "$CHECK_JOB" in
check|soak|geometries) ;;
*) die "CHECK_JOB must be check, soak or geometries (got '$CHECK_JOB')" ;;
esac
PAGE_SIZES=${CHECK_PAGE_SIZES:-$(python3 "$TOP/scripts/modes.py" geometries "$CHECK_JOB" "$TREE")}
geo() {	# GEOMETRY CMD...: run CMD with PAGE_SIZE and VA_BITS of GEOMETRY
	local g_ps g_va g_levels g_build g_kasan
	read -r g_ps g_va g_levels g_build g_kasan < <(geometry "$1")
	shift
	PAGE_SIZE=$g_ps VA_BITS=$g_va KASAN=$g_kasan "$@"
}
built=()
for ps in $PAGE_SIZES; do
	read -r _ va levels _ < <(geometry "$ps")
	msg "build ($TREE tree, $ps: $va-bit VA, $levels levels)"
	fail=
	for step in apply kernel kmod selftests initramfs; do
		if ! geo "$ps" "$TOP/scripts/$step.sh"; then
			bad "build $ps: $step"
			fail=1
			break
		fi
	done
	[ -n "$fail" ] && continue
	ok "build $ps: kernel, module, selftests and initramfs ($TREE tree)"
	built+=("$ps")
done
[ ${#built[@]} -gt 0 ] || finish

# The selftest directory dropped into a kernel tree builds there the way
# kernel CI builds kselftests, and the tree's install lists it. Only the
# tree's tools/ (and the one top-level file its Makefile reads) are copied.
# Every program installed static, and listed in run order.
intree_installed() {	# INSTALL_PATH
	local p
	for p in $(linmap_progs "$SRC/tools/testing/selftests"); do
		file "$1/linmap/$p" | grep -q 'ARM aarch64.*statically linked' || return 1
		echo "linmap:$p"
	done | cmp -s - "$1/kselftest-list.txt"
}
intree_check() {
	local t=$CHECK/intree name="selftests: build in place in a kernel tree (make -C tools/testing/selftests TARGETS=linmap)"
	local cross=()
	[ -z "$CROSS_COMPILE" ] || cross=(CROSS_COMPILE="$CROSS_COMPILE")
	rm -rf "$t"
	mkdir -p "$t"
	(cd "$SRC" && cp -a --parents tools scripts/subarch.include "$t/") &&
		copy_selftests "$t/tools/testing/selftests" || {
		bad "$name" "cannot copy $SRC/tools"
		return 0
	}
	if make -C "$t/tools/testing/selftests" TARGETS=linmap ARCH=arm64 "${cross[@]}" \
		>"$CHECK/intree.log" 2>&1 &&
	   make -C "$t/tools/testing/selftests" TARGETS=linmap ARCH=arm64 "${cross[@]}" \
		install INSTALL_PATH="$t/install" >>"$CHECK/intree.log" 2>&1 &&
	   intree_installed "$t/install"; then
		ok "$name"
		rm -rf "$t"
	else
		bad "$name" "$(tail -20 "$CHECK/intree.log")"
	fi
}
intree_check

# ---- 3. guest modes -------------------------------------------------------
# Count the TAP results of one guest's kselftest run.
count_tap() {
	local mode=$1 data=$2 status name reason seen=0
	while IFS=$'\t' read -r status name reason; do
		seen=1
		case "$status" in
		ok) ok "$mode: $name${reason:+ # $reason}" ;;
		skip) skip "$mode: $name" "$reason" ;;
		*) bad "$mode: $name${reason:+ # $reason}" "$(linmap_data log "$data" "$name")" ;;
		esac
	done < <(linmap_data tap "$data")
	[ $seen = 1 ] || bad "$mode: kselftests produced no results" "$(tail -20 "$data")"
}

# boot_guest GEOMETRY MODE VAR=VALUE...: boot.sh with these settings, its
# logs in the check directory; it must boot, finish and log no splat.
# The KUnit results the guest kept, where the kernel has KUnit (and so the
# build has the module's suite).
count_ktap() {
	local ps=$1 mode=$2 data=$3 status name reason seen=0 build
	read -r _ _ _ build _ < <(geometry "$ps")
	[ -f "$build/kmod/linmap_kunit.ko" ] || return 0
	while IFS=$'\t' read -r status name reason; do
		seen=1
		case "$status" in
		ok) ok "$mode: kunit $name" ;;
		skip) skip "$mode: kunit $name" "$reason" ;;
		*) bad "$mode: kunit $name${reason:+ # $reason}" \
			"$(linmap_data section "$data" ktap | tail -25)" ;;
		esac
	done < <(linmap_data ktap "$data")
	[ $seen = 1 ] || bad "$mode: KUnit suites produced no results" \
		"$(linmap_data section "$data" ktap || grep kunit "$data")"
}

boot_guest() {
	local ps=$1 mode=$2
	shift 2
	if geo "$ps" env "$@" NAME="$mode" LOGDIR="$CHECK" "$TOP/scripts/boot.sh"; then
		ok "$mode: guest booted, finished and logged no splat"
	else
		bad "$mode: guest booted, finished and logged no splat" "console log: $CHECK/$mode.log"
	fi
}

# The workload guests' Debian userspace (scripts/rootfs.sh), built or
# taken from its cache once per run.
ROOTFS_IMG=
rootfs_image() {
	[ -z "$ROOTFS_IMG" ] || return 0
	if ROOTFS_IMG=$("$TOP/scripts/rootfs.sh" 2>"$CHECK/rootfs.log"); then
		ok "rootfs: the Debian userspace of the workload guests (${ROOTFS_IMG##*/})"
	else
		bad "rootfs: the Debian userspace of the workload guests" "$(tail -10 "$CHECK/rootfs.log")"
		ROOTFS_IMG=
		return 1
	fi
}

# The kexec guests' second disk: the geometry's own kernel and initramfs,
# for kexec -s -l in the guest.
kexec_disk() {	# PAGE_SIZE: prints the image's path
	local ps=$1 d=$CHECK/kexec-$1 build
	read -r _ _ _ build _ < <(geometry "$ps")
	[ -f "$d.ext4" ] && { echo "$d.ext4"; return 0; }
	rm -rf "$d" && mkdir -p "$d/files" &&
		cp "$build/arch/arm64/boot/Image" "$build/initramfs.cpio.gz" "$d/files/" &&
		mke2fs -q -t ext4 -L linmap-kexec -d "$d/files" "$d.ext4" \
			"$(( $(du -sm "$d/files" | cut -f1) + 16 ))M" >&2 &&
		rm -rf "$d" && echo "$d.ext4"
}

# The hibernation guests: two boots on one swap disk. The first hibernates
# and powers off ("linmap: hibernating" ends it well); the second restores
# the image, and the restored kernel reports the first boot's job.
hibernate_guest() {	# PAGE_SIZE MODE CMDLINE BOOT-SETTINGS...
	local ps=$1 mode=$2 cmd=$3 swap=$CHECK/$2.swap log=$CHECK/$2-hibernate.log
	shift 3
	rm -f "$swap"
	if ! { truncate -s 1G "$swap" && mkswap -q "$swap"; } >"$CHECK/$mode.mkswap" 2>&1; then
		bad "$mode: a swap disk" "$(cat "$CHECK/$mode.mkswap")"
		return 0
	fi
	msg "guest $mode: hibernate, then resume"
	if geo "$ps" env "$@" JOB=workload SWAP="$swap" NAME="$mode-hibernate" LOGDIR="$CHECK" \
		END_MARKER='^linmap: hibernating' CMDLINE="$cmd ${CMDLINE:-}" \
		"$TOP/scripts/boot.sh" >"$CHECK/$mode-hibernate.boot" 2>&1 &&
	   grep -q 'PM: Image saving done' "$log" && grep -q 'reboot: Power down' "$log"; then
		ok "$mode: the guest wrote its hibernation image and powered off"
	else
		bad "$mode: the guest wrote its hibernation image and powered off" \
			"$(tail -5 "$CHECK/$mode-hibernate.boot"); console log: $log"
		return 0
	fi
	boot_guest "$ps" "$mode" "$@" JOB=resume SWAP="$swap" CMDLINE="$cmd ${CMDLINE:-}"
	rm -f "$swap"
	[ -f "$CHECK/$mode.data" ] && count_tap "$mode" "$CHECK/$mode.data"
	return 0
}

# guest PAGE_SIZE MODE CMDLINE [STRESS] [SMP]: boot in a mode, run the
# selftests there. CMDLINE's qemu:VAR=VALUE words are boot.sh settings
# (QEMU_CPU, IOMMU, BBML2, EL2, JOB; ROOTFS=debian for the Debian userspace,
# DISK2=kexec for the kernel to kexec, SWAP=new for a hibernation guest's
# new swap disk), not kernel arguments.
guest() {
	local ps=$1 mode=$1-$2 cmd= stress=${4:-} smp=${5:-${SMP:-4}} w
	local data=$CHECK/$mode.data qemu=() swap= job=check
	for w in $3; do
		case $w in
		qemu:JOB=*) job=${w#qemu:JOB=}; qemu+=("${w#qemu:}") ;;
		qemu:QEMU_CPU=*|qemu:IOMMU=*|qemu:BBML2=*|qemu:EL2=*) qemu+=("${w#qemu:}") ;;
		qemu:ROOTFS=debian)
			if ! rootfs_image; then
				bad "$mode: guest booted (no Debian userspace, see above)"
				return 0
			fi
			qemu+=("ROOTFS=$ROOTFS_IMG") ;;
		qemu:SWAP=new) swap=1 ;;
		qemu:DISK2=kexec)
			if ! w=$(kexec_disk "$ps"); then
				bad "$mode: guest booted (no disk with the kernel to kexec)"
				return 0
			fi
			qemu+=("DISK2=$w") ;;
		qemu:*) bad "$mode: unknown boot setting '$w' in scripts/modes.tsv"; return 0 ;;
		*) cmd+="${cmd:+ }$w" ;;
		esac
	done
	if [ -n "$swap" ]; then
		hibernate_guest "$ps" "$mode" "$cmd" SMP="$smp" "${qemu[@]}"
		return 0
	fi
	msg "guest $mode: $cmd${qemu[*]:+ (${qemu[*]})}"
	boot_guest "$ps" "$mode" JOB=check SMP="$smp" "${qemu[@]}" CMDLINE="$cmd ${CMDLINE:-}" STRESS="$stress"
	[ -f "$data" ] || return 0
	if [ "$(linmap_data module "$data")" = loaded ]; then
		ok "$mode: module loads"
	else
		bad "$mode: module loads" "$(sed -n '/insmod failed/,/^\[/p' "$data")"
		return 0
	fi
	count_tap "$mode" "$data"
	# KUnit runs in the check job: in the workload guests only where a
	# second kernel (kexec, kdump) ran it.
	if [ "$job" = check ] || grep -qx '\[ktap\]' "$data"; then
		count_ktap "$ps" "$mode" "$data"
	fi
	check_churn "$mode" "$data"
}

# The BBML2_NOABORT allowlist, which no emulated CPU matches: the test-only
# patch checks it at boot against revisions on both sides of each range.
check_allowlist() {
	local name="$1: the BBML2_NOABORT allowlist classifies each MIDR right" line
	line=$(grep -o 'bbml2_test: allowlist: [0-9]* of [0-9]* MIDRs classified right' "$2" | head -1)
	if [ -n "$line" ] && [ "$(cut -d' ' -f3 <<<"$line")" = "$(cut -d' ' -f5 <<<"$line")" ]; then
		ok "$name (${line#bbml2_test: allowlist: })"
	else
		bad "$name" "$(grep 'bbml2_test: ' "$2" | grep -v 'claimed by' || echo "no allowlist line in $2")"
	fi
}

# The SMMUv3 probe (arm-smmu-v3.c prints its feature word): SVA must be
# refused, saying why, where the CPUs claim BBML2_NOABORT and the SMMU has
# no BBM level 2, and allowed otherwise.
check_smmu() {
	local name="$1-$2: SVA follows the SMMU's BBM level and the CPUs' BBML2"
	local log=$CHECK/$1-$2.log data=$CHECK/$1-$2.data feat cpu sva smmu_bbml2 refused bit
	local hdr=$SRC/drivers/iommu/arm/arm-smmu-v3/arm-smmu-v3.h
	feat=$(sed -n 's/.*arm-smmu-v3.*(features \(0x[0-9a-f]*\)).*/\1/p' "$log" | head -1)
	cpu=$(linmap_data get "$data" state bbml2 || true)
	# The feature bit as the series defines it, not a copy of it here.
	bit=$(sed -n 's/^#define ARM_SMMU_FEAT_BBML2[[:space:]]*\(BIT(\|(1 << \)\([0-9]*\)).*/\2/p' "$hdr")
	if [ -z "$feat" ] || [ -z "$cpu" ] || [ -z "$bit" ]; then
		bad "$name" "no SMMUv3 probe line or no module state in $log, or no ARM_SMMU_FEAT_BBML2 in $hdr"
		return
	fi
	sva=$(( (feat >> 17) & 1 ))
	smmu_bbml2=$(( (feat >> bit) & 1 ))
	refused=$(grep -c 'SVA disabled: no BBM level 2' "$log" || true)
	if [ "$cpu" = 1 ] && [ $smmu_bbml2 = 0 ]; then
		[ $sva = 0 ] && [ "$refused" -ge 1 ] &&
			ok "$name (CPUs BBML2_NOABORT, SMMU BBM level < 2: SVA refused, features $feat)" ||
			bad "$name" "features $feat: SVA=$sva, refusal lines: $refused"
	else
		[ $sva = 1 ] && [ "$refused" = 0 ] &&
			ok "$name (CPUs bbml2=$cpu, SMMU BBML2=$smmu_bbml2: SVA allowed, features $feat)" ||
			bad "$name" "features $feat: SVA=$sva, refusal lines: $refused"
	fi
}

# The kernel's own BBML2_NOABORT decision, no bbml2_test=: BBM level 3 in
# ID_AA64MMFR2_EL1, or a MIDR the allowlist names (QEMU's implementer 0
# never is).
check_own_bbm() {
	local name="$1-$2: BBML2_NOABORT decided from the CPU's BBM level" data=$CHECK/$1-$2.data
	local level midr cpu want forced
	level=$(linmap_data get "$data" state bbm_level || true)
	midr=$(linmap_data get "$data" state midr || true)
	cpu=$(linmap_data get "$data" state bbml2 || true)
	if [ -z "$level" ] || [ -z "$cpu" ]; then
		bad "$name" "no bbm_level or bbml2 in the state of $data"
		return
	fi
	# The test-only bbml2_test_bbm= makes every CPU read another level.
	forced=$(sed -n 's/.*bbml2_test_bbm: CPUs [0-9,-]* read BBM level \([0-9]*\),.*/\1/p' \
		"$CHECK/$1-$2.log" | head -1)
	[ -z "$forced" ] || level=$forced
	want=0
	[ "$level" -ge 3 ] && want=1
	midr=$(printf '%#x' "$midr" 2>/dev/null || echo "$midr")
	[ "$cpu" = "$want" ] &&
		ok "$name (BBM level $level, MIDR $midr: BBML2_NOABORT=$cpu)" ||
		bad "$name" "BBM level $level, MIDR $midr, yet bbml2=$cpu"
}

# A split tried from a secondary CPU during SMP bring-up (test-only patch),
# before the capabilities are final: it must not be made.
check_bringup_split() {
	local name="$1: no split during SMP bring-up, before capabilities are final" line
	line=$(grep -o 'bbml2_test: split on CPU.*' "$2" | head -1)
	case "$line" in
	*"capabilities not final: not made"*) ok "$name" ;;
	*"nothing to split"*) skip "$name" "no block around the page the test allocated" ;;
	*) bad "$name" "${line:-no bring-up split line in $2}" ;;
	esac
}

# The churn phase, if the guest ran one: the shadow-model stress while a
# module was loaded and unloaded and CPUs went offline and online.
check_churn() {
	local mode=$1 data=$2 k bad_keys=
	linmap_data has "$data" churn || return 0
	kv() { linmap_data get "$data" "$1" "$2" || true; }
	for k in mismatches call_errors audit.violations; do
		[ "$(kv cpa "$k")" = 0 ] || bad_keys+=" $k=$(kv cpa "$k")"
	done
	[ "$(kv churn cpa_rc)" = 0 ] || bad_keys+=" cpa_rc=$(kv churn cpa_rc)"
	[ "$(kv cpa ops)" -gt 0 ] 2>/dev/null || bad_keys+=" ops=$(kv cpa ops)"
	if [ -z "$bad_keys" ]; then
		ok "$mode: churn: $(kv cpa ops) random changes (seed $(kv cpa seed)), $(kv cpa verified_pages) page checks, 0 mismatches"
	else
		bad "$mode: churn: shadow-model stress clean" "$bad_keys
$(linmap_data section "$data" cpa)"
	fi
	if [ "$(kv churn module_cycles)" -gt 0 ] 2>/dev/null &&
	   [ "$(kv churn module_failures)" = 0 ]; then
		ok "$mode: churn: module loaded and unloaded $(kv churn module_cycles) times"
	else
		bad "$mode: churn: module load/unload during the stress" "$(linmap_data section "$data" churn)"
	fi
	if [ "$(kv churn cpu_cycles)" -gt 0 ] 2>/dev/null &&
	   [ "$(kv churn cpu_failures)" = 0 ]; then
		ok "$mode: churn: CPUs went offline and online $(kv churn cpu_cycles) times"
	else
		bad "$mode: churn: CPU offline/online during the stress" "$(linmap_data section "$data" churn)"
	fi
}

# same_layout PAGE_SIZE MODE_A MODE_B: the kernel's ptdump of the linear map
# at boot must have the same leaves in both, outside the kernel image alias
# and the KFENCE pool.
same_layout() {
	local name="$1-$2: linear map at boot has the same leaves as $1-$3"
	local out
	if out=$(python3 "$TOP/scripts/ptdump.py" same "$CHECK/$1-$2.data" \
		"$CHECK/$1-$3.data" 2>&1); then
		ok "$name"
		printf '%s\n' "$out" | sed 's/^/    /'
	else
		bad "$name" "$out"
	fi
}

# The kexec and kdump guests: the first kernel loaded the second with
# kexec -s -l and rebooted into it, or loaded a crash kernel with kexec
# -s -p and panicked; the record is the second kernel's.
check_kexec() {	# GEOMETRY MODE kexec|kdump
	local log=$CHECK/$1-$2.log data=$CHECK/$1-$2.data boots what
	case $3 in
	kexec) what="kexec -s -l and -e booted the second kernel, which ran the tests" ;;
	kdump) what="kexec -s -p and a panic booted the crash kernel, which ran the tests" ;;
	esac
	boots=$(grep -c 'Booting Linux on physical CPU' "$log" 2>/dev/null || true)
	# The data file: written only by a kernel that finished its job.
	if [ "$boots" = 2 ] && [ -f "$data" ] &&
	   grep -q "Kernel command line:.*linmap\.$3=1" "$log"; then
		ok "$1-$2: $what"
	else
		bad "$1-$2: $what" \
			"$boots kernel boots in $log; $(grep -E '^(not ok|# kexec|# Cannot|# crash)' "$log" | head -8)"
	fi
}

# host_checks GEOMETRY MODE CHECKS: the modes.tsv checks after a guest.
host_checks() {
	local ps=$1 mode=$2 c
	for c in ${3//,/ }; do
		case "$c" in
		-) ;;
		allowlist) check_allowlist "$ps" "$CHECK/$ps-$mode.log" ;;
		bringup-split) check_bringup_split "$ps" "$CHECK/$ps-$mode.log" ;;
		smmu) check_smmu "$ps" "$mode" ;;
		own-bbm) check_own_bbm "$ps" "$mode" ;;
		kexec|kdump) check_kexec "$ps" "$mode" "$c" ;;
		same-layout=*)
			if [ -n "${CHECK_MODES:-}" ] && [[ " $CHECK_MODES " != *" ${c#*=} "* ]]; then
				skip "$ps-${c#*=}: linear map at boot has the same leaves as $ps-$mode" \
					"CHECK_MODES leaves out ${c#*=}"
			else
				same_layout "$ps" "${c#*=}" "$mode"
			fi ;;
		*) bad "$ps-$mode: unknown check '$c' in scripts/modes.tsv" ;;
		esac
	done
}

# make soak: the long version of the churn; a guest may take twice as long.
[ "$CHECK_JOB" != soak ] || export QEMU_TIMEOUT=$((${SOAK_SECS:-600} * 2 + 900))
mapfile -t guests < <(python3 "$TOP/scripts/modes.py" list "$CHECK_JOB" "$TREE" "${built[@]}")
[ ${#guests[@]} -gt 0 ] || bad "guests: scripts/modes.tsv has none for job $CHECK_JOB, $TREE tree${CHECK_MODES:+, CHECK_MODES=$CHECK_MODES}"
for g in "${guests[@]}"; do
	IFS=$'\t' read -r ps mode cmd stress smp checks <<<"$g"
	[ "$cmd" != - ] || cmd=
	[ "$stress" != - ] || stress=
	[ "$smp" != - ] || smp=
	guest "$ps" "$mode" "$cmd" "$stress" "$smp"
	host_checks "$ps" "$mode" "$checks"
done
[ "$CHECK_JOB" = check ] && [ "$CHECK_PART" = all ] || finish

# ---- 3a. the core series alone, and the unpatched base ---------------------
# A distribution may take the core series without the healing one: its
# kernel, with the core's test-only patches (CHECK_CORE_PAGE_SIZES, 4K by
# default), boots in the core tree's modes of scripts/modes.tsv; the tests
# that need the healing series skip there and say so. Then the unpatched
# 6.12 (4K) runs the real workloads, the yardstick for the series' own
# workload guests (CHECK_BASE_MODES, by default its workload-* modes).
# Results are prefixed "core: " and "base: ", logs in out/check/core/ and
# out/check/base/.
nested_tree() {	# SERIES PREFIX PAGE_SIZES MODES
	local line tallied=
	msg "the $1 tree: ${4:-its modes}"
	# Its results are in RESULTS_LOG already; its tally adds them up here.
	while IFS= read -r line; do
		if [[ $line =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed,\ ([0-9]+)\ skipped$ ]]; then
			pass=$((pass + BASH_REMATCH[1]))
			failed=$((failed + BASH_REMATCH[2]))
			skipped=$((skipped + BASH_REMATCH[3]))
			tallied=1
			continue
		fi
		printf '%s\n' "$line"
	done < <(SERIES=$1 CHECK_PART=trees CHECK_DIR="$CHECK/$2" RESULT_PREFIX="$2: " \
		CHECK_PAGE_SIZES="$3" CHECK_MODES="$4" "$TOP/scripts/check.sh" 2>&1)
	# A run that died (an error before its tally) must not pass unseen.
	[ -n "$tallied" ] || bad "$2: the $1 tree's run ended without its tally" \
		"see the lines above and $CHECK/$2"
}
if [ "$TREE" = series ] && [ -n "$(patches_in "$PATCHDIR"/heal/*.patch)" ]; then
	nested_tree core core "${CHECK_CORE_PAGE_SIZES:-4K}" "${CHECK_MODES:-}"
fi
base_modes() {
	local m out=
	[ -z "${CHECK_BASE_MODES:-}" ] || { echo "$CHECK_BASE_MODES"; return; }
	for m in $(python3 "$TOP/scripts/modes.py" names check base workload-); do
		[ -z "${CHECK_MODES:-}" ] || [[ " $CHECK_MODES " == *" $m "* ]] || continue
		out+="${out:+ }$m"
	done
	echo "$out"
}
if [ "$TREE" = series ]; then
	bm=$(base_modes)
	if [ -n "$bm" ]; then
		nested_tree off base 4K "$bm"
	else
		skip "base: the unpatched tree's workload guests" "CHECK_MODES leaves them out"
	fi
fi

# ---- 3b. as on a board ----------------------------------------------------
# The 'make install-tests' tarball for the first kernel built, unpacked in
# a guest and run as a user would on a board: ./run_kselftest.sh with no
# kit settings, the module found next to the binary. bbml2_test=all stands
# in for a CPU that the BBML2_NOABORT allowlist names.
board_guest() {
	local ps=$1 mode=$1-board kdir tar initrd data top nested fails status name reason f missing= progs
	read -r _ _ _ kdir _ < <(geometry "$ps")
	if ! tar=$(env -u LINMAP_KO INSTALL_OUT="$CHECK/install-tests" KDIR="$kdir" \
		"$TOP/scripts/install-tests.sh" 2>"$CHECK/install-tests.log"); then
		bad "install-tests: tarball for the $ps kernel" "$(tail -20 "$CHECK/install-tests.log")"
		return 0
	fi
	progs=$(linmap_progs "$SRC/tools/testing/selftests")
	for f in run_kselftest.sh kselftest-list.txt kselftest/runner.sh kselftest/prefix.pl \
		 kselftest/module.sh kselftest/ktap_helpers.sh $(printf 'linmap/%s ' $progs) \
		 linmap/settings linmap/linmap_test.ko linmap/linmap_churn.ko; do
		tar tzf "$tar" "./$f" >/dev/null 2>&1 || missing+=" $f"
	done
	if [ -z "$missing" ] &&
	   [ "$(tar xzOf "$tar" ./kselftest-list.txt)" = "$(printf 'linmap:%s\n' $progs)" ]; then
		ok "install-tests: kselftest install layout (${tar#"$OUT"/})"
	else
		bad "install-tests: kselftest install layout" "missing:$missing; list: $(tar xzOf "$tar" ./kselftest-list.txt 2>&1)"
	fi
	initrd=$CHECK/board-initramfs.cpio.gz
	if ! KSELFTEST_TAR=$tar INITRD=$initrd geo "$ps" "$TOP/scripts/initramfs.sh" \
		>"$CHECK/board-initramfs.log" 2>&1; then
		bad "$mode: initramfs with the tarball" "$(tail -10 "$CHECK/board-initramfs.log")"
		return 0
	fi
	data=$CHECK/$mode.data
	msg "guest $mode: tar x && ./run_kselftest.sh"
	boot_guest "$ps" "$mode" JOB=kselftest-install INITRD="$initrd" \
		CMDLINE="$(has_bbml2_test && echo bbml2_test=all) ${CMDLINE:-}"
	[ -f "$data" ] || return 0
	if [ "$(linmap_data module "$data")" = loaded ]; then
		ok "$mode: the suite loaded linmap_test.ko from the tarball"
	else
		bad "$mode: the suite loaded linmap_test.ko from the tarball" "$(linmap_data section "$data" tap)"
	fi
	# The runner's one result, and its test's own results one level down.
	top=$(linmap_data tap "$data")
	nested=$(linmap_data tap "$data" --nested)
	fails=$(printf '%s\n%s\n' "$top" "$nested" | awk -F'\t' '$1 == "fail" { print "not ok " $2 }')
	if [ -n "$fails" ]; then
		bad "$mode: ./run_kselftest.sh prints no 'not ok'" "$fails"
	elif [ "$top" = "$(n=0; for p in $progs; do n=$((n + 1))
			printf 'ok\t%s selftests: linmap: %s\t\n' $n "$p"; done)" ] &&
	     grep -q '^ok	[0-9]* linmap\.' <<<"$nested"; then
		ok "$mode: ./run_kselftest.sh prints TAP with no 'not ok' ($(grep -c '^[a-z]*	[0-9]* linmap\.' <<<"$nested") results, skips below)"
	else
		bad "$mode: ./run_kselftest.sh prints TAP with no 'not ok'" "$(linmap_data section "$data" tap)"
	fi
	# What a board without the kit's settings skips, and why.
	while IFS=$'\t' read -r status name reason; do
		[ "$status" != skip ] || skip "$mode: $name" "$reason"
	done <<<"$nested"
}
board_guest "${built[0]}"

# ---- 4. failure drills ----------------------------------------------------
msg "failure drills"
expect_fail "drill: a hung guest times out and its log path is printed" \
	'timed out after 20s.*|console log: .*hang\.log' \
	env JOB=hang NAME=drill-hang LOGDIR="$CHECK" QEMU_TIMEOUT=20 PAGE_SIZE="${built[0]}" \
	"$TOP/scripts/boot.sh"
expect_fail "drill: a guest whose init dies (panic) fails the run" \
	'did not finish' \
	env JOB=panic NAME=drill-panic LOGDIR="$CHECK" PAGE_SIZE="${built[0]}" "$TOP/scripts/boot.sh"
JOB=check NAME=drill-nomod LOGDIR=$CHECK PAGE_SIZE="${built[0]}" CMDLINE="module_blacklist=linmap_test" \
	"$TOP/scripts/boot.sh" >/dev/null 2>&1 || true
if grep -qx 'module=failed' "$CHECK/drill-nomod.data" 2>/dev/null &&
   grep -q 'blacklisted' "$CHECK/drill-nomod.data"; then
	ok "drill: a module that fails to load is reported with its dmesg lines"
else
	bad "drill: a module that fails to load is reported with its dmesg lines" \
		"see $CHECK/drill-nomod.log"
fi

JOB=workload NAME=drill-nodisk LOGDIR=$CHECK PAGE_SIZE="${built[0]}" \
	CMDLINE="linmap.workloads=memcached" "$TOP/scripts/boot.sh" >/dev/null 2>&1 || true
if [ -f "$CHECK/drill-nodisk.data" ] &&
   linmap_data tap "$CHECK/drill-nodisk.data" | grep -q '^fail	[0-9]* workload\.setup'; then
	ok "drill: a workload guest without its Debian disk fails, it is not skipped"
else
	bad "drill: a workload guest without its Debian disk fails, it is not skipped" \
		"see $CHECK/drill-nodisk.log"
fi

# ---- 5. the main job ------------------------------------------------------
# A run killed (SIGKILL to its process group: a closed terminal, a CI job
# stopped) in each long step, tree, apply, config, build and boot, one after
# the other in a fresh OUT; each later run must get past where the one
# before died, none may leave a process behind, and the last must pass.
interrupt_check() {
	local o=$CHECK/interrupt step n=0 pid t src b gitdir
	src=$o/trees/$TREE/src b=$o/trees/$TREE/build-$(variant_of "${built[0]}" \
		"$(default_va_bits "${built[0]}")")
	rm -rf "$o"
	mkdir -p "$o"
	for step in tree apply config build boot; do
		n=$((n + 1))
		msg "interrupt: make run killed in its $step step"
		env -u KIT_STEP setsid make -s -C "$TOP" run OUT="$o" KSRC="$KSRC" \
			PAGE_SIZE="${built[0]}" MEM=1G SMP=2 STRESS=pages=4096 \
			>"$o/run-$n.log" 2>&1 </dev/null &
		pid=$!
		for ((t = 0; t < 6000; t++)); do
			kill -0 "$pid" 2>/dev/null || break
			gitdir=$(sed -n 's/^gitdir: //p' "$src/.git" 2>/dev/null) || true
			case $step in
			tree) [ -d "$src" ] && [ ! -e "$o/trees/$TREE/base" ] && break ;;
			apply) [ -n "$gitdir" ] && [ "$(cat "$gitdir/rebase-apply/next" 2>/dev/null)" \
				-ge 3 ] 2>/dev/null && break ;;
			config) [ -f "$b/.config" ] && [ ! -f "$b/.kit-config" ] && break ;;
			build) [ "$(grep -c '^  CC ' "$b/build.log" 2>/dev/null)" -ge 200 ] 2>/dev/null &&
				break ;;
			boot) grep -qs 'Booting Linux' "$o"/run/*.log && break ;;
			esac
			sleep 0.1
		done
		if ! kill -0 "$pid" 2>/dev/null; then
			bad "interrupt: make run killed in its $step step" \
				"the run ended first; see $o/run-$n.log: $(tail -5 "$o/run-$n.log")"
			return 0
		fi
		kill -KILL -- "-$pid"
		wait "$pid" 2>/dev/null || true
		sleep 2
		if pgrep -f -- "$o/" >/dev/null; then
			bad "interrupt: nothing runs on after a kill in the $step step" \
				"$(pgrep -af -- "$o/")"
			pkill -KILL -f -- "$o/" || true
		else
			ok "interrupt: make run killed in its $step step, nothing left running"
		fi
	done
	if env -u KIT_STEP make -s -C "$TOP" run OUT="$o" KSRC="$KSRC" PAGE_SIZE="${built[0]}" \
		MEM=1G SMP=2 STRESS=pages=4096 >"$o/run-final.log" 2>&1 </dev/null &&
	   python3 "$TOP/scripts/report.py" --check "$o/run/report.json" 1 >>"$o/run-final.log" 2>&1; then
		ok "interrupt: make run after the five kills passes"
		# The runs' logs stay; the trees and builds go.
		git -C "$KSRC" worktree remove --force "$src" 2>/dev/null || true
		find "$o" -mindepth 1 -maxdepth 1 ! -name 'run-*.log' -exec rm -rf {} +
	else
		bad "interrupt: make run after the five kills passes" "$(tail -15 "$o/run-final.log")"
	fi
	git -C "$KSRC" worktree prune
}
[ "${CHECK_INTERRUPT:-1}" = 0 ] || [ "$TREE" != series ] || interrupt_check

# A CI system's cancel: SIGTERM to make alone (not its group), while the
# tree step checks the worktree out (git worktree add, behind a shell for
# its redirection). A second run meanwhile must be refused at once, naming
# the first's PID; within 10 s nothing of the first may run on; the next
# make apply in the same OUT must apply every patch.
cancel_alive() {	# OUT: is a process of a run in OUT alive?
	local pidf=$1/.kit-run.pid
	pgrep -f -- "$1/" >/dev/null ||
		{ [ -f "$pidf" ] && kill -0 "$(cat "$pidf")" 2>/dev/null; }
}
cancel_check() {
	local o=$CHECK/cancel src pid t name
	src=$o/trees/$TREE/src
	rm -rf "$o"
	mkdir -p "$o"
	env -u KIT_STEP setsid make -s -C "$TOP" apply OUT="$o" KSRC="$KSRC" \
		>"$o/apply-1.log" 2>&1 </dev/null &
	pid=$!
	for ((t = 0; t < 6000; t++)); do
		kill -0 "$pid" 2>/dev/null || break
		[ -d "$src" ] && [ ! -e "$o/trees/$TREE/base" ] && break
		sleep 0.1
	done
	if ! kill -0 "$pid" 2>/dev/null; then
		bad "cancel: make apply sent SIGTERM while the tree is checked out" \
			"the run ended first; see $o/apply-1.log: $(tail -5 "$o/apply-1.log")"
		return 0
	fi
	name="cancel: a second run in the same OUT is refused at once, naming the first's PID"
	if env -u KIT_STEP timeout 60 make -s -C "$TOP" apply OUT="$o" KSRC="$KSRC" \
		>"$o/apply-2.log" 2>&1 </dev/null; then
		bad "$name" "it ran to the end: $(tail -3 "$o/apply-2.log")"
	elif grep -q 'another kit run is using .*: PID [0-9]' "$o/apply-2.log"; then
		ok "$name"
	else
		bad "$name" "$(tail -3 "$o/apply-2.log")"
	fi
	kill -TERM "$pid" 2>/dev/null || true
	for ((t = 0; t < 100; t++)); do
		cancel_alive "$o" || break
		sleep 0.1
	done
	name="cancel: SIGTERM to make alone stops all the run started within 10 s"
	if cancel_alive "$o"; then
		bad "$name" "$(pgrep -af -- "$o/"; cat "$o/.kit-run.pid" 2>/dev/null)"
		pkill -KILL -f -- "$o/" || true
	else
		ok "$name"
	fi
	wait "$pid" 2>/dev/null || true
	name="cancel: the next make apply in that OUT applies every patch"
	if env -u KIT_STEP make -s -C "$TOP" apply OUT="$o" KSRC="$KSRC" \
		>"$o/apply-3.log" 2>&1 </dev/null &&
	   [ "$(git -C "$src" rev-list --count "$(cat "$o/trees/$TREE/base")"..HEAD)" = \
	     "$(series_patches | wc -l)" ]; then
		ok "$name"
	else
		bad "$name" "$(tail -5 "$o/apply-3.log")"
	fi
	git -C "$KSRC" worktree remove --force "$src" 2>/dev/null || true
	rm -rf "$o/trees"
	git -C "$KSRC" worktree prune
}
[ "${CHECK_INTERRUPT:-1}" = 0 ] || [ "$TREE" != series ] || cancel_check

msg "main job smoke test"
if PAGE_SIZE="${built[0]}" STRESS="pages=4096 rounds=2" "$TOP/scripts/run.sh" >"$CHECK/run.txt" 2>&1 &&
   python3 "$TOP/scripts/report.py" --check "$OUT/run/report.json" 2 >>"$CHECK/run.txt"; then
	ok "run: main job report and JSON are complete and sane"
else
	bad "run: main job report and JSON are complete and sane" "$(tail -20 "$CHECK/run.txt")"
fi

# ---- 6. the benchmark, as a smoke test ------------------------------------
# bench-quick builds the unpatched kernel too and checks only that the
# figures exist and agree with the leaf counts they came with.
if [ "${CHECK_BENCH:-1}" = 1 ] && [ "$TREE" = series ]; then
	msg "bench-quick smoke test"
	if BENCH_QUICK=1 "$TOP/scripts/bench.sh" >"$CHECK/bench.txt" 2>&1; then
		ok "bench: quick benchmark produced sane figures ($OUT/bench/report.md)"
		sed -n '/^## Targets/,/^## Frag/p' "$OUT/bench/report.md" | grep '^- ' | sed 's/^/    /'
	else
		bad "bench: quick benchmark produced sane figures" "$(tail -25 "$CHECK/bench.txt")"
	fi
fi

# ---- 7. the TLB model and its plugin (make bench-tlb) ----------------------
# The model's self-test (synthetic streams whose misses are counted by
# hand, and the exactness of the plugin's filter), and the plugin loaded
# into this QEMU, sent the guest's page tables, modelling one window.
tlb_check() {
	local d=$CHECK/tlb line name sum
	rm -rf "$d"
	mkdir -p "$d"
	if ! tlb_tools "$d" >"$d/build.log" 2>&1; then
		bad "tlb: the plugin and the model build" "$(tail -10 "$d/build.log")"
		return 0
	fi
	ok "tlb: the plugin and the model build"
	"$d/tlbsim" --selftest >"$d/selftest.tap" 2>&1
	grep -q '^1\.\.' "$d/selftest.tap" || bad "tlb: model self-test ran to its end" "$(tail -5 "$d/selftest.tap")"
	while read -r line; do
		name=$(echo "$line" | sed 's/^\(not \)*ok [0-9]* \([^#]*\).*/\2/; s/ *$//')
		case $line in
		"not ok "*) bad "tlb: model: $name" "${line#*# }" ;;
		"ok "*) ok "tlb: model: $name" ;;
		esac
	done < <(grep '^ok \|^not ok ' "$d/selftest.tap")
	if timeout 30 qemu-system-aarch64 -M virt -display none -nodefaults -S \
		-plugin "$d/tlbtrace.so,bogus=1" >"$d/refuse.log" 2>&1 </dev/null; then
		bad "tlb: QEMU refuses the plugin given an unknown argument" "QEMU ran"
	elif grep -q "unknown argument 'bogus=1'" "$d/refuse.log"; then
		ok "tlb: QEMU refuses the plugin given an unknown argument"
	else
		bad "tlb: QEMU refuses the plugin given an unknown argument" "$(tail -3 "$d/refuse.log")"
	fi
	if ! PAGE_SIZE=4K JOB=tlb NAME=tlb LOGDIR=$d SMP=2 BBML2=all CMDLINE=nokaslr \
		QEMU_PLUGIN="$d/tlbtrace.so,out=$d/sim.json,params=$TOP/scripts/tlb/neoverse-n1.tsv" \
		"$TOP/scripts/boot.sh" >"$d/boot.txt" 2>&1 ||
	   ! grep -q '^ok 1 tlb.marked_window' "$d/tlb.data"; then
		bad "tlb: the plugin loads in QEMU and models a marked window" "$(tail -8 "$d/boot.txt")"
		return 0
	fi
	sum=$(python3 - "$d/sim.json" <<'PY' 2>&1
import json, sys
r = json.load(open(sys.argv[1]))
assert r["layouts_received"] == 1 and not r["layouts_damaged"], "layouts: %s" % r
w = r["windows"]
assert len(w) == 1, "%d windows, want 1" % len(w)
w = w[0]
L = w["layouts"]
lin = {n: L[n]["l2"][1]["stats"]["kernel_linear"] for n in L}
assert w["insns_kernel"] > 0 and w["insns_user"] > 0, "no instructions counted"
assert lin["full"]["access"] > 0, "no linear-map accesses"
print("%d kernel + %d user instructions, %d linear-map accesses; walks %d with all PTEs, %d with the boot's blocks"
      % (w["insns_kernel"], w["insns_user"], lin["full"]["access"], lin["full"]["walk"], lin["series"]["walk"]))
assert lin["series"]["walk"] < lin["full"]["walk"], "blocks take no fewer walks"
PY
)
	if [ $? = 0 ]; then
		ok "tlb: the plugin models a marked window in QEMU $(qemu-system-aarch64 --version | sed -n 's/.*version \([0-9.]*\).*/\1/p'): $sum"
	else
		bad "tlb: the plugin models a marked window" "$sum"
	fi
}
if [ "$TREE" = series ] && [[ " ${built[*]} " == *" 4K "* ]]; then
	msg "TLB model and plugin"
	tlb_check
else
	skip "tlb: the plugin and the model" "make check builds no 4K series kernel here"
fi

finish
