# SPDX-License-Identifier: GPL-2.0
# Common helpers for the build/boot/test scripts. Sourced, not executed.
# This file: strict mode, the paths, messages and the step's guard; then,
# in order, settings.sh (the checked settings), trees.sh (trees, patches,
# build directories), kbuild.sh (make), results.sh (PASS/FAIL/SKIP) and
# steps.sh (make targets from a script, progress, the guest's data).

set -euo pipefail

TOP=${TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
OUT=${OUT:-$TOP/out}
ARCH=arm64
# Cross compile unless the host is arm64 itself; an empty CROSS_COMPILE
# given by the caller also means the native compiler.
if [ -z "${CROSS_COMPILE+set}" ]; then
	case "$(uname -m)" in
	aarch64) CROSS_COMPILE= ;;
	*) CROSS_COMPILE=aarch64-linux-gnu- ;;
	esac
fi
PAGE_SIZE=${PAGE_SIZE:-4K}
SERIES=${SERIES:-on}
DEBUG=${DEBUG:-on}
JOBS=${JOBS:-$(nproc)}
export ARCH CROSS_COMPILE

msg()  { printf '==> %s\n' "$*" >&2; }
warn() { printf 'warning: %s\n' "$*" >&2; }

# A step started by make or by hand, not by another step, is the step's
# guard: it runs the step as its child and, on TERM, INT or HUP, stops the
# child and everything below it before it exits. make passes a TERM on to
# its own children only, and bash runs a trap only after the command in
# the foreground ends, so without the guard a cancelled run's git am or
# build went on as orphans and collided with the next run. The step stays
# in the guard's process group, so that a kill of the group still reaches
# it. The guard also refuses a second run in an OUT where one is alive,
# naming its PID. From a terminal (stdin a tty) there is no guard: ^C
# reaches every process there already.
kit_stop_tree() {	# PID SIGNAL: the process and all below it
	local p pids=() todo=("$1")
	# Stopped top down, so that none forks while we look.
	while [ ${#todo[@]} -gt 0 ]; do
		p=${todo[0]}
		todo=("${todo[@]:1}")
		kill -STOP "$p" 2>/dev/null || continue
		pids+=("$p")
		mapfile -t -O ${#todo[@]} todo < <(pgrep -P "$p" || true)
	done
	[ ${#pids[@]} -gt 0 ] || return 0
	kill -"$2" "${pids[@]}" 2>/dev/null || true
	kill -CONT "${pids[@]}" 2>/dev/null || true
}
kit_guard() {
	local pidf=$OUT/.kit-run.pid other child rc
	mkdir -p "$OUT"
	if ! (set -C; echo $$ >"$pidf") 2>/dev/null; then
		other=$(cat "$pidf" 2>/dev/null || true)
		# A live process of the kit's, not a PID used again since.
		if [ -n "$other" ] && [ "$other" != $$ ] && kill -0 "$other" 2>/dev/null &&
		   tr '\0' ' ' </proc/"$other"/cmdline 2>/dev/null | grep -q 'scripts/[a-z/-]*\.sh'; then
			printf 'error: another kit run is using %s: PID %s (%s); wait for it, or stop it with kill %s\n' \
				"$OUT" "$other" "$(tr '\0' ' ' </proc/"$other"/cmdline 2>/dev/null | cut -c1-120)" \
				"$other" >&2
			exit 1
		fi
		echo $$ >"$pidf"
	fi
	export KIT_STEP=$$
	"$BASH" "$0" "$@" <&0 &
	child=$!
	trap 'kit_stop_tree "$child" TERM' TERM INT HUP
	trap 'rm -f "$pidf"' EXIT
	# wait returns early when a trapped signal arrives: wait again.
	while :; do
		rc=0
		wait "$child" || rc=$?
		kill -0 "$child" 2>/dev/null || exit "$rc"
	done
}
if [ -z "${KIT_STEP:-}" ] && [ ! -t 0 ]; then
	kit_guard "$@"
fi
die()  { printf 'error: %s\n' "$*" >&2; exit 1; }

for _part in settings trees kbuild results steps; do
	. "$(dirname "${BASH_SOURCE[0]}")/$_part.sh"
done
