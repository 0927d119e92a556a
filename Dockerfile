# The kustomize-deploy binary in a small image (the GitHub Action runs it).
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG COMMIT=unknown
RUN CGO_ENABLED=0 make build VERSION=${VERSION} COMMIT=${COMMIT}

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /src/bin/kustomize-deploy /usr/local/bin/kustomize-deploy
ENTRYPOINT ["/usr/local/bin/kustomize-deploy"]
