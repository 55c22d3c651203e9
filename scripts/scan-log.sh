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
hits=$(grep -a -n -E "$pat" "$log" | head -20)
if [ -n "$hits" ]; then
	echo "FAIL: kernel splat in $log:" >&2
	echo "$hits" | sed 's/^/    /' >&2
	exit 1
fi
exit 0
