#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# usage: mutate.sh WORKDIR
# Each mutation of mutations.tsv applied to a copy of this directory:
# the mutation must change its file, the copy must build, and the named
# case of tlbsim --selftest must fail. Prints one TAP line per mutation.
set -u
src=$(cd "$(dirname "$0")" && pwd)
work=${1:?usage: mutate.sh WORKDIR}
n=0
bad=0
while IFS=$'\t' read -r name file subst want; do
	case $name in ''|'#'*) continue ;; esac
	n=$((n + 1))
	d=$work/$name
	rm -rf "$d"
	mkdir -p "$d"
	cp "$src"/*.h "$src"/*.c "$src"/*.tsv "$d/"
	perl -0pi -e "$subst" "$d/$file"
	if cmp -s "$src/$file" "$d/$file"; then
		echo "not ok $n mutation $name # the substitution changed nothing in $file"
		bad=1
		continue
	fi
	if ! gcc -O2 -Wall -Wextra -o "$d/tlbsim" "$d/tlbsim.c" >"$d/build.log" 2>&1; then
		echo "not ok $n mutation $name # does not build: $(head -3 "$d/build.log" | tr '\n' ' ')"
		bad=1
		continue
	fi
	(cd "$d" && timeout 120 ./tlbsim --selftest "$d") >"$d/selftest.tap" 2>&1
	caught=$(grep "^not ok [0-9]* $want" "$d/selftest.tap" | head -1)
	if [ -n "$caught" ]; then
		echo "ok $n mutation $name # caught: ${caught%% #*}"
	else
		echo "not ok $n mutation $name # no failing case '$want': $(grep -c '^not ok' "$d/selftest.tap") failed"
		bad=1
	fi
done <"$src/mutations.tsv"
echo "1..$n"
exit $bad
