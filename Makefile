# svc — the two commands a newcomer needs are `make run` and `make test`.
GO        ?= go
STATICCHECK_VERSION := v0.8.2

.PHONY: run build test test-short lint bench fmt

run: ## run svc on its embedded defaults (SQLite + in-process store in ./data)
	$(GO) run ./cmd/svc serve

build: ## build ./bin/svc
	$(GO) build -o bin/svc ./cmd/svc

test: ## the whole suite, with the race detector
	$(GO) test -race -count=1 ./...

test-short: ## the suite without the race detector (faster)
	$(GO) test -count=1 ./...

lint: ## gofmt, go vet, staticcheck
	@out=$$(gofmt -l cmd internal); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

bench: ## the gateway benchmark: direct vs through svc, against the fake upstream
	$(GO) run ./cmd/svcbench

fmt:
	gofmt -w cmd internal
