# kustomize-deploy — see README.md. Everything a test needs is built from
# this repository's own modules; nothing is installed by hand.

GO      ?= go
PKG     := github.com/kustomize-deploy/kustomize-deploy
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS := -s -w -X $(PKG)/internal/version.Version=$(VERSION) -X $(PKG)/internal/version.Commit=$(COMMIT)
DEMO_DIR ?= $(CURDIR)/.demo

# The suite's packages run in parallel, each with its own local cluster.
TEST_FLAGS ?= -race -count=1 -timeout 45m

export GOWORK := off

.PHONY: all build dist release-check test testenv stress fuzz demo bench lint fmt docs screenshots clean

all: build

## build: the kustomize-deploy binary in $(BINDIR) (bin/); static with
## CGO_ENABLED=0, as the Dockerfile builds it
BINDIR ?= bin
build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BINDIR)/kustomize-deploy ./cmd/kustomize-deploy

## dist: every file of a release in dist/, built by goreleaser from
## .goreleaser.yaml (static binaries for Linux, macOS and Windows on amd64
## and arm64, raw and in archives with LICENSE and README.md, and
## checksums.txt); version and commit stamped with LDFLAGS as in build.
## Publishes nothing. goreleaser is built from hack/tools/goreleaser.
TOOLSDIR   ?= bin/tools
GORELEASER ?= $(TOOLSDIR)/goreleaser
## goreleaser gives up after an hour by default: six cold cross-builds
## on a busy 2-core machine take longer.
dist: $(GORELEASER)
	VERSION='$(VERSION)' LDFLAGS='$(LDFLAGS)' $(GORELEASER) release --snapshot --clean --timeout 3h
	hack/dist-binaries.sh dist

$(GORELEASER): hack/tools/goreleaser/go.mod hack/tools/goreleaser/go.sum
	cd hack/tools/goreleaser && $(GO) build -trimpath -o $(abspath $@) github.com/goreleaser/goreleaser/v2

## release-check: dist, then hack/release-check.sh: every file there and
## in checksums.txt, archive contents, static builds per platform, and the
## host's binary run (version, build of examples/app). Not part of test:
## CI runs it as its own job.
release-check: dist
	GO=$(GO) hack/release-check.sh dist '$(VERSION)'

## testenv: build (or reuse from the cache) etcd, kube-apiserver,
## kube-controller-manager, kube-scheduler and kwok from hack/tools
testenv:
	$(GO) run ./cmd/localcluster --build-only

## test: the whole suite with the race detector, real-cluster tests included
test: testenv
	$(GO) test $(TEST_FLAGS) ./...

## stress: the fault tests with many more seeded iterations: 200 API
## server crashes at random points (~15 min), then 200 runs through the
## fault-injecting proxy (~25 min). A failure names its seed:
## replay it with KUSTOMIZE_DEPLOY_FAULT_SEED=N KUSTOMIZE_DEPLOY_FAULT_ITERATIONS=1.
STRESS_ITERATIONS ?= 200
stress: testenv
	KUSTOMIZE_DEPLOY_FAULT_ITERATIONS=$(STRESS_ITERATIONS) $(GO) test -race -count=1 -timeout 80m \
	  -run 'Converge' -v ./cmd/kustomize-deploy

## fuzz: every fuzz target (func FuzzXxx in any package's tests) for
## FUZZTIME each, one after the other (~5 min with the default 20s). An
## input that breaks one is written to that package's testdata/fuzz/FuzzXxx/;
## commit it with the fix and make test runs it from then on. Seed corpora
## run in make test anyway. No cluster is started (see testcluster.Main).
FUZZTIME   ?= 20s
FUZZ_FLAGS ?=
fuzz:
	@failed=; \
	for pkg in $$($(GO) list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}={{.Dir}}{{end}}' ./...); do \
	  grep -qs '^func Fuzz' $${pkg#*=}/*_test.go || continue; \
	  for target in $$($(GO) test -list '^Fuzz' $${pkg%%=*} | grep '^Fuzz'); do \
	    echo "== $$target in $${pkg%%=*} for $(FUZZTIME)"; \
	    $(GO) test -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) $(FUZZ_FLAGS) $${pkg%%=*} \
	      || failed="$$failed $$target"; \
	  done; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz: failing targets:$$failed"; exit 1; fi

## demo: deploy examples/ to the local cluster with kustomize-deploy, end to end
demo: testenv build
	DEMO_DIR=$(DEMO_DIR) BIN=bin/kustomize-deploy hack/demo.sh

## bench: kustomize-deploy against kubectl apply --server-side and kapp
## deploy on the local control plane; table on stdout and in BENCH_OUT.
## Sizes 100, 1,000 and 5,000 (~9 min), then 20 units of 50 objects in a
## dependency graph (~2 min more; --multi=false skips it). BENCH_FLAGS="--sizes
## 100,1000" for ~4 min before it, "--sizes 1000 --repeat-first 5" for five
## more pairs of first deploys (kapp, ours) at 1,000. Then the Helm scenario
## against helm template / helm upgrade --install (~2 min; --helm=false skips
## it; "--sizes '' --multi=false --homeops=false" runs it alone). The home-ops
## scenario (a root Kustomization reaching 100 Kustomizations by building,
## 3,000 objects, against one unit of them; ~3 min) runs before it;
## --homeops=false skips it.
BENCH_OUT   ?= bench-results.md
BENCH_FLAGS ?=
bench: testenv build
	$(GO) run ./cmd/bench --bin bin/kustomize-deploy --out $(BENCH_OUT) $(BENCH_FLAGS)

## lint: gofmt check and go vet
lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

## docs: regenerate the CLI reference in docs/cli from the commands, and
## the Action's inputs and outputs tables in docs/action.md from action.yml
## (make test fails when either is stale)
docs:
	$(GO) test ./cmd/kustomize-deploy -run '^TestCLIReferenceIsCurrent$$' -count=1 -update
	$(GO) test ./internal/docs -run '^TestActionReferenceIsCurrent$$' -count=1 -update

## screenshots: the PR comment of a 3-unit three-way diff and the first page of a
## 1,000-object change, rendered with goldmark (GitHub's extensions) and
## shot with headless Chromium (apt-get install chromium) into docs/
SHOTS_TMP ?= $(CURDIR)/.screenshots
CHROMIUM  ?= chromium
screenshots:
	rm -rf $(SHOTS_TMP) && mkdir -p $(SHOTS_TMP) docs
	KUSTOMIZE_DEPLOY_SCREENSHOT_DIR=$(SHOTS_TMP) $(GO) test ./internal/report -run '^TestMarkdownPagesThousandObjects$$' -count=1
	cp internal/report/testdata/markdown-threeway-units.golden $(SHOTS_TMP)/comment-3-units.md
	cd hack/tools/mdrender && $(GO) build -o $(SHOTS_TMP)/mdrender .
	set -e; for name in comment-3-units:1140 comment-1000-objects:1500; do \
	  f=$${name%:*}; h=$${name#*:}; \
	  $(SHOTS_TMP)/mdrender < $(SHOTS_TMP)/$$f.md > $(SHOTS_TMP)/$$f.html; \
	  $(CHROMIUM) --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=900,$$h \
	    --screenshot=$(CURDIR)/docs/$$f.png file://$(SHOTS_TMP)/$$f.html 2>/dev/null; \
	done
	rm -rf $(SHOTS_TMP)

clean:
	rm -rf bin dist $(DEMO_DIR)
