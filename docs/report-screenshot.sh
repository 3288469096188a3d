#!/usr/bin/env bash
# Renders the HTML pages rehearse writes and screenshots them with headless Chromium into docs/:
# report.png (the run of scripts/post-batch-rollback.lua, the picture the README shows),
# report-slow-boots.png (scripts/automatic-os-upgrade-slow-boots.lua), sweep.png, compare.png
# and tune.png (scripts/risk-gate.lua), 1280 px wide.
#   bash docs/report-screenshot.sh
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
[ -n "${REHEARSE_SKIP_BUILD:-}" ] || swift build -q --product rehearse
bin=.build/debug/rehearse
"$bin" run scripts/post-batch-rollback.lua --report "$out/report.html" >/dev/null || [ $? -eq 1 ]
"$bin" run scripts/automatic-os-upgrade-slow-boots.lua --report "$out/report-slow-boots.html" >/dev/null || [ $? -eq 1 ]
"$bin" sweep scripts/risk-gate.lua --seeds 0..999 --deadline PT18M --report "$out/sweep.html" >/dev/null || [ $? -eq 1 ]
"$bin" compare scripts/risk-gate.lua --seeds 0..399 --set rollingUpgradePolicy.maxUnhealthyUpgradedInstancePercent=5,10,15,20,30 \
  --report "$out/compare.html" >/dev/null || [ $? -eq 1 ]
"$bin" tune scripts/risk-gate.lua --seeds 0..19999 --vary rollingUpgradePolicy.maxUnhealthyUpgradedInstancePercent=5,10,15,20,30 \
  --require "Faulted <= 1%" --report "$out/tune.html" >/dev/null || [ $? -eq 1 ]
for page in report:1280,1000 report-slow-boots:1280,1100 sweep:1280,1400 compare:1280,1600 tune:1280,1600; do
  name=${page%%:*} size=${page#*:}
  chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --virtual-time-budget=5000 \
    --window-size="$size" --screenshot="$PWD/docs/$name.png" "file://$out/$name.html" 2>/dev/null
  echo "docs/$name.png"
done
