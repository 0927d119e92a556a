#!/usr/bin/env bash
# Checks the Dockerfile's base images (the release workflow, before it
# builds): every FROM names its image by tag and digest, and the digest is
# that of a multi-platform index holding linux/amd64 and linux/arm64, not
# one platform's manifest (which would build the other platform's image
# from the wrong base, or not at all). Needs docker buildx and jq.
#
# Usage: hack/check-base-pins.sh [DOCKERFILE]
set -euo pipefail

dockerfile=${1:-Dockerfile}
fail() { echo "check-base-pins: $*" >&2; exit 1; }

images=$(awk 'toupper($1) == "FROM" { for (i = 2; i <= NF; i++) if ($i !~ /^--/) { print $i; break } }' "$dockerfile")
[ -n "$images" ] || fail "$dockerfile has no FROM"
for image in $images; do
  [[ $image =~ ^[^@]+:[^@]+@sha256:[0-9a-f]{64}$ ]] || fail "$dockerfile: FROM $image is not pinned as IMAGE:TAG@sha256:DIGEST (docker buildx imagetools inspect IMAGE:TAG gives the index digest)"
  raw=$(docker buildx imagetools inspect --raw "$image") || fail "$image cannot be inspected"
  type=$(jq -r '.mediaType // empty' <<< "$raw")
  case $type in
    application/vnd.oci.image.index.v1+json | application/vnd.docker.distribution.manifest.list.v2+json) ;;
    *) fail "$image is a $type, not a multi-platform index: pin the digest docker buildx imagetools inspect ${image%@*} prints as Digest" ;;
  esac
  for platform in linux/amd64 linux/arm64; do
    jq -e --arg os "${platform%/*}" --arg arch "${platform#*/}" \
      'any(.manifests[]; .platform.os == $os and .platform.architecture == $arch)' <<< "$raw" > /dev/null \
      || fail "$image has no $platform manifest"
  done
  echo "$image: an index with linux/amd64 and linux/arm64"
done
