package helm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/paths"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/fetch"
)

// Checkout is the repository a unit is built from, for the charts kept in
// it: a HelmRelease's chart from a GitRepository that is this repository,
// and a unit whose path is a chart.
type Checkout struct {
	// Root is the checkout's directory: the scratch copy the unit is built
	// in, so that charts are read as the unit's manifests are, confined to
	// it. Empty: charts kept in the repository are not read.
	Root string
	// Remote is the checkout's origin URL, "" without one: a GitRepository
	// of the unit whose spec.url names it is this repository.
	Remote string
	// Sources are GitRepositories that are this repository whatever their
	// URL: the one the unit's own Flux Kustomization names in its
	// spec.sourceRef, since every Kustomization is built from this
	// checkout.
	Sources []Reference
	// Repository resolves a GitRepository that is not this repository to
	// its tree (mapped to a directory, or fetched once per run, by the
	// caller that resolves Kustomizations' sources); its errors name the
	// GitRepository and how to map it. Nil refuses such charts.
	Repository func(ctx context.Context, ref Reference) (GitTree, error)
}

// GitTree is the tree of a GitRepository at its spec.ref: Dir, the root
// of the repository (a chart path is relative to it), and the revision.
type GitTree struct {
	Dir, Revision string
	// Notes are what the release's notes say of the tree (a signature its
	// GitRepository asks for and that was not checked).
	Notes []string
}

// WithRepository is o with charts from GitRepositories that are other
// repositories read from the trees resolve gives.
func (o *Options) WithRepository(resolve func(ctx context.Context, ref Reference) (GitTree, error)) *Options {
	if o == nil {
		return nil
	}
	root := ""
	if o.Checkout != nil {
		root = o.Checkout.Root
	}
	out := o.InCheckout(root)
	out.Checkout.Repository = resolve
	return out
}

// InCheckout is o with charts kept in the repository read below root (a
// scratch copy of the checkout).
func (o *Options) InCheckout(root string) *Options {
	if o == nil {
		return nil
	}
	out := *o
	c := Checkout{}
	if o.Checkout != nil {
		c = *o.Checkout
	}
	c.Root = root
	c.Sources = slices.Clone(c.Sources)
	out.Checkout = &c
	return &out
}

// FromSource is o for a unit built from the GitRepository ref (its Flux
// Kustomization's spec.sourceRef): that GitRepository is this repository.
func (o *Options) FromSource(ref Reference) *Options {
	if o == nil || ref.Kind != "GitRepository" || ref.Name == "" {
		return o
	}
	out := o.InCheckout("")
	if o.Checkout != nil {
		out.Checkout.Root = o.Checkout.Root
	}
	out.Checkout.Sources = append(out.Checkout.Sources, ref)
	return out
}

// isThis says whether the GitRepository ref is this repository: a source
// of the unit's Kustomization, or a GitRepository among objs whose URL is
// the checkout's origin. When it is not, why says so.
func (c *Checkout) isThis(ref Reference, objs []*unstructured.Unstructured) (ok bool, why string) {
	if c == nil || c.Root == "" {
		return false, "charts kept in the repository are not read here"
	}
	if slices.Contains(c.Sources, ref) {
		return true, ""
	}
	u := find(objs, "GitRepository", ref.Namespace, ref.Name)
	if u == nil {
		return false, "it is not in the unit, nor the source of the unit's Kustomization, so it is not known to be this repository: charts from another repository are read only when the unit runs as part of its configuration of Flux Kustomizations"
	}
	url, _, _ := unstructured.NestedString(u.Object, "spec", "url")
	if !(source.Identity{Remote: c.Remote}).Matches(url) {
		return false, fmt.Sprintf("its spec.url %s is not this checkout's origin (%s): charts from another repository are read only when the unit runs as part of its configuration of Flux Kustomizations", fetch.Redact(url), or(c.Remote, "none"))
	}
	return true, ""
}

// fetchFromRepository loads the chart at chartPath from the tree of the
// GitRepository ref, another repository (see Checkout.Repository): it is
// confined to that tree as a chart of the checkout is to the checkout,
// and its values files are read there too (read).
func (c *Checkout) fetchFromRepository(ctx context.Context, f *Fetcher, ref Reference, chartPath string) (out *Fetched, read func(string) ([]byte, error), err error) {
	tree, err := c.Repository(ctx, ref)
	if err != nil {
		return nil, nil, err
	}
	root, err := filepath.EvalSymlinks(tree.Dir)
	if err != nil {
		return nil, nil, fmt.Errorf("the tree of %s: %w", ref, err)
	}
	other := &Checkout{Root: root}
	out, err = other.fetchFromCheckout(ctx, f, chartPath)
	if err != nil {
		return nil, nil, fmt.Errorf("at revision %s: %w", tree.Revision, err)
	}
	// As helm-controller records a Git chart: the chart's version, and
	// where it came from at which revision.
	out.URL = fmt.Sprintf("%s of %s at %s", out.URL, ref, tree.Revision)
	out.Notes = tree.Notes
	return out, other.readFile, nil
}

// fetchFromCheckout loads the chart at chartPath, relative to the root of
// the checkout as Flux reads a GitRepository's chart (./charts/web), its
// missing dependencies fetched (see completeDependencies).
func (c *Checkout) fetchFromCheckout(ctx context.Context, f *Fetcher, chartPath string) (*Fetched, error) {
	rel := path.Clean("/" + filepath.ToSlash(chartPath))[1:]
	if rel == "" {
		rel = "."
	}
	dir, err := c.resolve(rel)
	if err != nil {
		return nil, err
	}
	ch, err := c.loadDir(ctx, f, dir, rel, nil)
	if err != nil {
		return nil, err
	}
	return &Fetched{Chart: ch, Version: ch.Metadata.Version, Digest: chartDigest(ch), URL: "./" + rel}, nil
}

// resolve is rel's directory in the checkout, which must be a chart
// directory inside the root, whatever symlinks say.
func (c *Checkout) resolve(rel string) (string, error) {
	dir, err := filepath.EvalSymlinks(filepath.Join(c.Root, filepath.FromSlash(rel)))
	if err != nil {
		return "", fmt.Errorf("chart directory %s is not in the repository", rel)
	}
	if _, ok := paths.Within(c.Root, dir); !ok {
		return "", fmt.Errorf("chart directory %s leaves the repository", rel)
	}
	if fi, err := os.Stat(filepath.Join(dir, chartFile)); err != nil || fi.IsDir() {
		return "", fmt.Errorf("%s holds no %s: not a chart directory", rel, chartFile)
	}
	return dir, nil
}

// loadDir loads the chart directory dir (rel in the checkout) confined to
// the repository (see loadConfined), and completes its dependencies;
// chain are the chart directories whose file:// dependencies led here.
func (c *Checkout) loadDir(ctx context.Context, f *Fetcher, dir, rel string, chain []string) (*chart.Chart, error) {
	in, ok := paths.Within(c.Root, dir)
	if !ok {
		return nil, fmt.Errorf("chart directory %s leaves the repository", rel)
	}
	root, err := os.OpenRoot(c.Root)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	ch, err := loadConfined(root, filepath.ToSlash(in))
	if err != nil {
		return nil, fmt.Errorf("chart %s does not load: %w", rel, err)
	}
	if err := c.completeDependencies(ctx, f, ch, dir, rel, append(chain, filepath.ToSlash(in))); err != nil {
		return nil, err
	}
	return ch, nil
}

// chartDigest sums up a chart loaded from a directory: its files, and
// those of the dependencies added to it, so a change to any of them is a
// new chart (an upgrade, hooks run).
func chartDigest(ch *chart.Chart) string {
	h := sha256.New()
	var walk func(prefix string, ch *chart.Chart)
	walk = func(prefix string, ch *chart.Chart) {
		files := slices.Clone(ch.Raw)
		slices.SortFunc(files, func(a, b *common.File) int { return strings.Compare(a.Name, b.Name) })
		for _, f := range files {
			fmt.Fprintf(h, "%s/%s\x00%d\x00", prefix, f.Name, len(f.Data))
			h.Write(f.Data)
		}
		for _, d := range ch.Dependencies() {
			walk(prefix+"/charts/"+d.Name(), d)
		}
	}
	walk("", ch)
	return hex.EncodeToString(h.Sum(nil))
}

// readFile reads name, a path from the root of the checkout, as Flux reads
// a Git source's values files: nil when there is no such file, an error
// when it leaves the repository (links followed) or is over
// MaxValuesFileBytes.
func (c *Checkout) readFile(name string) ([]byte, error) {
	rel := path.Clean("/" + filepath.ToSlash(name))[1:]
	root, err := os.OpenRoot(c.Root)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	data, err := readConfined(root, or(rel, "."), MaxValuesFileBytes)
	if errors.Is(err, errTooLarge) {
		return nil, fmt.Errorf("%s: larger than %d MiB", rel, MaxValuesFileBytes>>20)
	}
	return data, err
}
