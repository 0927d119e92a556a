# The kustomize-deploy binary, as the GitHub Action runs it. git is needed
# for revisions and the offline diff of pull requests.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG COMMIT=unknown
RUN CGO_ENABLED=0 make build VERSION=${VERSION} COMMIT=${COMMIT}

FROM alpine:3.22
RUN apk add --no-cache git ca-certificates \
 && git config --system --add safe.directory '*'
COPY --from=build /src/bin/kustomize-deploy /usr/local/bin/kustomize-deploy
ENTRYPOINT ["/usr/local/bin/kustomize-deploy"]
