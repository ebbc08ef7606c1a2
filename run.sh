#!/usr/bin/env bash
# The main job: builds the samples and ag-rewrite, then runs the tour of the samples.
#   ./run.sh            the whole tour
#   ./run.sh <sample>   one sample (./run.sh --list names them)
set -euo pipefail
source "$(dirname "$0")/scripts/setup.sh"

# Graphviz renders the tour's graphs as PNG, and as SVG in its HTML report.
ag_install_packages "${AG_PACKAGES[@]}" graphviz
ag_configure "$AG_BUILD_DIR"
ag_build "$AG_BUILD_DIR" samples ag-rewrite
exec "$AG_ROOT/scripts/tour.sh" "$AG_BUILD_DIR" "$@"
