#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Checks of the series itself, behind 'make check-series':
#   - scripts/checkpatch.pl --strict on every patch (series, testing/ and
#     base-testing/): no error, warning or check;
#   - a Signed-off-by and a commit message body on every patch;
#   - bisectability: the kernel builds after each patch (PAGE_SIZE, default 4K;
#     SERIES_BUILDS=0 skips the builds);
#   - b4: git format-patch --thread --cover-letter --base output, run through
#     'b4 --offline-mode am', gives back the same tree.
# Ends with 'N passed, N failed'.
. "$(dirname "$0")/lib.sh"

require_cmds git b4
"$TOP/scripts/tree.sh" >/dev/null
base=$(git -C "$KSRC" rev-parse HEAD)
mapfile -t patches < <(series_patches)
[ ${#patches[@]} -gt 0 ] || die "no patches in $PATCHDIR"
mapfile -t bpatches < <(base_patches)
W=$OUT/check-series
pass=0 failed=0
ok()  { pass=$((pass + 1)); printf 'PASS: %s\n' "$1"; }
bad() { failed=$((failed + 1)); printf 'FAIL: %s\n' "$1"; [ -z "${2:-}" ] || printf '%s\n' "$2" | sed 's/^/    /'; }

# A clean worktree at the base, reused between runs (its build too).
src=$W/src
if [ -d "$src" ]; then
	git -C "$src" am --abort >/dev/null 2>&1 || true
	git -C "$src" checkout -q --detach "$base"
else
	mkdir -p "$W"
	git -C "$KSRC" worktree add -q --detach "$src" "$base"
fi

for p in "${patches[@]}" "${bpatches[@]}"; do
	name=${p#$PATCHDIR/}
	# The base is a tarball imported as one commit: no upstream commit ID
	# (Fixes:) can be looked up in it.
	out=$(cd "$src" && ./scripts/checkpatch.pl --strict --quiet \
		--ignore UNKNOWN_COMMIT_ID "$p" 2>&1)
	if [ -z "$out" ]; then
		ok "checkpatch --strict: $name"
	else
		bad "checkpatch --strict: $name" "$out"
	fi
	if grep -q '^Signed-off-by: ' "$p" &&
	   [ "$(sed -n '/^Subject:/,/^---$/p' "$p" | grep -vc '^\(Subject:\|Signed-off-by:\|---\|\s*\)$')" -ge 3 ]; then
		ok "commit message and Signed-off-by: $name"
	else
		bad "commit message and Signed-off-by: $name"
	fi
done

export KIT_SRC=$src KIT_BUILD=$W/build-$PAGE_SIZE
for p in "${patches[@]}"; do
	name=${p#$PATCHDIR/}
	if ! git -C "$src" "${GIT_ID[@]}" am -q "$p" >/dev/null 2>&1; then
		bad "applies: $name"
		git -C "$src" am --abort >/dev/null 2>&1 || true
		break
	fi
	[ "${SERIES_BUILDS:-1}" = 0 ] && continue
	msg "building after $name"
	if "$TOP/scripts/kernel.sh" >/dev/null 2>&1; then
		ok "builds ($PAGE_SIZE) after: $name"
	else
		bad "builds ($PAGE_SIZE) after: $name" "$(grep -E 'error' "$KIT_BUILD/build.log" | head -10)"
	fi
done

# b4 round trip of the upstream part (patches/*.patch, no testing/).
rm -rf "$W/b4" && mkdir -p "$W/b4/out"
n=$(printf '%s\n' "${patches[@]}" | grep -vc '/testing/')
upstream_head=$(git -C "$src" rev-parse "HEAD~$(( ${#patches[@]} - n ))")
git -C "$src" "${GIT_ID[@]}" format-patch -q --thread --cover-letter --base="$base" \
	-o "$W/b4/fp" "$base..$upstream_head"
cat "$W/b4/fp"/*.patch >"$W/b4/series.mbox"
if (cd "$W/b4" && b4 -q --offline-mode am -m series.mbox -o out >b4.log 2>&1) &&
   mbx=$(ls "$W/b4"/out/*.mbx 2>/dev/null | head -1) && [ -n "$mbx" ]; then
	git -C "$src" checkout -q --detach "$base"
	if git -C "$src" "${GIT_ID[@]}" am -q "$mbx" >/dev/null 2>&1 &&
	   [ "$(git -C "$src" rev-parse 'HEAD^{tree}')" = "$(git -C "$src" rev-parse "$upstream_head^{tree}")" ] &&
	   [ "$(git -C "$src" rev-list --count "$base..HEAD")" = "$n" ]; then
		ok "b4 --offline-mode am gives back the same $n patches and tree"
	else
		bad "b4 --offline-mode am gives back the same $n patches and tree"
		git -C "$src" am --abort >/dev/null 2>&1 || true
	fi
else
	bad "b4 --offline-mode am reads the format-patch series" "$(tail -5 "$W/b4/b4.log")"
fi

# The base kernel's test-only counters apply to the base on their own.
if [ ${#bpatches[@]} -gt 0 ]; then
	git -C "$src" am --abort >/dev/null 2>&1 || true
	git -C "$src" checkout -q --detach "$base"
	if git -C "$src" "${GIT_ID[@]}" am -q "${bpatches[@]}" >/dev/null 2>&1; then
		ok "applies to the base: ${#bpatches[@]} patch(es) of base-testing/"
	else
		bad "applies to the base: base-testing/"
		git -C "$src" am --abort >/dev/null 2>&1 || true
	fi
fi
echo "$pass passed, $failed failed"
[ "$failed" = 0 ]
