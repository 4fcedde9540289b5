# tests/filter-makedumpfile/common.sh: shared by the tests/filter-makedumpfile scripts (sourced, sh).
#
# Everything downloaded or built lives under build/filter/ (never committed):
#   build/filter/apt/   private apt configuration and lists
#   build/filter/dl/    downloaded packages, each checked against SHA256SUMS
#
# Why a private apt configuration: the Debian archive is the one source we
# can reach, and its signed indexes authenticate what we fetch; the system's
# own apt setup (/etc/apt, /var/lib/apt) is only read (keyring, proxies).
# The pinned sha256 in tests/filter-makedumpfile/SHA256SUMS is what keeps a test run
# reproducible: a changed file fails loudly instead of changing the reference.

# The caller sets filter_here to its own directory (tests/filter-makedumpfile) first.
: "${filter_here:?set filter_here before sourcing common.sh}"
filter_top=$(cd "$filter_here/../.." && pwd)
filter_build=${FILTER_BUILD:-$filter_top/build/filter}
filter_sums=$filter_here/SHA256SUMS
filter_mirror=${FILTER_DEBIAN_MIRROR:-http://deb.debian.org/debian}
filter_keyring=/usr/share/keyrings/debian-archive-keyring.gpg

fdie() { echo "${prog:-filter}: error: $*" >&2; exit 1; }
fsay() { echo "  $*" >&2; }

# fverify FILE: succeed iff FILE's sha256 is the one pinned for its name.
fverify() {
	_name=$(basename "$1")
	_want=$(awk -v f="$_name" '$2 == f { print $1 }' "$filter_sums")
	[ -n "$_want" ] || { echo "${prog:-filter}: $_name has no pinned sum in $filter_sums" >&2; return 1; }
	_got=$(sha256sum "$1" | cut -d' ' -f1)
	[ "$_got" = "$_want" ] && return 0
	echo "${prog:-filter}: $1: sha256 $_got, but $filter_sums pins $_want" >&2
	return 1
}

# fapt ARG...: apt-get with everything it writes under $filter_build/apt.
# The suites: trixie (Debian 13: kernel 6.12, makedumpfile 1.7.6), sid
# (makedumpfile 1.7.8) and trixie-backports (the newest kernels, 6.16 to
# 7.3), binaries for amd64, and trixie's and sid's sources.
fapt() {
	apt-get -q -c "$filter_apt/apt.conf" \
		-o Dir::Etc::SourceList="$filter_apt/sources.list" \
		-o Dir::Etc::SourceParts=/dev/null \
		-o Dir::State::Lists="$filter_apt/lists" \
		-o Dir::Cache="$filter_apt/cache" \
		-o APT::Sandbox::User=root \
		"$@"
}

# fapt_ready: write the private configuration and update its lists, once
# per run (apt-get update is a few seconds and 50 MB of indexes).
fapt_ready() {
	[ -z "${filter_apt_ok:-}" ] || return 0
	command -v apt-get >/dev/null || fdie "apt-get not found"
	[ -r "$filter_keyring" ] || fdie "$filter_keyring missing (apt-get install debian-archive-keyring)"
	filter_apt=$filter_build/apt
	mkdir -p "$filter_apt/lists/partial" "$filter_apt/cache/archives/partial" ||
		fdie "cannot create $filter_apt"
	_k=$filter_keyring _m=$filter_mirror
	{
		echo "deb [arch=amd64 signed-by=$_k] $_m trixie main"
		echo "deb [arch=amd64 signed-by=$_k] $_m sid main"
		echo "deb [arch=amd64 signed-by=$_k] $_m trixie-backports main"
		echo "deb-src [signed-by=$_k] $_m trixie main"
		echo "deb-src [signed-by=$_k] $_m sid main"
	} >"$filter_apt/sources.list"
	# The archive reached from here may be a snapshot whose Release files
	# are past their Valid-Until (sid's is): apt would then refuse the
	# lists. What decides that a file is the right one is its pinned
	# sha256 (SHA256SUMS), not the Release file's date.
	printf '%s\n' '#clear APT::Update::Post-Invoke;' \
		'#clear APT::Update::Post-Invoke-Success;' \
		'Acquire::Check-Valid-Until "false";' >"$filter_apt/apt.conf"
	# Reuse lists younger than a day: they only choose the download URL,
	# the pinned sha256 decides whether the file is the right one.
	if [ -n "$(find "$filter_apt/lists" -maxdepth 1 -name '*sid_InRelease' -mmin -1440 2>/dev/null)" ] &&
		[ -n "$(find "$filter_apt/lists" -maxdepth 1 -name '*trixie_InRelease' -mmin -1440 2>/dev/null)" ] &&
		[ "$(cat "$filter_apt/sources.list")" = "$(cat "$filter_apt/sources.list.done" 2>/dev/null)" ]; then
		filter_apt_ok=1
		return 0
	fi
	fsay "FETCH   apt-get update (private lists in $filter_apt)"
	fapt update >"$filter_apt/update.log" 2>&1 || {
		cat "$filter_apt/update.log" >&2; fdie "apt-get update failed"; }
	cp "$filter_apt/sources.list" "$filter_apt/sources.list.done"
	filter_apt_ok=1
}

# fget KIND PKG=VERSION FILE: leave FILE (the name apt gives it) in
# $filter_build/dl, checked against SHA256SUMS; KIND is "deb" (apt-get
# download) or "src" (apt-get source --download-only). A cached copy that
# checks out is not downloaded again. Prints the path. Returns 1 (after
# saying why) when the archive does not serve the file.
fget() {
	_kind=$1 _pkg=$2 _file=$3
	_dl=$filter_build/dl
	mkdir -p "$_dl" || fdie "cannot create $_dl"
	if [ -f "$_dl/$_file" ]; then
		if fverify "$_dl/$_file"; then
			echo "$_dl/$_file"
			return 0
		fi
		echo "${prog:-filter}: dropping the bad cached copy, downloading again" >&2
		rm -f "$_dl/$_file"
	fi
	fapt_ready
	fsay "FETCH   $_pkg -> $_dl/$_file"
	_tmp=$_dl/partial.$$
	rm -rf "$_tmp" && mkdir -p "$_tmp" || fdie "cannot create $_tmp"
	# "|| _rc=$?": under set -e a bare failure would end the caller's
	# $(fget ...) subshell before it can say why.
	_rc=0
	case $_kind in
	deb) (cd "$_tmp" && fapt download "$_pkg") >"$_dl/fetch.log" 2>&1 || _rc=$? ;;
	src) (cd "$_tmp" && fapt source --download-only "$_pkg") >"$_dl/fetch.log" 2>&1 || _rc=$? ;;
	*) fdie "fget: bad kind $_kind" ;;
	esac
	if [ $_rc != 0 ] || [ ! -f "$_tmp/$_file" ]; then
		echo "${prog:-filter}: apt-get could not fetch $_pkg ($_file):" >&2
		grep -E '^(E|W):' "$_dl/fetch.log" | head -n 5 | sed 's/^/    /' >&2
		rm -rf "$_tmp"
		return 1
	fi
	if ! fverify "$_tmp/$_file"; then
		rm -rf "$_tmp"
		fdie "$_file does not match its pinned sha256 (update tests/filter-makedumpfile/SHA256SUMS only after checking why)"
	fi
	mv "$_tmp/$_file" "$_dl/$_file" && rm -rf "$_tmp"
	echo "$_dl/$_file"
}
