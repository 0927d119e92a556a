#!/usr/bin/env bash
# Checks what goreleaser left in a dist directory (make release-check; the
# release workflow before anything is published): every archive and raw
# binary for linux, darwin and windows on amd64 and arm64, each listed in
# checksums.txt with the right sum, archives holding the binary, LICENSE,
# README.md and CHANGELOG.md, every binary static (CGO_ENABLED=0, -trimpath)
# for its platform and stamped with VERSION; the Homebrew cask of this
# version with every archive's checksum; cmd/release-pin (the release
# commit) takes checksums.txt; then it runs the host's binary: `version`
# and `build` of examples/app.
#
# Usage: hack/release-check.sh DIST VERSION
set -euo pipefail

dist=${1:?usage: $0 DIST VERSION}
version=${2:?usage: $0 DIST VERSION}
cd "$(dirname "$0")/.."
go=${GO:-go}

fail() { echo "release-check: $*" >&2; exit 1; }

[ -f "$dist/checksums.txt" ] || fail "$dist/checksums.txt is missing"
want=(checksums.txt)
for os in linux darwin windows; do
  for arch in amd64 arm64; do
    name="kustomize-deploy_${os}_${arch}"
    ext="" archive="$name.tar.gz"
    if [ "$os" = windows ]; then ext=.exe archive="$name.zip"; fi
    bin="$dist/$name$ext"
    want+=("$name$ext" "$archive")
    [ -f "$bin" ] || fail "$bin is missing"
    [ -f "$dist/$archive" ] || fail "$dist/$archive is missing"
    grep -Eq "^[0-9a-f]{64}  $name$ext\$" "$dist/checksums.txt" || fail "$name$ext is not in checksums.txt"
    grep -Eq "^[0-9a-f]{64}  $archive\$" "$dist/checksums.txt" || fail "$archive is not in checksums.txt"

    if [ "$os" = windows ]; then
      listing=$(unzip -Z1 "$dist/$archive")
    else
      listing=$(tar -tzf "$dist/$archive")
    fi
    for f in "kustomize-deploy$ext" LICENSE README.md CHANGELOG.md; do
      grep -qx "$f" <<< "$listing" || fail "$archive lacks $f (has: $(tr '\n' ' ' <<< "$listing"))"
    done

    info=$("$go" version -m "$bin")
    for setting in "CGO_ENABLED=0" "-trimpath=true" "GOOS=$os" "GOARCH=$arch"; do
      grep -q -- "build[[:space:]]*$setting\$" <<< "$info" || fail "$bin: not built with $setting:
$info"
    done
    # -trimpath leaves -ldflags out of the build information: look for the
    # stamped version in the binary itself (the host's is run below).
    grep -aqF -- "$version" "$bin" || fail "$bin: version $version not stamped"
  done
done

# Nothing more, nothing less: checksums.txt lists exactly these files.
listed=$(awk '{ print $2 }' "$dist/checksums.txt" | sort)
expected=$(printf '%s\n' "${want[@]}" | grep -vx checksums.txt | sort)
[ "$listed" = "$expected" ] || fail "checksums.txt lists:
$listed
want:
$expected"
(cd "$dist" && sha256sum --quiet --check checksums.txt) || fail "a file in $dist does not match checksums.txt"

# The Homebrew cask: this version, and each darwin and linux archive by
# its release URL and the checksum checksums.txt gives it.
cask="$dist/homebrew/Casks/kustomize-deploy.rb"
[ -f "$cask" ] || fail "$cask is missing"
grep -q "version \"${version#v}\"" "$cask" || fail "$cask is not of version ${version#v}:
$(cat "$cask")"
for os in linux darwin; do
  for arch in amd64 arm64; do
    archive="kustomize-deploy_${os}_${arch}.tar.gz"
    sum=$(awk -v f="$archive" '$2 == f { print $1 }' "$dist/checksums.txt")
    grep -qF "sha256 \"$sum\"" "$cask" || fail "$cask lacks $archive's checksum $sum"
    grep -qF "/releases/download/" "$cask" && grep -qF "$archive\"" "$cask" || fail "$cask does not download $archive"
  done
done

# The release commit's step, on a scratch copy of the files it edits:
# cmd/release-pin takes this checksums.txt.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/setup"
cp action.yml "$scratch/"
cp setup/action.yml "$scratch/setup/"
"$go" run ./cmd/release-pin --root "$scratch" --version v0.0.0-check --repository kustomize-deploy/kustomize-deploy \
  --checksums "$dist/checksums.txt" > /dev/null || fail "cmd/release-pin refuses $dist/checksums.txt"
cmp -s "$scratch/setup/checksums.txt" "$dist/checksums.txt" || fail "cmd/release-pin did not write setup/checksums.txt"

# The host's binary runs.
host="$dist/kustomize-deploy_$("$go" env GOOS)_$("$go" env GOARCH)$("$go" env GOEXE)"
out=$("$host" version) || fail "$host version: $out"
grep -q "$version" <<< "$out" || fail "$host version printed $out, want $version"
out=$("$host" build --path examples/app) || fail "$host build --path examples/app failed: $out"
grep -q '^kind: Deployment$' <<< "$out" || fail "$host build --path examples/app rendered no Deployment:
$out"
echo "release-check: ${#want[@]} files in $dist checked; $host runs ($(head -n 1 <<< "$(${host} version)"))"
