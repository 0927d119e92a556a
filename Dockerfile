# syntax=docker/dockerfile:1
#
# The image the GitHub Action runs, prebuilt: a static kustomize-deploy,
# git (revisions, and the PR base's worktree for the offline diff) and CA
# certificates, on Alpine. No USER: GitHub runs container actions as root
# and says not to set one. .github/workflows/release.yml builds it for
# linux/amd64 and linux/arm64, pushes it to ghcr.io and pins it in
# action.yml; internal/release/image_test.go runs this file's build
# command and checks what the final stage holds.

# Base images: TODO(maintainer) pin both FROM lines (and the syntax line)
# by the digest of their multi-platform index, e.g.
#   docker buildx imagetools inspect alpine:3.22 --format '{{json .Manifest.Digest}}'
# then `FROM alpine:3.22@sha256:<that digest>`; dependabot's docker
# ecosystem (.github/dependabot.yml) keeps pinned digests current. Not
# done yet: the machine this was written on reaches no registry, and a
# digest copied from elsewhere could be one platform's manifest, which
# would break the arm64 image. internal/release/image_test.go accepts the
# pinned form.

# The binary is cross-compiled on the build machine's platform: no
# emulation for the Go build, whatever the target.
FROM --platform=$BUILDPLATFORM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG TARGETOS TARGETARCH
ARG VERSION=dev
ARG COMMIT=unknown
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH make build VERSION=$VERSION COMMIT=$COMMIT

FROM alpine:3.22
RUN apk add --no-cache git ca-certificates \
 && git config --system --add safe.directory '*'
COPY --from=build /src/bin/kustomize-deploy /usr/local/bin/kustomize-deploy
ENTRYPOINT ["/usr/local/bin/kustomize-deploy"]
