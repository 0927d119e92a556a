package testcluster

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
)

// EnsureTool returns the path of the binary built from pkg (a main package)
// in the tools module hack/tools/<module>, building it first if it is not
// cached yet. It serves tools beyond the control plane, such as kubectl and
// kapp for `make bench`, so tests never depend on what is installed on the
// machine. The binary is cached next to the control-plane binaries in a
// directory named after it and its module's version and keyed, like
// EnsureBinaries, by the module's go.mod/go.sum, the Go version and the build
// recipe. Binaries carry the version stamps their upstream release builds
// set (see toolLDFlags).
func EnsureTool(ctx context.Context, module, pkg string, log io.Writer) (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	modDir := filepath.Join(root, "hack", "tools", module)
	name := path.Base(pkg)
	version, key, err := toolKey(modDir, pkg)
	if err != nil {
		return "", err
	}
	dir, err := cached(ctx, name+"-"+version+"-"+key, log, func(tmp string) error {
		ldflags := strings.Join(append([]string{"-s", "-w"}, toolLDFlags(module, version)...), " ")
		what := fmt.Sprintf("building %s %s", name, version)
		return goCmd(ctx, modDir, log, what, "build", "-trimpath", "-ldflags", ldflags, "-o", filepath.Join(tmp, name), pkg)
	})
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, name), nil
}

// toolKey returns the version modDir's go.mod requires for the module
// providing pkg, and a cache key over go.mod, go.sum, pkg, the Go version and
// the build recipe.
func toolKey(modDir, pkg string) (version, key string, err error) {
	gomod, err := os.ReadFile(filepath.Join(modDir, "go.mod"))
	if err != nil {
		return "", "", err
	}
	gosum, err := os.ReadFile(filepath.Join(modDir, "go.sum"))
	if err != nil {
		return "", "", err
	}
	version = requiredVersion(gomod, pkg)
	if version == "" {
		return "", "", fmt.Errorf("%s: no requirement provides %s", filepath.Join(modDir, "go.mod"), pkg)
	}
	h := sha256.New()
	fmt.Fprintf(h, "recipe %s\ngo %s %s/%s\npkg %s\n", recipe, runtime.Version(), runtime.GOOS, runtime.GOARCH, pkg)
	fmt.Fprintf(h, "go.mod %d\n", len(gomod))
	h.Write(gomod)
	fmt.Fprintf(h, "go.sum %d\n", len(gosum))
	h.Write(gosum)
	return version, hex.EncodeToString(h.Sum(nil))[:12], nil
}

// requiredVersion finds, in a go.mod, the version of the longest required
// module path that is pkg or a parent of it.
func requiredVersion(gomod []byte, pkg string) string {
	var best, version string
	s := bufio.NewScanner(strings.NewReader(string(gomod)))
	for s.Scan() {
		f := strings.Fields(s.Text())
		if len(f) > 0 && f[0] == "require" {
			f = f[1:]
		}
		if len(f) < 2 || !strings.HasPrefix(f[1], "v") {
			continue
		}
		mod := f[0]
		if (pkg == mod || strings.HasPrefix(pkg, mod+"/")) && len(mod) > len(best) {
			best, version = mod, f[1]
		}
	}
	return version
}

// toolLDFlags stamp a tool's version the way its upstream release build does,
// so `kubectl version` and `kapp version` tell what was measured.
func toolLDFlags(module, version string) []string {
	switch module {
	case "kubernetes":
		return versionLDFlags()
	case "kapp":
		return []string{"-X", "carvel.dev/kapp/pkg/kapp/version.Version=" + strings.TrimPrefix(version, "v")}
	case "helm":
		// As helm's Makefile stamps a tagged build: the version, and no
		// "unreleased" metadata.
		return []string{"-X", "helm.sh/helm/v4/internal/version.version=" + version}
	}
	return nil
}
