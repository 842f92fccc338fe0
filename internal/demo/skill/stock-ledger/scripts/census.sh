#!/usr/bin/env bash
# Prints current stock: the CSV plus today's pending deliveries.
set -euo pipefail
csv="data/stock.csv"
[ -f "$csv" ] || { echo "census: $csv not found (run from the project root)" >&2; exit 2; }
tail -n +2 "$csv" | while IFS=, read -r item count reorder pending; do
  echo "$item $((count + ${pending:-0})) $reorder"
done
