#!/usr/bin/env bash
# Tags a release commit and moves the tags users' workflows name:
#
#   hack/release-tags.sh vX.Y.Z [REMOTE]
#
# run by .github/workflows/release.yml in the checkout whose HEAD is the
# release commit. It tags HEAD vX.Y.Z (annotated) and, for a release (not
# a prerelease such as v1.3.0-rc.1), moves the moving tags vX.Y and vX to
# it: `uses: kustomize-deploy/kustomize-deploy@v1` (or @v1.3) then runs the
# newest release of that line. A moving tag only ever moves forward: a
# patch of an older line (v1.2.5 after v1.3.0) moves v1.2, not v1. The
# tags are pushed to REMOTE (default origin) with --force, the release tag
# included (the release commit replaces the commit the tag was pushed on).
set -euo pipefail

fail() { echo "::error title=release tags::$*" >&2; exit 1; }

tag=${1:?usage: hack/release-tags.sh vX.Y.Z [REMOTE]}
remote=${2:-origin}
[[ "$tag" =~ ^v([0-9]+)\.([0-9]+)\.([0-9]+)(-[0-9A-Za-z.-]+)?$ ]] || fail "tag $tag is not vX.Y.Z"
major=v${BASH_REMATCH[1]}
minor=$major.${BASH_REMATCH[2]}
pre=${BASH_REMATCH[4]}

git tag -f -a "$tag" -m "$tag"
refs=("refs/tags/$tag")
if [ -z "$pre" ]; then
  # The releases the remote has (prereleases aside), and this one.
  releases=$(
    {
      git ls-remote --tags "$remote" 'v*' | sed -n 's#^.*refs/tags/\(v[0-9][0-9]*\.[0-9][0-9]*\.[0-9][0-9]*\)$#\1#p'
      echo "$tag"
    } | sort -u
  )
  newest() { # newest LINE: the newest release of line vX or vX.Y
    grep -F -- "$1." <<< "$releases" | grep -E "^${1//./\\.}\." | sort -V | tail -n 1
  }
  for line in "$minor" "$major"; do
    top=$(newest "$line")
    if [ "$top" = "$tag" ]; then
      git tag -f "$line" HEAD
      refs+=("refs/tags/$line")
      echo "$line -> $tag"
    else
      echo "$line stays at $top (newer than $tag)"
    fi
  done
fi
git push --force "$remote" "${refs[@]}"
