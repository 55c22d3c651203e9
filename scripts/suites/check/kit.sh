# SPDX-License-Identifier: GPL-2.0
# make check, group 1. the kit's own checks on the host: bad input is
# refused clearly.
# Sourced by scripts/suites/check.sh, not run alone.
# Longer than 400 lines: one check after another, each a few lines, of
# the kit's refusals and stand-ins; hw-bench.sh's are in hwbench.sh.

# ---- 1. host-side checks of the kit --------------------------------------
msg "kit checks"
T=$CHECK/kit
fake_tree "$T/v611" 6 11
expect_fail "kit: KSRC that is not 6.12 is refused" '6\.12\.y only' \
	env KSRC="$T/v611" OUT="$T/out1" "$TOP/scripts/job/tree.sh"
fake_tree "$T/dirty" 6 12
echo change >>"$T/dirty/file.txt"
expect_fail "kit: KSRC with uncommitted changes is refused" 'uncommitted changes' \
	env KSRC="$T/dirty" OUT="$T/out2" "$TOP/scripts/job/tree.sh"
mkdir -p "$T/nogit" && cp "$T/v611/Makefile" "$T/nogit/" &&
	sed -i 's/= 11/= 12/' "$T/nogit/Makefile"
expect_fail "kit: KSRC that is not a git tree is refused" 'not a git repository' \
	env KSRC="$T/nogit" OUT="$T/out3" "$TOP/scripts/job/tree.sh"
# The unpacked tarball is committed without git's automatic gc, which
# would repack it in the background during the first build: 7000 files,
# past gc.auto's default of 6700 loose objects.
t=$T/tarball
rm -rf "$t" "$T/out7" && mkdir -p "$t/linux-source-6.12/d"
printf 'VERSION = 6\nPATCHLEVEL = 12\nSUBLEVEL = 0\n' >"$t/linux-source-6.12/Makefile"
(cd "$t/linux-source-6.12/d" && seq 1 7000 | xargs -n 500 sh -c 'for i; do echo "$i" >"f$i"; done' sh)
tar -C "$t" -cJf "$t/linux-source-6.12.tar.xz" linux-source-6.12
if env KIT_TARBALL="$t/linux-source-6.12.tar.xz" OUT="$T/out7" KSRC="$T/out7/linux" \
	"$TOP/scripts/job/tree.sh" >"$t/log" 2>&1; then
	gc=$(git -C "$T/out7/linux" config --get gc.auto || echo unset)
	packs=$(find "$T/out7/linux/.git/objects/pack" -name '*.pack' | wc -l)
	if [ "$gc" = 0 ] && [ "$packs" = 0 ]; then
		ok "kit: the unpacked tree is committed with no background gc"
	else
		bad "kit: the unpacked tree is committed with no background gc" \
			"gc.auto=$gc, $packs pack(s) in $T/out7/linux"
	fi
else
	bad "kit: the unpacked tree is committed with no background gc" "$(tail -5 "$t/log")"
fi
rm -rf "$t"
# The caches are keyed by content: the rootfs image (650 MB) built from
# one clone serves another clone of the same kit.
mkdir -p "$T/stamp-a" "$T/stamp-b"
printf 'fio\n' >"$T/stamp-a/rootfs.pkgs"
cp "$T/stamp-a/rootfs.pkgs" "$T/stamp-b/"
printf 'fio\nperf\n' >"$T/stamp-b/other.pkgs"
if [ "$(stamp_of "$T/stamp-a/rootfs.pkgs")" = "$(stamp_of "$T/stamp-b/rootfs.pkgs")" ] &&
   [ "$(stamp_of "$T/stamp-a/rootfs.pkgs")" != "$(stamp_of "$T/stamp-b/other.pkgs")" ]; then
	ok "kit: a stamp depends on the files' contents, not their paths"
else
	bad "kit: a stamp depends on the files' contents, not their paths" \
		"$(stamp_of "$T/stamp-a/rootfs.pkgs") and $(stamp_of "$T/stamp-b/rootfs.pkgs")"
fi
# A step that meets a full disk (here /dev/full) fails saying so, with the
# room left and what make check needs, above the tool's own words.
full=$(cp "$TOP/README.md" /dev/full 2>&1 || true)
full=$( (RESULTS_LOG=; bad "a step" "$full") )
if [[ $full == *"a write found the disk full (now "*" MiB free under $OUT; make check needs about "* ]] &&
   [[ $full == *"No space left on device"* ]]; then
	ok "kit: a FAIL from a full disk says so, and how much make check needs"
else
	bad "kit: a FAIL from a full disk says so, and how much make check needs" "$full"
fi
# After the kill in the build step, the interrupt check cuts the newest
# .cmd file of a kernel object: not a host program's written after it
# (scripts/dtc, scripts/mod), which has no $(wildcard ...) to cut in.
mkdir -p "$T/cmdcut/kernel" "$T/cmdcut/scripts/dtc"
printf 'deps_kernel/fork.o := \\\n  $(wildcard include/config/SMP) \\\n  include/linux/kconfig.h\n' \
	>"$T/cmdcut/kernel/.fork.o.cmd"
printf 'deps_scripts/dtc/dtc.o := \\\n  scripts/dtc/dtc.h\n' >"$T/cmdcut/scripts/dtc/.dtc.o.cmd"
touch -d '2026-01-01 00:00:00' "$T/cmdcut/.config"
touch -d '2026-01-01 00:00:01' "$T/cmdcut/kernel/.fork.o.cmd"
touch -d '2026-01-01 00:00:02' "$T/cmdcut/scripts/dtc/.dtc.o.cmd"
cut_out=$( (RESULTS_LOG=; truncate_cmd "$T/cmdcut") 2>&1)
if [ "$(cat "$T/cmdcut/kernel/.fork.o.cmd")" = 'deps_kernel/fork.o := \
  $(wildcard inc' ] && [ "$(wc -l <"$T/cmdcut/scripts/dtc/.dtc.o.cmd")" = 2 ] &&
   [[ $cut_out != *FAIL* ]]; then
	ok "kit: the interrupt check cuts a kernel object's .cmd, not a newer host program's"
else
	bad "kit: the interrupt check cuts a kernel object's .cmd, not a newer host program's" \
		"$cut_out; kernel/.fork.o.cmd: $(cat "$T/cmdcut/kernel/.fork.o.cmd")"
fi
# Bad values are refused by 'make run' before any work: nothing under
# its OUT, and the error names the values allowed.
refused() {	# VAR=VALUE PATTERN
	local o=$T/out-var
	rm -rf "$o"
	expect_fail "kit: make run $1 is refused up front" "${1%%=*} must be $2" \
		make -s -C "$TOP" run "$1" OUT="$o"
	[ ! -e "$o" ] || bad "kit: make run $1 did no work" "$(ls -A "$o")"
}
# KASAN=hw under a QEMU whose MTE tags are per page: with no fetch allowed
# and none fetched before (an empty cache), refused before any build,
# naming the QEMU issue; QEMU_MTE_OK=1 lets it through.
mkdir -p "$T/oldqemu"
printf '#!/bin/sh\necho "QEMU emulator version 7.2.19 (Debian 1:7.2+dfsg-7+deb12u18)"\n' \
	>"$T/oldqemu/qemu-system-aarch64"
chmod +x "$T/oldqemu/qemu-system-aarch64"
# mte_refused WHAT PATTERN VAR=VALUE...: make run KASAN=hw in that
# environment fails before any build, with PATTERN.
mte_refused() {
	local what=$1 pat=$2
	shift 2
	rm -rf "$T/out-mte"
	expect_fail "kit: make run KASAN=hw $what: refused up front" "$pat" \
		env "$@" make -s -C "$TOP" run KASAN=hw OUT="$T/out-mte"
	[ ! -e "$T/out-mte/trees" ] || bad "kit: make run KASAN=hw $what: built nothing" \
		"$(ls -A "$T/out-mte")"
}
mte_refused "under QEMU 7.2" 'QEMU 7.2 keeps one MTE tag per page.*issue 1416.*QEMU_MTE_FETCH' \
	PATH="$T/oldqemu:$PATH" QEMU_MTE_FETCH=0 XDG_CACHE_HOME="$T/xdg-none"
# The fetch from bookworm-backports, through a stand-in apt-get (the
# system's for every other call): one that fails is reported with apt's
# error, before any build; one that hands out a package of QEMU 10 gives
# the guest that QEMU, kept in the kit's cache and not fetched again;
# QEMU_MTE names a binary that must run.
mkdir -p "$T/aptstub/bin" "$T/qemu10/DEBIAN" "$T/qemu10/usr/bin"
printf 'Package: qemu-system-arm\nVersion: 1:10.0.2\nArchitecture: all\nMaintainer: kit <kit@invalid>\nDescription: stand-in\n' \
	>"$T/qemu10/DEBIAN/control"
printf '#!/bin/sh\necho "QEMU emulator version 10.0.2 (stand-in)"\n' \
	>"$T/qemu10/usr/bin/qemu-system-aarch64"
chmod +x "$T/qemu10/usr/bin/qemu-system-aarch64"
dpkg-deb -b -Zgzip "$T/qemu10" "$T/qemu-system-arm_10.0.2_all.deb" >/dev/null
# A stand-in upstream kernel package, as Debian lays it out.
mkdir -p "$T/upk/DEBIAN" "$T/upk/usr/lib/modules/9.9.9+kit-cloud-arm64"
printf 'Package: linux-binary-unsigned-9.9.9+kit-cloud-arm64\nVersion: 9.9.9-1\nArchitecture: arm64\nMaintainer: kit <kit@invalid>\nDescription: stand-in\n' \
	>"$T/upk/DEBIAN/control"
echo "stand-in Image" >"$T/upk/usr/lib/modules/9.9.9+kit-cloud-arm64/vmlinuz.unsigned"
dpkg-deb -b -Zgzip "$T/upk" "$T/linux-binary-unsigned-9.9.9+kit-cloud-arm64_9.9.9-1_arm64.deb" >/dev/null
{
	echo '#!/bin/sh'
	echo "echo \"\$*\" >>'$T/aptstub/calls'"
	echo 'case " $* " in *Dir::Etc::SourceParts=*) ;; *) exec /usr/bin/apt-get "$@" ;; esac'
	echo '[ -z "${APT_STUB_FAIL:-}" ] || { echo "E: Failed to fetch bookworm-backports InRelease"; exit 100; }'
	echo "case \" \$* \" in *' download linux-binary'*) cp '$T/linux-binary-unsigned-9.9.9+kit-cloud-arm64_9.9.9-1_arm64.deb' . ;;"
	echo "*' download '*) cp '$T/qemu-system-arm_10.0.2_all.deb' . ;; esac"
} >"$T/aptstub/bin/apt-get"
chmod +x "$T/aptstub/bin/apt-get"
stub_path=$T/aptstub/bin:$T/oldqemu:$PATH
rm -rf "$T/xdg"
mte_refused "with no QEMU to fetch (apt's error)" \
	'issue 1416.*could not be fetched from bookworm-backports: E: Failed to fetch' \
	PATH="$stub_path" APT_STUB_FAIL=1 XDG_CACHE_HOME="$T/xdg"
name="kit: KASAN=hw under QEMU 7.2 boots with QEMU 10 from bookworm-backports, fetched once"
: >"$T/aptstub/calls"
want=$T/xdg/linmap-kit/qemu-mte/root/usr/bin/qemu-system-aarch64
got1=$(env PATH="$stub_path" XDG_CACHE_HOME="$T/xdg" "$TOP/scripts/job/qemu-mte.sh" 2>/dev/null) || true
got2=$(env PATH="$stub_path" XDG_CACHE_HOME="$T/xdg" "$TOP/scripts/job/qemu-mte.sh" 2>/dev/null) || true
if [ "$got1" = "$want" ] && [ "$got2" = "$want" ] &&
   [ "$(grep -c ' download qemu-system-arm' "$T/aptstub/calls")" = 1 ] &&
   grep -q 'Dir::Etc::SourceList=/dev/null' "$T/aptstub/calls" &&
   env PATH="$stub_path" XDG_CACHE_HOME="$T/xdg" KASAN=hw OUT="$T/out-mte" \
	"$TOP/scripts/job/boot.sh" --can-boot >"$T/out-mte.log" 2>&1; then
	ok "$name"
else
	bad "$name" "got '$got1', then '$got2' (want $want); apt-get calls: $(cat "$T/aptstub/calls"); $(tail -3 "$T/out-mte.log" 2>/dev/null)"
fi
# The upstream kernel, fetched through the same stand-in apt-get: refused
# with apt's error, refused without a fetch and an empty cache, and found
# in the cache after one fetch.
expect_fail "kit: an upstream kernel that cannot be fetched is refused with apt's error" \
	'upstream Linux 9.9.9\+kit could not be fetched.*E: Failed to fetch' \
	env PATH="$stub_path" APT_STUB_FAIL=1 XDG_CACHE_HOME="$T/xdg-up" UPSTREAM_VERSION=9.9.9+kit \
	OUT="$T/out-up" "$TOP/scripts/job/upstream.sh"
expect_fail "kit: UPSTREAM_FETCH=0 with nothing in the cache is refused" \
	'no upstream kernel 9.9.9\+kit-cloud-arm64 .*UPSTREAM_FETCH=0' \
	env XDG_CACHE_HOME="$T/xdg-up" UPSTREAM_VERSION=9.9.9+kit UPSTREAM_FETCH=0 \
	OUT="$T/out-up" "$TOP/scripts/job/upstream.sh"
name="kit: the upstream kernel is fetched once into the kit's cache"
: >"$T/aptstub/calls"
want=$T/xdg-up/linmap-kit/upstream/9.9.9+kit-cloud-arm64/usr/lib/modules/9.9.9+kit-cloud-arm64/vmlinuz.unsigned
got1=$(env PATH="$stub_path" XDG_CACHE_HOME="$T/xdg-up" UPSTREAM_VERSION=9.9.9+kit OUT="$T/out-up" \
	"$TOP/scripts/job/upstream.sh" 2>/dev/null) || true
got2=$(env PATH="$stub_path" XDG_CACHE_HOME="$T/xdg-up" UPSTREAM_VERSION=9.9.9+kit OUT="$T/out-up" \
	"$TOP/scripts/job/upstream.sh" 2>/dev/null) || true
if [ "$got1" = "$want" ] && [ "$got2" = "$want" ] &&
   [ "$(grep -c ' download linux-binary-unsigned-9.9.9+kit-cloud-arm64:arm64' "$T/aptstub/calls")" = 1 ] &&
   grep -q 'APT::Architectures::=arm64' "$T/aptstub/calls"; then
	ok "$name"
else
	bad "$name" "got '$got1', then '$got2' (want $want); apt-get calls: $(cat "$T/aptstub/calls")"
fi
expect_fail "kit: QEMU_MTE naming no QEMU is refused" 'QEMU_MTE=/nonexistent does not run as a QEMU' \
	env KASAN=hw QEMU_MTE=/nonexistent OUT="$T/out-mte" "$TOP/scripts/job/boot.sh" --can-boot
if env PATH="$T/oldqemu:$PATH" QEMU_MTE_OK=1 KASAN=hw OUT="$T/out-mte" \
	"$TOP/scripts/job/boot.sh" --can-boot >"$T/out-mte.log" 2>&1; then
	ok "kit: QEMU_MTE_OK=1 lets KASAN=hw boot under QEMU 7.2"
else
	bad "kit: QEMU_MTE_OK=1 lets KASAN=hw boot under QEMU 7.2" "$(tail -3 "$T/out-mte.log")"
fi
refused BBML2=bogus 'all, none, boot, secondary, off or a CPU list'
refused COLLAPSE=maybe 'on, off or default'
refused BBML2=0-9 "a list of the guest's CPUs, 0 to 3"
refused PAGE_SIZE=8K '4K, 16K or 64K'
refused VA_BITS=40 'a size 6.12 offers with 4K pages: 39 48 52'
refused SERIES=partial 'on, core or off'
refused DEBUG=yes 'on or off'
# make check's one selector: a word that names nothing is refused, ONLY
# beside the variables it stands for is refused, and CHECK_PLAN shows
# how it reads a list. (This run's own CHECK_GROUPS=kit is left out.)
only_env="env -u CHECK_GROUPS -u CHECK_PAGE_SIZES -u CHECK_MODES"
expect_fail "kit: make check refuses ONLY with a word that is no group, page size or mode" \
	"ONLY: 'bogus' is no group" $only_env ONLY="16K bogus" CHECK_PLAN=1 OUT="$T/out-only" "$TOP/scripts/suites/check.sh"
expect_fail "kit: make check refuses ONLY beside CHECK_MODES" "give it or them, not both" \
	$only_env ONLY=guests CHECK_MODES=bbml2-all CHECK_PLAN=1 OUT="$T/out-only" "$TOP/scripts/suites/check.sh"
out=$($only_env ONLY="16K bbml2-all workload-kexec" CHECK_PLAN=1 OUT="$T/out-only" "$TOP/scripts/suites/check.sh" 2>&1)
if [[ $out == *"groups: build guests trees; page sizes: 16K; modes: bbml2-all workload-kexec"* ]] &&
   out2=$($only_env ONLY="upstream tlb" CHECK_PLAN=1 OUT="$T/out-only" "$TOP/scripts/suites/check.sh" 2>&1) &&
   [[ $out2 == *"groups: upstream tlb; page sizes: the default ones; modes: every one"* ]] &&
   [ ! -e "$T/out-only/check" ]; then
	ok "kit: make check ONLY= reads groups, page sizes and modes from one list"
else
	bad "kit: make check ONLY= reads groups, page sizes and modes from one list" "$out / ${out2:-}"
fi
refused KASAN=generic 'off, sw or hw'
refused WORKLOAD_KERNEL=yes 'on or off'
refused MEM=4 'guest RAM in M, G or T'
refused MEM=256M 'guest RAM in M, G or T, at least 512M'
refused SMP=0 'a number of guest CPUs from 1 to 512'
refused STRESS=pages=0,round=2 "pages=N rounds=N threads=N \\(no 'round'\\)"
refused STRESS=threads=four 'pages=N rounds=N threads=N with numbers'
expect_fail "kit: make bench-tlb refuses an unknown workload up front" "no workload 'bogus'" \
	env TLB_WORKLOADS="memcached bogus" OUT="$T/out-tlb" "$TOP/scripts/bench/tlb.sh"
expect_fail "kit: make bench-tlb refuses TLB_SECS=1.5 up front" "TLB_SECS takes whole seconds" \
	env TLB_SECS=1.5 OUT="$T/out-tlb" "$TOP/scripts/bench/tlb.sh"
expect_fail "kit: make bench-tlb refuses TLB_SIZE=huge up front" "TLB_SIZE takes server or small" \
	env TLB_SIZE=huge OUT="$T/out-tlb" "$TOP/scripts/bench/tlb.sh"
expect_fail "kit: make bench-tlb refuses TLB_RUNS=5 up front" "TLB_RUNS takes two counts" \
	env TLB_RUNS=5 OUT="$T/out-tlb" "$TOP/scripts/bench/tlb.sh"
expect_fail "kit: make bench-tlb refuses an unknown TLB_CORES table up front" "TLB_CORES: no parameter table" \
	env TLB_CORES=cortex-z9.tsv OUT="$T/out-tlb" "$TOP/scripts/bench/tlb.sh"
[ ! -e "$T/out-tlb/tlb" ] || bad "kit: a refused make bench-tlb did no work" "$(ls -A "$T/out-tlb/tlb")"
expect_fail "kit: make bench-upstream refuses UPBENCH_CHURN_ROUNDS=ten up front" "UPBENCH_CHURN_ROUNDS takes a number" \
	env UPBENCH_CHURN_ROUNDS=ten OUT="$T/out-up" "$TOP/scripts/bench/upstream.sh"
expect_fail "kit: make bench-upstream refuses an unknown kernel up front" "no kernel 'linux-next'" \
	env UPBENCH_KERNELS="series linux-next" OUT="$T/out-up" "$TOP/scripts/bench/upstream.sh"
expect_fail "kit: make bench-upstream refuses UPBENCH_LARGE_MEM=64 up front" "UPBENCH_LARGE_MEM takes a size in GiB" \
	env UPBENCH_LARGE_MEM=64 OUT="$T/out-up" "$TOP/scripts/bench/upstream.sh"
expect_fail "kit: make bench-upstream refuses PAGE_SIZE=16K up front" "compares 4K kernels" \
	env PAGE_SIZE=16K OUT="$T/out-up" "$TOP/scripts/bench/upstream.sh"
[ ! -e "$T/out-up/bench-upstream" ] || bad "kit: a refused make bench-upstream did no work" "$(ls -A "$T/out-up/bench-upstream")"
out=$(env UPBENCH_LARGE_MEM= UPBENCH_PLAN=1 OUT="$T/out-up" "$TOP/scripts/bench/upstream.sh" 2>&1) || true
if grep -q 'large: none' <<<"$out"; then
	ok "kit: make bench-upstream with UPBENCH_LARGE_MEM empty boots no large guest"
else
	bad "kit: make bench-upstream with UPBENCH_LARGE_MEM empty boots no large guest" "$out"
fi
# The TLB report's "what would have to be true": the unmodelled refill
# rate that brings the model's change to the hardware's.
if out=$(python3 - "$TOP/scripts/bench/tlb/report.py" <<'PY' 2>&1
import importlib.util, sys
spec = importlib.util.spec_from_file_location("report", sys.argv[1])
r = importlib.util.module_from_spec(spec)
spec.loader.exec_module(r)
x = r.unmodelled(2.69, 1.03, 28.5)
assert x is not None and abs((1.03 + x) / (2.69 + x) - 1 + 0.285) < 1e-9, x
assert r.unmodelled(1.0, 0.9, 28.5) is None
# As the report calls it: each run's rates, their medians taken first.
line = r.agreement([2.6, 2.69, 2.8], [1.0, 1.03, 1.1], 28.5)
assert len(line) == 1 and ("at %.3g per 1000" % x) in line[0], line
assert r.agreement([1.0], [0.9], 28.5) == []
print("%.2f" % x)
PY
); then
	ok "kit: the TLB report's unmodelled rate brings the model's change to the hardware's ($out per 1000 instructions for 2.69 and 1.03)"
else
	bad "kit: the TLB report's unmodelled rate brings the model's change to the hardware's" "$out"
fi
# The guest's own status at its end marker is read: a job that ended
# with rc=1 fails the boot, rc=0 does not (a stand-in QEMU prints them).
mkdir -p "$T/fakeqemu"
printf '#!/bin/sh\nprintf "linmap: job\\n@@LINMAP-BEGIN\\n[meta]\\nkernel=x\\n@@LINMAP-END rc=%%s\\n" "$FAKE_RC"\n' \
	>"$T/fakeqemu/qemu-system-aarch64"
chmod +x "$T/fakeqemu/qemu-system-aarch64"
: >"$T/fake.Image"
: >"$T/fake.cpio.gz"
fake_boot() {	# RC
	env PATH="$T/fakeqemu:$PATH" FAKE_RC="$1" OUT="$T/out-boot" KIT_IMAGE="$T/fake.Image" \
		INITRD="$T/fake.cpio.gz" JOB=check NAME=fake-rc$1 LOGDIR="$T/fakelog" \
		QEMU_TIMEOUT=30 "$TOP/scripts/job/boot.sh"
}
expect_fail "kit: a guest whose job ends with rc=1 fails its boot" "job ended with rc=1" fake_boot 1
if out=$(fake_boot 0 2>&1); then
	ok "kit: a guest whose job ends with rc=0 passes its boot"
else
	bad "kit: a guest whose job ends with rc=0 passes its boot" "$out"
fi
# The report of make bench-upstream, from two made-up guests: the ratio
# series / upstream of each figure, and a guest with no data named.
mkdir -p "$T/upr"
life_data() {	# PUD TABLES STATUS
	printf '@@LINMAP-BEGIN\n[meta]\nkernel=x\nmodule=loaded\n'
	for ph in boot modules bpf_jit secretmem churn idle; do
		printf '[life.%s]\nstatus=%s\nall.pud=%s\nall.pmd=10\nall.cont_pmd=0\nall.pte=7\nall.cont_pte=16\ntable_pages=%s\nMemFree=100\n' \
			"$ph" "$3" "$1" "$2"
	done
	printf '@@LINMAP-END rc=0\n'
}
life_data 3 8 ok >"$T/upr/series-4G.data"
life_data 2 16 cpa-1 >"$T/upr/upstream-4G.data"
life_data 3 4 ok >"$T/upr/series-collapse-4G.data"
out=$(python3 "$TOP/scripts/bench/upstream_report.py" "$T/upr" 64G series upstream series-collapse:4G 2>&1) &&
	rc=0 || rc=$?
if [ "$rc" = 1 ] && grep -q '^idle: table pages  *8  *16  *0.500  *4$' <<<"$out" &&
   grep -q '^idle: PUD leaves (1G)  *3  *2  *1.500' <<<"$out" &&
   grep -q 'upstream cpa-1' <<<"$out" && grep -q 'series at 64G: no data' <<<"$out" &&
   ! grep -q 'series-collapse at 64G' <<<"$out"; then
	ok "kit: bench-upstream's report sets each figure beside upstream's with the ratio, and names what is missing"
else
	bad "kit: bench-upstream's report sets each figure beside upstream's with the ratio, and names what is missing" "exit $rc: $out"
fi
refused EL2=yes 'on or off'
refused IOMMU=smmuv2 'smmuv3 or empty'
refused ICOUNT=11 'an -icount shift from 0 to 10'
refused QEMU_TIMEOUT=10m 'a number of seconds'
if out=$(env BBML2=0,2-3 SMP=4 MEM=512M STRESS="pages=0x100 rounds=2,threads=1" EL2=on \
	IOMMU=smmuv3 ICOUNT=0 bash -c ". '$TOP/scripts/lib/lib.sh'" 2>&1); then
	ok "kit: good values of the checked variables are taken"
else
	bad "kit: good values of the checked variables are taken" "$out"
fi
# Each test's teardown audits the whole map, which the harness's 30 s
# default does not cover on a base kernel under TCG: every test names a limit.
if out=$(grep -nE '^TEST(_F)?(_SIGNAL)?\(' "$TOP"/selftests/linmap/*.c); then
	bad "kit: every linmap selftest names its own time limit" "$out"
else
	ok "kit: every linmap selftest names its own time limit"
fi
# Under set -e, a command of an EXIT trap that fails becomes the step's
# exit status, after the step's own work succeeded: a kill (of a process
# that may have ended) must not fail there.
if out=$(grep -n "trap '[^']*kill [^']*' EXIT" "$TOP"/scripts/*/*.sh "$TOP"/scripts/*/*/*.sh |
	grep -v "|| true' EXIT"); then
	bad "kit: no EXIT trap can fail a step that succeeded" "$out"
else
	ok "kit: no EXIT trap can fail a step that succeeded"
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
# tree, then apply, as make apply runs them.
tree_apply() {	# OUT
	env SERIES=on KSRC="$T/good" OUT="$1" PATCHDIR="$T/patches" "$TOP/scripts/job/tree.sh" >/dev/null &&
		env SERIES=on KSRC="$T/good" OUT="$1" PATCHDIR="$T/patches" "$TOP/scripts/job/apply.sh"
}
# A step does not run the one before it (the Makefile's graph does): one
# run alone says which to run.
expect_fail "kit: apply with no tree says to run make tree" "run 'make tree' first" \
	env SERIES=on KSRC="$T/good" OUT="$T/out-seq" PATCHDIR="$T/patches" "$TOP/scripts/job/apply.sh"
expect_fail "kit: kernel with no configuration says to run make config" "run 'make config' first" \
	env OUT="$T/out-seq" KIT_BUILD="$T/out-seq/build" "$TOP/scripts/job/kernel.sh"
expect_fail "kit: a patch that does not apply is named, with how to go on" \
	'0001-bad.patch does not apply' tree_apply "$T/out4"
if grep -q 'am --continue' <(tree_apply "$T/out5" 2>&1); then
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
	SERIES_WARNINGS=0 "$TOP/scripts/suites/check-series.sh" 2>&1)
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
	"$TOP/scripts/lib/scan-log.sh" "$T/splat.log"
printf 'BUG: sleeping function called from invalid context at mm/x.c:1\n' >"$T/sleep.log"
expect_fail "kit: a might-sleep report fails the run" 'kernel splat' \
	"$TOP/scripts/lib/scan-log.sh" "$T/sleep.log"
printf '%s\n' 'linmap: exiting init to panic into the crash kernel' \
	'[    9.0] Kernel panic - not syncing: Attempted to kill init!' '[    9.1] Call trace:' \
	'[    0.0] Booting Linux on physical CPU 0x0' '[    1.0] ok' >"$T/kdump.log"
if "$TOP/scripts/lib/scan-log.sh" "$T/kdump.log" >/dev/null 2>&1; then
	ok "kit: the kdump guests' own panic passes the scan when a crash kernel boots"
else
	bad "kit: the kdump guests' own panic passes the scan when a crash kernel boots"
fi
head -3 "$T/kdump.log" >"$T/kdump-dead.log"
expect_fail "kit: the same panic with no crash kernel after it fails the run" 'kernel splat' \
	"$TOP/scripts/lib/scan-log.sh" "$T/kdump-dead.log"
b='linmap_test: expected warning: set_direct_map() with interrupts off'
printf '%s\n' "[ 2.0] $b, begin" '[ 2.1] ------------[ cut here ]------------' \
	'[ 2.1] WARNING: CPU: 1 PID: 9 at arch/arm64/mm/pageattr.c:1 set_direct_map+0x0/0x4' \
	'[ 2.2] Call trace:' "[ 2.3] $b, end" >"$T/dmirq.log"
if "$TOP/scripts/lib/scan-log.sh" "$T/dmirq.log" >/dev/null 2>&1; then
	ok "kit: the one expected set_direct_map() warning passes the scan"
else
	bad "kit: the one expected set_direct_map() warning passes the scan"
fi
sed 's/set_direct_map+0x0/other_fn+0x0/' "$T/dmirq.log" >"$T/dmirq-other.log"
expect_fail "kit: another WARNING inside the expected window fails the run" 'kernel splat' \
	"$TOP/scripts/lib/scan-log.sh" "$T/dmirq-other.log"
head -4 "$T/dmirq.log" >"$T/dmirq-open.log"
expect_fail "kit: an expected-warning window that never ends fails the run" 'kernel splat' \
	"$TOP/scripts/lib/scan-log.sh" "$T/dmirq-open.log"
printf '[    1.0] Booting Linux\n[    2.0] Run /init as init process\n' >"$T/clean.log"
if "$TOP/scripts/lib/scan-log.sh" "$T/clean.log"; then
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
		"$TOP/scripts/job/deps.sh" >"$d/stdout" 2>&1
}
deps_checks() {
	local d=$CHECK/deps pkgs rc
	pkgs=$("$TOP/scripts/job/deps.sh" --list)
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
	env ROOTFS_PKGS="$T/rootfs.pkgs" ROOTFS_CACHE="$T/rootfs-cache" "$TOP/scripts/job/rootfs.sh"
if [ -z "$(ls -A "$T/rootfs-cache" 2>/dev/null)" ]; then
	ok "rootfs: a failed build leaves nothing in the cache"
else
	bad "rootfs: a failed build leaves nothing in the cache" "$(ls -la "$T/rootfs-cache")"
fi
# A new image (here of one small package) leaves the two newest older
# images in the cache and removes the rest.
mkdir -p "$T/rootfs-cache"
for i in 1 2 3 4; do
	: >"$T/rootfs-cache/rootfs-old$i.ext4"
	: >"$T/rootfs-cache/rootfs-old$i.manifest"
	touch -d "$((10 - i)) days ago" "$T/rootfs-cache/rootfs-old$i.ext4"
done
printf 'mawk\n' >"$T/rootfs-small.pkgs"
if img=$(env ROOTFS_PKGS="$T/rootfs-small.pkgs" ROOTFS_CACHE="$T/rootfs-cache" \
	"$TOP/scripts/job/rootfs.sh" 2>"$T/rootfs-small.log") &&
   [ -f "$img" ] && [ "$(cd "$T/rootfs-cache" && ls rootfs-*.ext4 | grep -c old)" = 2 ] &&
   [ -f "$T/rootfs-cache/rootfs-old4.ext4" ] && [ -f "$T/rootfs-cache/rootfs-old3.ext4" ] &&
   [ ! -e "$T/rootfs-cache/rootfs-old1.manifest" ]; then
	ok "rootfs: a new image keeps the two newest older ones and removes the rest"
else
	bad "rootfs: a new image keeps the two newest older ones and removes the rest" \
		"$(ls "$T/rootfs-cache"; tail -3 "$T/rootfs-small.log")"
fi
rm -rf "$T/rootfs-cache"

# make install-tests refuses what cannot give a module for an arm64 board.
mkdir -p "$T/kdir-nosym" "$T/kdir-x86/include/config"
echo CONFIG_X86_64=y >"$T/kdir-x86/.config"
: >"$T/kdir-x86/Module.symvers"
echo 6.12.1 >"$T/kdir-x86/include/config/kernel.release"
expect_fail "install-tests: no KDIR is refused" 'no KDIR' \
	env -u KDIR OUT="$T/out6" "$TOP/scripts/job/install-tests.sh"
expect_fail "install-tests: a KDIR without Module.symvers is refused" 'no Module\.symvers' \
	env KDIR="$T/kdir-nosym" OUT="$T/out6" "$TOP/scripts/job/install-tests.sh"
expect_fail "install-tests: a KDIR that is not an arm64 build is refused" 'not an arm64 kernel build' \
	env KDIR="$T/kdir-x86" OUT="$T/out6" "$TOP/scripts/job/install-tests.sh"
# An installed arm64 headers package (make deb's): no .config, arm64's
# fixdep (busybox stands in for it). Taken as a KDIR; on a host that cannot
# run it, fixdep and modpost are made again from the package's sources
# (make check's deb-install does that with a real one): here there are
# none, and the error says so.
mkdir -p "$T/kdir-hdr/include/config" "$T/kdir-hdr/scripts/basic"
printf 'CONFIG_ARM64=y\nCONFIG_KPROBES=y\nCONFIG_KALLSYMS_ALL=y\nCONFIG_DEBUG_FS=y\n' \
	>"$T/kdir-hdr/include/config/auto.conf"
: >"$T/kdir-hdr/Module.symvers"
echo 6.12.1-linmap-all-g0 >"$T/kdir-hdr/include/config/kernel.release"
cp "$OUT/deps/busybox" "$T/kdir-hdr/scripts/basic/fixdep"
mkdir -p "$T/kst"
: >"$T/kst/lib.mk"
: >"$T/kst/run_kselftest.sh"
if [ "$(uname -m)" != aarch64 ]; then
	expect_fail "install-tests: an arm64 headers package without the sources of fixdep is refused" \
		'cannot make KDIR.s fixdep and modpost for this machine' \
		env KDIR="$T/kdir-hdr" KSELFTEST="$T/kst" OUT="$T/out6" "$TOP/scripts/job/install-tests.sh"
fi
# make deb: settings it does not know, and the unpatched base, before
# any work.
expect_fail "deb: make deb DEB_CONFIG=other is refused up front" 'DEB_CONFIG must be debian or kit' \
	make -s -C "$TOP" deb DEB_CONFIG=other OUT="$T/out-deb"
expect_fail "deb: make deb SERIES=off is refused up front" 'make deb packages the series' \
	env SERIES=off OUT="$T/out-deb" "$TOP/scripts/job/deb.sh"
[ ! -e "$T/out-deb/trees" ] && ok "deb: a refused make deb made no tree" ||
	bad "deb: a refused make deb made no tree" "$(ls "$T/out-deb")"

# The TAP plan check of the check guests (linmap_data plans): a stream
# that ran fewer tests than it planned, or has no plan, is caught.
printf '@@LINMAP-BEGIN\n[tap]\nTAP version 13\n1..3\nok 1 a.x\nok 2 a.y\nok 3 a.z\nTAP version 13\n1..2\nok 1 b.x\nok 2 b.y # SKIP why\n@@LINMAP-END rc=0\n' >"$T/plan-ok.data"
if out=$(linmap_data plans "$T/plan-ok.data" 2>&1); then
	ok "kit: TAP plans that hold pass ($out)"
else
	bad "kit: TAP plans that hold pass" "$out"
fi
grep -v '^ok 2 a.y' "$T/plan-ok.data" >"$T/plan-short.data"
expect_fail "kit: a TAP stream that ran fewer tests than planned is caught" "a.x: plan 1..3, ran 1,3" \
	linmap_data plans "$T/plan-short.data"
grep -v '^1\.\.2' "$T/plan-ok.data" >"$T/plan-none.data"
expect_fail "kit: a TAP stream with no plan is caught" "b.x: no plan" \
	linmap_data plans "$T/plan-none.data"

# The workloads' linear map against the kernel's state (linmap_data map):
# one made-up workload per rule, each caught when its record breaks it.
map_case() {	# NAME EXPECTED-STATUS STATE WL-LINES
	printf '@@LINMAP-BEGIN\n[state]\n%s\n[wl.%s]\n%s\n[tap]\n1..0\n@@LINMAP-END rc=0\n' \
		"$3" "${1%%:*}" "$4" >"$T/map.data"
	local got
	got=$(linmap_data map "$T/map.data" | cut -f1 | tr '\n' ' ')
	if [ "$got" = "$2 " ]; then
		ok "kit: workload map: ${1#*:} is $2"
	else
		bad "kit: workload map: ${1#*:} is $2" "got '$got' from: $(cat "$T/map.data")"
	fi
}
leaves3() {	# PUD CONT_PMD PMD CONT_PTE PTE (the same in the three phases)
	local p
	for p in before after settled; do
		printf '%s.pud=%s\n%s.cont_pmd=%s\n%s.pmd=%s\n%s.cont_pte=%s\n%s.pte=%s\n' \
			$p "$1" $p "$2" $p "$3" $p "$4" $p "$5"
	done
}
paged='linear_blocks=0
rodata_full=1'
on='linear_blocks=1
rodata_full=0
can_set_direct_map=0'
on_dm='linear_blocks=1
rodata_full=0
can_set_direct_map=1'
full='linear_blocks=1
rodata_full=1'
map_case "fio_dmcrypt.1:a page-mapped map that stays so" ok "$paged" "$(leaves3 0 0 0 0 1000)
splits=0
folds=0"
map_case "fio_dmcrypt.1:a page-mapped map with a PMD leaf" fail "$paged" "$(leaves3 0 0 1 0 1000)"
map_case "stress_ng.1:rodata=on with the same leaves, no split" ok "$on" "$(leaves3 3 480 24 0 0)
splits=0
folds=0"
map_case "stress_ng.1:rodata=on with a split" fail "$on" "$(leaves3 3 480 24 0 0)
splits=1
folds=0"
map_case "stress_ng.1:rodata=on with secretmem's split folded back" ok "$on_dm" "$(leaves3 3 480 24 0 0)
splits=2
folds=2"
map_case "stress_ng.1:rodata=on with the churn's splits folded during it" ok "$on_dm" "$(leaves3 3 480 24 0 0)
before.pmd=26
before.cont_pte=992
before.pte=32
splits=80
folds=40"
map_case "stress_ng.1:rodata=on with secretmem's split left" fail "$on_dm" "$(leaves3 3 480 24 0 0)
settled.pmd=23
settled.cont_pte=16
splits=1
folds=0"
full_case() {	# NAME STATUS [SPLITS FOLDS]: rodata=full, blocks, a kernel that folds
	map_case "$1" "$2" "$full" "collapse=1
$(leaves3 3 480 24 2112 128)${3:+
splits=$3
folds=$4}"
}
full_case "stress_ng.1:a split and a fold under rodata=full with blocks" ok 40 38
full_case "stress_ng.1:no split under rodata=full with blocks" fail 0 0
full_case "modload.1:splits that never fold back, in a kernel that folds" fail 4 0
full_case "modload.1:no trace events in the kernel" skip
full_case "bpfjit.1:the JIT's packs split and fold back" ok 3 3
full_case "bpfjit.1:a JIT storm that split nothing" fail 0 0

# The churn's verdict (check_churn): a clean run passes; a violation in
# the audit after the loop, a missing audit and a DirectMap mismatch during
# the stress each fail it.
churn_case() {	# NAME WANT(ok|bad) CPA-EXTRA AUDIT-SECTION
	local got
	printf '[churn]\nsecs=5\nmodule_cycles=3\nmodule_failures=0\ncpu_cycles=6\ncpu_failures=0\ncpa_rc=0\n[cpa]\nseed=1\nthreads=4\nbatch=8\nops=400\nelapsed_ms=5000\nverified_pages=900\nmismatches=0\ncall_errors=0\ncollapse_errors=0\ntable_violations=0\n%s\n%s' \
		"${3:-directmap_mismatches=0}" "$4" >"$T/churn.data"
	got=$( (ok() { echo "ok $1"; }; bad() { echo "bad $1"; }
		check_churn m "$T/churn.data") | grep 'shadow-model\|random changes' | cut -d' ' -f1)
	if [ "$got" = "$2" ]; then
		ok "kit: churn verdict: $1"
	else
		bad "kit: churn verdict: $1" "wanted $2, got '${got:-nothing}'"
	fi
}
churn_case "a clean run and a clean audit after it pass" ok "" "[churn_audit]
violations=0
leaves=10"
churn_case "a violation in the audit after the loop fails" bad "" "[churn_audit]
violations=1
violation.0=0x0: table pages: counted 9, audited 8"
churn_case "no audit after the loop fails" bad "" ""
churn_case "a DirectMap mismatch during the stress fails" bad "directmap_mismatches=1" "[churn_audit]
violations=0"

# The kdump guests' check of /proc/vmcore (scripts/guest/vmcore.c), built
# for the host, against made-up cores (scripts/suites/check/fakecore.py):
# one that passes and one per thing it requires, each caught.
vmcore_case() {	# VARIANT EXPECTED-PATTERN [MARK]
	python3 "$TOP/scripts/suites/check/fakecore.py" "$T/core" "$1"
	local args=(check --whole "$T/core" 40000000-4fffffff 48000000-4bffffff 6.12.0-linmap
		"${3:-0x41234000:0x1234abcd}")
	if [ "$1" = good ]; then
		local out
		if out=$("$T/linmap_vmcore" "${args[@]}" 2>&1) && [ "$(grep -c '^ok: ' <<<"$out")" = 5 ]; then
			ok "kit: vmcore check: a whole arm64 core with the marked page passes"
		else
			bad "kit: vmcore check: a whole arm64 core with the marked page passes" "$out"
		fi
	else
		expect_fail "kit: vmcore check: a core with $1 is caught" "^FAIL: $2" \
			"$T/linmap_vmcore" "${args[@]}"
	fi
	rm -f "$T/core"
}
if gcc -O2 -Wall -Werror -o "$T/linmap_vmcore" "$TOP/scripts/guest/vmcore.c" 2>"$T/vmcore.cc"; then
	vmcore_case good ''
	vmcore_case machine 'ELF type 4 .*machine 62'
	vmcore_case outside 'PT_LOAD 0x60000000.* outside'
	vmcore_case hole 'PT_LOADs cover .*: 1048576 bytes missing'
	vmcore_case noinfo 'no VMCOREINFO note'
	vmcore_case release 'VMCOREINFO does not name release 6.12.0-linmap'
	vmcore_case pattern 'the page .* does not hold its pattern'
	vmcore_case nopage 'the page .*0x49000000 is in no PT_LOAD' 0x49000000:0x1234abcd
	# linmap_vmcore walk: makedumpfile's reading of a top-level block.
	for v in walk-block:3:'misread: mem_section root .* 512 MiB top-level block.* gives 0xf000000$' \
		walk-table:0:'ok: mem_section\[0\] .* 64 KiB leaf' \
		walk-pud:0:'ok: mem_section root .* 1 GiB leaf' \
		walk-l0:1:'FAIL: mem_section root .*: not mapped'; do
		python3 "$TOP/scripts/suites/check/fakecore.py" "$T/core" "${v%%:*}"
		out=$("$T/linmap_vmcore" walk "$T/core" 2>&1) && rc=0 || rc=$?
		want=${v#*:}
		name="kit: vmcore walk: ${v%%:*} exits ${want%%:*}"
		if [ "$rc" = "${want%%:*}" ] && grep -q -- "${want#*:}" <<<"$out"; then
			ok "$name"
		else
			bad "$name" "exit $rc: $out"
		fi
		rm -f "$T/core"
	done
else
	bad "kit: scripts/guest/vmcore.c builds for the host" "$(cat "$T/vmcore.cc")"
fi
# guest-boot.sh, with a stand-in for boot.sh that notes when it starts
# and ends: a guest booted ahead runs beside the one before it, its output
# and result come in its turn, and one whose turn comes with other
# settings is stopped and booted again.
d=$T/ahead
rm -rf "$d" && mkdir -p "$d"
cat >"$d/boot" <<'EOF'
echo "start $NAME $SECS" >>"$LOGDIR/events"
echo "boot $NAME"
sleep "$SECS"
echo "end $NAME" >>"$LOGDIR/events"
exit "${RC:-0}"
EOF
(
	RESULTS_LOG= CHECK=$d
	. "$G/guest-boot.sh"
	geo() { shift; env "${@:1:$#-1}" bash "$d/boot"; }
	started() {
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			! grep -q "start $1" "$d/events" 2>/dev/null || return 0
			sleep 0.5
		done
	}
	boot_ahead 4K a SECS=3
	started a
	echo "a is ahead"
	boot_guest 4K b SECS=1
	boot_guest 4K a SECS=3
	boot_ahead 4K c SECS=5
	started c
	boot_guest 4K c SECS=1 RC=1
	echo "left: ${!AHEAD_PID[*]}"
) >"$d/out" 2>&1
# The lines that must come in this order, each once.
want='a is ahead|boot b|PASS: b: guest booted|boot a|PASS: a: guest booted|warning: guest c, booted ahead, stopped|boot c|FAIL: c: guest booted|left:'
got=$(grep -E "^($want)" "$d/out" |
	sed -E 's/^(warning: guest c, booted ahead, stopped|(PASS|FAIL): [abc]: guest booted|left:).*/\1/' |
	paste -sd'|')
events=$(paste -sd'|' "$d/events")
if [ "$got" = "$want" ] && [ "$events" = 'start a 3|start b 1|end b|end a|start c 5|start c 1|end c' ]; then
	ok "kit: a guest booted ahead runs beside the one before it and reports in its turn"
else
	bad "kit: a guest booted ahead runs beside the one before it and reports in its turn" \
		"output, in order: $got"$'\n'"wanted: $want"$'\n'"boots: $events"$'\n'"$(cat "$d/out")"
fi
. "$G/hwbench.sh"
