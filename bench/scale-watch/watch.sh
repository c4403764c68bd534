#!/bin/bash
# Samples while .scale/scale.sh runs: top (every process, with pids) and PostgreSQL (which process
# holds which projection unit; what the backends wait on). Output in $1.
HERE=$(cd "$(dirname "$0")" && pwd); W=$1; mkdir -p "$W"
until [ -x /tmp/w/nodebin/bin/node ] && [ -f /tmp/w/app/node_modules/pg/package.json ]; do sleep 1; done
sleep 15
while true; do
  { echo "== $(date +%T)"; top -b -n1 -w 200 | sed -n '1,5p;7,32p'; } >> "$W/top.txt"
  (cd /tmp/w/app && timeout 5 /tmp/w/nodebin/bin/node "$HERE/sample.mjs") >> "$W/pg.txt" 2>&1
  sleep 1.5
done
