# syntax=docker/dockerfile:1
#
# One image with Crucible's four services and its command-line client:
#
#   docker build -t crucible:dev .
#   docker run --rm crucible:dev evaluator --help
#
# Static binaries (no cgo), run as the distroless "nonroot" user (65532).
# The data directory (CGCNN checkpoints, reference tables) is a volume at
# /data: mount a filled one, or fill it with `crucible data pull --dir
# /data` (the compose file and the Kubernetes manifests do that in a
# one-shot service or an init container). Each service serves /metrics,
# /healthz and /readyz on :9090; `<service> --probe` checks /readyz from
# inside the container, for health checks without a shell.
#
# deploy/dockerfile_test.go parses this file and runs its build stage's go
# build command, so keep that command the last of its RUN.

ARG GO_VERSION=1.26

FROM golang:${GO_VERSION} AS build
WORKDIR /src
COPY . .
ENV CGO_ENABLED=0
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    go build -trimpath -ldflags="-s -w" -o /out/ ./cmd/crucible ./cmd/proposer ./cmd/evaluator ./cmd/reflector ./cmd/judge
# The data volume's mount point, owned by the runtime user so that
# `crucible data pull` can fill a fresh named volume.
RUN mkdir -p /data

FROM gcr.io/distroless/static-debian12:nonroot AS runtime
COPY --from=build /out/ /usr/local/bin/
COPY --from=build --chown=65532:65532 /data /data
ENV CRUCIBLE_DATA=/data \
    CRUCIBLE_HTTP_ADDR=:9090 \
    CRUCIBLE_LOG_FORMAT=json
VOLUME /data
EXPOSE 9090
USER 65532:65532
ENTRYPOINT ["crucible"]
CMD ["--help"]
