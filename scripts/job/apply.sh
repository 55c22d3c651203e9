#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Apply, with git am: to the series tree patches/*.patch (the core series),
# patches/testing/*.patch, patches/heal/*.patch (the healing series) and
# patches/heal/testing/*.patch; to the core tree the first two only; to the
# base tree patches/base-testing/*.patch (test-only counters); to make
# deb's trees the series without test-only patches. patches/fixes/ first
# everywhere. Re-applies
# only when the patches or the base changed.
. "$(dirname "$0")/../lib/lib.sh"

[ -e "$SRC/.git" ] || die "no source tree at $SRC; run 'make tree' first"
if [ "$TREE" = base ]; then
	[ "$SERIES" = off ] && msg "SERIES=off: building the unpatched base (with its test-only counters)"
	[ "$SERIES" != off ] && msg "patches/ is empty: the series tree is the base tree"
fi
mapfile -t patches < <(tree_patches)
base=$(cat "$OUT/trees/$TREE/base")
want=$(echo "$base $(stamp_of "${patches[@]}")")
stampf=$OUT/trees/$TREE/applied
if [ "$(cat "$stampf" 2>/dev/null)" = "$want" ] &&
   [ ! -d "$(git -C "$SRC" rev-parse --git-path rebase-apply)" ]; then
	exit 0
fi

rm -f "$stampf"
# The kit owns this worktree: whatever a run cut short left in it (a git am
# half done, a stale index lock, half-patched files) is thrown away, and
# the patches are applied again from the base.
lock=$(git -C "$SRC" rev-parse --git-path index.lock)
am=$(git -C "$SRC" rev-parse --git-path rebase-apply)
if [ -e "$lock" ] || [ -d "$am" ] || [ -n "$(git -C "$SRC" status --porcelain)" ]; then
	msg "$SRC: discarding what an unfinished apply left (git am state, changed files)"
	rm -f "$lock"
	git -C "$SRC" am --abort >/dev/null 2>&1 || rm -rf "$am"
	git -C "$SRC" reset -q --hard
	git -C "$SRC" clean -q -fdx
fi
git -C "$SRC" checkout -q --detach "$base"
if [ ${#patches[@]} = 0 ]; then
	echo "$want" >"$stampf"
	exit 0
fi
msg "applying ${#patches[@]} patches to $SRC"
if ! git -C "$SRC" "${GIT_ID[@]}" \
	am -q --committer-date-is-author-date "${patches[@]}" >"$OUT/trees/$TREE/am.log" 2>&1; then
	n=$(cat "$(git -C "$SRC" rev-parse --git-path rebase-apply)/next" 2>/dev/null || echo 1)
	failed=${patches[$((n - 1))]:-unknown}
	sed 's/^/  /' "$OUT/trees/$TREE/am.log" >&2
	cat >&2 <<-MSG
	error: patch ${failed#$TOP/} does not apply to $(git -C "$KSRC" log -1 --format='%h (%s)' "$base").
	  See what failed:  git -C $SRC am --show-current-patch=diff
	  Fix it by hand, then: git -C $SRC add -A && git -C $SRC am --continue
	  Or give up:           git -C $SRC am --abort
	  Either way, fix the patch in patches/ too: 'make apply' starts over from the base.
	MSG
	exit 1
fi
echo "$want" >"$stampf"
msg "$TREE tree: $(git -C "$SRC" log --oneline "$base"..HEAD | wc -l) commits applied on $(echo "$base" | cut -c1-12)"
