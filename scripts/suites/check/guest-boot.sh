# SPDX-License-Identifier: GPL-2.0
# make check: a guest's boot, in its turn or ahead of it, beside the guest
# before it (guests.sh, board.sh). Sourced by scripts/suites/check.sh, and
# by kit.sh, which tests it with a stand-in for boot.sh; not run alone.

# boot_sh GEOMETRY MODE VAR=VALUE...: boot.sh with these settings, its
# logs in the check directory: one command for a guest in its turn and
# one booted ahead, so that the two boot alike.
boot_sh() {
	local ps=$1 mode=$2
	shift 2
	geo "$ps" env "$@" NAME="$mode" LOGDIR="$CHECK" "$TOP/scripts/job/boot.sh"
}

# boot_guest GEOMETRY MODE VAR=VALUE...: boot.sh with these settings, its
# logs in the check directory; it must boot, finish and log no splat. A
# guest that boot_ahead started with the same settings is waited for.
boot_guest() {
	local ps=$1 mode=$2 rc=0
	shift 2
	if [ -n "${AHEAD_PID[$mode]:-}" ] && [ "${AHEAD_ARGS[$mode]}" = "$ps $*" ]; then
		wait "${AHEAD_PID[$mode]}" || rc=$?
		cat "$CHECK/$mode.ahead" >&2
		rm -f "$CHECK/$mode.ahead"
		unset "AHEAD_PID[$mode]" "AHEAD_ARGS[$mode]"
	else
		ahead_cancel "$mode"
		boot_sh "$ps" "$mode" "$@" || rc=$?
	fi
	if [ $rc = 0 ]; then
		ok "$mode: guest booted, finished and logged no splat"
	else
		bad "$mode: guest booted, finished and logged no splat" "console log: $CHECK/$mode.log"
	fi
}

# Two guests at a time. A guest keeps one or two vCPU threads busy for
# most of its run, so while one boots and is judged the next boots beside
# it (GUESTS_AHEAD=0: one at a time). Its output is held until its turn,
# so the log reads as if they ran one by one, and its results are judged
# in its turn. Only a guest that needs nothing an earlier guest makes
# boots ahead: not the package guests (deb-run takes what deb-install
# installed), not the hibernation pairs; and none beside a guest whose
# timings are its result (hwbench). The Debian userspace and the kexec
# disk are made for a guest booted ahead as for one in its turn.
declare -A AHEAD_PID=() AHEAD_ARGS=()
boot_ahead() {	# GEOMETRY MODE VAR=VALUE...
	local ps=$1 mode=$2
	shift 2
	AHEAD_ARGS[$mode]="$ps $*"
	boot_sh "$ps" "$mode" "$@" >"$CHECK/$mode.ahead" 2>&1 &
	AHEAD_PID[$mode]=$!
}
# ahead_cancel [MODE]: stop a guest booted ahead (every one without MODE):
# one whose turn came with other settings (none should) boots again.
ahead_cancel() {
	local m
	for m in "${!AHEAD_PID[@]}"; do
		[ -z "${1:-}" ] || [ "$m" = "$1" ] || continue
		kit_stop_tree "${AHEAD_PID[$m]}" TERM
		wait "${AHEAD_PID[$m]}" 2>/dev/null || true
		warn "guest $m, booted ahead, stopped before its turn"
		rm -f "$CHECK/$m.ahead"
		unset "AHEAD_PID[$m]" "AHEAD_ARGS[$m]"
	done
}
