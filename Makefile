# Crucible — build, test, demo, benchmarks.
#
#   make demo    a real campaign on this machine (embedded NATS and Redis)
#   make test    every test (uses ../shared or CRUCIBLE_DATA when present)
#   make console rebuild the web console's embedded files with npm

GO       ?= go
BIN      ?= bin
PKGS     ?= ./...
BINARIES := crucible proposer evaluator reflector judge

# Data: CRUCIBLE_DATA if set, else ../shared beside the clone (developers'
# layout), else the user cache that "crucible data pull" fills.
CRUCIBLE_DATA ?= $(shell if [ -d ../shared/models/cgcnn ]; then cd ../shared && pwd; fi)
export CRUCIBLE_DATA

DEMO_TASK   ?= Stable Wide-Bandgap Semiconductors
DEMO_BUDGET ?= 300
DEMO_OUT    ?= demo-out

# Local servers for "make up" (real nats-server and redis-server, if
# installed); state under .run/.
NATS_PORT  ?= 4222
REDIS_PORT ?= 6379
RUN_DIR    := .run

.PHONY: all build test lint demo bench up down clean data console

all: build

build:
	@mkdir -p $(BIN)
	@echo "building $(BINARIES) (a first build fetches the modules and takes a few minutes)"
	@for b in $(BINARIES); do echo "  $$b"; $(GO) build -trimpath -o $(BIN)/$$b ./cmd/$$b || exit 1; done
	@echo "built $(BINARIES) into $(BIN)/"

# The web console (internal/console/web, built by vite into
# internal/console/dist, which is committed: "go build" needs no npm).
console:
	cd internal/console/web && npm ci --no-audit --no-fund && npm run build

test:
	$(GO) test -count=1 -timeout 20m $(PKGS)

lint:
	$(GO) vet $(PKGS)
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './vendor/*')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@echo "vet and gofmt clean"

# The data the demo needs: present, or pulled from the public sources.
data: build
	@if [ -n "$(CRUCIBLE_DATA)" ] && $(BIN)/crucible data check --dir "$(CRUCIBLE_DATA)" >/dev/null 2>&1; then \
		echo "data: $(CRUCIBLE_DATA)"; \
	elif $(BIN)/crucible data check >/dev/null 2>&1; then \
		echo "data: user cache"; \
	else \
		$(BIN)/crucible data pull; \
	fi

demo: build data
	$(BIN)/crucible local --task "$(DEMO_TASK)" --budget $(DEMO_BUDGET) --out $(DEMO_OUT) --force --seed 1

bench: build
	$(BIN)/crucible bench hull
	$(BIN)/crucible bench predict
	$(BIN)/crucible bench m3gnet
	$(BIN)/crucible bench pipeline
	$(BIN)/crucible bench pipeline --workers 1 --replicas 1
	$(GO) test -run '^$$' -bench . -benchmem ./pkg/crystal ./pkg/hull ./pkg/cgcnn ./pkg/evolve ./pkg/task

up:
	@mkdir -p $(RUN_DIR)/nats $(RUN_DIR)/redis
	@if command -v nats-server >/dev/null 2>&1; then \
		if (exec 3<>/dev/tcp/127.0.0.1/$(NATS_PORT)) 2>/dev/null; then echo "nats: something already answers on $(NATS_PORT)"; \
		else nats-server -js -a 127.0.0.1 -p $(NATS_PORT) -sd $(RUN_DIR)/nats -l $(RUN_DIR)/nats.log -P $(RUN_DIR)/nats.pid & \
		echo "nats: started on $(NATS_PORT) (JetStream in $(RUN_DIR)/nats)"; fi; \
	else echo "nats-server not installed (Debian: apt install nats-server); crucible local embeds one"; fi
	@if command -v redis-server >/dev/null 2>&1; then \
		if (exec 3<>/dev/tcp/127.0.0.1/$(REDIS_PORT)) 2>/dev/null; then echo "redis: something already answers on $(REDIS_PORT)"; \
		else redis-server --daemonize yes --bind 127.0.0.1 --port $(REDIS_PORT) --appendonly yes --dir $(CURDIR)/$(RUN_DIR)/redis \
			--pidfile $(CURDIR)/$(RUN_DIR)/redis.pid --logfile $(CURDIR)/$(RUN_DIR)/redis.log && \
		echo "redis: started on $(REDIS_PORT) (AOF in $(RUN_DIR)/redis)"; fi; \
	else echo "redis-server not installed (Debian: apt install redis-server); crucible local embeds one"; fi

down:
	@for s in nats redis; do \
		if [ -f $(RUN_DIR)/$$s.pid ]; then kill $$(cat $(RUN_DIR)/$$s.pid) 2>/dev/null && echo "$$s: stopped"; rm -f $(RUN_DIR)/$$s.pid; fi; \
	done

clean:
	rm -rf $(BIN) $(DEMO_OUT)

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
