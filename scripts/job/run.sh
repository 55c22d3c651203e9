#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The main job: boot the built kernel, load the module, record the linear
# map at boot, stress set_memory_ro/rw, record it again, and report.
. "$(dirname "$0")/../lib/lib.sh"

dir=$OUT/run
mkdir -p "$dir"
name=run-$TREE-$VARIANT
JOB=run NAME=$name LOGDIR=$dir "$TOP/scripts/job/boot.sh" || {
	[ -f "$dir/$name.data" ] || die "the guest run failed; see $dir/$name.log"
	warn "the guest run reported a failure; see $dir/$name.log"
	fail=1
}
python3 "$TOP/scripts/job/report.py" "$dir/$name.data" "$dir/report.json" \
	"$TREE, $VARIANT pages, MEM=${MEM:-4G}${CMDLINE:+, $CMDLINE}" |
	tee "$dir/report.txt"
rc=${PIPESTATUS[0]}
exit $(( rc || ${fail:-0} ))
