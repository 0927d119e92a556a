package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/build"
	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// Builds shares kustomize builds within one run of a configuration, so
// that each unit is built once: the build that found a unit's Flux
// Kustomizations (FluxObjects, before any unit runs) is the one its run
// renders from, when it would read the same files with the same options.
// What follows the build (decryption, substitution, charts) is done on a
// copy, per rendering. It is safe for concurrent use; the zero value and
// nil share nothing (nil counts nothing).
//
// A build is shared only when the unit's files are the run's snapshot of
// its root (nothing else can have changed them) and neither rendering
// rewrote one (an encrypted secretGenerator file, decrypted for the run
// and sealed for discovery, builds to other objects): then the two builds
// read the same bytes with the same options, and kustomize, which reads
// nothing else, builds the same objects.
type Builds struct {
	mu    sync.Mutex
	made  int
	saved map[string]*build.Result
}

// Made is how many kustomize builds the run made.
func (b *Builds) Made() int {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.made
}

// buildKey says what a build reads: the options (kustomize's
// transformations, components, remote bases) and the directory in the
// root. "" for a build that is not shared (see Builds), and for a chart's
// directory, whose build is its HelmRelease.
func buildKey(opts Options, rewritten int) string {
	if rewritten > 0 || opts.Snapshot == nil || opts.Snapshot.Root() != opts.Dir.Root || helm.IsChart(opts.Dir.Path) {
		return ""
	}
	b := opts.Build
	b.Root, b.Path = "", ""
	key, err := json.Marshal(struct {
		Build     build.Options
		Root, Rel string
	}{b, opts.Dir.Root, opts.Dir.Rel})
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(key)
	return hex.EncodeToString(sum[:])
}

// build builds with do, or takes the build saved under key (which is then
// forgotten: the unit it was saved for renders once). With save, what do
// builds is saved for the next build of key. The result is the caller's
// to change.
func (b *Builds) build(key string, save bool, do func() (*build.Result, error)) (*build.Result, error) {
	if b == nil {
		return do()
	}
	if key != "" && !save {
		b.mu.Lock()
		saved, ok := b.saved[key]
		delete(b.saved, key)
		b.mu.Unlock()
		if ok {
			return saved, nil
		}
	}
	res, err := do()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.made++
	if err == nil && key != "" && save {
		if b.saved == nil {
			b.saved = map[string]*build.Result{}
		}
		b.saved[key] = cloneBuild(res)
	}
	return res, err
}

// cloneBuild is a deep copy of res: what is saved is never what a
// rendering changes in place.
func cloneBuild(res *build.Result) *build.Result {
	objs := make([]*unstructured.Unstructured, len(res.Objects))
	for i, u := range res.Objects {
		objs[i] = u.DeepCopy()
	}
	in := res.Inputs
	in.Files, in.Dirs = slices.Clone(in.Files), slices.Clone(in.Dirs)
	sources := maps.Clone(res.Sources)
	if sources == nil {
		sources = map[object.ID]string{}
	}
	return &build.Result{Objects: objs, Sources: sources, Inputs: in}
}
