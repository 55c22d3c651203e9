# SPDX-License-Identifier: GPL-2.0
# Running make: the kernel's build (progress, a killed build's leftovers),
# the test module and the selftests, and what a tree offers.
# Sourced by lib.sh, in its order; not on its own.

# submake ARGS...: make from inside a step or a make recipe, without the
# caller's MAKEFLAGS and MFLAGS (their jobserver and options belong to the
# make that ran us).
submake() { env -u MAKEFLAGS -u MFLAGS make "$@"; }

# The kit's own make flags (make -s, its command-line variables) are not
# the kernel build's: -s would hide the objects its progress counts.
kmake() {
	local pahole=()
	# The upstream peer's build directory carries a stand-in for the pahole
	# its kernel was built with (scripts/job/upstream-kbuild.sh).
	[ ! -x "$BUILD/bin/pahole" ] || pahole=(PAHOLE="$BUILD/bin/pahole")
	submake -C "$SRC" O="$BUILD" -j"$JOBS" ARCH=$ARCH \
		CROSS_COMPILE="$CROSS_COMPILE" CC="ccache ${CROSS_COMPILE}gcc" \
		HOSTCC="ccache gcc" "${pahole[@]}" "$@"
}

# build_begin DIR / build_end DIR bracket a make in DIR. A make killed
# outright (SIGKILL, a closed terminal, a CI job stopped) can leave a file
# half written that the next make takes as up to date: a .cmd file that
# fixdep did not finish breaks every later build of its directory
# ("unterminated call to function 'wildcard'"), and a module's CRCs are
# appended after its object. So a marker stays in DIR while make runs; a
# run that finds it removes what the killed make wrote after it, to be made
# again (from ccache).
build_begin() {
	local mark=$1/.kit-building n
	if [ -e "$mark" ]; then
		n=$(find "$1" -type f -newer "$mark" ! -name build.log ! -name '.kit-*' \
			! -name .config -print -delete | wc -l)
		msg "the last build in $1 did not finish (killed): removed the $n files it wrote"
	fi
	touch "$mark"
}
build_end() { rm -f "$1/.kit-building"; }

# kbuild_step WHAT LOG TOTAL KMAKE-ARGS...: kmake in $BUILD (bracketed by
# build_begin before it), its output in LOG and its progress as objects
# compiled against TOTAL (the count an earlier build saw); ends the
# bracket, prints make's errors on failure and records a larger count in
# $BUILD/.kit-objects for the next progress.
kbuild_step() {
	local what=$1 log=$2 total=$3 n
	shift 3
	if ! with_progress "$what" "$log" '^  CC ' "objects compiled" "$total" kmake "$@"; then
		build_end "$BUILD"
		make_errors "$log" >&2
		return 1
	fi
	build_end "$BUILD"
	n=$(grep -c '^  CC ' "$log") || true
	[ "${n:-0}" -le "${total:-0}" ] || echo "$n" >"$BUILD/.kit-objects"
}

# make_errors LOG: the lines of a failed make's log that say why.
make_errors() {
	grep -E 'error|Error|\*\*\*' "$1" | grep -v '^make.*\] Error [0-9]' | head -20
}

# build_kmod DIR MAKE...: build kmod/ with 'MAKE M=DIR modules'. 6.12's
# Kbuild writes external-module objects next to the sources, so they are
# built from a copy in DIR, which keeps the repository clean.
build_kmod() {
	local dir=$1 f
	shift
	mkdir -p "$dir"
	build_begin "$dir"
	# Sources no longer in kmod/ (renamed or removed) must not be built.
	for f in "$dir"/*.c "$dir"/*.h; do
		[ -e "$f" ] || continue
		[ -e "$TOP/kmod/${f##*/}" ] || rm -f "$f" "${f%.*}.o"
	done
	# Copy only what changed, so an unchanged module is not rebuilt.
	for f in "$TOP"/kmod/*.c "$TOP"/kmod/*.h "$TOP"/kmod/Makefile; do
		[ -e "$f" ] || continue
		cmp -s "$f" "$dir/${f##*/}" || cp "$f" "$dir/"
	done
	"$@" M="$dir" modules >"$dir/build.log" 2>&1 || {
		build_end "$dir"
		tail -30 "$dir/build.log" >&2
		die "module build failed; see $dir/build.log"
	}
	build_end "$dir"
	ls "$dir"/linmap_test.ko "$dir"/linmap_churn.ko >/dev/null
}

# build_selftests KSELFTEST DIR: selftests/linmap as static aarch64
# binaries in DIR, with the lib.mk of KSELFTEST (<linux>/tools/testing/selftests).
build_selftests() {
	mkdir -p "$2"
	make -s -C "$TOP/selftests/linmap" KSELFTEST="$1" \
		CC="${CROSS_COMPILE}gcc" OUTPUT="$2" >"$2/build.log" 2>&1 || {
		cat "$2/build.log" >&2
		die "selftests build failed; see $2/build.log"
	}
}

# The selftest programs in run order (selftests/linmap/Makefile's
# TEST_GEN_PROGS; lib.mk needs a KSELFTEST to be read at all).
linmap_progs() {
	make -s -C "$TOP/selftests/linmap" KSELFTEST="$1" linmap-progs
}

# copy_selftests DIR: selftests/linmap into DIR/linmap, with the interface
# header it shares with kmod/ (its Makefile finds it there outside this repo).
copy_selftests() {
	cp -a "$TOP/selftests/linmap" "$1/" && cp "$TOP/kmod/linmap_uapi.h" "$1/linmap/"
}

require_cmds() {
	local c missing=()
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || missing+=("$c")
	done
	[ ${#missing[@]} -eq 0 ] ||
		die "missing tools: ${missing[*]} (run 'make deps')"
}

# The identity of commits the kit makes (base tree, git am).
GIT_ID=(-c user.name="linmap kit" -c user.email=kit@localhost)

# Does the source tree have the test-only bbml2_test= parameter?
has_bbml2_test() {
	grep -q bbml2_test "$SRC/arch/arm64/kernel/cpufeature.c" 2>/dev/null
}

# Does the tree's kernel fold split linear-map leaves back (heal series)?
has_collapse() {
	grep -q linear_map_collapse "$SRC/arch/arm64/mm/mmu.c" 2>/dev/null
}
