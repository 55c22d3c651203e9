# SPDX-License-Identifier: GPL-2.0
# make check, group 2. build kernel, module, selftests and initramfs per
# geometry.
# Sourced by scripts/suites/check.sh, not run alone.

# ---- 2. build -------------------------------------------------------------
# Page sizes need separate kernels; everything else is a boot parameter.
# The job: check (make check), soak (make soak: SOAK_SECS of churn per
# mode) or geometries (make check-geometries: the geometries make check
# does not build). Its guests are in scripts/modes/modes.tsv, the geometries it
# builds in scripts/modes/geometries.tsv.
CHECK_JOB=${CHECK_JOB:-check}
case "$CHECK_JOB" in
check|soak|geometries) ;;
*) die "CHECK_JOB must be check, soak or geometries (got '$CHECK_JOB')" ;;
esac
PAGE_SIZES=${CHECK_PAGE_SIZES:-$(python3 "$TOP/scripts/modes/modes.py" geometries "$CHECK_JOB" "$TREE")}
geo() {	# GEOMETRY CMD...: run CMD with PAGE_SIZE and VA_BITS of GEOMETRY
	local g_ps g_va g_levels g_build g_kasan
	read -r g_ps g_va g_levels g_build g_kasan < <(geometry "$1")
	shift
	PAGE_SIZE=$g_ps VA_BITS=$g_va KASAN=$g_kasan "$@"
}
built=()
for ps in $PAGE_SIZES; do
	read -r _ va levels _ kasan < <(geometry "$ps")
	# Not built when no guest of it could boot here.
	if [ "$kasan" = hw ] && why=$(qemu_mte_broken); then
		skip "build $ps: kernel, module, selftests and initramfs ($TREE tree)" "$why"
		continue
	fi
	msg "build ($TREE tree, $ps: $va-bit VA, $levels levels)"
	# Its progress shows here as it goes, and stays in the log.
	if ! geo "$ps" kit_make initramfs 2> >(tee "$CHECK/build-$TREE-$ps.log" >&2); then
		bad "build $ps: kernel, module, selftests and initramfs ($TREE tree)" \
			"$(grep -E '^(error|make: \*\*\*)' "$CHECK/build-$TREE-$ps.log" | head -5); see $CHECK/build-$TREE-$ps.log"
		continue
	fi
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
