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
pat+='cut here|Call trace:'
# The kdump guests panic on purpose: from init's "exiting init to panic"
# to the crash kernel's first line, the panic and its stack are expected,
# if a crash kernel does boot after them.
hits=$(awk '/linmap: exiting init to panic into the crash kernel/ { skip = 1; n = 0 }
	    skip && /Booting Linux on physical CPU/ { skip = 0 }
	    skip { held[++n] = NR ":" $0; next }
	    { print NR ":" $0 }
	    END { for (i = 1; skip && i <= n; i++) print held[i] }' "$log" |
	grep -a -E "^[0-9]+:.*($pat)" | head -20)
if [ -n "$hits" ]; then
	echo "FAIL: kernel splat in $log:" >&2
	echo "$hits" | sed 's/^/    /' >&2
	exit 1
fi
exit 0
