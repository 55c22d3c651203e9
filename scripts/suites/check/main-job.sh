# SPDX-License-Identifier: GPL-2.0
# make check, group 5. the main job, interrupted, cancelled and run to its
# report.
# Sourced by scripts/suites/check.sh, not run alone.

# ---- 5. the main job ------------------------------------------------------
# A run killed (SIGKILL to its process group: a closed terminal, a CI job
# stopped) in each long step, tree, apply, config, build and boot, one after
# the other in a fresh OUT; each later run must get past where the one
# before died, none may leave a process behind, and the last must pass.
interrupt_check() {
	local o=$CHECK/interrupt step n=0 pid t src b gitdir
	src=$o/trees/$TREE/src b=$o/trees/$TREE/build-$(variant_of "${built[0]}" \
		"$(default_va_bits "${built[0]}")")
	rm -rf "$o"
	mkdir -p "$o"
	for step in tree apply config build boot; do
		n=$((n + 1))
		msg "interrupt: make run killed in its $step step"
		env -u KIT_STEP setsid make -s -C "$TOP" run OUT="$o" KSRC="$KSRC" \
			PAGE_SIZE="${built[0]}" MEM=1G SMP=2 STRESS=pages=4096 \
			>"$o/run-$n.log" 2>&1 </dev/null &
		pid=$!
		for ((t = 0; t < 6000; t++)); do
			kill -0 "$pid" 2>/dev/null || break
			gitdir=$(sed -n 's/^gitdir: //p' "$src/.git" 2>/dev/null) || true
			case $step in
			tree) [ -d "$src" ] && [ ! -e "$o/trees/$TREE/base" ] && break ;;
			apply) [ -n "$gitdir" ] && [ "$(cat "$gitdir/rebase-apply/next" 2>/dev/null)" \
				-ge 3 ] 2>/dev/null && break ;;
			config) [ -f "$b/.config" ] && [ ! -f "$b/.kit-config" ] && break ;;
			build) [ "$(grep -c '^  CC ' "$b/build.log" 2>/dev/null)" -ge 60 ] 2>/dev/null &&
				break ;;
			boot) grep -qs 'Booting Linux' "$o"/run/*.log && break ;;
			esac
			sleep 0.1
		done
		if ! kill -0 "$pid" 2>/dev/null; then
			bad "interrupt: make run killed in its $step step" \
				"the run ended first; see $o/run-$n.log: $(tail -5 "$o/run-$n.log")"
			return 0
		fi
		kill -KILL -- "-$pid"
		wait "$pid" 2>/dev/null || true
		sleep 2
		# A kill that lands while fixdep writes leaves its .cmd cut off
		# (a CI run met one); make it certain: the newest .cmd is cut
		# inside a $(wildcard ...), as a 4 KiB write would leave it.
		[ "$step" != build ] || truncate_cmd "$b"
		if pgrep -f -- "$o/" >/dev/null; then
			bad "interrupt: nothing runs on after a kill in the $step step" \
				"$(pgrep -af -- "$o/")"
			pkill -KILL -f -- "$o/" || true
		else
			ok "interrupt: make run killed in its $step step, nothing left running"
		fi
	done
	if env -u KIT_STEP make -s -C "$TOP" run OUT="$o" KSRC="$KSRC" PAGE_SIZE="${built[0]}" \
		MEM=1G SMP=2 STRESS=pages=4096 >"$o/run-final.log" 2>&1 </dev/null &&
	   python3 "$TOP/scripts/job/report.py" --check "$o/run/report.json" 1 >>"$o/run-final.log" 2>&1; then
		ok "interrupt: make run after the five kills passes"
		# The runs' logs stay; the trees and builds go.
		git -C "$KSRC" worktree remove --force "$src" 2>/dev/null || true
		find "$o" -mindepth 1 -maxdepth 1 ! -name 'run-*.log' -exec rm -rf {} +
	else
		bad "interrupt: make run after the five kills passes" "$(tail -15 "$o/run-final.log")"
	fi
	git -C "$KSRC" worktree prune
}
[ "${CHECK_INTERRUPT:-1}" = 0 ] || [ "$TREE" != series ] || interrupt_check

# A CI system's cancel: SIGTERM to make alone (not its group), while the
# tree step checks the worktree out (git worktree add, behind a shell for
# its redirection). A second run meanwhile must be refused at once, naming
# the first's PID; within 10 s nothing of the first may run on; the next
# make apply in the same OUT must apply every patch.
cancel_alive() {	# OUT: is a process of a run in OUT alive?
	local pidf=$1/.kit-run.pid
	pgrep -f -- "$1/" >/dev/null ||
		{ [ -f "$pidf" ] && kill -0 "$(cat "$pidf")" 2>/dev/null; }
}
cancel_check() {
	local o=$CHECK/cancel src pid t name
	src=$o/trees/$TREE/src
	rm -rf "$o"
	mkdir -p "$o"
	env -u KIT_STEP setsid make -s -C "$TOP" apply OUT="$o" KSRC="$KSRC" \
		>"$o/apply-1.log" 2>&1 </dev/null &
	pid=$!
	for ((t = 0; t < 6000; t++)); do
		kill -0 "$pid" 2>/dev/null || break
		[ -d "$src" ] && [ ! -e "$o/trees/$TREE/base" ] && break
		sleep 0.1
	done
	if ! kill -0 "$pid" 2>/dev/null; then
		bad "cancel: make apply sent SIGTERM while the tree is checked out" \
			"the run ended first; see $o/apply-1.log: $(tail -5 "$o/apply-1.log")"
		return 0
	fi
	name="cancel: a second run in the same OUT is refused at once, naming the first's PID"
	if env -u KIT_STEP timeout 60 make -s -C "$TOP" apply OUT="$o" KSRC="$KSRC" \
		>"$o/apply-2.log" 2>&1 </dev/null; then
		bad "$name" "it ran to the end: $(tail -3 "$o/apply-2.log")"
	elif grep -q 'another kit run is using .*: PID [0-9]' "$o/apply-2.log"; then
		ok "$name"
	else
		bad "$name" "$(tail -3 "$o/apply-2.log")"
	fi
	kill -TERM "$pid" 2>/dev/null || true
	for ((t = 0; t < 100; t++)); do
		cancel_alive "$o" || break
		sleep 0.1
	done
	name="cancel: SIGTERM to make alone stops all the run started within 10 s"
	if cancel_alive "$o"; then
		bad "$name" "$(pgrep -af -- "$o/"; cat "$o/.kit-run.pid" 2>/dev/null)"
		pkill -KILL -f -- "$o/" || true
	else
		ok "$name"
	fi
	wait "$pid" 2>/dev/null || true
	name="cancel: the next make apply in that OUT applies every patch"
	if env -u KIT_STEP make -s -C "$TOP" apply OUT="$o" KSRC="$KSRC" \
		>"$o/apply-3.log" 2>&1 </dev/null &&
	   [ "$(git -C "$src" rev-list --count "$(cat "$o/trees/$TREE/base")"..HEAD)" = \
	     "$(series_patches | wc -l)" ]; then
		ok "$name"
	else
		bad "$name" "$(tail -5 "$o/apply-3.log")"
	fi
	git -C "$KSRC" worktree remove --force "$src" 2>/dev/null || true
	rm -rf "$o/trees"
	git -C "$KSRC" worktree prune
}
[ "${CHECK_INTERRUPT:-1}" = 0 ] || [ "$TREE" != series ] || cancel_check

msg "main job smoke test"
if PAGE_SIZE="${built[0]}" STRESS="pages=4096 rounds=2" "$TOP/scripts/job/run.sh" >"$CHECK/run.txt" 2>&1 &&
   python3 "$TOP/scripts/job/report.py" --check "$OUT/run/report.json" 2 >>"$CHECK/run.txt"; then
	ok "run: main job report and JSON are complete and sane"
else
	bad "run: main job report and JSON are complete and sane" "$(tail -20 "$CHECK/run.txt")"
fi
