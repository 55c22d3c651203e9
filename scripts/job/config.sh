#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Configure a build: tinyconfig plus the fragments in scripts/configs/.
# Every option a fragment asks for is checked in the final .config.
. "$(dirname "$0")/../lib/lib.sh"

[ -d "$SRC" ] || die "no source tree at $SRC; run 'make tree apply' first"
CONFIGS=$TOP/scripts/configs
# The VA size is the kit's choice for the page size, or VA_BITS.
mkdir -p "$BUILD"
echo "CONFIG_ARM64_VA_BITS_$VA_BITS=y" >"$BUILD/va.config"
frags=("$CONFIGS/base.config" "$CONFIGS/$PAGE_SIZE.config" "$BUILD/va.config")
# The workload guests' options in the test kernels that boot them: make
# check's 4K ones, and check-geometries' (kexec, kdump and hibernation at
# 16K and 64K). make check's 16K and 64K kernels, the KASAN ones and the
# bench's (DEBUG=off) stay as small as they were.
if [ "$DEBUG" = on ] && [ "$KASAN" = off ] &&
   { [ "$PAGE_SIZE" = 4K ] || [ "${CHECK_JOB:-}" = geometries ]; }; then
	frags+=("$CONFIGS/workload.config")
fi
# WORKLOAD_KERNEL=on (make bench-tlb): a kernel without debug options that
# runs the workloads too, with a network card for a load from the host.
[ "${WORKLOAD_KERNEL:-off}" = off ] || [ "$DEBUG" = on ] ||
	frags+=("$CONFIGS/workload.config" "$CONFIGS/net.config")
if [ "$DEBUG" = on ]; then
	frags+=("$CONFIGS/debug.config")
	# Debug options that only one page size's kernel carries.
	[ -f "$CONFIGS/$PAGE_SIZE-debug.config" ] && frags+=("$CONFIGS/$PAGE_SIZE-debug.config")
fi
# KASAN with tags (sw or hw): the linear map's addresses carry tags.
[ "$KASAN" = off ] || frags+=("$CONFIGS/kasan-$KASAN.config")
# THP (contiguous user PTEs) unless a fragment makes the kernel PREEMPT_RT.
grep -qx "CONFIG_PREEMPT_RT=y" "${frags[@]}" || frags+=("$CONFIGS/thp.config")
# Optional local additions, e.g. for a board.
[ -n "${EXTRA_CONFIG:-}" ] && frags+=($EXTRA_CONFIG)

want=$(stamp_of "${frags[@]}" "$SRC/Makefile")
if [ -f "$BUILD/.config" ] && [ "$(cat "$BUILD/.kit-config" 2>/dev/null)" = "$want" ]; then
	exit 0
fi

msg "configuring $BUILD (tinyconfig + ${frags[*]##*/}: VA_BITS=$VA_BITS, $(pt_levels "$PAGE_SIZE" "$VA_BITS") levels)"
kmake -s tinyconfig >/dev/null
"$SRC/scripts/kconfig/merge_config.sh" -m -O "$BUILD" "$BUILD/.config" \
	"${frags[@]}" >"$BUILD/merge_config.log" 2>&1 ||
	die "merge_config failed; see $BUILD/merge_config.log"
kmake -s olddefconfig >/dev/null

# Fail loudly if Kconfig dropped something a fragment asked for. A later
# fragment may change an earlier one's option (64K-debug.config turns off
# debug.config's lockdep): the last setting of each option is the one asked.
last_setting() {
	awk '{ k = $0; sub(/=.*/, "", k); if (!(k in v)) o[++n] = k; v[k] = $0 }
	     END { for (i = 1; i <= n; i++) print v[o[i]] }'
}
# KIT_CONFIG_ABSENT: options a newer tree no longer has (the upstream peer,
# scripts/job/upstream-kernel.sh); each must be unknown to its Kconfig.
absent=" ${KIT_CONFIG_ABSENT:-} "
for opt in $absent; do
	! grep -rqx --include='Kconfig*' "config $opt" "$SRC/arch/arm64" "$SRC/init" "$SRC/mm" ||
		die "KIT_CONFIG_ABSENT names $opt, which $SRC still has"
done
bad=0
while IFS= read -r line; do
	opt=${line%%=*}
	[ "${absent/ ${opt#CONFIG_} /}" = "$absent" ] || continue
	case "$line" in
	CONFIG_*=n)
		grep -q "^$opt=" "$BUILD/.config" && { warn "$opt is set, fragment wants it off"; bad=1; } ;;
	CONFIG_*=*) grep -qxF "$line" "$BUILD/.config" || { warn "$line did not take effect"; bad=1; } ;;
	esac
done < <(cat "${frags[@]}" | sed 's/#.*//; /^$/d' | last_setting)
[ $bad = 0 ] || die "config fragments did not apply (see $BUILD/.config)"
echo "$want" >"$BUILD/.kit-config"
