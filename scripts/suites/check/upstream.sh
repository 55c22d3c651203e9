# SPDX-License-Identifier: GPL-2.0
# make check, group upstream: upstream's own block-mapped linear map as a
# peer. Debian's prebuilt kernel of upstream Linux (scripts/job/upstream.sh)
# boots the kit's initramfs under QEMU's midr= of Neoverse-V3 r0p2, which
# its allowlist names, and of Neoverse-V2, which it does not: it must claim
# BBML2_NOABORT with the first only. Its linear map's saving at 4 GiB
# (MemTotal with the claim less MemTotal without) is set beside the
# series' own, from the series' midr-v3 and midr-v2 guests.
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

if ! upstream_image=$("$TOP/scripts/job/upstream.sh"); then
	skip "upstream: Debian's prebuilt upstream kernel" "$upstream_image"
else
	peer_guest v3 "$UPSTREAM_V3" 1 || true
	up_v3=$peer_mem
	peer_guest v2 "$UPSTREAM_V2" 0 || true
	up_v2=$peer_mem
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
