#!/usr/bin/env bash
# Regenerate the checked-in demo queue (queue/demo.toml) and reports (reports/) after a
# deliberate change to the demo or to what porttrack writes; tests/test_demo.py fails on drift.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
porttrack demo --out "$out/d" >/dev/null
mkdir -p queue reports
cp "$out/d/port/queue/demo.toml" queue/demo.toml
rm -f reports/*.md
for kind in sync deferral; do
  for f in "$out/d/port/.agents/$kind"/*.md; do cp "$f" "reports/$kind-$(basename "$f")"; done
done
rm -rf "$out"
git status --short queue reports
