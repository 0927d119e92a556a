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
//
// Past the build, the rendering that found a unit's Flux objects (a
// sealed one, without charts) is the one the unit's own rendering
// continues from, when it substituted the same values in the same
// namespace and held nothing to decrypt: then decryption would change
// nothing, and only the charts are left to render (see takeRendering).
// Renders counts the renderings of each unit, those taken not counted.
type Builds struct {
	mu      sync.Mutex
	made    int
	saved   map[string]*build.Result
	renders map[string]int
	// renderings are saved renderings by renderKey; plain says which
	// held nothing to decrypt (no encrypted file, no ciphertext).
	renderings map[string]savedRendering
}

// savedRendering is a unit's rendering up to its charts.
type savedRendering struct {
	rendered *Rendered
	plain    bool
	build    string // the key of its build, saved beside it
}

// Renders is how many times each unit was rendered in the run, by unit
// name: a rendering continued from one saved (see Builds) is not
// counted again.
func (b *Builds) Renders() map[string]int {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return maps.Clone(b.renders)
}

// rendering counts a rendering of unit name.
func (b *Builds) rendering(name string) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.renders == nil {
		b.renders = map[string]int{}
	}
	b.renders[name]++
}

// renderKey says what a rendering up to its charts reads: the build
// (buildKey, with nothing rewritten) and the values substituted (the
// namespace is read only by ResourceSets, whose renderings are not
// saved). "" when its build is not shared.
func renderKey(opts Options) string {
	bk := buildKey(opts, 0)
	if bk == "" {
		return ""
	}
	// In memory only: secret values may be part of it.
	key, err := json.Marshal(struct {
		Build          string
		Values         map[string]string
		Secret         []string
		Always, Public bool
	}{bk, opts.Substitute, opts.SubstituteSecret, opts.SubstituteAlways, opts.SubstitutePublic})
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(key)
	return hex.EncodeToString(sum[:])
}

// saveRendering keeps a copy of rendered, a sealed rendering up to its
// charts, under key for the unit's own rendering to continue from;
// plain says it held nothing to decrypt.
func (b *Builds) saveRendering(key, buildKey string, rendered *Rendered, plain bool) {
	if b == nil || key == "" {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.renderings == nil {
		b.renderings = map[string]savedRendering{}
	}
	b.renderings[key] = savedRendering{rendered: cloneRendered(rendered), plain: plain, build: buildKey}
}

// takeRendering takes the rendering saved under key (which is then
// forgotten, and its build with it), if there is one and, when
// decrypting, it held nothing to decrypt.
func (b *Builds) takeRendering(key string, decrypting bool) *Rendered {
	if b == nil || key == "" {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	saved, ok := b.renderings[key]
	if !ok || decrypting && !saved.plain {
		return nil
	}
	delete(b.renderings, key)
	delete(b.saved, saved.build)
	return saved.rendered
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

// cloneRendered is a deep copy of r's objects, where they came from,
// their secret fields and the inputs: what is saved is never what a
// rendering changes in place.
func cloneRendered(r *Rendered) *Rendered {
	b := cloneBuild(&build.Result{Objects: r.Objects, Sources: r.Sources, Inputs: r.Inputs})
	secret := make(map[object.ID]*object.SecretFields, len(r.SecretFields))
	for id, f := range r.SecretFields {
		secret[id] = &object.SecretFields{Fields: slices.Clone(f.Fields), Keys: slices.Clone(f.Keys)}
	}
	return &Rendered{Objects: b.Objects, Sources: b.Sources, SecretFields: secret, Inputs: b.Inputs, Notes: slices.Clone(r.Notes)}
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
