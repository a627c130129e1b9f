#!/usr/bin/env bash
# The README's "Use it on your port" path, end to end, on a real port and upstream (one sync
# cycle: init, build, audit --write, report sync, check, report deferral, and the re-import of
# the sync report just written):
#   scripts/try-real-pair.sh PORT UPSTREAM [PIN..TARGET] [-- EXTRA queue build OPTIONS]
# PORT is copied to a temporary folder first (nothing is written into it); UPSTREAM is only read.
# The range is the one `porttrack init` proposes, unless one is given (init's proposal needs a
# pin UPSTREAM has; when it has none, init says so and this script stops there).
# Each step prints its command, its output (long tables cut to their last lines) and its exit code;
# the script exits with the highest of them, so a failed step fails the script.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -lt 2 ]; then
  echo "usage: $0 PORT UPSTREAM [PIN..TARGET] [-- queue build options]" >&2
  exit 2
fi
port_src=$1 upstream=$(cd "$2" && pwd) range=${3:-}
shift 2; [ $# -gt 0 ] && [ "$1" != "--" ] && shift
[ "${1:-}" = "--" ] && shift
extra=("$@")
porttrack() { PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}" python3 -m porttrack "$@"; }
work=$(mktemp -d "${TMPDIR:-/tmp}/porttrack-try-XXXXXX")
cp -a "$port_src" "$work/port"
cd "$work/port"
rm -f porttrack.toml
rm -rf queue
echo "port copy: $work/port   upstream: $upstream"

worst=0  # the highest exit code of any step: the script's own (check's 1 for findings included)
step() {  # step NAME ARGS... : run `porttrack ARGS`, show it, keep its exit code in $rc
  echo
  echo "\$ porttrack ${*:2}"
  local start=$SECONDS
  porttrack "${@:2}" >"$work/$1.out" 2>"$work/$1.err"
  rc=$?
  [ "$rc" -gt "$worst" ] && worst=$rc
  if [ "$(wc -l <"$work/$1.out")" -gt 40 ]; then
    echo "  … $(( $(wc -l <"$work/$1.out") - 25 )) lines cut (full output: $work/$1.out)"
    tail -n 25 "$work/$1.out"
  else
    cat "$work/$1.out"
  fi
  grep -v -E '^(walked|probe: indexed) ' "$work/$1.err" | tail -n 5
  echo "[exit $rc, $(( SECONDS - start )) s]"
}

step init init --upstream "$upstream"
if [ -z "$range" ]; then
  proposed=$(sed -n 's/^next: `porttrack queue build --range \([^` ]*\)`$/\1/p' "$work/init.out")
  if [ -z "$proposed" ]; then
    echo
    echo "init proposes no runnable range (see its warnings); pass PIN..TARGET as the third argument."
    exit 1
  fi
  range=$proposed
fi
step build queue build --range "$range" --name try "${extra[@]}"
[ "$rc" -eq 0 ] || exit 1
step audit audit --write
mkdir -p .agents/sync
step report report sync --out .agents/sync/try.md
[ -f .agents/sync/try.md ] && { echo "  (report header)"; sed -n '1,8p' .agents/sync/try.md; }
step check check
mkdir -p .agents/deferral
step deferral report deferral --out .agents/deferral/try.md
# our own sync report imported back must change nothing, however often
before=$(cksum < queue/try.toml)
step reimport queue import .agents/sync/try.md --queue queue/try.toml
if [ "$(cksum < queue/try.toml)" = "$before" ]; then
  echo "  re-import: the queue is byte-identical"
else
  echo "  re-import: the queue CHANGED"
  worst=$(( worst > 1 ? worst : 1 ))
fi
echo
echo "done: $work/port (exit $worst)"
exit "$worst"
