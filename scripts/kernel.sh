#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the kernel Image and module support for the selected variant.
. "$(dirname "$0")/lib.sh"

require_cmds "${CROSS_COMPILE}gcc" ccache make
"$TOP/scripts/config.sh"
log=$BUILD/build.log
msg "building $TREE kernel, $VARIANT pages, in $BUILD (log: $log)"
start=$(date +%s)
if ! kmake Image modules >"$log" 2>&1; then
	grep -E 'error|Error' "$log" | head -20 >&2
	die "kernel build failed; see $log"
fi
msg "kernel built in $(( $(date +%s) - start ))s: $IMAGE"
