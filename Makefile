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
