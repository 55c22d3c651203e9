#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# hw-bench.sh: the workloads the block-mapped linear map was measured
# with, on the machine itself, in the layout its kernel runs now. Run it
# as root once per layout (boot without and with linear_map_ptes), then
# join the two runs with --compare.
#
#   memcached  memcached under memtier_benchmark if installed (ops/s, P50
#              and P99 latency), else memcaslap (libmemcached-tools;
#              ops/s only: it reports no percentiles)
#   fio        fio 4 KiB random reads and random writes on dm-crypt
#              (plain, aes-xts-plain64) over a RAM disk (brd) or --device
#   seqread    dd of a file already in the page cache, sized to the
#              machine's memory: MB/s
#
# Each repetition runs under 'perf stat -a' with the kernel-mode events
# dTLB-load-misses:k, iTLB-load-misses:k, instructions:k and cycles:k;
# an event the PMU does not count (perf says so, or it counts 0) is
# reported missing, never as zero.
# Figures: median and range over the repetitions. Writes OUT/results.json,
# OUT/results.md and OUT/raw/ (every tool's own output).
#
# Longer than 400 lines: one file to copy onto a server, with no
# dependency beyond the workloads' own programs, perf, awk and coreutils.
set -euo pipefail

usage() {
	cat <<'EOF'
usage: hw-bench.sh [options]             measure this machine, this layout
       hw-bench.sh --compare A B [--md F] join two runs (their OUT
                                         directories or results.json)
options:
  --layout pte|block   the linear map's layout (default: from the kernel:
                       linear_map_ptes, DirectMap, the linmap_test module)
  --label TEXT         a name for this run (default: the layout)
  --out DIR            where the results go (default ./hw-bench-LAYOUT-DATE)
  --only LIST          workloads, comma-separated (memcached,fio,seqread)
  --reps N             repetitions of each workload (5; --quick 2)
  --secs N             seconds of each memcached and fio run (60; --quick 5)
  --threads N          memcached and memcaslap threads, fio jobs
                       (a quarter of the CPUs, at least 1)
  --device DEV         fio on dm-crypt over DEV, which is overwritten,
                       instead of a RAM disk of --fio-size
  --fio-size SIZE      RAM disk size, or the part of DEV used (4G; --quick 64M)
  --seq-size SIZE      the cached file (40% of MemAvailable, at most 100G;
                       --quick 256M)
  --seq-dir DIR        where that file goes (/var/tmp)
  --quick              short runs and small sizes: a smoke test
EOF
}

die() { printf 'hw-bench: error: %s\n' "$*" >&2; exit 1; }
say() { printf '==> %s\n' "$*" >&2; }

# SIZE with a K, M, G or T suffix, in bytes.
bytes() {
	local n=${1%[KkMmGgTt]} s=${1: -1}
	[[ $n =~ ^[0-9]+$ ]] || die "not a size: '$1' (e.g. 256M, 4G)"
	case $s in
	[Kk]) echo $((n << 10)) ;; [Mm]) echo $((n << 20)) ;;
	[Gg]) echo $((n << 30)) ;; [Tt]) echo $((n << 40)) ;;
	*) echo "$n" ;;
	esac
}

# ---- --compare -------------------------------------------------------------
# Every result is one line of results.json (the writer below keeps it so),
# which is all this reads back.
# JSON_FIELD: the awk function that reads field K (a string or a number)
# from one such line; both readers below start with it.
JSON_FIELD='
function field(line, k,    m) {
	if (match(line, "\"" k "\": *\"[^\"]*\"")) {
		m = substr(line, RSTART, RLENGTH); sub(/^[^:]*: *"/, "", m); sub(/"$/, "", m)
		return m
	}
	if (match(line, "\"" k "\": *[-0-9.eE+]+")) {
		m = substr(line, RSTART, RLENGTH); sub(/^[^:]*: */, "", m)
		return m
	}
	return ""
}'

json_of() {
	if [ -d "$1" ]; then echo "$1/results.json"; else echo "$1"; fi
}

compare() {
	local a b md=${3:-}
	a=$(json_of "$1") b=$(json_of "$2")
	[ -f "$a" ] || die "--compare: no $a"
	[ -f "$b" ] || die "--compare: no $b"
	awk -v A="$a" -v B="$b" "$JSON_FIELD"'
	function load(f, side,    line, key) {
		while ((getline line < f) > 0) {
			if (line ~ /^ *"layout":/) layout[side] = field(line, "layout")
			if (line ~ /^ *"label":/) label[side] = field(line, "label")
			if (line !~ /"workload":/) continue
			key = field(line, "workload") SUBSEP field(line, "metric")
			if (!(key in seen)) { seen[key] = 1; order[++n] = key }
			med[side, key] = field(line, "median"); lo[side, key] = field(line, "min")
			hi[side, key] = field(line, "max"); better[key] = field(line, "better")
			unit[key] = field(line, "unit"); reps[side, key] = field(line, "reps")
			if (line ~ /"missing":/) miss[side, key] = field(line, "missing")
		}
		close(f)
		if (!(side in layout)) { print "hw-bench: error: " f ": not a hw-bench results.json" > "/dev/stderr"; exit 2 }
	}
	function cell(side, key) {
		if ((side, key) in miss) return "missing"
		if (med[side, key] == "") return "-"
		return sprintf("%s [%s, %s]", med[side, key], lo[side, key], hi[side, key])
	}
	BEGIN {
		load(A, "a"); load(B, "b")
		# The PTE layout is the baseline, as in the published table.
		x = "a"; y = "b"
		if (layout["b"] == "pte" && layout["a"] != "pte") { x = "b"; y = "a" }
		printf "| workload | metric | %s (%s) | %s (%s) | change |\n", label[x], layout[x], label[y], layout[y]
		print "|---|---|---|---|---|"
		for (i = 1; i <= n; i++) {
			k = order[i]; split(k, wm, SUBSEP); ch = "-"
			if (!((x, k) in miss) && !((y, k) in miss) && med[x, k] != "" && med[y, k] != "" && med[x, k] + 0 != 0)
				ch = sprintf("%+.1f%%", (med[y, k] - med[x, k]) * 100 / med[x, k])
			printf "| %s | %s (%s, %s is better) | %s | %s | %s |\n", wm[1], wm[2], unit[k], better[k], cell(x, k), cell(y, k), ch
		}
		print ""
		print "Median [min, max] over each run'\''s repetitions; change: of the medians, against the " layout[x] " layout. Sources: " A ", " B "."
	}' >"${md:-/dev/stdout}"
	[ -z "$md" ] || { cat "$md"; say "written: $md"; }
}

if [ "${1:-}" = --compare ]; then
	if [ $# = 3 ]; then
		compare "$2" "$3"
	elif [ $# = 5 ] && [ "$4" = --md ]; then
		compare "$2" "$3" "$5"
	else
		usage >&2
		exit 2
	fi
	exit 0
fi

# ---- options ---------------------------------------------------------------
layout='' label='' out='' only=memcached,fio,seqread reps='' secs='' threads=''
device='' fio_size='' seq_size='' seq_dir=/var/tmp quick=0
while [ $# -gt 0 ]; do
	case $1 in
	--layout) layout=${2:?}; shift ;;
	--label) label=${2:?}; shift ;;
	--out) out=${2:?}; shift ;;
	--only) only=${2:?}; shift ;;
	--reps) reps=${2:?}; shift ;;
	--secs) secs=${2:?}; shift ;;
	--threads) threads=${2:?}; shift ;;
	--device) device=${2:?}; shift ;;
	--fio-size) fio_size=${2:?}; shift ;;
	--seq-size) seq_size=${2:?}; shift ;;
	--seq-dir) seq_dir=${2:?}; shift ;;
	--quick) quick=1 ;;
	-h|--help) usage; exit 0 ;;
	*) usage >&2; die "unknown option '$1'" ;;
	esac
	shift
done
if [ $quick = 1 ]; then
	reps=${reps:-2} secs=${secs:-5} fio_size=${fio_size:-64M} seq_size=${seq_size:-256M}
else
	reps=${reps:-5} secs=${secs:-60} fio_size=${fio_size:-4G}
fi
[[ $reps =~ ^[1-9][0-9]*$ ]] || die "--reps takes a number (got '$reps')"
[[ $secs =~ ^[1-9][0-9]*$ ]] || die "--secs takes seconds (got '$secs')"
ncpu=$(nproc)
threads=${threads:-$(( ncpu / 4 > 0 ? ncpu / 4 : 1 ))}
[[ $threads =~ ^[1-9][0-9]*$ ]] || die "--threads takes a number (got '$threads')"
for w in ${only//,/ }; do
	case $w in memcached|fio|seqread) ;; *) die "--only: no workload '$w' (memcached, fio, seqread)" ;; esac
done
want() { [[ ",$only," == *",$1,"* ]]; }
[ "$(id -u)" = 0 ] || die "run as root (perf -a, RAM disks, dm-crypt, the page cache)"

# Every program a chosen workload needs, before anything runs.
need=()
mc_client=memcaslap
command -v memtier_benchmark >/dev/null && mc_client=memtier_benchmark
want memcached && need+=("memcached:memcached")
want memcached && [ $mc_client = memcaslap ] &&
	need+=("memcaslap:libmemcached-tools, or memtier_benchmark for latencies")
want fio && need+=("fio:fio" "cryptsetup:cryptsetup-bin")
want seqread && need+=("dd:coreutils")
missing=
want fio && [ -z "$device" ] && need+=("modprobe:kmod")
for n in "${need[@]}" "awk:gawk or mawk" "grep:grep" "sed:sed" "sort:coreutils"; do
	command -v "${n%%:*}" >/dev/null || missing+=" ${n%%:*} (Debian: ${n#*:})"
done
[ -z "$missing" ] || die "missing programs:$missing; install them or leave their workload out with --only"

# ---- the machine and its linear map ----------------------------------------
kmsg=$(dmesg 2>/dev/null || true)
meminfo_kb() { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }
directmap=$(awk '/^DirectMap/ { sub(":", "", $1); printf "%s\"%s\": %s", sep, $1, $2; sep = ", " }' /proc/meminfo)
counts=/sys/kernel/debug/linmap_test/counts
leaves=
[ ! -r "$counts" ] || leaves=$(awk -F= '/^all\.[a-z_]+=/ && $1 !~ /_bytes$/ {
	sub("all.", "", $1); printf "%s\"%s\": %s", sep, $1, $2; sep = ", " }' "$counts")
midrs=$( (cat /sys/devices/system/cpu/cpu*/regs/identification/midr_el1 2>/dev/null || true) |
	sort | uniq -c | awk '{ printf "%s\"%s x%s\"", sep, $2, $1; sep = ", " }')
if grep -q 'detected: BBM level 2 without TLB conflict aborts' <<<"$kmsg"; then
	bbml2=yes
elif grep -q 'CPU features: detected' <<<"$kmsg"; then
	bbml2=no
else
	bbml2=unknown
fi
lm_line=$(grep -o 'linear map: .*' <<<"$kmsg" | head -1 || true)
# What the kernel shows of its layout: linear_map_ptes as the kernel reads
# a boolean (the last one counts), else DirectMap (the healing series) or
# the test module's leaf counts. Empty if nothing tells.
seen_layout() {
	local ptes
	ptes=$(tr ' ' '\n' </proc/cmdline | awk '
		$0 == "linear_map_ptes" { v = 1 }
		/^linear_map_ptes=/ { x = substr($0, 17); v = (x ~ /^([1yYtT]|on|ON|On)/) }
		END { print v + 0 }')
	if [ "$ptes" = 1 ]; then
		echo pte
	elif [ -n "$directmap" ]; then
		awk '/^DirectMap(2M|1G|32M|512M|16G):/ && $2 > 0 { f = 1 } END { exit !f }' /proc/meminfo &&
			echo block || echo pte
	elif [ -n "$leaves" ]; then
		grep -qE '"(pud|pmd|cont_pmd|cont_pte)": [1-9]' <<<"$leaves" && echo block || echo pte
	fi
}
seen=$(seen_layout)
if [ -z "$layout" ]; then
	[ -n "$seen" ] || die "cannot tell the linear map's layout (no linear_map_ptes, no DirectMap, no linmap_test module): pass --layout pte|block"
	layout=$seen
fi
case $layout in pte|block) ;; *) die "--layout takes pte or block (got '$layout')" ;; esac
[ -z "$seen" ] || [ "$seen" = "$layout" ] ||
	say "warning: --layout $layout, but the kernel shows the $seen layout"
label=${label:-$layout}
out=${out:-./hw-bench-$layout-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out/raw"
say "hw-bench: $layout layout ($label), $ncpu CPUs, $reps repetitions of ${only//,/, }; results in $out"
[ -z "$lm_line" ] || say "the kernel: $lm_line"

# ---- perf stat ---------------------------------------------------------------
EVENTS=(dTLB-load-misses:k iTLB-load-misses:k instructions:k cycles:k)
evargs=()
for e in "${EVENTS[@]}"; do evargs+=(-e "$e"); done
perf_ok=1 perf_why=
if ! command -v perf >/dev/null; then
	perf_ok=0 perf_why="perf is not installed (Debian: linux-perf)"
elif ! perf stat -a -x, -e instructions:k -o "$out/raw/perf-probe.csv" -- true \
	2>"$out/raw/perf-probe.err"; then
	perf_ok=0 perf_why="perf stat -a fails: $(head -1 "$out/raw/perf-probe.err")"
elif grep -q '^<not' "$out/raw/perf-probe.csv"; then
	# perf runs, the kernel counts nothing: no PMU driver, or a PMU
	# perf does not know. Each event then says so itself.
	perf_why="perf runs, but instructions:k is $(grep -o '^<not [a-z]*>' "$out/raw/perf-probe.csv" | head -1) (no PMU driver?)"
fi
[ $perf_ok = 1 ] || say "no kernel-mode events: $perf_why"
[ -z "$perf_why" ] || [ $perf_ok = 0 ] || say "warning: $perf_why"

# measured NAME REP CMD...: CMD under perf stat -a; its events, one
# 'event value' line each (value 'missing:WHY'), in raw/NAME-REP.events.
measured() {
	local name=$1 rep=$2 ev=$out/raw/$1-$2.events e rc=0
	shift 2
	if [ $perf_ok = 0 ]; then
		"$@" || rc=$?
		for e in "${EVENTS[@]}"; do echo "$e missing:$perf_why"; done >"$ev"
		return $rc
	fi
	perf stat -a -x, -o "$out/raw/$name-$rep.perf" "${evargs[@]}" -- "$@" || rc=$?
	for e in "${EVENTS[@]}"; do
		awk -F, -v e="$e" '
		$0 !~ /^#/ && NF >= 3 { n = $3; sub(/:.*/, "", n); b = e; sub(/:.*/, "", b)
			if (n == b) { v = $1; found = 1; exit } }
		END {
			# No kernel runs for seconds without a TLB refill: a 0 is
			# an event the PMU takes but does not count (as under QEMU).
			if (!found) print e " missing:not in perf output"
			else if (v ~ /^[0-9.]+$/ && v + 0 > 0) print e " " v
			else if (v ~ /^[0-9.]+$/) print e " missing:counted 0 (the PMU does not count it)"
			else print e " missing:" v
		}' "$out/raw/$name-$rep.perf"
	done >"$ev"
	return $rc
}

# ---- results -------------------------------------------------------------------
# raw/results.tsv: workload metric unit better rep value (value 'missing:WHY').
res=$out/raw/results.tsv
: >"$res"
record() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$res"; }

# The perf figures of one repetition: misses per 1000 kernel instructions,
# instructions per cycle in the kernel.
record_events() {	# WORKLOAD REP
	awk -v w="$1" -v r="$2" '
	{ v[$1] = substr($0, length($1) + 2) }
	function get(e) { return (e in v && v[e] !~ /^missing/) ? v[e] : "" }
	function why(e) { return (e in v && v[e] ~ /^missing/) ? v[e] : "missing:no value" }
	function per(a, b, scale, name, unit, better) {
		if (get(a) != "" && get(b) != "" && get(b) + 0 > 0)
			printf "%s\t%s\t%s\t%s\t%s\t%.6g\n", w, name, unit, better, r, get(a) * scale / get(b)
		else
			printf "%s\t%s\t%s\t%s\t%s\t%s\n", w, name, unit, better, r, (get(a) == "" ? why(a) : why(b))
	}
	END {
		per("dTLB-load-misses:k", "instructions:k", 1000, "kernel_dtlb_mpki", "misses/kinsn", "lower")
		per("iTLB-load-misses:k", "instructions:k", 1000, "kernel_itlb_mpki", "misses/kinsn", "lower")
		per("instructions:k", "cycles:k", 1, "kernel_ipc", "insns/cycle", "higher")
	}' "$out/raw/$1-$2.events" >>"$res"
}

brd_loaded=0
cleanup() {
	[ -z "${mc_pid:-}" ] || kill "$mc_pid" 2>/dev/null || true
	[ ! -e /dev/mapper/hwbench_crypt ] || cryptsetup close hwbench_crypt 2>/dev/null || true
	[ $brd_loaded = 0 ] || rmmod brd 2>/dev/null || true
	[ -z "${seq_file:-}" ] || rm -f "$seq_file"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# ---- memcached -------------------------------------------------------------------
run_memcached() {
	local rep port=11411 log tps p50 p99 p
	memcached -u root -l 127.0.0.1 -p $port -m $((quick ? 64 : 4096)) -c 4096 \
		-t "$threads" >"$out/raw/memcached-server.log" 2>&1 &
	mc_pid=$!
	for _ in $(seq 50); do
		(exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break
		sleep 0.2
	done
	(exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null ||
		die "memcached did not answer on port $port; see $out/raw/memcached-server.log"
	for rep in $(seq "$reps"); do
		log=$out/raw/memcached-$rep.out
		say "memcached $rep/$reps: $mc_client, $threads threads, $((threads * 16)) connections, ${secs}s"
		if [ $mc_client = memtier_benchmark ]; then
			measured memcached "$rep" memtier_benchmark -s 127.0.0.1 -p $port \
				-P memcache_text -t "$threads" -c 16 --test-time="$secs" --ratio=1:10 \
				--data-size=512 --key-maximum=1000000 --print-percentiles=50,99 \
				--hide-histogram >"$log" 2>&1 ||
				die "memtier_benchmark failed (run $rep); see $log"
			# The Totals row of its table, by the header's column names
			# ("Avg. Latency", "p99 Latency": two words each); msec.
			read -r tps p50 p99 < <(awk '
				/^Type / { n = 0; for (i = 2; i <= NF; i++) {
					if ($i == "Latency" && n) { col[n] = col[n] " Latency"; continue }
					col[++n] = $i } }
				/^Totals / { for (i = 2; i <= NF; i++) v[col[i - 1]] = $i }
				END { printf "%s %s %s\n", v["Ops/sec"], v["p50 Latency"], v["p99 Latency"] }' "$log")
			[[ ${tps:-} =~ ^[0-9.]+$ && ${p50:-} =~ ^[0-9.]+$ && ${p99:-} =~ ^[0-9.]+$ ]] ||
				die "no Ops/sec, p50 and p99 Latency in memtier_benchmark's Totals (run $rep); see $log"
			record memcached ops_per_s ops/s higher "$rep" "$tps"
			record memcached p50_latency us lower "$rep" "$(awk -v x="$p50" 'BEGIN { printf "%.1f", x * 1000 }')"
			record memcached p99_latency us lower "$rep" "$(awk -v x="$p99" 'BEGIN { printf "%.1f", x * 1000 }')"
		else
			measured memcached "$rep" memcaslap -s 127.0.0.1:$port -t "${secs}s" -T "$threads" \
				-c $((threads * 16)) >"$log" 2>&1 ||
				die "memcaslap failed (run $rep); see $log"
			tps=$(sed -n 's/.*TPS: *\([0-9][0-9]*\).*/\1/p' "$log" | tail -1)
			[ -n "$tps" ] || die "no TPS in memcaslap's output (run $rep); see $log"
			record memcached ops_per_s ops/s higher "$rep" "$tps"
			for p in p50_latency p99_latency; do
				record memcached $p us lower "$rep" \
					"missing:memcaslap reports no percentiles; install memtier_benchmark"
			done
		fi
		record_events memcached "$rep"
	done
	kill "$mc_pid" 2>/dev/null || true
	wait "$mc_pid" 2>/dev/null || true
	mc_pid=
}

# ---- fio on dm-crypt -----------------------------------------------------------
iops_of() {	# FIO-OUTPUT read|write: IOPS, with fio's k/M expanded
	sed -n "s/.*$2: IOPS=\([0-9.]*[kM]*\),.*/\1/p" "$1" | head -1 |
		awk '/k$/ { sub("k", ""); $0 *= 1000 } /M$/ { sub("M", ""); $0 *= 1000000 } { printf "%d\n", $0 }'
}

run_fio() {
	local dev=$device size rep rw log iops key=$out/raw/fio.key
	size=$(bytes "$fio_size")
	if [ -z "$dev" ]; then
		[ ! -e /dev/ram0 ] || die "/dev/ram0 exists already (brd loaded with other settings?): rmmod brd, or pass --device"
		modprobe brd rd_nr=1 rd_size=$((size >> 10)) ||
			die "cannot load brd for a RAM disk (CONFIG_BLK_DEV_RAM); pass --device"
		brd_loaded=1
		dev=/dev/ram0
	else
		[ -b "$dev" ] || die "--device $dev is not a block device"
		! grep -q "^$(readlink -f "$dev")[ p0-9]" /proc/mounts ||
			die "--device $dev is mounted"
	fi
	head -c 64 /dev/urandom >"$key"
	cryptsetup open --type plain --cipher aes-xts-plain64 --key-size 512 \
		--key-file "$key" "$dev" hwbench_crypt ||
		die "cryptsetup open of $dev failed (dm-crypt, aes-xts in the kernel?)"
	for rep in $(seq "$reps"); do
		for rw in randread randwrite; do
			log=$out/raw/fio-$rw-$rep.out
			say "fio $rw $rep/$reps: 4 KiB, $threads jobs, iodepth 32, ${secs}s on dm-crypt over $dev"
			measured "fio_$rw" "$rep" fio --name="$rw" --filename=/dev/mapper/hwbench_crypt \
				--ioengine=libaio --direct=1 --bs=4k --iodepth=32 --numjobs="$threads" \
				--rw="$rw" --size="$size" --time_based --runtime="$secs" \
				--group_reporting --randseed=1234 >"$log" 2>&1 ||
				die "fio $rw failed (run $rep); see $log"
			iops=$(iops_of "$log" "${rw#rand}")
			[[ $iops =~ ^[0-9]+$ ]] || die "no IOPS in fio's output (run $rep); see $log"
			record "fio_$rw" iops IOPS higher "$rep" "$iops"
			record_events "fio_$rw" "$rep"
		done
	done
	cryptsetup close hwbench_crypt
	[ $brd_loaded = 0 ] || rmmod brd 2>/dev/null || true
	brd_loaded=0
}

# ---- sequential read of a cached file ----------------------------------------------
run_seqread() {
	local size mb rep t0 t1 rate avail free_kb
	if [ -n "$seq_size" ]; then
		size=$(bytes "$seq_size")
	else
		avail=$(meminfo_kb MemAvailable)
		size=$(( avail * 1024 * 2 / 5 ))
		[ $size -le $((100 << 30)) ] || size=$((100 << 30))
	fi
	mb=$((size >> 20))
	[ $mb -gt 0 ] || die "--seq-size too small"
	[ -d "$seq_dir" ] || die "--seq-dir $seq_dir is not a directory"
	free_kb=$(df -Pk "$seq_dir" | awk 'NR == 2 { print $4 }')
	[ $((free_kb >> 10)) -gt $mb ] || die "$seq_dir has $((free_kb >> 10)) MiB free, the file needs $mb MiB (--seq-dir, --seq-size)"
	seq_file=$seq_dir/hw-bench-seqread.$$
	say "seqread: writing $mb MiB to $seq_file and reading it once into the page cache"
	dd if=/dev/zero of="$seq_file" bs=1M count=$mb status=none || die "cannot write $seq_file"
	dd if="$seq_file" of=/dev/null bs=1M status=none
	for rep in $(seq "$reps"); do
		say "seqread $rep/$reps: $mb MiB from the page cache"
		t0=$(date +%s%N)
		measured seqread "$rep" dd if="$seq_file" of=/dev/null bs=1M status=none ||
			die "dd of $seq_file failed (run $rep)"
		t1=$(date +%s%N)
		rate=$(awk -v b=$((mb << 20)) -v ns=$((t1 - t0)) 'BEGIN { printf "%.1f", b / (ns / 1e9) / 1e6 }')
		record seqread bandwidth MB/s higher "$rep" "$rate"
		record_events seqread "$rep"
	done
	rm -f "$seq_file"
	seq_file=
}

start=$(date +%s)
want memcached && run_memcached
want fio && run_fio
want seqread && run_seqread

# ---- results.json and results.md ---------------------------------------------------
# One line per workload and metric: values, median, range, or what is missing.
json_results() {
	sort -t$'\t' -k1,1 -k2,2 -s "$res" | awk -F'\t' '
	function flush(    i, j, t, n, out, med) {
		if (key == "") return
		n = nv
		if (nm > 0) {
			printf "%s    {\"workload\": \"%s\", \"metric\": \"%s\", \"unit\": \"%s\", \"better\": \"%s\", \"reps\": %d, \"missing\": \"%s\"}", sep, w, m, u, b, nm + nv, why
		} else {
			for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
			med = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
			out = ""
			for (i = 1; i <= n; i++) out = out (i > 1 ? ", " : "") sprintf("%.6g", v[i])
			printf "%s    {\"workload\": \"%s\", \"metric\": \"%s\", \"unit\": \"%s\", \"better\": \"%s\", \"reps\": %d, \"median\": %.6g, \"min\": %.6g, \"max\": %.6g, \"values\": [%s]}", sep, w, m, u, b, n, med, v[1], v[n], out
		}
		sep = ",\n"
	}
	{
		if ($1 "\t" $2 != key) { flush(); key = $1 "\t" $2; w = $1; m = $2; u = $3; b = $4; nv = 0; nm = 0; why = "" }
		if ($6 ~ /^missing:/) { nm++; why = substr($6, 9); gsub(/["\\]/, "", why) }
		else v[++nv] = $6 + 0
	}
	END { flush(); print "" }'
}

q() { printf '%s' "$1" | sed 's/["\\]/\\&/g'; }
{
	printf '{\n  "tool": "hw-bench.sh",\n  "version": 1,\n'
	printf '  "label": "%s",\n  "layout": "%s",\n' "$(q "$label")" "$layout"
	printf '  "date": "%s",\n  "quick": %s,\n  "seconds": %d,\n' "$(date -u +%FT%TZ)" \
		"$([ $quick = 1 ] && echo true || echo false)" $(( $(date +%s) - start ))
	printf '  "kernel": "%s",\n  "cmdline": "%s",\n' "$(q "$(uname -r)")" "$(q "$(cat /proc/cmdline)")"
	printf '  "linear_map_line": "%s",\n  "bbml2_noabort": "%s",\n' "$(q "$lm_line")" "$bbml2"
	printf '  "cpus": %d,\n  "midrs": [%s],\n' "$ncpu" "$midrs"
	printf '  "directmap_kb": {%s},\n  "leaves": {%s},\n' "$directmap" "$leaves"
	printf '  "perf": "%s",\n' "$(q "${perf_why:-ok}")"
	printf '  "results": [\n'
	json_results
	printf '  ]\n}\n'
} >"$out/results.json"

{
	echo "# hw-bench: $label ($layout layout)"
	echo
	echo "$(uname -r), $ncpu CPUs, BBML2_NOABORT: $bbml2; ${lm_line:-no 'linear map:' line in dmesg}"
	echo "DirectMap (kB): ${directmap:-none}; leaves (linmap_test): ${leaves:-module not loaded}"
	echo "MIDRs: ${midrs:-unknown}; perf: ${perf_why:-ok}"
	echo
	echo "| workload | metric | median [min, max] | repetitions |"
	echo "|---|---|---|---|"
	awk "$JSON_FIELD"'
	/"workload":/ {
		miss = field($0, "missing")
		v = miss != "" ? "missing: " miss : field($0, "median") " [" field($0, "min") ", " field($0, "max") "]"
		printf "| %s | %s (%s) | %s | %s |\n", field($0, "workload"), field($0, "metric"),
			field($0, "unit"), v, field($0, "reps") }' "$out/results.json"
} >"$out/results.md"
cat "$out/results.md"
say "written: $out/results.json, $out/results.md (raw outputs in $out/raw)"
say "compare two runs: hw-bench.sh --compare RUN-A RUN-B"
