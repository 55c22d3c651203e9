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
SOAK_SECS ?= 600
VA_BITS ?=
KDIR ?=
export KSRC SERIES PAGE_SIZE VA_BITS DEBUG KASAN MEM SMP QEMU_TIMEOUT CMDLINE STRESS BBML2

S := scripts

.PHONY: help deps tree apply config kernel kmod selftests initramfs rootfs boot \
	run check check-geometries soak modes bench bench-quick bench-tlb check-series check-configs install-tests \
	clean distclean

help:
	@python3 $(S)/help.py

deps:
	@$(S)/deps.sh

tree: deps
	@$(S)/tree.sh >/dev/null

apply: tree
	@$(S)/apply.sh

config: apply
	@$(S)/config.sh

kernel: config
	@$(S)/kernel.sh

kmod: kernel
	@$(S)/kmod.sh

selftests: apply
	@$(S)/selftests.sh

initramfs: kmod selftests
	@$(S)/initramfs.sh

# The workload guests' Debian arm64 userspace (an ext4 image, cached).
rootfs: deps
	@$(S)/rootfs.sh

boot: initramfs
	@JOB=shell $(S)/boot.sh

run: initramfs
	@$(S)/run.sh

check: deps
	@$(S)/check.sh

# The long reliability run: SOAK_SECS of churn per mode (scripts/modes.tsv),
# 4K pages unless CHECK_PAGE_SIZES says otherwise.
soak: deps
	@CHECK_JOB=soak SOAK_SECS=$(SOAK_SECS) $(S)/check.sh

# Unpatched and patched side by side: out/bench/report.md, bench.json, PNGs.
bench: deps
	@$(S)/bench.sh

bench-quick: deps
	@BENCH_QUICK=1 $(S)/bench.sh

# Kernel TLB misses per 1000 instructions, simulated: a Neoverse N1's TLBs
# replaying real workloads' accesses for three layouts of the linear map.
bench-tlb: deps
	@$(S)/tlb.sh

# Every other page-table geometry 6.12 offers (VA_BITS per page size), each
# booted with BBML2 on every CPU and with the repaint. Seven more kernels.
check-geometries: deps
	@CHECK_JOB=geometries CHECK_BENCH=0 $(S)/check.sh

check-series: deps
	@$(S)/check-series.sh

# Both series, patch by patch, with CONFIG_WERROR in the configurations of
# scripts/check-configs.tsv.
check-configs: deps
	@$(S)/check-configs.sh

# The guests of make check, soak and check-geometries (scripts/modes.tsv).
modes:
	@python3 $(S)/modes.py show

# For a real arm64 machine: the module built against KDIR, the selftests and
# kselftest's runner in one tarball under out/install-tests/ (path printed).
install-tests:
	@KDIR="$(KDIR)" $(S)/install-tests.sh

clean:
	rm -rf out/trees/*/build-* out/logs out/run out/check out/bench out/check-series/build-* \
		out/install-tests

distclean:
	@for t in out/trees/*/src out/check-series/src; do \
		[ -d "$$t" ] && git -C "$$t" worktree remove --force "$$t" 2>/dev/null; \
	done; true
	rm -rf out
