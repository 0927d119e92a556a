#!/usr/bin/env bash
# Puts the binary built from the action's source (build.sh, or restored
# from the Actions cache) on PATH: the setup action's last step on any
# ref without a pinned release (install.sh does the same for a release).
#
# Environment: KD_BIN (plan.sh's path output), and the runner's RUNNER_OS,
# GITHUB_PATH, GITHUB_OUTPUT.
set -euo pipefail

fail() { echo "::error title=kustomize-deploy setup::$*" >&2; exit 1; }

bin=${KD_BIN:?KD_BIN (the built binary) is not set}
[ -x "$bin" ] || fail "no kustomize-deploy binary at $bin (the build step did not run or failed)"
installed=$("$bin" version 2> /dev/null | head -n 1) || fail "$bin does not run"
dir=$(dirname "$bin")
if command -v cygpath > /dev/null; then
  dir=$(cygpath -w "$dir")
  bin=$(cygpath -w "$bin")
fi
echo "$dir" >> "${GITHUB_PATH:-/dev/null}"
{
  echo "path=$bin"
  echo "version=${installed#kustomize-deploy }"
} >> "${GITHUB_OUTPUT:-/dev/null}"
echo "kustomize-deploy on PATH: $installed, built from the action's source ($dir)"
