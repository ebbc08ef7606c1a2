#!/usr/bin/env bash
# The main job: builds agc and runs the tour of the samples.   ./run.sh [sample]
set -euo pipefail
source "$(dirname "$0")/scripts/setup.sh"

ag_install_packages "${AG_PACKAGES[@]}"
ag_build "$AG_ROOT/build"
exec "$AG_ROOT/scripts/tour.sh" "$AG_ROOT/build" "$@"
