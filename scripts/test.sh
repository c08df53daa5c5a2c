#!/usr/bin/env bash
# Runs tests against throwaway servers started here and stopped on exit, so no test depends on a
# server started by hand. Usage: scripts/test.sh BUILD_DIR [ctest arguments]; without
# arguments, every test.
set -euo pipefail
build=${1:?usage: scripts/test.sh BUILD_DIR [ctest arguments]}
shift
here=$(cd "$(dirname "$0")" && pwd)

export FAUCET_SERVICES_DIR=${FAUCET_SERVICES_DIR:-/tmp/faucet-services-test-$$}
trap 'bash "$here/services.sh" stop >/dev/null 2>&1 || true' EXIT
# An assignment, so that a failed start stops the script (a failing eval "$(...)" does not).
services_env=$(bash "$here/services.sh" start)
eval "$services_env"

ctest --test-dir "$build" --output-on-failure --no-tests=error -j2 --timeout 900 "$@"
