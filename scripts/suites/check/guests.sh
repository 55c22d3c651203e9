# SPDX-License-Identifier: GPL-2.0
# make check, group 3. one guest per mode of scripts/modes/modes.tsv,
# judged by scripts/modes/expect.sh.
# Sourced by scripts/suites/check.sh, not run alone.

# ---- 3. guest modes -------------------------------------------------------

# The KUnit results the guest kept, where the kernel has KUnit (and so the
# build has the module's suite).
count_ktap() {
	local ps=$1 mode=$2 data=$3 status name reason seen=0 build
	read -r _ _ _ build _ < <(geometry "$ps")
	[ -f "$build/kmod/linmap_kunit.ko" ] || return 0
	while IFS=$'\t' read -r status name reason; do
		seen=1
		case "$status" in
		ok) ok "$mode: kunit $name" ;;
		skip) skip "$mode: kunit $name" "$reason" ;;
		*) bad "$mode: kunit $name${reason:+ # $reason}" \
			"$(linmap_data section "$data" ktap | tail -25)" ;;
		esac
	done < <(linmap_data ktap "$data")
	[ $seen = 1 ] || bad "$mode: KUnit suites produced no results" \
		"$(linmap_data section "$data" ktap || grep kunit "$data")"
	! grep -qx 'kunit=failed' "$data" ||
		bad "$mode: every KUnit module loaded" "$(grep '^kunit' "$data")"
}

# The workload guests' Debian userspace (scripts/job/rootfs.sh), built or
# taken from its cache once per run.
# A failure is reported once; the guests that needed it say so.
ROOTFS_IMG= ROOTFS_FAILED=
rootfs_image() {
	[ -z "$ROOTFS_IMG" ] || return 0
	[ -z "$ROOTFS_FAILED" ] || return 1
	if ROOTFS_IMG=$("$TOP/scripts/job/rootfs.sh" 2>"$CHECK/rootfs.log"); then
		ok "rootfs: the Debian userspace of the workload guests (${ROOTFS_IMG##*/})"
	else
		bad "rootfs: the Debian userspace of the workload guests" "$(tail -10 "$CHECK/rootfs.log")"
		ROOTFS_IMG= ROOTFS_FAILED=1
		return 1
	fi
}

# The kexec guests' second disk: the geometry's own kernel and initramfs,
# for kexec -s -l in the guest.
kexec_disk() {	# PAGE_SIZE: prints the image's path
	local ps=$1 d=$CHECK/kexec-$1 build
	read -r _ _ _ build _ < <(geometry "$ps")
	[ -f "$d.ext4" ] && { echo "$d.ext4"; return 0; }
	rm -rf "$d" && mkdir -p "$d/files" &&
		cp "$build/arch/arm64/boot/Image" "$build/initramfs.cpio.gz" "$d/files/" &&
		dir_disk "$d/files" linmap-kexec "$d.ext4" &&
		rm -rf "$d" && echo "$d.ext4"
}

# make check's installed package: make deb's packages of the kit's 4K test
# kernel (DEB_CONFIG=kit; with the test-only patches, as QEMU's CPUs claim
# BBML2_NOABORT only through bbml2_test=), built once per run.
# qemu:DEB=install boots the kit's kernel on a new writable copy of the
# Debian userspace with the packages on a second disk, to install them
# with dpkg -i. Check deb=install takes the kernel dpkg put in the copy's
# /boot and the headers in its /usr/src, and builds kmod/ against those
# with make install-tests; qemu:DEB=run boots that kernel on the copy with
# those modules on a second disk.
DEB_DIR=$CHECK/deb
DEB_RELEASE=
deb_packages() {
	local commit f
	[ -z "$DEB_RELEASE" ] || return 0
	msg "make deb DEB_CONFIG=kit DEB_TESTING=on: the packages make check installs"
	if ! DEB_PKGS=$(DEB_CONFIG=kit DEB_TESTING=on PAGE_SIZE=4K kit_make deb 2>"$CHECK/deb.log"); then
		bad "make deb (DEB_CONFIG=kit): linux-image and linux-headers packages" "$(tail -8 "$CHECK/deb.log")"
		return 1
	fi
	f=$(echo "$DEB_PKGS" | grep '/linux-image-' | head -1)
	DEB_RELEASE=$(dpkg-deb -f "$f" Package | sed 's/^linux-image-//')
	commit=$(git -C "$TOP" rev-parse --short=12 HEAD 2>/dev/null || echo nogit)
	# The names say the series, the test-only patches and this commit.
	if [[ $DEB_RELEASE == *-linmap-all-testing-g$commit* ]] &&
	   [[ $(dpkg-deb -f "$f" Version) == *-1+linmap.all.testing.g$commit* ]] &&
	   echo "$DEB_PKGS" | grep -q "/linux-headers-${DEB_RELEASE}_"; then
		ok "make deb (DEB_CONFIG=kit): linux-image-$DEB_RELEASE and its headers, version $(dpkg-deb -f "$f" Version)"
	else
		bad "make deb (DEB_CONFIG=kit): packages named for the series and commit g$commit" "$DEB_PKGS"
		DEB_RELEASE=
		return 1
	fi
}

deb_disks() {	# install|run: the boot settings in DEB_QEMU
	case $1 in
	install)
		deb_packages && rootfs_image || return 1
		rm -rf "$DEB_DIR" && mkdir -p "$DEB_DIR/debs" || return 1
		# Room for what dpkg installs.
		cp --sparse=always "$ROOTFS_IMG" "$DEB_DIR/root.ext4" &&
			truncate -s +512M "$DEB_DIR/root.ext4" &&
			e2fsck -fy "$DEB_DIR/root.ext4" >"$DEB_DIR/resize.log" 2>&1 &&
			resize2fs "$DEB_DIR/root.ext4" >>"$DEB_DIR/resize.log" 2>&1 || {
			cat "$DEB_DIR/resize.log" >&2
			return 1
		}
		echo "$DEB_PKGS" | xargs cp -t "$DEB_DIR/debs" &&
			dir_disk "$DEB_DIR/debs" linmap-debs "$DEB_DIR/debs.ext4" || return 1
		DEB_QEMU=("ROOTFS=$DEB_DIR/root.ext4" ROOTFS_RW=on "DISK2=$DEB_DIR/debs.ext4") ;;
	run)
		[ -f "$DEB_DIR/vmlinuz" ] && [ -f "$DEB_DIR/mods.ext4" ] || {
			echo "no installed kernel or no module built against its headers in $DEB_DIR (the deb-install guest or its checks failed)" >&2
			return 1
		}
		DEB_QEMU=("ROOTFS=$DEB_DIR/root.ext4" "KIT_IMAGE=$DEB_DIR/vmlinuz" "DISK2=$DEB_DIR/mods.ext4") ;;
	esac
}

# The test module loaded in the guest whose data is DATA.

# restore_block MODE PFN LOG: the restoring kernel held the first boot's
# block (PFN) invalid in a block leaf while it restored the image over it
# (patches/0009: trans_pgd's copy maps it valid). That the pattern came
# back is the resumed kernel's own result, workload.hibernate.restore_block.
restore_block() {
	local name="$1: the restoring kernel held the image's block invalid in a block leaf" line why
	if [ -z "$2" ]; then
		skip "$name" "the first boot held no block (see workload.hibernate.restore_block)"
		return 0
	fi
	line=$(sed -n 's/^linmap: restore_block: //p' "$3" | head -1)
	rb_kv() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<" $line"; }
	why=${line#* skip=}
	if [ -z "$line" ]; then
		bad "$name" "the restoring kernel printed no restore_block line; console log: $3"
	elif [[ " $line" == *" skip="* ]]; then
		skip "$name" "pfn $2: ${why%% kind_before=*}"
	elif [ "$(rb_kv ret)" != 0 ] || [ "$(rb_kv valid_after)" != 0 ]; then
		bad "$name" "pfn $2: $line"
	elif [ "$(rb_kv invalid_block)" = 1 ]; then
		ok "$name (pfn $2: a $(rb_kv kind_before) leaf, then an invalid $(rb_kv kind_after) leaf)"
	else
		skip "$name" "pfn $2 is not in a block leaf of the restoring kernel's map: $line"
	fi
}

# The hibernation guests: two boots on one swap disk. The first hibernates
# and powers off ("linmap: hibernating" ends it well); the second restores
# the image, and the restored kernel reports the first boot's job.
hibernate_guest() {	# PAGE_SIZE MODE CMDLINE BOOT-SETTINGS...
	local ps=$1 mode=$2 cmd=$3 swap=$CHECK/$2.swap log=$CHECK/$2-hibernate.log
	local page rb
	shift 3
	rm -f "$swap"
	# The swap header fills the guest kernel's first page.
	read -r page _ < <(geometry "$ps")
	if ! { truncate -s 1G "$swap" && mkswap -q -p $((${page%K} * 1024)) "$swap"; } >"$CHECK/$mode.mkswap" 2>&1; then
		bad "$mode: a swap disk" "$(cat "$CHECK/$mode.mkswap")"
		return 0
	fi
	msg "guest $mode: hibernate, then resume"
	if geo "$ps" env "$@" JOB=workload SWAP="$swap" NAME="$mode-hibernate" LOGDIR="$CHECK" \
		END_MARKER='^linmap: hibernating' CMDLINE="$cmd ${CMDLINE:-}" \
		"$TOP/scripts/job/boot.sh" >"$CHECK/$mode-hibernate.boot" 2>&1 &&
	   grep -q 'PM: Image saving done' "$log" && grep -q 'reboot: Power down' "$log"; then
		ok "$mode: the guest wrote its hibernation image and powered off"
	else
		bad "$mode: the guest wrote its hibernation image and powered off" \
			"$(tail -5 "$CHECK/$mode-hibernate.boot"); console log: $log"
		return 0
	fi
	# The block the first boot held (scripts/guest/workloads): the
	# restoring kernel makes it invalid in its own map before it restores.
	rb=$(sed -n 's/^linmap: restore_block pfn=\(0x[0-9a-f]*\).*/\1/p' "$log" | tail -1)
	boot_guest "$ps" "$mode" "$@" JOB=resume SWAP="$swap" \
		CMDLINE="$cmd${rb:+ linmap.restore_block=$rb} ${CMDLINE:-}"
	rm -f "$swap"
	restore_block "$mode" "$rb" "$CHECK/$mode.log"
	[ -f "$CHECK/$mode.data" ] || return 0
	# The resumed kernel's data is the first boot's: judged as any guest's.
	judge_record "$ps" "$mode" "$CHECK/$mode.data" "$cmd" workload
	return 0
}

# guest_settings PAGE_SIZE MODE CMDLINE [ahead]: CMDLINE's words read into
# G_CMD (kernel arguments), G_QEMU (boot.sh settings), G_JOB, G_SWAP and
# G_TWO (a second kernel reports). Makes the Debian userspace and the
# kexec disk where the guest needs them. Returns 1 when the guest cannot
# boot, after saying why; with 'ahead', returns 1 without a word where the
# guest needs what an earlier guest makes (package disks, a swap disk to
# hibernate to) or what could not be made (it says why in its turn).
guest_settings() {
	local ps=$1 mode=$1-$2 ahead=${4:-} w
	G_CMD= G_QEMU=() G_JOB=check G_SWAP= G_TWO=
	for w in $3; do
		case $w in
		qemu:JOB=*) G_JOB=${w#qemu:JOB=}; G_QEMU+=("${w#qemu:}") ;;
		qemu:QEMU_CPU=*|qemu:IOMMU=*|qemu:BBML2=*|qemu:EL2=*|qemu:COLLAPSE=*) G_QEMU+=("${w#qemu:}") ;;
		qemu:ROOTFS=debian)
			if ! rootfs_image; then
				[ -z "$ahead" ] || return 1
				bad "$mode: guest booted (no Debian userspace, see above)"
				return 1
			fi
			G_QEMU+=("ROOTFS=$ROOTFS_IMG") ;;
		qemu:SWAP=new) [ -z "$ahead" ] || return 1; G_SWAP=1 ;;
		qemu:DEB=*)
			[ -z "$ahead" ] || return 1
			if ! deb_disks "${w#qemu:DEB=}" 2>"$CHECK/$mode.deb-disks"; then
				bad "$mode: guest booted (no disks for the package guest: $(tail -3 "$CHECK/$mode.deb-disks"))"
				return 1
			fi
			G_QEMU+=("${DEB_QEMU[@]}") ;;
		qemu:DISK2=kexec)
			if ! w=$(kexec_disk "$ps"); then
				[ -z "$ahead" ] || return 1
				bad "$mode: guest booted (no disk with the kernel to kexec)"
				return 1
			fi
			G_QEMU+=("DISK2=$w") ;;
		qemu:*)
			[ -n "$ahead" ] || bad "$mode: unknown boot setting '$w' in scripts/modes/modes.tsv"
			return 1 ;;
		*) G_CMD+="${G_CMD:+ }$w" ;;
		esac
	done
	# kexec and kdump hand over to a second kernel.
	for w in $G_CMD; do
		case $w in
		linmap.workloads=*)
			case ,${w#*=}, in *,kexec,*|*,kdump,*) G_TWO=1 ;; esac ;;
		esac
	done
}

# guest PAGE_SIZE MODE CMDLINE [STRESS] [SMP] [ahead]: boot in a mode, run
# the selftests there. CMDLINE's qemu:VAR=VALUE words are boot.sh settings
# (QEMU_CPU, IOMMU, BBML2, EL2, COLLAPSE, JOB; ROOTFS=debian for the Debian
# userspace, DISK2=kexec for the kernel to kexec, SWAP=new for a
# hibernation guest's new swap disk), not kernel arguments. With 'ahead',
# only start its boot in the background where it can (boot_ahead).
guest() {
	local ps=$1 mode=$1-$2 stress=${4:-} smp=${5:-${SMP:-4}} ahead=${6:-}
	local data=$CHECK/$1-$2.data cmd
	guest_settings "$ps" "$2" "$3" $ahead || return 0
	cmd=$G_CMD
	set -- JOB=check SMP="$smp" "${G_QEMU[@]}" CMDLINE="$cmd ${CMDLINE:-}" STRESS="$stress"
	if [ -n "$ahead" ]; then
		boot_ahead "$ps" "$mode" "$@"
		return 0
	fi
	if [ -n "$G_SWAP" ]; then
		hibernate_guest "$ps" "$mode" "$cmd" SMP="$smp" "${G_QEMU[@]}"
		return 0
	fi
	msg "guest $mode: $cmd${G_QEMU[*]:+ (${G_QEMU[*]})}"
	boot_guest "$ps" "$mode" "$@"
	if [ -z "$G_TWO" ]; then
		[ ! -f "$data" ] || judge_record "$ps" "$mode" "$data" "$cmd" "$G_JOB"
		return 0
	fi
	# kexec and kdump: the first kernel ran the workloads and the churn,
	# the second the tests; each is judged on its own.
	if [ -f "$CHECK/$mode.first.data" ]; then
		judge_record "$ps" "$mode: first" "$CHECK/$mode.first.data" "$cmd" "$G_JOB"
	else
		bad "$mode: first: the first kernel printed its record before handing over" \
			"$(grep -E '^(not ok|# kexec|# Cannot|# crash)' "$CHECK/$mode.log" | head -8)"
	fi
	[ ! -f "$data" ] || judge_record "$ps" "$mode: second" "$data" "" "$G_JOB"
}

# judge_record GEOMETRY NAME DATA CMDLINE JOB: one kernel's record: its
# module, its TAP results and plans, its KUnit results where it ran them,
# a churn its command line asked for, and its workloads' linear map.
judge_record() {
	local ps=$1 name=$2 data=$3 cmd=$4 job=$5 w
	module_loaded "$name" "$data" || return 0
	count_tap "$name" "$data"
	# Each program's TAP plan against what it ran: a test that died or
	# was left out shows here.
	if w=$(linmap_data plans "$data" 2>&1); then
		ok "$name: every TAP plan holds (${w%% TAP*} programs)"
	else
		bad "$name: every TAP plan holds" "$w"
	fi
	# KUnit runs in the check job: in the workload guests only where a
	# second kernel (kexec, kdump) ran it.
	if [ "$job" = check ] || grep -qx '\[ktap\]' "$data"; then
		count_ktap "$ps" "$name" "$data"
	fi
	check_churn "$name" "$data" "$cmd"
	check_map "$name" "$data"
}

# A mode's smp 'host': the host's cores, 2 to 4 (scripts/modes/modes.tsv).
host_cpus() {
	local n
	n=$(nproc)
	[ "$n" -ge 2 ] || n=2
	[ "$n" -le 4 ] || n=4
	echo "$n"
}

# make soak: the long version of the churn; a guest may take twice as long.
[ "$CHECK_JOB" != soak ] || export QEMU_TIMEOUT=$((${SOAK_SECS:-600} * 2 + 900))
mapfile -t guests < <(python3 "$TOP/scripts/modes/modes.py" list "$CHECK_JOB" "$TREE" "${built[@]}")
[ ${#guests[@]} -gt 0 ] || bad "guests: scripts/modes/modes.tsv has none for job $CHECK_JOB, $TREE tree${CHECK_MODES:+, CHECK_MODES=$CHECK_MODES}"
# A guest line's fields: PS MODE CMD STRESS SMP CHECKS, '-' read as empty.
guest_fields() {
	IFS=$'\t' read -r ps mode cmd stress smp checks <<<"$1"
	[ "$cmd" != - ] || cmd=
	[ "$stress" != - ] || stress=
	[ "$smp" != - ] || smp=
	[ "$smp" != host ] || smp=$(host_cpus)
}
guests_ahead=${GUESTS_AHEAD:-1}
[ "$CHECK_JOB" = check ] || guests_ahead=0
for i in "${!guests[@]}"; do
	# The next guest boots beside this one where it can (boot_ahead).
	guest_fields "${guests[$i]}"
	if [ "$guests_ahead" = 1 ] && [ -n "${guests[$((i + 1))]:-}" ] && [[ $checks != *hwbench* ]]; then
		guest_fields "${guests[$((i + 1))]}"
		guest "$ps" "$mode" "$cmd" "$stress" "$smp" ahead
		guest_fields "${guests[$i]}"
	fi
	guest "$ps" "$mode" "$cmd" "$stress" "$smp"
	host_checks "$ps" "$mode" "$checks"
done
ahead_cancel
