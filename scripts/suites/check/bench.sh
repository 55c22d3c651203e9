# SPDX-License-Identifier: GPL-2.0
# make check, group 6. make bench-quick, as a smoke test.
# Sourced by scripts/suites/check.sh, not run alone.

# ---- 6. the benchmark, as a smoke test ------------------------------------
# bench-quick builds the unpatched kernel too and checks only that the
# figures exist and agree with the leaf counts they came with.
if [ "${CHECK_BENCH:-1}" = 1 ] && [ "$TREE" = series ]; then
	msg "bench-quick smoke test"
	if BENCH_QUICK=1 "$TOP/scripts/bench/bench.sh" >"$CHECK/bench.txt" 2>&1; then
		ok "bench: quick benchmark produced sane figures ($OUT/bench/report.md)"
		sed -n '/^## Targets/,/^## Frag/p' "$OUT/bench/report.md" | grep '^- ' | sed 's/^/    /'
	else
		bad "bench: quick benchmark produced sane figures" "$(tail -25 "$CHECK/bench.txt")"
	fi
fi
