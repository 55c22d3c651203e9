# SPDX-License-Identifier: GPL-2.0
# make check, group 4. failure drills: a hung guest, a panicking one, a
# module that fails to load.
# Sourced by scripts/suites/check.sh, not run alone.

# ---- 4. failure drills ----------------------------------------------------
msg "failure drills"
expect_fail "drill: a hung guest times out and its log path is printed" \
	'timed out after 20s.*|console log: .*hang\.log' \
	env JOB=hang NAME=drill-hang LOGDIR="$CHECK" QEMU_TIMEOUT=20 PAGE_SIZE="${built[0]}" \
	"$TOP/scripts/job/boot.sh"
expect_fail "drill: a guest whose init dies (panic) fails the run" \
	'did not finish' \
	env JOB=panic NAME=drill-panic LOGDIR="$CHECK" PAGE_SIZE="${built[0]}" "$TOP/scripts/job/boot.sh"
JOB=check NAME=drill-nomod LOGDIR=$CHECK PAGE_SIZE="${built[0]}" CMDLINE="module_blacklist=linmap_test" \
	"$TOP/scripts/job/boot.sh" >/dev/null 2>&1 || true
if grep -qx 'module=failed' "$CHECK/drill-nomod.data" 2>/dev/null &&
   grep -q 'blacklisted' "$CHECK/drill-nomod.data"; then
	ok "drill: a module that fails to load is reported with its dmesg lines"
else
	bad "drill: a module that fails to load is reported with its dmesg lines" \
		"see $CHECK/drill-nomod.log"
fi

# A mode whose claim is broken on purpose: its command line states that the
# kernel claims BBML2_NOABORT (linmap.claims=bbml2) while no CPU has it
# (bbml2_test=none). The guest's claims test must fail, not skip.
JOB=check NAME=drill-claims LOGDIR=$CHECK PAGE_SIZE="${built[0]}" BBML2=none \
	CMDLINE="linmap.claims=bbml2 linmap.only=state_sane,claims" \
	"$TOP/scripts/job/boot.sh" >/dev/null 2>&1 || true
if [ -f "$CHECK/drill-claims.data" ] &&
   linmap_data tap "$CHECK/drill-claims.data" | grep -q '^fail	[0-9]* linmap\.claims'; then
	ok "drill: a kernel that does not claim what its mode states fails the claims test"
else
	bad "drill: a kernel that does not claim what its mode states fails the claims test" \
		"see $CHECK/drill-claims.log"
fi

JOB=workload NAME=drill-nodisk LOGDIR=$CHECK PAGE_SIZE="${built[0]}" \
	CMDLINE="linmap.workloads=memcached" "$TOP/scripts/job/boot.sh" >/dev/null 2>&1 || true
if [ -f "$CHECK/drill-nodisk.data" ] &&
   linmap_data tap "$CHECK/drill-nodisk.data" | grep -q '^fail	[0-9]* workload\.setup'; then
	ok "drill: a workload guest without its Debian disk fails, it is not skipped"
else
	bad "drill: a workload guest without its Debian disk fails, it is not skipped" \
		"see $CHECK/drill-nodisk.log"
fi
