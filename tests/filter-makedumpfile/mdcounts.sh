# shellcheck shell=bash
# Sourced by tests/filter-makedumpfile/run.sh and tests/e2e-arm64/mdparity.sh.
# md_counts LOG: makedumpfile's --message-level report of what it left
# out, as "class=N" words (decimal), named as kdumpinit names its classes.
# The report may end its lines with \r (its progress output): read as \n.
md_counts() {
	local key val class
	while IFS=: read -r key val; do
		key=$(echo "$key" | sed 's/^ *//; s/ *$//') val=$(echo "$val" | tr -d ' \t')
		case $key in
		"Pages filled with zero") class=zero ;;
		"Non-private cache pages") class=cache ;;
		"Private cache pages") class=cache-private ;;
		"User process data pages") class=user ;;
		"Free pages") class=free ;;
		"Hwpoison pages") class=hwpoison ;;
		"Offline pages") class=offline ;;
		*) continue ;;
		esac
		case $val in 0x[0-9a-fA-F]*) printf '%s=%d ' "$class" "$val" ;; esac
	done < <(tr '\r' '\n' <"$1")
}
