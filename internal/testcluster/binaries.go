package testcluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// KubernetesVersion is the version of the control plane built from
// hack/tools/kubernetes. Change it together with that module's go.mod.
const KubernetesVersion = "v1.37.2"

// recipe names the way binaries are built; bump it when buildAll changes so
// caches built the old way are not reused.
const recipe = "2"

// Binary names inside the binary directory.
const (
	binEtcd              = "etcd"
	binAPIServer         = "kube-apiserver"
	binControllerManager = "kube-controller-manager"
	binScheduler         = "kube-scheduler"
	binKwok              = "kwok"
	kwokStagesFile       = "kwok-stages.yaml"
	completeMarker       = ".complete"
)

// toolModules are the modules under hack/tools whose go.mod and go.sum pin
// what gets built; they form the cache key.
var toolModules = []string{"kubernetes", "etcd", "kwok"}

// EnsureBinaries returns a directory holding every control-plane binary,
// building them from hack/tools first if this version is not cached yet.
// Progress goes to log. The cache lives in
// ${XDG_CACHE_HOME:-$HOME/.cache}/kustomize-deploy/testenv/ and is keyed by
// the tools modules' go.mod/go.sum, the Go version and the build recipe, so a
// version bump rebuilds and fresh clones on the same machine reuse the build.
// Concurrent callers (test packages run in parallel) wait on a file lock and
// build once.
func EnsureBinaries(ctx context.Context, log io.Writer) (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	key, err := cacheKey(root)
	if err != nil {
		return "", err
	}
	name := "k8s-" + KubernetesVersion + "-" + key
	return cached(ctx, name, log, func(tmp string) error {
		start := time.Now()
		fmt.Fprintf(log, "testcluster: building control-plane binaries (Kubernetes %s, etcd, kwok) into %s\n", KubernetesVersion, name)
		fmt.Fprintf(log, "testcluster: a cold build takes about 10 minutes on 2 cores; later runs reuse it\n")
		if err := buildAll(ctx, root, tmp, log); err != nil {
			return err
		}
		fmt.Fprintf(log, "testcluster: binaries ready in %s\n", time.Since(start).Round(time.Second))
		return nil
	})
}

func complete(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, completeMarker))
	return err == nil
}

// versionLDFlags stamp Kubernetes binaries with KubernetesVersion, as the
// upstream release build does.
func versionLDFlags() []string {
	major, minor := kubeMajorMinor()
	var ld []string
	for _, pkg := range []string{"k8s.io/component-base/version", "k8s.io/client-go/pkg/version"} {
		ld = append(ld,
			"-X", pkg+".gitVersion="+KubernetesVersion,
			"-X", pkg+".gitMajor="+major,
			"-X", pkg+".gitMinor="+minor,
			"-X", pkg+".gitTreeState=clean",
			"-X", pkg+".buildDate=1970-01-01T00:00:00Z",
		)
	}
	return ld
}

func buildAll(ctx context.Context, root, out string, log io.Writer) error {
	ld := versionLDFlags()
	steps := []struct {
		module string
		what   string
		args   []string
	}{
		{"etcd", "etcd", []string{"-o", filepath.Join(out, binEtcd), "go.etcd.io/etcd/server/v3"}},
		{"kwok", "kwok", []string{"-o", filepath.Join(out, binKwok), "sigs.k8s.io/kwok/cmd/kwok"}},
		{"kubernetes", "kube-apiserver, kube-controller-manager, kube-scheduler", []string{
			"-ldflags", "-s -w " + strings.Join(ld, " "),
			"-o", out + string(filepath.Separator),
			"k8s.io/kubernetes/cmd/kube-apiserver",
			"k8s.io/kubernetes/cmd/kube-controller-manager",
			"k8s.io/kubernetes/cmd/kube-scheduler",
		}},
	}
	for _, s := range steps {
		args := append([]string{"build", "-trimpath"}, s.args...)
		if err := goCmd(ctx, filepath.Join(root, "hack", "tools", s.module), log, "building "+s.what, args...); err != nil {
			return err
		}
	}
	stages, err := kwokUpstreamStages(ctx, filepath.Join(root, "hack", "tools", "kwok"))
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, kwokStagesFile), stages, 0o644)
}

// goCmd runs the go tool in dir, printing a line every 30 seconds so a long
// cold build does not look hung.
func goCmd(ctx context.Context, dir string, log io.Writer, what string, args ...string) error {
	fmt.Fprintf(log, "testcluster: %s ...\n", what)
	start := time.Now()
	cmd := exec.CommandContext(ctx, goBinary(), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly -buildvcs=false")
	var output strings.Builder
	cmd.Stdout = &output
	cmd.Stderr = &output
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(30 * time.Second)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				return fmt.Errorf("%s in %s failed: %w\n%s", what, dir, err, output.String())
			}
			fmt.Fprintf(log, "testcluster: %s done in %s\n", what, time.Since(start).Round(time.Second))
			return nil
		case <-tick.C:
			fmt.Fprintf(log, "testcluster: still %s (%s)\n", what, time.Since(start).Round(time.Second))
		}
	}
}

func goBinary() string {
	if p := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(p) {
		return p
	}
	return "go"
}

func kubeMajorMinor() (string, string) {
	parts := strings.SplitN(strings.TrimPrefix(KubernetesVersion, "v"), ".", 3)
	return parts[0], parts[1]
}

// repoRoot finds the checkout this package belongs to: the first directory
// upwards from the working directory that holds hack/tools/kubernetes/go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if fileExists(filepath.Join(d, "hack", "tools", "kubernetes", "go.mod")) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("cannot find the kustomize-deploy checkout (hack/tools/kubernetes/go.mod) above %s: run from inside the repository", dir)
		}
	}
}

func cacheKey(root string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "recipe %s\ngo %s %s/%s\n", recipe, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	for _, m := range toolModules {
		for _, f := range []string{"go.mod", "go.sum"} {
			data, err := os.ReadFile(filepath.Join(root, "hack", "tools", m, f))
			if err != nil {
				return "", err
			}
			fmt.Fprintf(h, "%s/%s %d\n", m, f, len(data))
			h.Write(data)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

// lockFile takes an exclusive flock on path, waiting (and saying so) while
// another process holds it.
func lockFile(ctx context.Context, path string, log io.Writer) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	said := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		if !said {
			fmt.Fprintf(log, "testcluster: waiting for another process building the binaries (%s)\n", path)
			said = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
