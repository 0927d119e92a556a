#!/usr/bin/env bash
# Puts each raw binary goreleaser built beside the archives, under the
# name checksums.txt lists it by (kustomize-deploy_<os>_<arch>[.exe]):
# goreleaser's "binary" archives stay in their build directories
# (dist/kustomize-deploy_linux_amd64_v1/kustomize-deploy), where neither
# setup/install.sh's URLs nor the release upload would find them.
#
# Usage: hack/dist-binaries.sh DIST
set -euo pipefail

dist=${1:?usage: $0 DIST}
n=0
for dir in "$dist"/kustomize-deploy_*_*_*/; do
  build=$(basename "$dir")          # kustomize-deploy_linux_amd64_v1
  name=${build%_*}                  # kustomize-deploy_linux_amd64
  for bin in "$dir"kustomize-deploy "$dir"kustomize-deploy.exe; do
    [ -f "$bin" ] || continue
    ext=${bin##*/kustomize-deploy}
    cp -p "$bin" "$dist/$name$ext"
    n=$((n + 1))
  done
done
[ "$n" -gt 0 ] || { echo "dist-binaries: no build directory under $dist" >&2; exit 1; }
