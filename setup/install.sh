#!/usr/bin/env bash
# Installs kustomize-deploy from a GitHub release for the runner's OS and
# architecture, verified against a SHA-256 sum before it is made
# executable. The sums come from KD_CHECKSUMS, the checksums.txt the
# release commit carries next to this script (so a tag pinned by commit
# pins the binary too); without one (another release than the pinned one,
# or the latest), from the release itself.
#
# The files are downloaded from github.com, where the project's releases
# are, whatever server the workflow runs on (GitHub Enterprise Server's
# GITHUB_SERVER_URL holds no release of a github.com project), or from
# KD_DOWNLOAD_URL (the input download-url: a mirror of the release's
# files, for a server that cannot reach github.com); the checksums keep
# the binary the same wherever it comes from.
#
# A release (KD_VERSION) is kept in the runner's tool cache
# (RUNNER_TOOL_CACHE/kustomize-deploy/<version>/<arch>, as
# actions/tool-cache lays it out): a self-hosted runner downloads it once,
# and checks the cached binary against the sums again before every use.
#
# Environment: KD_VERSION (vX.Y.Z; empty: the latest release),
# KD_REPOSITORY (owner/name), KD_CHECKSUMS, KD_DOWNLOAD_URL, and the
# runner's RUNNER_OS, RUNNER_ARCH, RUNNER_TEMP, RUNNER_TOOL_CACHE,
# GITHUB_PATH, GITHUB_OUTPUT.
set -euo pipefail

fail() { echo "::error title=kustomize-deploy setup::$*" >&2; exit 1; }

case "${RUNNER_OS:-$(uname -s)}" in
  Linux) os=linux ;;
  macOS | Darwin) os=darwin ;;
  Windows | MINGW* | MSYS*) os=windows ;;
  *) fail "unsupported runner OS '${RUNNER_OS:-$(uname -s)}'" ;;
esac
case "${RUNNER_ARCH:-$(uname -m)}" in
  X64 | x86_64 | amd64) arch=amd64 ;;
  ARM64 | arm64 | aarch64) arch=arm64 ;;
  *) fail "unsupported runner architecture '${RUNNER_ARCH:-$(uname -m)}'" ;;
esac
ext=""
[ "$os" = windows ] && ext=.exe
asset="kustomize-deploy_${os}_${arch}${ext}"

version=${KD_VERSION:-}
if [ -n "$version" ] && ! [[ "$version" =~ ^v[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$ ]]; then
  fail "input 'version': want a release such as v1.2.3, got '$version'"
fi
base=${KD_DOWNLOAD_URL:-}
base=${base%/}
mirror=""
if [ -n "$base" ]; then
  [[ "$base" =~ ^https?:// ]] || fail "input 'download-url': want an http(s) URL of the release's files, got '$base'"
  mirror=" (input download-url)"
else
  [ -n "${KD_REPOSITORY:-}" ] || fail "input 'repository' is empty"
  if [ -n "$version" ]; then
    base="https://github.com/$KD_REPOSITORY/releases/download/$version"
  else
    base="https://github.com/$KD_REPOSITORY/releases/latest/download"
  fi
  mirror=" (a runner that cannot reach github.com, as on some GitHub Enterprise Server installations, needs download-url: a mirror of the release's files)"
fi

temp=${RUNNER_TEMP:-$(mktemp -d)}
toolcache=${RUNNER_TOOL_CACHE:-}
if [ "$os" = windows ] && command -v cygpath > /dev/null; then
  temp=$(cygpath -u "$temp")
  [ -z "$toolcache" ] || toolcache=$(cygpath -u "$toolcache")
fi
dir="$temp/kustomize-deploy-setup"
rm -rf "$dir" && mkdir -p "$dir/bin"
download() { curl --fail --silent --show-error --location --retry 3 --output "$2" "$1"; }

sums="${KD_CHECKSUMS:-}"
if [ -n "$sums" ] && [ ! -f "$sums" ]; then
  fail "the pinned checksums $sums do not exist"
fi
if [ -z "$sums" ]; then
  sums="$dir/checksums.txt"
  download "$base/checksums.txt" "$sums" || fail "downloading $base/checksums.txt$mirror"
fi
want=$(awk -v a="$asset" '$2 == a || $2 == "*" a { print $1 }' "$sums")
[ -n "$want" ] || fail "$asset is not in $(basename "$sums")"

sha256() {
  if command -v sha256sum > /dev/null; then sha256sum "$1" | awk '{ print $1 }'; else shasum -a 256 "$1" | awk '{ print $1 }'; fi
}

# The tool cache's copy, if this release is there and still matches.
cached=""
if [ -n "$version" ] && [ -n "$toolcache" ]; then
  cachedir="$toolcache/kustomize-deploy/${version#v}/${arch/amd64/x64}"
  if [ -f "$cachedir.complete" ] && [ -f "$cachedir/kustomize-deploy${ext}" ]; then
    if [ "$(sha256 "$cachedir/kustomize-deploy${ext}")" = "$want" ]; then
      cached="$cachedir/kustomize-deploy${ext}"
    else
      echo "::warning title=kustomize-deploy setup::the tool cache's $asset $version does not match its checksum: downloading it again"
      rm -rf "$cachedir" "$cachedir.complete"
    fi
  fi
fi

if [ -n "$cached" ]; then
  bin=$cached
  got=$want
  pathdir=$(dirname "$bin")
else
  download "$base/$asset" "$dir/$asset" || fail "downloading $base/$asset$mirror"
  got=$(sha256 "$dir/$asset")
  [ "$got" = "$want" ] || { rm -f "$dir/$asset"; fail "checksum mismatch for $asset: got $got, want $want"; }
  bin="$dir/bin/kustomize-deploy${ext}"
  mv "$dir/$asset" "$bin"
  chmod +x "$bin"
  pathdir="$dir/bin"
  if [ -n "${cachedir:-}" ] && mkdir -p "$cachedir" && cp "$bin" "$cachedir/" && touch "$cachedir.complete"; then
    bin="$cachedir/kustomize-deploy${ext}"
    pathdir=$cachedir
  fi
fi
installed=$("$bin" version 2> /dev/null | head -n 1 || true)

if [ "$os" = windows ] && command -v cygpath > /dev/null; then pathdir=$(cygpath -w "$pathdir"); fi
echo "$pathdir" >> "${GITHUB_PATH:-/dev/null}"
{
  echo "path=$bin"
  echo "version=${version:-$installed}"
} >> "${GITHUB_OUTPUT:-/dev/null}"
echo "installed kustomize-deploy ${version:-(latest)} ($asset, sha256 $got${cached:+, from the tool cache}) in $pathdir"
