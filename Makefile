# SPDX-License-Identifier: GPL-2.0
# Single entry point of the kit. 'make help' lists the targets.

KSRC ?=
SERIES ?= on
PAGE_SIZE ?= 4K
DEBUG ?= on
KASAN ?= off
MEM ?= 4G
SMP ?= 4
QEMU_TIMEOUT ?= 900
CMDLINE ?=
STRESS ?=
BBML2 ?= all
COLLAPSE ?= on
SOAK_SECS ?= 600
VA_BITS ?=
KDIR ?=
export KSRC SERIES PAGE_SIZE VA_BITS DEBUG KASAN MEM SMP QEMU_TIMEOUT CMDLINE STRESS BBML2 COLLAPSE

S := scripts
# Each step is exec'd, so that it is make's own child: make passes a TERM
# on to its children, and the step's guard (scripts/lib/lib.sh) stops all the
# step started.

.PHONY: help deps tree apply config kernel kmod selftests initramfs rootfs bootable boot \
	run check check-kit check-geometries soak modes bench bench-quick bench-tlb bench-upstream check-series check-configs install-tests deb \
	clean distclean

help:
	@python3 $(S)/lib/help.py

deps:
	@exec $(S)/job/deps.sh

tree: deps
	@exec $(S)/job/tree.sh >/dev/null

apply: tree
	@exec $(S)/job/apply.sh

config: apply
	@exec $(S)/job/config.sh

kernel: config
	@exec $(S)/job/kernel.sh

kmod: kernel
	@exec $(S)/job/kmod.sh

selftests: apply
	@exec $(S)/job/selftests.sh

initramfs: kmod selftests
	@exec $(S)/job/initramfs.sh

# The workload guests' Debian arm64 userspace (an ext4 image, cached).
rootfs: deps
	@exec $(S)/job/rootfs.sh

# A guest this QEMU cannot boot is refused before anything is built.
bootable: deps
	@exec $(S)/job/boot.sh --can-boot

boot: bootable initramfs
	@JOB=shell exec $(S)/job/boot.sh

run: bootable initramfs
	@exec $(S)/job/run.sh

check: deps
	@exec $(S)/suites/check.sh

# The kit's tests of itself (no kernel): bad input refused, stand-ins for
# the tools it drives. CI runs it before make check.
check-kit: deps
	@CHECK_GROUPS=kit CHECK_DIR=$${OUT:-$(CURDIR)/out}/check-kit exec $(S)/suites/check.sh

# The long reliability run: SOAK_SECS of churn per mode (scripts/modes/modes.tsv),
# 4K pages unless CHECK_PAGE_SIZES says otherwise.
soak: deps
	@CHECK_JOB=soak SOAK_SECS=$(SOAK_SECS) exec $(S)/suites/check.sh

# Unpatched and patched side by side: out/bench/report.md, bench.json, PNGs.
bench: deps
	@exec $(S)/bench/bench.sh

bench-quick: deps
	@BENCH_QUICK=1 exec $(S)/bench/bench.sh

# Kernel TLB misses per 1000 instructions, simulated: a Neoverse N1's TLBs
# replaying real workloads' accesses for three layouts of the linear map.
bench-tlb: deps
	@exec $(S)/bench/tlb.sh

# The series beside upstream's own implementation, built like the kit's
# kernels and as Debian ships it (Documentation/upstream.rst).
bench-upstream: deps
	@exec $(S)/bench/upstream.sh

# Every other page-table geometry 6.12 offers (VA_BITS per page size), each
# booted with BBML2 on every CPU and with the repaint. Seven more kernels.
check-geometries: deps
	@CHECK_JOB=geometries CHECK_BENCH=0 exec $(S)/suites/check.sh

check-series: deps
	@exec $(S)/suites/check-series.sh

# Both series, patch by patch, with CONFIG_WERROR in the configurations of
# scripts/suites/check-configs.tsv.
check-configs: deps
	@exec $(S)/suites/check-configs.sh

# The guests of make check, soak and check-geometries (scripts/modes/modes.tsv).
modes:
	@python3 $(S)/modes/modes.py show

# For a real arm64 machine: the module built against KDIR, the selftests and
# kselftest's runner in one tarball under out/install-tests/ (path printed).
install-tests:
	@KDIR="$(KDIR)" exec $(S)/job/install-tests.sh

# Debian packages of 6.12 with the series (linux-image, linux-headers),
# Debian's own arm64 configuration unless DEB_CONFIG=kit: out/deb/<release>/.
# The tree and its patches first, as make deb's (DEB_TREE: lib.sh's tree_name).
deb: export DEB_TREE := 1
deb: apply
	@exec $(S)/job/deb.sh

clean:
	rm -rf out/trees/*/build-* out/deb out/logs out/run out/check out/bench out/check-series/build-* \
		out/install-tests

distclean:
	@for t in out/trees/*/src out/check-series/src; do \
		[ -d "$$t" ] && git -C "$$t" worktree remove --force "$$t" 2>/dev/null; \
	done; true
	rm -rf out
