# Crucible — build, test, demo.
GO        ?= go
BIN       ?= bin
PKGS      ?= ./...
BINARIES  := crucible proposer evaluator reflector judge

.PHONY: all build test lint demo bench up down clean

all: build

build:
	@mkdir -p $(BIN)
	@for b in $(BINARIES); do \
		if [ -d cmd/$$b ]; then $(GO) build -o $(BIN)/$$b ./cmd/$$b || exit 1; fi; \
	done

test:
	$(GO) test -count=1 -timeout 30m $(PKGS)

lint:
	$(GO) vet $(PKGS)
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

clean:
	rm -rf $(BIN)

# --- Deployment and resilience (deploy/, internal/chaos, bench load) --------
# `make test` already runs the deployment checks and the chaos test's CI
# profile (both need CRUCIBLE_DATA, as the rest of the suite).
.PHONY: chaos deploy-check load

# The full chaos test: 600 evaluations, 3 evaluators, 40+ SIGKILLs, Redis
# and NATS each down for 20 s mid-campaign.
chaos:
	CRUCIBLE_CHAOS=full $(GO) test -count=1 -timeout 15m -v -run TestChaos ./internal/chaos

# The Dockerfile, deploy/compose.yaml and deploy/k8s, validated without
# Docker or a cluster.
deploy-check:
	$(GO) test -count=1 -v ./deploy

# 20 campaigns at once on the four service binaries.
load: build
	$(BIN)/crucible bench load --processes --bin $(BIN)
