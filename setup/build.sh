#!/usr/bin/env bash
# Builds the Action's binary from the action's own checkout (a ref without
# a pinned release: main, a branch, a SHA, uses: ./), static and
# reproducible as the release builds it, with the Go on PATH (the runner's,
# or the one actions/setup-go installed; its cache holds the modules and
# build cache, keyed on go.sum).
#
# Environment: KD_SOURCE (the action's checkout), KD_BIN (where to put the
# binary: plan.sh's path output), KD_KEY (plan.sh's key of the source),
# KD_REF (github.action_ref: the ref the workflow named; empty for uses: ./),
# GITHUB_OUTPUT.
set -euo pipefail

fail() { echo "::error title=kustomize-deploy::$*" >&2; exit 1; }

src=${KD_SOURCE:?KD_SOURCE (the action path) is not set}
bin=${KD_BIN:?KD_BIN (where to build) is not set}
command -v go > /dev/null || fail "no go on PATH to build kustomize-deploy from source"
mkdir -p "$(dirname "$bin")"

# The version says what was built: the ref the workflow named and the
# source's key (a run's skip decisions include it, so a changed checkout
# never reuses what an older build decided). Not the VCS stamp: the
# action's checkout is a tarball without .git, or one git may refuse
# (another owner's workspace).
pkg=github.com/kustomize-deploy/kustomize-deploy/internal/version
ldflags="-s -w -X $pkg.Version=${KD_REF:-local}-source -X $pkg.Commit=source-${KD_KEY:-unknown}"

tmp="$bin.tmp$$"
echo "::group::go build kustomize-deploy ($(go env GOVERSION), ${KD_REF:-local})"
(
  cd "$src"
  # Only this module, as its go.mod and go.sum say: no workspace of the
  # job's, no toolchain switch, no vendor directory of the user's GOFLAGS.
  GOWORK=off GOTOOLCHAIN=local GOFLAGS=-mod=readonly CGO_ENABLED=0 \
    go build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$tmp" ./cmd/kustomize-deploy
) || { rm -f "$tmp"; echo "::endgroup::"; fail "go build of $src failed (see the log above)"; }
echo "::endgroup::"
mv -f "$tmp" "$bin"
echo "path=$bin" >> "${GITHUB_OUTPUT:-/dev/null}"
echo "built kustomize-deploy: $("$bin" version 2> /dev/null | head -n 1)"
