# SPDX-License-Identifier: GPL-2.0
# Debian packages the kit fetches from a suite the system does not use
# (bookworm-backports' QEMU, unstable's upstream kernel), with a private
# apt state: the system's sources, lists and packages stay as they are.
# Sourced by the steps that need it, after lib.sh.

# debian_fetch SUITE ARCHES DIR PACKAGE...: download PACKAGE... from
# Debian's SUITE (ARCHES: apt architectures separated by spaces, or empty
# for the host's) and unpack them all into DIR, which must not exist yet.
# On failure prints apt's first errors (or dpkg-deb's) and fails.
debian_fetch() {
	local suite=$1 arches=$2 dir=$3 tmp a deb rc=0
	local apt=(apt-get -q -o Dir::Etc::SourceList=/dev/null)
	shift 3
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/kit-apt.XXXXXX")
	mkdir -p "$tmp/parts" "$tmp/lists/partial" "$tmp/cache/archives/partial" "$tmp/deb"
	{
		echo "Types: deb"
		echo "URIs: ${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
		echo "Suites: $suite"
		echo "Components: main"
		[ -z "$arches" ] || echo "Architectures: $arches"
		echo "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg"
	} >"$tmp/parts/kit.sources"
	apt+=(-o "Dir::Etc::SourceParts=$tmp/parts" -o "Dir::State::Lists=$tmp/lists"
	      -o "Dir::Cache=$tmp/cache" -o APT::Sandbox::User=root)
	for a in $arches; do
		apt+=(-o "APT::Architectures::=$a")
	done
	if ! "${apt[@]}" update >"$tmp/apt.log" 2>&1 ||
	   ! (cd "$tmp/deb" && "${apt[@]}" download "$@" >>"$tmp/apt.log" 2>&1); then
		grep -E '^(E|W|Err):' "$tmp/apt.log" | head -3 | tr '\n' ' '
		rm -rf "$tmp"
		return 1
	fi
	for deb in "$tmp"/deb/*.deb; do
		if [ ! -f "$deb" ] || ! dpkg-deb -x "$deb" "$tmp/root" 2>>"$tmp/apt.log"; then
			echo "the package fetched from $suite did not unpack: $(tail -2 "$tmp/apt.log" | tr '\n' ' ')"
			rc=1
			break
		fi
		basename "$deb" >>"$tmp/root.packages"
	done
	if [ $rc = 0 ]; then
		mkdir -p "$(dirname "$dir")"
		mv "$tmp/root" "$dir" && mv "$tmp/root.packages" "$dir.packages" || rc=1
	fi
	rm -rf "$tmp"
	return $rc
}
