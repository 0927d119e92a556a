#!/usr/bin/env bash
# Decides where the CLI's binary comes from: the first step of both
# actions (action.yml, and setup/action.yml, which only installs the CLI).
#
# A release commit pins its version (cmd/release-pin rewrites the line
# marked "release-pin: version"): that release's binary is installed,
# checked against the commit's setup/checksums.txt (install.sh). The
# setup action may ask for another release (its input version, or
# "latest"), checked against that release's own checksums.txt. Any other
# ref (a branch such as main, a SHA, uses: ./) has no pin and builds the
# action's own source with the runner's Go (build.sh), so @main runs main;
# the build is kept in the Actions cache under the source's key, so the
# next job of the workflow (a matrix, a later run on the same commit)
# restores it instead of building again.
#
# Environment: KD_PIN (the pinned release; empty: build), KD_VERSION (a
# release asked for: vX.Y.Z or latest; empty: the pin), KD_SOURCE (the
# action's source: the repository's root), and the runner's RUNNER_OS,
# RUNNER_ARCH, RUNNER_TEMP, GITHUB_OUTPUT.
#
# Outputs: source (release, build, or built: a binary of the same source
# built earlier in this job is reused), version (of a release; empty for
# the latest), checksums (the pinned checksums.txt that release is checked
# against; empty: the release's own), key (of the source), path (where
# the built binary is, or will be), dir (its directory, in the runner's
# own path syntax, for actions/cache), cache-key (the source's key with
# the runner's OS and architecture), setup-go (true when no Go on PATH is
# recent enough for the source's go.mod: actions/setup-go installs one).
set -euo pipefail

fail() { echo "::error title=kustomize-deploy::$*" >&2; exit 1; }
out() { echo "$1=$2" >> "${GITHUB_OUTPUT:-/dev/null}"; }
release='^v[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$'

pin=${KD_PIN:-}
[ -z "$pin" ] || [[ "$pin" =~ $release ]] || fail "the action pins version '$pin', want a release such as v1.2.3"
version=${KD_VERSION:-$pin}
if [ -n "$version" ]; then
  out source release
  out setup-go false
  if [ "$version" = latest ]; then
    out version ""
    out checksums ""
    echo "kustomize-deploy: the latest release's binary, verified against that release's checksums.txt"
    exit 0
  fi
  [[ "$version" =~ $release ]] || fail "input 'version': want a release such as v1.2.3 (or latest), got '$version'"
  out version "$version"
  if [ "$version" = "$pin" ]; then
    sums=${KD_SOURCE:?KD_SOURCE (the action path) is not set}/setup/checksums.txt
    [ -f "$sums" ] || fail "the action pins $pin but has no setup/checksums.txt to check its binary against"
    out checksums "$sums"
    echo "kustomize-deploy $version: the release binary, verified against setup/checksums.txt"
  else
    out checksums ""
    echo "kustomize-deploy $version: the release binary, verified against that release's checksums.txt"
  fi
  exit 0
fi

src=${KD_SOURCE:?KD_SOURCE (the action path) is not set}
if command -v cygpath > /dev/null; then src=$(cygpath -u "$src"); fi
[ -f "$src/go.mod" ] || fail "no go.mod in the action's checkout $src: a ref without a pinned release builds from source"

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
dir="$tmp/kustomize-deploy-action/$key"
bin="$dir/kustomize-deploy$ext"
out key "$key"
out path "$bin"
# actions/cache runs in Node: on Windows it wants D:\a\_temp\..., not /d/a/_temp/...
if command -v cygpath > /dev/null; then out dir "$(cygpath -w "$dir")"; else out dir "$dir"; fi
out cache-key "kustomize-deploy-${RUNNER_OS:-$(uname -s)}-${RUNNER_ARCH:-$(uname -m)}-$key"
out checksums ""
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
# setup-go is needed only if the cache has no binary of this source either
# (the restore step runs first; the workflow skips setup-go on a hit).
if [ -n "$have" ] && atLeast "$have" "$want"; then
  out setup-go false
  echo "kustomize-deploy from source ($key), restored from the Actions cache or built with the Go on PATH (go$have; go.mod wants $want)"
else
  out setup-go true
  echo "kustomize-deploy from source ($key), restored from the Actions cache or built with Go $want from actions/setup-go (on PATH: ${have:-none})"
fi
