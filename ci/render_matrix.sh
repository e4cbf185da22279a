#!/usr/bin/env bash
# Certify the shipped engines, render the conformance matrix (HTML and Markdown), and screenshot the HTML.
#
#   ci/render_matrix.sh [OUT_DIR]        (default OUT_DIR: reports/matrix)
#
# Writes OUT_DIR/ENGINE.json and ENGINE.log per engine, OUT_DIR/matrix.html, OUT_DIR/matrix.md and
# OUT_DIR/matrix.png. Engines: $ALKSTORE_MATRIX_ENGINES (default "sqlite mem postgres"); any installed
# engine name works. Postgres: $ALKSTORE_PG_DSN, else postgresql://postgres@127.0.0.1:5432/postgres.
# The alkstore command: $ALKSTORE, else .venv/bin/alkstore (ci/test.sh's venv), else `alkstore` on PATH.
# Chromium: ci/chromium.sh's (Debian's chromium, installed with apt-get when missing; needs root).
# Exits 1 when an engine is not certified, after rendering everything.
set -euo pipefail
cd "$(dirname "$0")/.."

OUT="${1:-reports/matrix}"
ENGINES="${ALKSTORE_MATRIX_ENGINES:-sqlite mem postgres}"
export ALKSTORE_PG_DSN="${ALKSTORE_PG_DSN:-postgresql://postgres@127.0.0.1:5432/postgres}"
if [ -z "${ALKSTORE:-}" ]; then
    if [ -x .venv/bin/alkstore ]; then ALKSTORE=.venv/bin/alkstore; else ALKSTORE="$(command -v alkstore)"; fi
fi
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"

status=0
reports=()
for engine in $ENGINES; do
    echo "== alkstore certify $engine"
    if "$ALKSTORE" certify "$engine" --require --report "$OUT/$engine.json" >"$OUT/$engine.log" 2>&1; then
        echo "   certified"
    else
        echo "   NOT certified (exit $?): see $OUT/$engine.log"
        status=1
    fi
    reports+=("$OUT/$engine.json")
done

echo "== alkstore report"
"$ALKSTORE" report "${reports[@]}" --html "$OUT/matrix.html" --markdown "$OUT/matrix.md"

echo "== screenshot"
bash ci/chromium.sh screenshot "$OUT/matrix.html" "$OUT/matrix.png" >/dev/null
echo "wrote $OUT/matrix.html, $OUT/matrix.md, $OUT/matrix.png"
exit "$status"
