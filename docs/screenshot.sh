#!/bin/sh
# Regenerates docs/watch.png, the README's picture of \watch: kql --playground
# runs in a real tmux pane (a private tmux server, gone at the end),
# `\watch 1` repeats SHOW GROUPS for $WAIT seconds, and the pane, colours
# included (tmux capture-pane -e), is rendered to PNG by cmd/ansipng.
#
#   docs/screenshot.sh [OUT.png]      WAIT=45 COLS=230 ROWS=14 are the defaults (narrower panes drop the sparklines first)
set -eu
cd "$(dirname "$0")/.."
out=${1:-docs/watch.png}
wait=${WAIT:-45}
cols=${COLS:-230}
rows=${ROWS:-14}
command -v tmux >/dev/null || { echo "screenshot.sh: tmux is needed (apt-get install tmux)" >&2; exit 1; }

tmp=$(mktemp -d)
sock="$tmp/tmux.sock"
cleanup() {
	tmux -S "$sock" kill-server 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

go build -o "$tmp/kql" ./cmd/kql
go build -o "$tmp/ansipng" ./cmd/ansipng

# until PATTERN SECONDS: wait until the pane shows PATTERN.
until_pane() {
	i=0
	while ! tmux -S "$sock" capture-pane -p -t kql | grep -q -- "$1"; do
		i=$((i + 1))
		if [ "$i" -gt $(($2 * 5)) ]; then
			echo "screenshot.sh: the pane never showed \"$1\"; it shows:" >&2
			tmux -S "$sock" capture-pane -p -t kql >&2
			exit 1
		fi
		sleep 0.2
	done
}

tmux -S "$sock" -f /dev/null new-session -d -s kql -x "$cols" -y "$rows" \
	"env -u NO_COLOR HOME=$tmp TERM=xterm-256color $tmp/kql --playground --no-history; sleep 600"
until_pane 'kql>' 120
# -l: literal text; \; because tmux reads a trailing ; as a command separator
tmux -S "$sock" send-keys -t kql -l 'SHOW GROUPS\;'
tmux -S "$sock" send-keys -t kql Enter
until_pane 'rows)' 60
tmux -S "$sock" send-keys -t kql -l '\watch 1'
tmux -S "$sock" send-keys -t kql Enter
until_pane 'Every 1s: SHOW GROUPS' 30
sleep "$wait"
tmux -S "$sock" capture-pane -e -p -t kql >"$tmp/pane.txt"
"$tmp/ansipng" -o "$out" <"$tmp/pane.txt"
tmux -S "$sock" send-keys -t kql C-c
echo "screenshot.sh: wrote $out" >&2
