#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Prepare the source trees:
#   - the base tree: KSRC, or Debian's linux-source-6.12 unpacked under out/
#     and committed as the first commit of a git repository;
#   - out/trees/TREE/src: git worktrees of the base commit, one per tree
#     (lib.sh's tree_name: series, core, base, and make deb's deb-all and
#     deb-core), so that patches are applied and built without touching
#     KSRC itself.
. "$(dirname "$0")/../lib/lib.sh"


extract_default() {
	local tarball
	# KIT_TARBALL: another tarball, for the kit's own check of this path.
	tarball=${KIT_TARBALL:-$(ls /usr/src/linux-source-6.12.tar.* 2>/dev/null | head -n1)} ||
		true
	[ -n "$tarball" ] ||
		die "no /usr/src/linux-source-6.12.tar.*; run 'make deps' or set KSRC"
	msg "unpacking $tarball into $KSRC"
	rm -rf "$KSRC.tmp"
	mkdir -p "$KSRC.tmp"
	with_progress "unpacking" "$KSRC.tmp.log" '' '' '' \
		tar -C "$KSRC.tmp" -xf "$tarball" --strip-components=1 ||
		die "cannot unpack $tarball; see $KSRC.tmp.log"
	local ver
	ver=$(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null || echo unknown)
	msg "committing the unpacked tree as the base (linux-source-6.12 $ver)"
	git -C "$KSRC.tmp" init -q -b base
	no_auto_gc "$KSRC.tmp"
	# Fixed identity and dates: the same package gives the same base
	# commit everywhere, so base-commit: lines in patches mean something.
	with_progress "committing" "$KSRC.tmp.log" '' '' '' commit_base "$ver" ||
		die "cannot commit the unpacked tree; see $KSRC.tmp.log"
	rm -f "$KSRC.tmp.log"
	mv "$KSRC.tmp" "$KSRC"
}

# no_auto_gc REPO: after the first commit (some 90000 loose objects) git
# would repack the whole tree in the background, minutes of CPU taken from
# the kernel build that follows. Nothing here needs a pack.
no_auto_gc() {
	git -C "$1" config gc.auto 0 &&
		git -C "$1" config maintenance.auto false
}

commit_base() {	# VERSION: the unpacked tree as one commit
	git -C "$KSRC.tmp" add -A -f . &&
	GIT_AUTHOR_DATE="2026-01-01T00:00:00Z" GIT_COMMITTER_DATE="2026-01-01T00:00:00Z" \
		git -C "$KSRC.tmp" "${GIT_ID[@]}" commit -q \
		-m "Linux $(kversion "$KSRC.tmp") from Debian linux-source-6.12 $1"
}

kversion() {
	local mk=$1/Makefile v p s
	v=$(sed -n 's/^VERSION = //p' "$mk")
	p=$(sed -n 's/^PATCHLEVEL = //p' "$mk")
	s=$(sed -n 's/^SUBLEVEL = //p' "$mk")
	echo "$v.$p.$s"
}

if [ ! -d "$KSRC" ]; then
	[ "$KSRC" = "$DEFAULT_KSRC" ] || die "KSRC=$KSRC does not exist"
	require_cmds git tar xz
	extract_default
elif [ "$KSRC" = "$DEFAULT_KSRC" ]; then
	# One unpacked by an earlier kit: no background gc either.
	no_auto_gc "$KSRC" 2>/dev/null || true
fi

[ -f "$KSRC/Makefile" ] && grep -q '^PATCHLEVEL' "$KSRC/Makefile" ||
	die "KSRC=$KSRC is not a Linux source tree (no top-level Makefile)"
ver=$(kversion "$KSRC")
case "$ver" in
6.12.*) ;;
*) die "KSRC=$KSRC is Linux $ver; this series is for 6.12.y only" ;;
esac
top=$(git -C "$KSRC" rev-parse --show-toplevel 2>/dev/null || true)
[ -n "$top" ] && [ "$(realpath "$top")" = "$(realpath "$KSRC")" ] ||
	die "KSRC=$KSRC is not a git repository of its own; commit it first (git init && git add -A && git commit)"
if [ -n "$(git -C "$KSRC" status --porcelain --untracked-files=no)" ]; then
	die "KSRC=$KSRC has uncommitted changes; commit or stash them first"
fi
base=$(git -C "$KSRC" rev-parse HEAD)

# One worktree per tree name, detached at the base commit. A worktree made
# from another base (KSRC changed) is recreated.
worktree() {
	local name=$1 dir=$OUT/trees/$1/src
	if [ -d "$dir" ]; then
		local have
		have=$(cat "$OUT/trees/$name/base" 2>/dev/null || echo none)
		if [ "$have" = "$base" ] &&
		   git -C "$dir" rev-parse --git-dir >/dev/null 2>&1; then
			return 0
		fi
		if [ "$have" = none ]; then
			msg "the $name tree was left half made (interrupted?); making it again"
		else
			msg "base changed for $name tree; recreating it"
		fi
		# A 'worktree add' cut short leaves its worktree locked.
		git -C "$KSRC" worktree unlock "$dir" 2>/dev/null || true
		git -C "$KSRC" worktree remove --force "$dir" 2>/dev/null || rm -rf "$dir"
		rm -rf "$OUT/trees/$name"
	fi
	msg "creating the $name tree at $dir (Linux $ver, $(echo "$base" | cut -c1-12))"
	mkdir -p "$OUT/trees/$name"
	# Forget worktrees whose folder is gone (out/ removed by hand, or a
	# worktree add interrupted before it wrote anything).
	git -C "$KSRC" worktree unlock "$dir" 2>/dev/null || true
	git -C "$KSRC" worktree prune
	with_progress "checking out" "$OUT/trees/$name/worktree.log" '' '' '' \
		git -C "$KSRC" worktree add --detach "$dir" "$base" ||
		die "cannot create the $name tree; see $OUT/trees/$name/worktree.log"
	# Written last: a tree without it is one a run did not finish.
	echo "$base" >"$OUT/trees/$name/base"
}

worktree "$TREE"
echo "$SRC"
