# SPDX-License-Identifier: GPL-2.0
# Steps run from a script: the kit's make targets, a long command's
# progress lines, the guest's data block, and the TLB model's tools.
# Sourced by lib.sh, in its order; not on its own.

# kit_make TARGET...: the kit's own make targets from a script: the
# Makefile's graph alone orders the steps (a step never runs the one
# before it). The settings go through the environment.
kit_make() { submake -s --no-print-directory -C "$TOP" "$@"; }

# module_initramfs: the module, the selftests and the initramfs of the
# tree and build KIT_SRC and KIT_BUILD name, one the Makefile does not
# build (the upstream peer's); with those set on the call.
module_initramfs() {
	"$TOP/scripts/job/kmod.sh" && "$TOP/scripts/job/selftests.sh" && "$TOP/scripts/job/initramfs.sh"
}

# The guest's data block, read by scripts/lib/linmap_data.py (see its usage).
linmap_data() { python3 "$TOP/scripts/lib/linmap_data.py" "$@"; }

# stamp_of FILE...: a hash of the files' contents, in order (not of their
# paths: the same rootfs or config from another clone has the same stamp).
stamp_of() {
	local f
	for f in "$@"; do
		if [ -f "$f" ]; then sha256sum <"$f"; else echo "no ${f##*/}"; fi
	done | sha256sum | cut -c1-16
}

# with_progress WHAT LOG PATTERN UNIT TOTAL CMD...: run CMD, its output in
# LOG, and say how it goes while it runs: the time taken and, with a
# PATTERN, how many lines of LOG match it, as UNIT (of about TOTAL if
# known; a number of seconds for a TOTAL of "Ns"). On a terminal
# one line updates every second; in a log (CI) a line every PROGRESS_SECS
# (30) seconds, none for a step that ends sooner.
with_progress() {
	local rc=0 tick log=$2
	_ticker "$1" "$2" "$3" "$4" "$5" "$$" &
	shift 5
	tick=$!
	"$@" >"$log" 2>&1 || rc=$?
	kill "$tick" 2>/dev/null || true
	wait "$tick" 2>/dev/null || true
	[ ! -t 2 ] || printf '\r\033[K' >&2
	return $rc
}

_ticker() {	# WHAT LOG PATTERN UNIT TOTAL PID: until PID (the caller) is gone
	local t0 secs last=0 every=${PROGRESS_SECS:-30} line n
	[ -t 2 ] && every=1
	t0=$(date +%s)
	# A background job ignores SIGINT: it stops when its caller is gone.
	while sleep 1 && kill -0 "$6" 2>/dev/null; do
		secs=$(($(date +%s) - t0))
		[ $((secs - last)) -ge "$every" ] || continue
		last=$secs
		line="$1: $((secs / 60))m$(printf %02d $((secs % 60)))s"
		case $5 in
		*s) line+=" of at most ${5%s}s" ;;
		esac
		if [ -n "$3" ]; then
			n=$(grep -cE -- "$3" "$2" 2>/dev/null) || true
			line+=", ${n:-0}"
			[[ ! $5 =~ ^[0-9]+$ ]] || line+=" of about $5"
			line+=" $4"
		fi
		if [ -t 2 ]; then
			printf '\r\033[K... %s' "$line" >&2
		else
			printf '... %s (log: %s)\n' "$line" "$2" >&2
		fi
	done
}

# The TLB measurement's host tools (scripts/bench/tlb/Makefile): the QEMU
# plugin and the model's replay, built into DIR.
tlb_tools() {	# DIR
	submake -s -C "$TOP/scripts/bench/tlb" O="$1" host
}
