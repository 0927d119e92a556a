package helm

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
	chart "helm.sh/helm/v4/pkg/chart/v2"

	"github.com/kustomize-deploy/kustomize-deploy/internal/paths"
)

// completeDependencies adds to ch, a chart directory of the checkout (dir,
// rel from the root), the dependencies its Chart.yaml names that its
// charts/ directory does not hold, as `helm dependency build` would: at
// the version Chart.lock locks (without one, the newest in Chart.yaml's
// range), from the dependency's repository, HTTP(S) or oci://, through f
// and its cache; a file:// one from the checkout. Vendored dependencies
// (directories or archives in charts/) are used as they are. A
// dependency that cannot be had fails, naming the lock file, the
// dependency and its repository. chain are the chart directories (from
// the root) whose file:// dependencies led here, ch's last: a chart
// depending on itself, or on a chart that depends back on it, fails
// naming the cycle, and chains end at MaxChartDependencyDepth.
func (c *Checkout) completeDependencies(ctx context.Context, f *Fetcher, ch *chart.Chart, dir, rel string, chain []string) error {
	reqs := ch.Metadata.Dependencies
	if len(reqs) == 0 {
		return nil
	}
	have := map[string]bool{}
	for _, d := range ch.Dependencies() {
		have[d.Name()] = true
	}
	lockFile := path.Join(rel, "Chart.lock")
	if ch.Lock == nil {
		lockFile = path.Join(rel, chartFile)
	}
	for _, req := range reqs {
		if have[req.Name] {
			continue
		}
		version := req.Version
		if ch.Lock != nil {
			locked, err := lockedVersion(ch.Lock, req)
			if err != nil {
				return fmt.Errorf("%s: %w", lockFile, err)
			}
			version = locked
		}
		where := fmt.Sprintf("%s: dependency %s %s from %s", lockFile, req.Name, or(version, "*"), or(req.Repository, "no repository"))
		dep, err := c.fetchDependency(ctx, f, req, version, dir, chain)
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		if dep.Name() != req.Name {
			return fmt.Errorf("%s: the chart there is named %s", where, dep.Name())
		}
		ch.AddDependency(dep)
		have[req.Name] = true
	}
	return nil
}

// lockedVersion is the version lock pins for req; a lock without it, or
// pinning a version out of req's range, is out of sync with Chart.yaml.
func lockedVersion(lock *chart.Lock, req *chart.Dependency) (string, error) {
	for _, l := range lock.Dependencies {
		if l == nil || l.Name != req.Name || strings.TrimSuffix(l.Repository, "/") != strings.TrimSuffix(req.Repository, "/") {
			continue
		}
		if req.Version != "" {
			v, verr := semver.NewVersion(l.Version)
			con, cerr := semver.NewConstraint(req.Version)
			if verr == nil && cerr == nil && !con.Check(v) {
				return "", fmt.Errorf("dependency %s: locked at %s, out of Chart.yaml's range %q: the lock is out of sync with Chart.yaml (run helm dependency update)", req.Name, l.Version, req.Version)
			}
		}
		return l.Version, nil
	}
	return "", fmt.Errorf("dependency %s from %s is not locked: the lock is out of sync with Chart.yaml (run helm dependency update)", req.Name, or(req.Repository, "no repository"))
}

// MaxChartDependencyDepth bounds how deep file:// dependencies of charts
// kept in a repository nest (an umbrella of umbrellas is three).
const MaxChartDependencyDepth = 10

// fetchDependency gets req at version from its repository.
func (c *Checkout) fetchDependency(ctx context.Context, f *Fetcher, req *chart.Dependency, version, dir string, chain []string) (*chart.Chart, error) {
	repoURL := req.Repository
	switch {
	case repoURL == "":
		return nil, fmt.Errorf("not in charts/, and no repository to fetch it from")
	case strings.HasPrefix(repoURL, "file://"):
		local, err := filepath.EvalSymlinks(filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(repoURL, "file://"))))
		if err != nil {
			return nil, fmt.Errorf("not in the repository")
		}
		r, ok := paths.Within(c.Root, local)
		if !ok {
			return nil, fmt.Errorf("it leaves the repository")
		}
		r = filepath.ToSlash(r)
		if i := slices.Index(chain, r); i >= 0 {
			return nil, fmt.Errorf("a dependency cycle: %s", strings.Join(append(slices.Clone(chain[i:]), r), " → "))
		}
		if len(chain) >= MaxChartDependencyDepth {
			return nil, fmt.Errorf("file:// dependencies nest more than %d deep: %s", MaxChartDependencyDepth, strings.Join(append(slices.Clone(chain), r), " → "))
		}
		relDir, err := c.resolve(r)
		if err != nil {
			return nil, err
		}
		return c.loadDir(ctx, f, relDir, r, chain)
	case strings.HasPrefix(repoURL, "oci://"):
		got, err := f.FetchOCI(ctx, &OCISource{Kind: "dependency", Name: req.Name, URL: repoURL}, Credentials{}, req.Name, version)
		if err != nil {
			return nil, err
		}
		return got.Chart, nil
	case strings.HasPrefix(repoURL, "http://"), strings.HasPrefix(repoURL, "https://"):
		got, err := f.Fetch(ctx, &Repository{Name: req.Name, URL: repoURL}, Credentials{}, req.Name, version)
		if err != nil {
			return nil, err
		}
		return got.Chart, nil
	}
	return nil, fmt.Errorf("repository %q: only http(s)://, oci:// and file:// repositories are fetched (a repository by name needs `helm repo add`): give its URL, or vendor the chart in charts/", repoURL)
}
