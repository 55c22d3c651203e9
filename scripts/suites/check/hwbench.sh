# SPDX-License-Identifier: GPL-2.0
# make check, group 1 (kit), continued: scripts/bench/hw-bench.sh with
# stand-ins for the programs it drives (perf, memcached, memcaslap, fio,
# cryptsetup, modprobe, rmmod), so that its arithmetic, its report and
# its errors are checked on any host. A guest runs the real programs.
# Sourced by scripts/suites/check/kit.sh, not run alone.

hw_standins() {	# DIR: stand-ins whose figures scale with $HWB_SCALE
	local d=$1
	mkdir -p "$d"
	# perf stat -a -x, -o FILE -e E... -- CMD: runs CMD, writes a CSV;
	# iTLB-load-misses is not counted, as on a PMU without that event
	# (perf says so; at scale 2 it counts 0, as QEMU's PMU does).
	cat >"$d/perf" <<-'EOF'
	#!/bin/bash
	[ "$1" = stat ] || exit 1
	shift
	o=/dev/null ev=()
	while [ "$1" != -- ]; do
		case $1 in -o) o=$2; shift ;; -e) ev+=("$2"); shift ;; esac
		shift
	done
	shift
	"$@"
	rc=$?
	s=${HWB_SCALE:-1}
	for e in "${ev[@]}"; do
		case $e in
		dTLB-load-misses:k) echo "$((200 / s)),,$e,1000,100.00,," ;;
		iTLB-load-misses:k) [ "$s" = 1 ] && echo "<not supported>,,$e,0,100.00,," ||
			echo "0,,$e,1000,100.00,," ;;
		instructions:k) echo "100000,,$e,1000,100.00,," ;;
		cycles:k) echo "50000,,$e,1000,100.00,," ;;
		esac
	done >"$o"
	exit $rc
	EOF
	# memcached: answers connections on its port until killed.
	cat >"$d/memcached" <<-'EOF'
	#!/usr/bin/env python3
	import socket, sys
	port = int(sys.argv[sys.argv.index("-p") + 1])
	s = socket.socket()
	s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
	s.bind(("127.0.0.1", port))
	s.listen(8)
	while True:
	    s.accept()[0].close()
	EOF
	# memcaslap: TPS 1000, 1100, ... times the scale, one a call.
	cat >"$d/memcaslap" <<-'EOF'
	#!/bin/bash
	f=${HWB_STATE:?}/memcaslap.n
	n=$(cat "$f" 2>/dev/null || echo 0)
	echo $((n + 1)) >"$f"
	echo "Run time: 1.0s Ops: 1000 TPS: $(( (1000 + 100 * n) * ${HWB_SCALE:-1} )) Net_rate: 1.0M/s"
	EOF
	cat >"$d/fio" <<-'EOF'
	#!/bin/bash
	case " $* " in
	*--rw=randread*) echo "  read: IOPS=$((12 * ${HWB_SCALE:-1})).5k, BW=48.8MiB/s (51.2MB/s)" ;;
	*) echo "  write: IOPS=$((950 * ${HWB_SCALE:-1})), BW=3800KiB/s (3891kB/s)" ;;
	esac
	EOF
	printf '#!/bin/sh\nexit 0\n' >"$d/cryptsetup"
	printf '#!/bin/sh\nexit 0\n' >"$d/modprobe"
	printf '#!/bin/sh\nexit 0\n' >"$d/rmmod"
	chmod +x "$d"/*
}

hw_bench_checks() {
	local t=$CHECK/kit/hwbench hb=$TOP/scripts/bench/hw-bench.sh out
	if [ "$(id -u)" != 0 ]; then
		skip "kit: hw-bench.sh with stand-ins" "hw-bench.sh runs as root only, and this is uid $(id -u)"
		return 0
	fi
	rm -rf "$t"
	hw_standins "$t/bin"
	# The same without memcaslap.
	mkdir -p "$t/nomc"
	cp -p "$t/bin"/* "$t/nomc/"
	rm "$t/nomc/memcaslap"
	mkdir -p "$t/state"
	run_hwb() {	# SCALE ARGS...: hw-bench.sh with the stand-ins
		local s=$1
		shift
		env PATH="$t/bin:$PATH" HWB_SCALE="$s" HWB_STATE="$t/state" "$hb" --quick \
			--secs 1 --reps 3 --seq-dir "$t" --seq-size 4M "$@"
	}
	if run_hwb 1 --layout pte --label unpatched-layout --out "$t/pte" >"$t/pte.log" 2>&1 &&
	   run_hwb 2 --layout block --out "$t/block" >"$t/block.log" 2>&1; then
		ok "kit: hw-bench.sh runs every workload with stand-ins, in both layouts"
	else
		bad "kit: hw-bench.sh runs every workload with stand-ins, in both layouts" \
			"$(tail -5 "$t/pte.log" "$t/block.log")"
		return 0
	fi
	# The pte run's memcached figures are 1000, 1100, 1200: median 1100.
	if grep -q '"workload": "memcached", "metric": "ops_per_s".*"median": 1100, "min": 1000, "max": 1200' \
		"$t/pte/results.json" &&
	   grep -q '"workload": "fio_randread", "metric": "iops".*"median": 12500' "$t/pte/results.json" &&
	   grep -q '"metric": "kernel_dtlb_mpki".*"median": 2,' "$t/pte/results.json" &&
	   grep -q '"metric": "kernel_itlb_mpki".*"missing": "<not supported>"' "$t/pte/results.json" &&
	   grep -q '"metric": "p99_latency".*"missing": "memcaslap reports no percentiles' "$t/pte/results.json" &&
	   grep -q '"metric": "kernel_itlb_mpki".*"missing": "counted 0' "$t/block/results.json" &&
	   grep -q '^| seqread | bandwidth (MB/s) | [0-9.]* \[' "$t/pte/results.md"; then
		ok "kit: hw-bench.sh gives medians and ranges, and names what it could not measure"
	else
		bad "kit: hw-bench.sh gives medians and ranges, and names what it could not measure" \
			"$(grep '"workload"' "$t/pte/results.json")"
	fi
	# memcaslap's counter goes on: the block run saw 1300, 1400, 1500 x2.
	out=$("$hb" --compare "$t/block" "$t/pte" --md "$t/compare.md" 2>&1) || true
	if grep -q '^| workload | metric | unpatched-layout (pte) | block (block) | change |' "$t/compare.md" &&
	   grep -q '^| memcached | ops_per_s (ops/s, higher is better) | 1100 \[1000, 1200\] | 2800 \[2600, 3000\] | +154.5% |' \
		"$t/compare.md" &&
	   grep -q '^| fio_randwrite | iops (IOPS, higher is better) | 950 \[950, 950\] | 1900 \[1900, 1900\] | +100.0% |' \
		"$t/compare.md" &&
	   grep -q '^| memcached | kernel_dtlb_mpki (misses/kinsn, lower is better) | 2 \[2, 2\] | 1 \[1, 1\] | -50.0% |' \
		"$t/compare.md" &&
	   grep -q '^| memcached | kernel_itlb_mpki .* | missing | missing | - |' "$t/compare.md"; then
		ok "kit: hw-bench.sh --compare joins two runs, the PTE layout as the baseline"
	else
		bad "kit: hw-bench.sh --compare joins two runs, the PTE layout as the baseline" \
			"$out"
	fi
	# memtier_benchmark, where installed, gives the latencies: its table's
	# Totals row, by column name, in msec.
	mkdir -p "$t/memtier"
	cat >"$t/memtier/memtier_benchmark" <<-'EOF'
	#!/bin/sh
	echo "ALL STATS"
	echo "Type         Ops/sec     Hits/sec   Misses/sec    Avg. Latency     p50 Latency     p99 Latency       KB/sec"
	echo "------------------------------------------------------------------------------------------------"
	echo "Sets         1000.00          ---          ---         0.50000         0.47900         1.19900        77.05"
	echo "Gets         9000.00      8900.00       100.00         0.49000         0.47100         1.18300       390.00"
	echo "Totals      10000.00      8900.00       100.00         0.49100         0.47100         1.19100       467.05"
	EOF
	chmod +x "$t/memtier/memtier_benchmark"
	if env PATH="$t/memtier:$t/nomc:$PATH" HWB_STATE="$t/state" "$hb" --quick --secs 1 --reps 2 \
		--only memcached --layout block --out "$t/memtier-run" >"$t/memtier.log" 2>&1 &&
	   grep -q '"metric": "ops_per_s".*"median": 10000,' "$t/memtier-run/results.json" &&
	   grep -q '"metric": "p50_latency".*"median": 471,' "$t/memtier-run/results.json" &&
	   grep -q '"metric": "p99_latency".*"median": 1191,' "$t/memtier-run/results.json"; then
		ok "kit: hw-bench.sh reads ops/s, P50 and P99 from memtier_benchmark"
	else
		bad "kit: hw-bench.sh reads ops/s, P50 and P99 from memtier_benchmark" \
			"$(tail -5 "$t/memtier.log"; grep memcached "$t/memtier-run/results.json")"
	fi
	expect_fail "kit: hw-bench.sh without memcaslap says which package" \
		'missing programs:.* memcaslap \(Debian: libmemcached-tools,' \
		env PATH="$t/nomc:/usr/sbin:/usr/bin:/sbin:/bin" "$hb" --layout pte --out "$t/x"
	expect_fail "kit: hw-bench.sh refuses a workload it does not know" "no workload 'memcache'" \
		"$hb" --only memcache --layout pte --out "$t/x"
	expect_fail "kit: hw-bench.sh --compare of something else is refused" \
		'not a hw-bench results.json' "$hb" --compare "$t/pte" "$t/pte.log"
}
hw_bench_checks
