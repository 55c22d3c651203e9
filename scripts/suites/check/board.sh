# SPDX-License-Identifier: GPL-2.0
# make check, group 3b. the install-tests tarball run as on a board.
# Sourced by scripts/suites/check.sh, not run alone.

# ---- 3b. as on a board ----------------------------------------------------
# The 'make install-tests' tarball for the first kernel built, unpacked in
# a guest and run as a user would on a board: ./run_kselftest.sh with no
# kit settings, the module found next to the binary. bbml2_test=all stands
# in for a CPU that the BBML2_NOABORT allowlist names.
board_guest() {
	local ps=$1 mode=$1-board kdir tar initrd data top nested fails status name reason f missing= progs
	read -r _ _ _ kdir _ < <(geometry "$ps")
	if ! tar=$(env -u LINMAP_KO INSTALL_OUT="$CHECK/install-tests" KDIR="$kdir" \
		"$TOP/scripts/job/install-tests.sh" 2>"$CHECK/install-tests.log"); then
		bad "install-tests: tarball for the $ps kernel" "$(tail -20 "$CHECK/install-tests.log")"
		return 0
	fi
	progs=$(linmap_progs "$SRC/tools/testing/selftests")
	for f in run_kselftest.sh hw-bench.sh kselftest-list.txt kselftest/runner.sh kselftest/prefix.pl \
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
	if ! KSELFTEST_TAR=$tar INITRD=$initrd geo "$ps" "$TOP/scripts/job/initramfs.sh" \
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
