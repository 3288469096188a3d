#!/usr/bin/env bash
# Renders the HTML report of scripts/post-batch-rollback.lua and screenshots it with headless
# Chromium into docs/report.png, the picture the README shows.
#   bash docs/report-screenshot.sh
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
swift run -q rehearse run scripts/post-batch-rollback.lua --report "$out/report.html" >/dev/null || [ $? -eq 1 ]
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --virtual-time-budget=5000 \
  --window-size=1060,900 --screenshot="$PWD/docs/report.png" "file://$out/report.html" 2>/dev/null
echo "docs/report.png"
