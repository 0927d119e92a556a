# syntax=docker/dockerfile:1
#
# The image for CI systems other than GitHub Actions (docs/ci-systems.md;
# the Action itself runs the binary on the runner: action.yml): a static
# kustomize-deploy, git (revisions, and the PR base's worktree for the
# offline diff) and CA certificates, on Alpine. No USER: CI systems run it
# as root, as GitHub runs container actions. .github/workflows/release.yml
# builds it for linux/amd64 and linux/arm64 and pushes it to ghcr.io;
# internal/release/image_test.go runs this file's build command and checks
# what the final stage holds.

# Base images are pinned by the digest of their multi-platform index
# (`docker buildx imagetools inspect IMAGE:TAG`, the Digest line);
# dependabot's docker ecosystem (.github/dependabot.yml) keeps the pins
# current. The release workflow runs hack/check-base-pins.sh before
# building: each pin must be an index holding linux/amd64 and
# linux/arm64, never one platform's manifest.

# The binary is cross-compiled on the build machine's platform: no
# emulation for the Go build, whatever the target.
FROM --platform=$BUILDPLATFORM golang:1.26@sha256:3aff6657219a4d9c14e27fb1d8976c49c29fddb70ba835014f477e1c70636647 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG TARGETOS TARGETARCH
ARG VERSION=dev
ARG COMMIT=unknown
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH make build VERSION=$VERSION COMMIT=$COMMIT

FROM alpine:3.22@sha256:14358309a308569c32bdc37e2e0e9694be33a9d99e68afb0f5ff33cc1f695dce
RUN apk add --no-cache git ca-certificates \
 && git config --system --add safe.directory '*'
COPY --from=build /src/bin/kustomize-deploy /usr/local/bin/kustomize-deploy
ENTRYPOINT ["/usr/local/bin/kustomize-deploy"]
