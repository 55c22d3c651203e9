# SPDX-License-Identifier: GPL-2.0
# make check, group upstream: upstream's own block-mapped linear map as a
# peer. Debian's prebuilt kernel of upstream Linux (scripts/job/upstream.sh)
# boots the kit's initramfs under QEMU's midr= of Neoverse-V3 r0p2, which
# its allowlist names, and of Neoverse-V2, which it does not: it must claim
# BBML2_NOABORT with the first only. Its linear map's saving at 4 GiB
# (MemTotal with the claim less MemTotal without) is set beside the
# series' own, from the series' midr-v3 and midr-v2 guests. The kit's own
# module and selftests then run on it (peer_tests).
# Sourced by scripts/suites/check.sh, not run alone.

msg "upstream Linux as a peer"
# Neoverse-V3 r0p2 (on both allowlists) and Neoverse-V2 r0p0 (on neither).
UPSTREAM_V3=0x410fd842
UPSTREAM_V2=0x410fd4f0

# peer_guest NAME MIDR CLAIM: boot the upstream kernel on CPUs with MIDR;
# it must claim BBML2_NOABORT exactly when CLAIM is 1. Its MemTotal in
# peer_mem (empty if none).
peer_guest() {
	local name=upstream-$1 claim data=$CHECK/upstream-$1.data
	local what="upstream: $1: MIDR $2 $([ "$3" = 1 ] && echo claims || echo "does not claim") BBML2_NOABORT"
	peer_mem=
	if ! geo "${built[0]}" env JOB=peer NAME="$name" LOGDIR="$CHECK" \
		KIT_IMAGE="$upstream_image" BBML2=off COLLAPSE=default \
		QEMU_CPU="max,midr=$2,pauth-impdef=on" \
		"$TOP/scripts/job/boot.sh" >"$CHECK/$name.out" 2>&1; then
		bad "upstream: $1: guest booted and reported" "$(tail -5 "$CHECK/$name.out")"
		return 1
	fi
	claim=$(linmap_data get "$data" peer bbml2 2>/dev/null || echo none)
	if [ "$claim" = "$3" ]; then
		ok "$what ($(linmap_data get "$data" meta kernel))"
	else
		bad "$what" \
			"claim lines counted: $claim; $(grep -ai 'BBM' "$CHECK/$name.log" | head -3)"
	fi
	peer_mem=$(linmap_data get "$data" meta MemTotal 2>/dev/null) || peer_mem=
}

# saving WHAT WITH WITHOUT: MemTotal with the claim less without, in kB,
# into saved. Blocks at 4 GiB free the PTE tables of the linear map, 8 MiB
# less the few tables that stay: at least 7 MiB.
saving() {
	saved=$(($2 - $3))
	if [ "$saved" -ge 7168 ]; then
		ok "upstream: $1: blocks free $saved kB at 4 GiB (MemTotal $2 kB with BBML2_NOABORT, $3 kB without)"
	else
		bad "upstream: $1: blocks free at least 7 MiB at 4 GiB" "MemTotal $2 kB with BBML2_NOABORT, $3 kB without: $saved kB"
	fi
}

# The kit's module and selftests on upstream's kernel, built against
# linux-source of its release (scripts/job/upstream-kbuild.sh), on CPUs
# that claim BBML2_NOABORT by MIDR, with the hot-plug ranges and the small
# stress. Debian's kernel brings hot-added memory online at once
# (MHP_DEFAULT_ONLINE_TYPE_ONLINE_AUTO) and the module's hot-plug cases
# remove memory they did not online, so the guest keeps it offline as the
# kit's kernels do (memhp_default_state=offline). Tests left out are the ones upstream cannot run, each with its
# reason, reported as a SKIP (Documentation/upstream.rst has the reports).
UPSTREAM_EXCEPT=(
	"ro_guard_page=upstream defect: change_memory_common() reads area->pages past nr_pages for a range that ends in the guard page, and changes the alias of whatever that slot holds (vfree() then warns in __vunmap_range_noflush()); Documentation/upstream.rst, report 1"
	"ro_percpu_chunk=upstream defect: change_memory_common() dereferences area->pages of a vmalloc'd percpu chunk, which has none: a NULL pointer oops; Documentation/upstream.rst, report 1"
	"hotplug_policy=upstream defect: hot-added memory added in one call is mapped with leaves that cross memory blocks (a 1G PUD block over eight 128M blocks), and removing one never-onlined memory block unmaps the other 896M with it; Documentation/upstream.rst, report 2"
	"direct_map_irqs_off=a difference, not a defect: upstream splits a block for set_direct_map_*() with interrupts off (under a mutex, allocating with GFP_PGTABLE_KERNEL) where the series refuses with -EBUSY; no caller meets a block there"
)
peer_tests() {
	local name=upstream-tests data=$CHECK/upstream-tests.data kb src e except=
	if ! kb=$("$TOP/scripts/job/upstream-kbuild.sh" 2>"$CHECK/upstream-kbuild.log"); then
		skip "upstream: the kit's module and selftests on upstream's kernel" "$kb"
		return 0
	fi
	src=$(sed -n 2p <<<"$kb")
	kb=$(sed -n 1p <<<"$kb")
	if ! KIT_SRC="$src" KIT_BUILD="$kb" module_initramfs >"$CHECK/$name.build" 2>&1; then
		bad "upstream: the kit's module builds against linux-source of its release" \
			"$(tail -5 "$CHECK/$name.build")"
		return 0
	fi
	ok "upstream: the kit's module builds against linux-source of its release ($(cat "$kb/include/config/kernel.release"))"
	for e in "${UPSTREAM_EXCEPT[@]}"; do
		except+="${except:+,}${e%%=*}"
		skip "upstream: ${e%%=*}" "${e#*=}"
	done
	if ! geo "${built[0]}" env KIT_SRC="$src" KIT_BUILD="$kb" JOB=check NAME="$name" \
		LOGDIR="$CHECK" KIT_IMAGE="$upstream_image" BBML2=off COLLAPSE=default \
		QEMU_CPU="max,midr=$UPSTREAM_V3,pauth-impdef=on" STRESS="pages=0,rounds=1" \
		CMDLINE="linmap.claims=bbml2 linmap.except=$except mem=2560M memhp_default_state=offline linmap.hotplug=0x100000000,0x40000000 linmap.devmem=0xe0000000,0x20000000" \
		"$TOP/scripts/job/boot.sh" >"$CHECK/$name.out" 2>&1; then
		bad "upstream: tests: guest booted, finished and logged no splat" "$(tail -5 "$CHECK/$name.out")"
		return 0
	fi
	ok "upstream: tests: guest booted, finished and logged no splat"
	module_loaded "upstream: tests" "$data" || return 0
	count_tap "upstream: tests" "$data"
}

if ! upstream_image=$("$TOP/scripts/job/upstream.sh"); then
	skip "upstream: Debian's prebuilt upstream kernel" "$upstream_image"
else
	peer_guest v3 "$UPSTREAM_V3" 1 || true
	up_v3=$peer_mem
	peer_guest v2 "$UPSTREAM_V2" 0 || true
	up_v2=$peer_mem
	peer_tests
	se_v3=$(linmap_data get "$CHECK/${built[0]}-midr-v3.data" meta MemTotal 2>/dev/null) || se_v3=
	se_v2=$(linmap_data get "$CHECK/${built[0]}-midr-v2.data" meta MemTotal 2>/dev/null) || se_v2=
	if [ -n "$up_v3" ] && [ -n "$up_v2" ]; then
		saving "the upstream kernel" "$up_v3" "$up_v2"
		up=$saved
		if [ -n "$se_v3" ] && [ -n "$se_v2" ]; then
			saving "the series" "$se_v3" "$se_v2"
			se=$saved
			msg "linear map saving at 4 GiB: series $se kB, upstream $up kB (series / upstream $(awk -v a="$se" -v b="$up" 'BEGIN { printf "%.3f", a / b }'))"
		else
			skip "upstream: the series' saving beside upstream's" \
				"no MemTotal from the series' ${built[0]}-midr-v3 and -midr-v2 guests (CHECK_MODES?)"
		fi
	fi
fi
