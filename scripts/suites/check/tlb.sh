# SPDX-License-Identifier: GPL-2.0
# make check, group 7. the TLB model and its QEMU plugin.
# Sourced by scripts/suites/check.sh, not run alone.

# ---- 7. the TLB model and its plugin (make bench-tlb) ----------------------
# The model's self-test (synthetic streams whose misses are counted by
# hand, the exactness of the plugin's filter, a recording replayed), the
# mutations of the model each of its cases must catch, and the plugin
# loaded into this QEMU, sent the guest's page tables, modelling one
# window and recording it; the recording replayed must count the same.
# Each "ok N NAME # DETAIL" or "not ok ..." line of a TAP file as a result
# named PREFIX NAME.
tap_results() {	# PREFIX FILE
	local line name
	while read -r line; do
		name=$(echo "$line" | sed 's/^\(not \)*ok [0-9]* \([^#]*\).*/\2/; s/ *$//')
		case $line in
		"not ok "*) bad "$1$name" "${line#*# }" ;;
		"ok "*) ok "$1$name" ;;
		esac
	done < <(grep '^ok \|^not ok ' "$2")
}

tlb_check() {
	local d=$CHECK/tlb line name sum n1=$TOP/scripts/bench/tlb/neoverse-n1.tsv
	rm -rf "$d"
	mkdir -p "$d"
	if ! tlb_tools "$d" >"$d/build.log" 2>&1; then
		bad "tlb: the plugin and the model build" "$(tail -10 "$d/build.log")"
		return 0
	fi
	ok "tlb: the plugin and the model build"
	# A failing case or mutation is a FAIL below, from the TAP: the exit
	# status would only stop make check (set -e) before the rest.
	"$d/tlbsim" --selftest "$TOP/scripts/bench/tlb" >"$d/selftest.tap" 2>&1 || true
	grep -q '^1\.\.' "$d/selftest.tap" || bad "tlb: model self-test ran to its end" "$(tail -5 "$d/selftest.tap")"
	tap_results "tlb: model: " "$d/selftest.tap"
	# Each blind spot of the self-test, as a mutation it must catch.
	"$TOP/scripts/bench/tlb/mutate.sh" "$d/mutations" >"$d/mutations.tap" 2>&1 || true
	grep -q '^1\.\.' "$d/mutations.tap" || bad "tlb: the mutations ran to their end" "$(tail -5 "$d/mutations.tap")"
	tap_results "tlb: self-test catches " "$d/mutations.tap"
	if timeout 30 qemu-system-aarch64 -M virt -display none -nodefaults -S \
		-plugin "$d/tlbtrace.so,bogus=1" >"$d/refuse.log" 2>&1 </dev/null; then
		bad "tlb: QEMU refuses the plugin given an unknown argument" "QEMU ran"
	elif grep -q "unknown argument 'bogus=1'" "$d/refuse.log"; then
		ok "tlb: QEMU refuses the plugin given an unknown argument"
	else
		bad "tlb: QEMU refuses the plugin given an unknown argument" "$(tail -3 "$d/refuse.log")"
	fi
	# As make bench-tlb runs it: under -icount, one vCPU at a time, so the
	# plugin's filter is exact and guest time follows instructions. On
	# parallel vCPU threads the plugin's lock can starve one vCPU long
	# enough for an RCU stall warning on a busy host.
	if ! PAGE_SIZE=4K JOB=tlb NAME=tlb LOGDIR=$d SMP=2 ICOUNT=0 BBML2=all CMDLINE=nokaslr \
		QEMU_PLUGIN="$d/tlbtrace.so,out=$d/sim.json,params=$n1,rec=$d/rec.zst,sites=$d/sites.tsv" \
		"$TOP/scripts/job/boot.sh" >"$d/boot.txt" 2>&1 ||
	   ! grep -q '^ok 1 tlb.marked_window' "$d/tlb.data"; then
		bad "tlb: the plugin loads in QEMU and models a marked window" "$(tail -8 "$d/boot.txt")"
		return 0
	fi
	sum=$(python3 - "$d/sim.json" "$d/sites.tsv" <<'PY' 2>&1
import json, sys
r = json.load(open(sys.argv[1]))
assert r["layouts_received"] == 1 and not r["layouts_damaged"], "layouts: %s" % r
w = r["windows"]
assert len(w) == 1, "%d windows, want 1" % len(w)
w = w[0]
L = w["layouts"]
st = {n: L[n]["models"][1]["stats"] for n in L}
lin = {n: st[n]["kernel_linear"] for n in L}
assert w["insns_kernel"] > 0 and w["insns_user"] > 0, "no instructions counted"
assert lin["full"]["access"] > 0, "no linear-map accesses"
assert st["full"]["kernel_to_user"]["access"] > 0, "no kernel-mode accesses to user memory"
assert st["full"]["user"]["access"] > 0, "no user-mode accesses"
print("%d kernel + %d user instructions, %d linear-map accesses; L1 refills %d with all PTEs, %d with the boot's blocks"
      % (w["insns_kernel"], w["insns_user"], lin["full"]["access"], lin["full"]["l1_miss"], lin["series"]["l1_miss"]), end="")
assert lin["series"]["l1_miss"] < lin["full"]["l1_miss"], "blocks take no fewer L1 refills"
# The instructions the model cannot see: the window's counts and the
# sites file's, from the same callbacks, must agree; the kernel prefetches.
sites = [l.split() for l in open(sys.argv[2])]
for kind, key in (("prfm", "prfm"), ("prfm-excl", "prfm_excl"), ("zva", "dc_zva")):
    for mode, kernel in (("user", 0), ("kernel", 1)):
        n = sum(int(c) for k, pc, c in sites if k == kind and int(pc, 16) >> 63 == kernel)
        assert n == w[key + "_" + mode], "%s by %s: %d in the sites file, %d in the window" % (kind, mode, n, w[key + "_" + mode])
assert w["prfm_kernel"] + w["prfm_excl_kernel"] > 0, "no kernel PRFM counted"
print("; %d kernel PRFMs, %d of them before an exclusive load, at %d sites, as the window counted them"
      % (w["prfm_kernel"] + w["prfm_excl_kernel"], w["prfm_excl_kernel"],
         sum(1 for k, pc, c in sites if k.startswith("prfm") and int(pc, 16) >> 63)))
PY
)
	if [ $? = 0 ]; then
		ok "tlb: the plugin models a marked window in QEMU $(qemu-system-aarch64 --version | sed -n 's/.*version \([0-9.]*\).*/\1/p'): $sum"
	else
		bad "tlb: the plugin models a marked window" "$sum"
	fi
	# The recording, replayed off line: the same counts as the plugin's.
	if ! "$d/tlbsim" replay --params "$n1" "$d/rec.zst" "$d/replay.json" >"$d/replay.log" 2>&1; then
		bad "tlb: the recording replays" "$(tail -3 "$d/replay.log")"
	elif sum=$(python3 - "$d/sim.json" "$d/replay.json" <<'PY' 2>&1
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert a["windows"] == b["windows"], "the replay's windows differ from the plugin's"
m = a["windows"][0]["layouts"]["series"]["models"]
print("%d models, %d data accesses each" % (3 * len(m), sum(m[0]["stats"][c]["access"] for c in m[0]["stats"])))
PY
); then
		ok "tlb: the replay counts what the plugin counted: $sum, $(du -k "$d/rec.zst" | cut -f1) KiB recorded"
	else
		bad "tlb: the replay counts what the plugin counted" "$sum"
	fi
	# The sensitivity sweep (scripts/bench/tlb/sweep.sh) on this recording:
	# each variant of the N1's table replays, and the L1D sizes behave as
	# a fully associative LRU level must.
	if ! "$TOP/scripts/bench/tlb/sweep.sh" "$d/tlbsim" "$d/rec.zst" "$d/sweep" >"$d/sweep.log" 2>&1; then
		bad "tlb: the sensitivity sweep replays every variant" "$(tail -3 "$d/sweep.log")"
	elif sum=$(python3 "$TOP/scripts/bench/tlb/sweep_report.py" --check "$d/sweep/entries.json" \
		"$d/sweep/sizes.json" "$d/sweep/inject.json" 2>&1) &&
	     grep -q '^l1d-128 ' <<<"$sum" && grep -q '^all@100 ' <<<"$sum" && grep -q '^l1@100 ' <<<"$sum"; then
		ok "tlb: the sensitivity sweep replays every variant; more L1D entries, no more refills; more injected invalidations, no fewer"
	else
		bad "tlb: the sensitivity sweep replays every variant; more L1D entries, no more refills; more injected invalidations, no fewer" "$sum"
	fi
	# relayout.sh: the recording on a layout file, here its own boot's
	# from the guest's ptdump, counts what its own layout as the guest
	# sent it counted (within 2%: the two are read at different times).
	linmap_data section "$d/tlb.data" tlb.windows >"$d/windows"
	if ! "$TOP/scripts/bench/tlb/relayout.sh" "$d/tlbsim" "$d" "$d/relayout" \
		own="$d/tlb.data:tlb.layout.boot" >"$d/relayout.log" 2>&1; then
		bad "tlb: relayout.sh replays the recording on a layout file" "$(tail -3 "$d/relayout.log")"
	elif sum=$(python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import relayout_report as r
w = r.rates(sys.argv[2])
assert w, "no windows"
for i, x in w.items():
    assert "on" in x, "window %d: no layout from the file" % i
    assert abs(x["on"] - x["series"]) <= 0.02 * x["series"], "window %d: %.4f on the file, %.4f recorded" % (i, x["on"], x["series"])
    assert x["on"] < x["full"], "window %d: the boot layout counts no fewer than all PTEs" % i
print("; ".join("%.4f on the file, %.4f recorded, %.4f all PTEs" % (x["on"], x["series"], x["full"]) for x in w.values()))' \
			"$TOP/scripts/bench/tlb" "$d/relayout/own.json" 2>&1); then
		ok "tlb: relayout.sh: the recording on its own boot layout, from a file, counts what it recorded: $sum"
	else
		bad "tlb: relayout.sh: the recording on its own boot layout, from a file, counts what it recorded" "$sum"
	fi
}
if [ "$TREE" = series ] && [[ " ${built[*]} " == *" 4K "* ]]; then
	msg "TLB model and plugin"
	tlb_check
else
	skip "tlb: the plugin and the model" "make check builds no 4K series kernel here"
fi
