# SPDX-License-Identifier: GPL-2.0
# make check, group 7. the TLB model and its QEMU plugin.
# Sourced by scripts/suites/check.sh, not run alone.

# ---- 7. the TLB model and its plugin (make bench-tlb) ----------------------
# The model's self-test (synthetic streams whose misses are counted by
# hand, and the exactness of the plugin's filter), and the plugin loaded
# into this QEMU, sent the guest's page tables, modelling one window.
tlb_check() {
	local d=$CHECK/tlb line name sum
	rm -rf "$d"
	mkdir -p "$d"
	if ! tlb_tools "$d" >"$d/build.log" 2>&1; then
		bad "tlb: the plugin and the model build" "$(tail -10 "$d/build.log")"
		return 0
	fi
	ok "tlb: the plugin and the model build"
	"$d/tlbsim" --selftest >"$d/selftest.tap" 2>&1
	grep -q '^1\.\.' "$d/selftest.tap" || bad "tlb: model self-test ran to its end" "$(tail -5 "$d/selftest.tap")"
	while read -r line; do
		name=$(echo "$line" | sed 's/^\(not \)*ok [0-9]* \([^#]*\).*/\2/; s/ *$//')
		case $line in
		"not ok "*) bad "tlb: model: $name" "${line#*# }" ;;
		"ok "*) ok "tlb: model: $name" ;;
		esac
	done < <(grep '^ok \|^not ok ' "$d/selftest.tap")
	if timeout 30 qemu-system-aarch64 -M virt -display none -nodefaults -S \
		-plugin "$d/tlbtrace.so,bogus=1" >"$d/refuse.log" 2>&1 </dev/null; then
		bad "tlb: QEMU refuses the plugin given an unknown argument" "QEMU ran"
	elif grep -q "unknown argument 'bogus=1'" "$d/refuse.log"; then
		ok "tlb: QEMU refuses the plugin given an unknown argument"
	else
		bad "tlb: QEMU refuses the plugin given an unknown argument" "$(tail -3 "$d/refuse.log")"
	fi
	if ! PAGE_SIZE=4K JOB=tlb NAME=tlb LOGDIR=$d SMP=2 BBML2=all CMDLINE=nokaslr \
		QEMU_PLUGIN="$d/tlbtrace.so,out=$d/sim.json,params=$TOP/scripts/bench/tlb/neoverse-n1.tsv" \
		"$TOP/scripts/job/boot.sh" >"$d/boot.txt" 2>&1 ||
	   ! grep -q '^ok 1 tlb.marked_window' "$d/tlb.data"; then
		bad "tlb: the plugin loads in QEMU and models a marked window" "$(tail -8 "$d/boot.txt")"
		return 0
	fi
	sum=$(python3 - "$d/sim.json" <<'PY' 2>&1
import json, sys
r = json.load(open(sys.argv[1]))
assert r["layouts_received"] == 1 and not r["layouts_damaged"], "layouts: %s" % r
w = r["windows"]
assert len(w) == 1, "%d windows, want 1" % len(w)
w = w[0]
L = w["layouts"]
lin = {n: L[n]["l2"][1]["stats"]["kernel_linear"] for n in L}
assert w["insns_kernel"] > 0 and w["insns_user"] > 0, "no instructions counted"
assert lin["full"]["access"] > 0, "no linear-map accesses"
print("%d kernel + %d user instructions, %d linear-map accesses; walks %d with all PTEs, %d with the boot's blocks"
      % (w["insns_kernel"], w["insns_user"], lin["full"]["access"], lin["full"]["walk"], lin["series"]["walk"]))
assert lin["series"]["walk"] < lin["full"]["walk"], "blocks take no fewer walks"
PY
)
	if [ $? = 0 ]; then
		ok "tlb: the plugin models a marked window in QEMU $(qemu-system-aarch64 --version | sed -n 's/.*version \([0-9.]*\).*/\1/p'): $sum"
	else
		bad "tlb: the plugin models a marked window" "$sum"
	fi
}
if [ "$TREE" = series ] && [[ " ${built[*]} " == *" 4K "* ]]; then
	msg "TLB model and plugin"
	tlb_check
else
	skip "tlb: the plugin and the model" "make check builds no 4K series kernel here"
fi
