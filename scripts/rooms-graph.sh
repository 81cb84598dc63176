#!/usr/bin/env bash
# docs/rooms.svg: the rooms of src/ and their imports, drawn from the code by dependency-cruiser
# (.dependency-cruiser.cjs) and graphviz's dot (Debian package graphviz). `npm run graph`.
# errors.ts (imported by almost every room) and index.ts (the package entry) are left out.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v dot >/dev/null || { echo "rooms-graph: graphviz's dot is missing (apt-get install graphviz)" >&2; exit 2; }
npx depcruise src --include-only '^src/' --exclude '^src/(errors|index)\.ts$|^src/url/data/' \
  --output-type dot --collapse '^src/(frontier/(star|beast|politeness)|threads/(page|drum|archive)|crawl/(ports|core|fetch|fetched|content|archive|urlseen|admit|durable)|store/cdxj|simweb/model|cluster/engine|[^/]+)' \
  | sed 's/rankdir="LR"/rankdir="TB"/' | dot -Tsvg > docs/rooms.svg
echo "docs/rooms.svg"
