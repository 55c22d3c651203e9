#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Boot the built kernel and initramfs under QEMU (TCG).
#   JOB=shell|run|check|kselftest-install  what the guest init does (shell
#                         is interactive)
#   INITRD=...            another initramfs (default: the build's)
#   NAME=...              log name (default: the job)
#   CMDLINE=...           extra kernel arguments
#   STRESS=...            stress parameters, e.g. "pages=0 rounds=2 threads=4"
#   BBML2=...             CPUs that claim BBML2_NOABORT (bbml2_test=), when
#                         the kernel has the test-only patch
#   COLLAPSE=on|off|default  linear_map_collapse= for a kernel that has it
#                         (default on); default leaves it out: the kernel's
#                         own choice, off unless configured otherwise
#   QEMU_CPU=...          the CPU model (default max,pauth-impdef=on)
#   IOMMU=smmuv3          add QEMU's SMMUv3 (-machine virt,iommu=smmuv3)
#   EL2=on                the guest gets EL2 (-machine virt,virtualization=on):
#                         the kernel runs at EL2 and KVM can start VMs
#   ROOTFS=<image>        attach a disk image read-only (the workload
#                         guests' Debian userspace, scripts/job/rootfs.sh)
#   ROOTFS_RW=on          ... writable (make check's copy that a package is
#                         installed into)
#   KIT_IMAGE=<kernel>    boot this kernel, not the build's (an Image or
#                         Image.gz, e.g. the one a package installed)
#   DISK2=<image>         a second disk, read-only (the kexec guests' kernel
#                         and initramfs); the guest finds disks by label
#   SWAP=<image>          a writable disk for swap (the hibernation guests)
#   END_MARKER=<regex>    the console line that ends a run well (default
#                         ^@@LINMAP-END; a hibernating guest prints its own)
#   ICOUNT=N              run under -icount shift=N,sleep=off: virtual time
#                         follows the instruction count (2^N ns each) and
#                         jumps to the next timer when every vCPU idles, so
#                         busy guest timings repeat exactly; the vCPUs then
#                         share one host thread
#   ICOUNT_SLEEP=on       ... but an idle guest waits in real time instead of
#                         jumping to its next timer: for a guest served from
#                         the host (HOSTFWD), whose TCP timers would
#                         otherwise expire while the host answers
#   QEMU_PLUGIN=<so>[,args]  load a TCG plugin (scripts/bench/tlb.sh's tlbtrace)
#   HOSTFWD=PORT:GPORT    a virtio network card on QEMU's user network
#                         (guest 10.0.2.15), host 127.0.0.1:PORT forwarded
#                         to the guest's TCP port GPORT (make bench-tlb's
#                         memcached, driven from the host)
# The console log is always kept; its path is printed. Non-interactive runs
# fail on timeout, on a missing end marker (panic, crash) and on any kernel
# splat found by scan-log.sh. The guest's data block is written next to the
# log as NAME.data.
. "$(dirname "$0")/../lib/lib.sh"

JOB=${JOB:-shell}
NAME=${NAME:-$JOB}
MEM=${MEM:-4G}
SMP=${SMP:-4}
QEMU_TIMEOUT=${QEMU_TIMEOUT:-900}
CMDLINE=${CMDLINE:-}
STRESS=${STRESS:-}
LOGDIR=${LOGDIR:-$OUT/logs}
INITRD=${INITRD:-$BUILD/initramfs.cpio.gz}

require_cmds qemu-system-aarch64 timeout
# --can-boot: only whether this QEMU can boot such a guest (make run and
# make boot ask before building anything). A KASAN_HW_TAGS guest needs a
# QEMU whose MTE tags are per granule: scripts/job/qemu-mte.sh finds or
# fetches one.
qemu_bin=qemu-system-aarch64
if [ "$KASAN" = hw ]; then
	qemu_bin=$("$TOP/scripts/job/qemu-mte.sh") || die "$qemu_bin"
fi
[ "${1:-}" != --can-boot ] || exit 0
[ -f "$IMAGE" ] || die "no kernel at $IMAGE; run 'make kernel'"
[ -f "$INITRD" ] || die "no initramfs at $INITRD; run 'make initramfs'"

mkdir -p "$LOGDIR"
log=$LOGDIR/$NAME.log
data=$LOGDIR/$NAME.data
first=$LOGDIR/$NAME.first.data
rm -f "$log" "$data" "$first"

# earlycon (the DT's stdout-path, QEMU's PL011): a kernel that dies before
# its console is up still leaves the reason in the log.
append="console=ttyAMA0 earlycon panic=-1 oops=panic linmap.job=$JOB"
[ -n "$STRESS" ] && append+=" linmap.stress=${STRESS// /,}"
[ -n "$CMDLINE" ] && append+=" $CMDLINE"
# Emulated CPUs only have BBML2_NOABORT if told so (test-only parameter).
if [ -n "${BBML2:-}" ] && [ "$BBML2" != off ] && [[ "$append" != *bbml2_test=* ]] &&
   has_bbml2_test; then
	append+=" bbml2_test=$BBML2"
fi
# Folding back into blocks is off in the kernel unless configured; the kit
# asks for it, so that its guests test it, unless told otherwise.
if [ "${COLLAPSE:-on}" != default ] && [[ "$append" != *linear_map_collapse=* ]] &&
   has_collapse; then
	append+=" linear_map_collapse=${COLLAPSE:-on}"
fi

machine=virt,gic-version=3,memory-backend=ram
# lib.sh refused any other values of these.
[ "${IOMMU:-}" != smmuv3 ] || machine+=,iommu=smmuv3
[ "${EL2:-off}" != on ] || machine+=,virtualization=on
# KASAN_HW_TAGS needs the MTE the kernel was built for.
[ "$KASAN" != hw ] || machine+=,mte=on
qemu=("$qemu_bin" -M "$machine"
      -object "memory-backend-ram,id=ram,size=$MEM,reserve=off"
      -cpu "${QEMU_CPU:-max,pauth-impdef=on}" -smp "$SMP" -m "$MEM"
      -nodefaults -display none -serial stdio -no-reboot
      -kernel "$IMAGE" -initrd "$INITRD" -append "$append")
# disk VAR ID [readonly=on]: the image VAR names, if any, as a virtio disk.
disk() {
	local img=${!1:-}
	[ -n "$img" ] || return 0
	[ -f "$img" ] || die "no disk image at $1=$img"
	qemu+=(-drive "if=none,id=$2,file=$img,format=raw${3:+,$3}"
	       -device "virtio-blk-device,drive=$2")
}
disk ROOTFS rootfs "$([ "${ROOTFS_RW:-off}" = on ] || echo readonly=on)"
disk DISK2 disk2 readonly=on
disk SWAP swap
if [ -n "${ICOUNT:-}" ]; then
	qemu+=(-icount "shift=$ICOUNT,sleep=${ICOUNT_SLEEP:-off}")
fi
if [ -n "${HOSTFWD:-}" ]; then
	[[ "$HOSTFWD" =~ ^[0-9]+:[0-9]+$ ]] || die "HOSTFWD takes PORT:GUEST_PORT (got '$HOSTFWD')"
	qemu+=(-netdev "user,id=net0,hostfwd=tcp:127.0.0.1:${HOSTFWD%%:*}-10.0.2.15:${HOSTFWD##*:}"
	       -device virtio-net-device,netdev=net0)
fi
if [ -n "${QEMU_PLUGIN:-}" ]; then
	[ -f "${QEMU_PLUGIN%%,*}" ] || die "no plugin at QEMU_PLUGIN=${QEMU_PLUGIN%%,*}"
	qemu+=(-plugin "$QEMU_PLUGIN")
fi

if [ "$JOB" = shell ]; then
	msg "booting $IMAGE ($MEM, $SMP CPUs); console log: $log"
	"${qemu[@]}" | tee "$log"
	exit 0
fi

msg "boot $NAME: $MEM, $SMP CPUs${ICOUNT:+, -icount shift=$ICOUNT}, '$append' (timeout ${QEMU_TIMEOUT}s)"
start=$(date +%s)
set +e
with_progress "guest $NAME" "$log" '^(not )?ok [0-9]' "test results" "${QEMU_TIMEOUT}s" \
	timeout --foreground -k 10 "$QEMU_TIMEOUT" "${qemu[@]}" </dev/null
rc=$?
set -e
secs=$(( $(date +%s) - start ))
fail=0
if [ $rc = 124 ] || [ $rc = 137 ]; then
	printf 'FAIL %s: QEMU timed out after %ss\n' "$NAME" "$QEMU_TIMEOUT" >&2
	fail=1
elif [ $rc != 0 ]; then
	printf 'FAIL %s: QEMU exited with status %s\n' "$NAME" "$rc" >&2
	fail=1
fi
end=${END_MARKER:-^@@LINMAP-END}
if ! grep -q "$end" "$log"; then
	printf 'FAIL %s: the guest did not finish (panic or crash?); last lines:\n' "$NAME" >&2
	tail -15 "$log" | sed 's/^/    /' >&2
	fail=1
else
	sed -n '/^@@LINMAP-BEGIN/,/^@@LINMAP-END/p' "$log" | tr -d '\r' >"$data"
	# The job's own status (scripts/guest/init): not 0 when it could not
	# do its work (no module, a hibernation image not restored).
	grc=$(sed -n 's/^@@LINMAP-END rc=//p' "$data" | tail -1)
	if [ -n "$grc" ] && [ "$grc" != 0 ]; then
		printf "FAIL %s: the guest's job ended with rc=%s; its records: %s\n" "$NAME" "$grc" "$data" >&2
		fail=1
	fi
fi
# A first kernel that handed over to a second (kexec, kdump) printed its
# own record before it did.
if grep -q '^@@LINMAP-FIRST-END' "$log"; then
	sed -n '/^@@LINMAP-FIRST-BEGIN/,/^@@LINMAP-FIRST-END/p' "$log" | tr -d '\r' >"$first"
fi
"$TOP/scripts/lib/scan-log.sh" "$log" || fail=1
msg "$NAME: ${secs}s, console log: $log"
exit $fail
