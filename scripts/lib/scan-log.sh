#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Fail if a console log holds a kernel splat: WARNING, BUG, Oops, panic,
# lockdep report or might-sleep report. Prints each hit with its line.
set -u
log=${1:?usage: scan-log.sh LOG}
pat='WARNING:|BUG:|kernel BUG at|Oops|Internal error:|Kernel panic|Unable to handle kernel|'
pat+='possible circular locking|possible recursive locking|inconsistent lock state|'
pat+='INFO: lockdep|lockdep is turned off|suspicious RCU usage|'
pat+='sleeping function called from invalid context|scheduling while atomic|'
pat+='cut here|Call trace:|'
# The kernel's own rodata test and W^X scan (CONFIG_DEBUG_RODATA_TEST,
# CONFIG_DEBUG_WX) report a failure without a splat.
pat+='rodata_test: (test|start|end) |Checked W[+]X mappings: FAILED'
# KFENCE's own KUnit suite (kfence_test, linmap.kunit=) makes KFENCE report
# on purpose: its "BUG: KFENCE:" lines are expected inside the suite.
# The kdump guests panic on purpose: from init's "exiting init to panic"
# to the crash kernel's first line, the panic and its stack are expected,
# if a crash kernel does boot after them.
# The module's direct_map_irqs_off check warns once on purpose: between its
# begin and end lines, one WARNING from set_direct_map() with its "cut
# here" and "Call trace:" lines is expected; anything else there, or a
# window that never ends, is reported whole.
hits=$(awk -v pat="$pat" '
	    function flush(ok,  i) { for (i = 1; i <= w; i++) if (!ok) print win[i]; w = 0 }
	    /linmap: exiting init to panic into the crash kernel/ { skip = 1; n = 0 }
	    skip && /Booting Linux on physical CPU/ { skip = 0 }
	    skip { held[++n] = NR ":" $0; next }
	    /# Subtest: kfence\r?$/ { kfence = 1 }
	    kfence && /(not )?ok [0-9]+ kfence\r?$/ { kfence = 0 }
	    kfence && /BUG: KFENCE: / { next }
	    /expected warning: set_direct_map\(\) with interrupts off, begin/ {
		flush(0); inwin = 1; warns = 0; other = 0; next }
	    inwin && /expected warning: set_direct_map\(\) with interrupts off, end/ {
		inwin = 0; flush(warns == 1 && !other); next }
	    inwin {
		win[++w] = NR ":" $0
		if ($0 ~ /WARNING:/) { if ($0 ~ /set_direct_map/) warns++; else other = 1 }
		else if ($0 ~ pat && $0 !~ /cut here|Call trace:/) other = 1
		next }
	    { print NR ":" $0 }
	    END { flush(0); for (i = 1; skip && i <= n; i++) print held[i] }' "$log" |
	grep -a -E "^[0-9]+:.*($pat)" | head -20)
if [ -n "$hits" ]; then
	echo "FAIL: kernel splat in $log:" >&2
	echo "$hits" | sed 's/^/    /' >&2
	exit 1
fi
exit 0
