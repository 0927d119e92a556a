#!/usr/bin/env bash
# Decides where the Action's binary comes from (action.yml's first step).
#
# A release commit pins its version (cmd/release-pin rewrites the line
# marked "release-pin: version" in action.yml): the release binary is
# installed, checked against setup/checksums.txt (install.sh). Any other
# ref (a branch such as main, a SHA, uses: ./) has no pin and builds the
# action's own source with the runner's Go (build.sh), so @main runs main.
#
# Environment: KD_VERSION (the pinned release; empty: build), KD_SOURCE
# (the action's checkout, github.action_path), and the runner's RUNNER_OS,
# RUNNER_TEMP, GITHUB_OUTPUT.
#
# Outputs: source (release, build, or built: a binary of the same source
# built earlier in this job is reused), version (of a release), key (of
# the source), path (where the built binary is, or will be), setup-go
# (true when no Go on PATH is recent enough for the source's go.mod:
# actions/setup-go installs one).
set -euo pipefail

fail() { echo "::error title=kustomize-deploy::$*" >&2; exit 1; }
out() { echo "$1=$2" >> "${GITHUB_OUTPUT:-/dev/null}"; }

version=${KD_VERSION:-}
if [ -n "$version" ]; then
  [[ "$version" =~ ^v[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$ ]] ||
    fail "action.yml pins version '$version', want a release such as v1.2.3"
  out source release
  out version "$version"
  out setup-go false
  echo "kustomize-deploy $version: the release binary, verified against setup/checksums.txt"
  exit 0
fi

src=${KD_SOURCE:?KD_SOURCE (the action path) is not set}
[ -f "$src/go.mod" ] || fail "no go.mod in the action's checkout $src: a ref without a pinned release builds from source"
if command -v cygpath > /dev/null; then src=$(cygpath -u "$src"); fi

# The source's key: every file the binary is built from (its packages live
# in cmd/, internal/ and action/; internal/release checks that go list
# agrees), so a second step of the job reuses the binary and a changed
# checkout never does.
if command -v sha256sum > /dev/null; then sha=(sha256sum); else sha=(shasum -a 256); fi
key=$(
  cd "$src"
  find go.mod go.sum cmd internal action \( -name testdata -o -name '.*' \) -prune -o -type f ! -name '*_test.go' -print0 |
    LC_ALL=C sort -z | xargs -0 "${sha[@]}" | "${sha[@]}" | cut -c1-16
)
ext=""
case "${RUNNER_OS:-$(uname -s)}" in Windows | MINGW* | MSYS*) ext=.exe ;; esac
tmp=${RUNNER_TEMP:-${TMPDIR:-/tmp}}
if command -v cygpath > /dev/null; then tmp=$(cygpath -u "$tmp"); fi
bin="$tmp/kustomize-deploy-action/$key/kustomize-deploy$ext"
out key "$key"
out path "$bin"
if [ -x "$bin" ]; then
  out source built
  out setup-go false
  echo "kustomize-deploy from source ($key): built earlier in this job, $bin"
  exit 0
fi
out source build

# The Go this source needs: go.mod's toolchain line, else its go line.
want=$(awk '$1 == "toolchain" { sub(/^go/, "", $2); print $2; exit }' "$src/go.mod")
[ -n "$want" ] || want=$(awk '$1 == "go" { print $2; exit }' "$src/go.mod")
[ -n "$want" ] || fail "$src/go.mod has no go line"
# A Go on PATH is used when it is at least that version. GOTOOLCHAIN=local
# (and a directory without go.mod) so asking does not download another.
have=""
if command -v go > /dev/null; then
  have=$(cd "$tmp" && GOTOOLCHAIN=local go env GOVERSION 2> /dev/null || true)
  have=${have#go}
fi
# atLeast A B: version A >= B, comparing major.minor.patch numerically; a
# pre-release of A (1.27rc1) counts as below its release.
atLeast() {
  local a=$1 b=$2 x y i
  [[ "$a" =~ ^[0-9]+(\.[0-9]+)*$ ]] || return 1
  IFS=. read -r -a x <<< "$a"
  IFS=. read -r -a y <<< "$b"
  for i in 0 1 2; do
    if (( ${x[i]:-0} > ${y[i]:-0} )); then return 0; fi
    if (( ${x[i]:-0} < ${y[i]:-0} )); then return 1; fi
  done
  return 0
}
if [ -n "$have" ] && atLeast "$have" "$want"; then
  out setup-go false
  echo "kustomize-deploy from source ($key), with the Go on PATH (go$have; go.mod wants $want)"
else
  out setup-go true
  echo "kustomize-deploy from source ($key): actions/setup-go installs Go $want (on PATH: ${have:-none})"
fi
