#!/usr/bin/env bash
# The tree keeps the shape ARCHITECTURE.md describes: layers include only
# downwards, no module cycles (includes or calls), and no file over 1,000
# lines or function over 100 without a stated reason (code_shape.py).
# usage: test_code_shape.sh BUILD_DIR [TESTDATA_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# The shape is the sources' and the main build's: a sanitizer build has the
# same includes and calls, so CI checks it once.
. "$here/build_kind.sh"
if sanitizer_build "$1"; then
    echo "skipped: a sanitizer build (the main build checks the shape)"
    exit 77
fi
python3 "$here/code_shape.py" "$here/../.." "$1"
