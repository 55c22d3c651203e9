#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# usage: mutate.sh WORKDIR
# Each mutation of mutations.tsv applied to a copy of this directory:
# the mutation must change its file, the copy must build, and the named
# case of tlbsim --selftest must fail. Prints one TAP line per mutation,
# in the table's order; the mutations run MUTATE_JOBS (the CPUs) at a
# time, each in its own directory.
set -u
src=$(cd "$(dirname "$0")" && pwd)
work=${1:?usage: mutate.sh WORKDIR}
jobs=${MUTATE_JOBS:-$(nproc 2>/dev/null || echo 1)}
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "mutate.sh: MUTATE_JOBS takes a count (got '$jobs')" >&2; exit 2; }

# mutate N NAME FILE SUBST WANT: one mutation, in WORKDIR/NAME; its TAP
# line in WORKDIR/NAME.result.
mutate() {
	local n=$1 name=$2 file=$3 subst=$4 want=$5 d=$work/$2 caught
	rm -rf "$d"
	mkdir -p "$d"
	cp "$src"/*.h "$src"/*.c "$src"/*.tsv "$d/"
	perl -0pi -e "$subst" "$d/$file"
	if cmp -s "$src/$file" "$d/$file"; then
		echo "not ok $n mutation $name # the substitution changed nothing in $file"
	elif ! gcc -O2 -Wall -Wextra -o "$d/tlbsim" "$d/tlbsim.c" >"$d/build.log" 2>&1; then
		echo "not ok $n mutation $name # does not build: $(head -3 "$d/build.log" | tr '\n' ' ')"
	else
		(cd "$d" && timeout 120 ./tlbsim --selftest "$d") >"$d/selftest.tap" 2>&1
		caught=$(grep "^not ok [0-9]* $want" "$d/selftest.tap" | head -1)
		if [ -n "$caught" ]; then
			echo "ok $n mutation $name # caught: ${caught%% #*}"
		else
			echo "not ok $n mutation $name # no failing case '$want': $(grep -c '^not ok' "$d/selftest.tap") failed"
		fi
	fi >"$d.result"
}

names=()
n=0
mkdir -p "$work"
while IFS=$'\t' read -r name file subst want; do
	case $name in ''|'#'*) continue ;; esac
	n=$((n + 1))
	names+=("$name")
	rm -f "$work/$name.result"
	mutate "$n" "$name" "$file" "$subst" "$want" &
	# At most $jobs at once.
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
		wait -n
	done
done <"$src/mutations.tsv"
wait
bad=0
for name in "${names[@]}"; do
	if [ -f "$work/$name.result" ]; then
		cat "$work/$name.result"
		grep -q '^ok ' "$work/$name.result" || bad=1
	else
		echo "not ok mutation $name # it left no result"
		bad=1
	fi
done
echo "1..$n"
exit $bad
