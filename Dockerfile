# syntax=docker/dockerfile:1
#
# svc's container image: `docker build -t svc .` at the repository root.
#
# Stage 1 builds a static binary (no cgo: SQLite is pure Go); stage 2 is Alpine with that binary,
# CA certificates (providers are reached over TLS), a non-root user and busybox's wget for the
# health check. Alpine rather than distroless: the health check needs an HTTP client in the
# image, and svc has no health subcommand (docs/decisions.md). Pin the bases by digest in
# production (`FROM alpine:3.22@sha256:…`).
#
# No container engine is reachable where svc is developed, so CI does not build this file; see
# the README's "Scaled layout" section for what is tested instead.

ARG GO_VERSION=1.26.8
ARG ALPINE_VERSION=3.22

FROM golang:${GO_VERSION}-alpine AS build
WORKDIR /src
# Modules first: this layer is rebuilt only when go.mod or go.sum change.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY cmd ./cmd
COPY internal ./internal
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/svc ./cmd/svc

FROM alpine:${ALPINE_VERSION}
RUN apk add --no-cache ca-certificates \
    && addgroup -S -g 10001 svc \
    && adduser -S -D -H -u 10001 -G svc -s /sbin/nologin svc \
    && mkdir -p /data \
    && chown svc:svc /data \
    && chmod 0700 /data
COPY --from=build /out/svc /usr/local/bin/svc

# The data dir holds the SQLite database and the generated master and admin keys of the
# embedded default, and the audit spool (entries not yet forwarded; a proxy's next start on the
# same data dir forwards what a killed one left): keep it on a volume. With PostgreSQL and Redis
# (the scaled layout) only a proxy's spool is in it.
ENV SVC_DATA_DIR=/data
VOLUME ["/data"]

# proxy, management, compliance, policy library, bridge, frontend (SERVICE_TYPE chooses which
# run; today proxy, api-server, compliance, policy-perfect and bridge are built).
EXPOSE 7775 7778 7777 7782 3500 3600

USER 10001:10001
WORKDIR /data

# GET /health on the component the container runs: the management port when SERVICE_TYPE is
# api-server alone, the compliance API's when it is compliance alone, the policy library's when
# it is policy-perfect alone, the bridge's when it is
# bridge alone, else the proxy's. Override it (compose `healthcheck:`, or Kubernetes probes,
# which ignore this) for other layouts.
HEALTHCHECK --interval=30s --timeout=5s --start-period=15s --retries=3 \
    CMD case "${SERVICE_TYPE:-all}" in \
          api-server|management|api_server) port="${MANAGEMENT_PORT:-7778}" ;; \
          compliance) port="${COMPLIANCE_PORT:-7777}" ;; \
          policy-perfect|policy|policy_perfect) port="${POLICY_PORT:-7782}" ;; \
          bridge) port="${BRIDGE_PORT:-3500}" ;; \
          *) port="${PROXY_PORT:-7775}" ;; \
        esac; \
        wget -q -T 4 -O /dev/null "http://127.0.0.1:${port}/health" || exit 1

ENTRYPOINT ["/usr/local/bin/svc"]
CMD ["serve"]
