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

# drill_fails NAME TEST WHAT VAR=VALUE...: a drill guest booted with those
# settings must report TEST (a TAP name) failed, not skipped or passed.
drill_fails() {
	local name=drill-$1 test=$2 what="drill: $3"
	shift 3
	geo "${built[0]}" env "$@" NAME="$name" LOGDIR="$CHECK" \
		"$TOP/scripts/job/boot.sh" >/dev/null 2>&1 || true
	if [ -f "$CHECK/$name.data" ] &&
	   linmap_data tap "$CHECK/$name.data" | grep -q "^fail	[0-9]* $test	"; then
		ok "$what"
	else
		bad "$what" "see $CHECK/$name.log"
	fi
}

# A mode whose claim is broken on purpose: its command line states that the
# kernel claims BBML2_NOABORT (linmap.claims=bbml2) while no CPU has it
# (bbml2_test=none). The guest's claims test must fail, not skip.
drill_fails claims 'linmap\.claims' \
	"a kernel that does not claim what its mode states fails the claims test" \
	JOB=check BBML2=none CMDLINE="linmap.claims=bbml2 linmap.only=state_sane,claims"
drill_fails nodisk 'workload\.setup' \
	"a workload guest without its Debian disk fails, it is not skipped" \
	JOB=workload CMDLINE="linmap.workloads=memcached"
