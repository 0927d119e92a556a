// Package build renders a directory of Kubernetes manifests the way Flux's
// kustomize-controller does: a kustomize build (generating a kustomization
// where there is none) with the command-line transformations on top,
// confined to the repository, followed, after decryption, by post-build
// variable substitution.
package build

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// ErrRemoteBase is a kustomization naming a remote resource while remote
// bases are not allowed (Options.AllowRemoteBases).
var ErrRemoteBase = errors.New("remote bases are disabled")

// ErrNoRemoteBases is a kustomization naming a remote resource while the
// configuration refuses remote bases (Options.NoRemoteBases).
var ErrNoRemoteBases = errors.New("remote bases are disabled")

// Options says what to build and which transformations to apply on top of
// the user's kustomization.
type Options struct {
	// Root is the directory all file access is confined to: absolute,
	// symlinks evaluated (a paths.Dir's Root is). Build may write files
	// below it (a generated kustomization.yaml), so callers pass a scratch
	// copy of the repository.
	Root string
	// Path is the directory to build, inside Root: absolute, symlinks
	// evaluated.
	Path string

	// Transformations, as in a Flux Kustomization's spec.
	TargetNamespace string
	Images          []Image
	NamePrefix      string
	NameSuffix      string
	// Labels and Annotations are set on every object's metadata (not on
	// selectors or pod templates), like Flux's commonMetadata.
	Labels      map[string]string
	Annotations map[string]string
	// Patches apply to the built objects; Components (paths relative to
	// Path) are kustomize components added on top, missing ones skipped
	// with IgnoreMissingComponents.
	Patches                 []Patch
	Components              []string
	IgnoreMissingComponents bool

	// AllowRemoteBases lets kustomizations fetch git bases and HTTP files.
	AllowRemoteBases bool
	// NoRemoteBases, when set, says why remote bases are refused whatever
	// AllowRemoteBases says (Flux's lockdown, kustomize-controller's
	// --no-remote-bases, declared there): a remote base then fails with
	// ErrNoRemoteBases, which no option of the run gets past.
	NoRemoteBases string

	// Tests' knobs; their zero values are what every caller gets.
	//
	// kustomizeOnly builds plain directories with kustomize itself, not
	// the fast path, for tests that compare the two.
	kustomizeOnly bool
	// chunkSize is how many manifest files one kustomize run builds when
	// a plain directory is built in chunks; zero means defaultChunkSize.
	chunkSize int
}

// Result is a rendered set of objects.
type Result struct {
	// Objects in kustomize's output order.
	Objects []*unstructured.Unstructured
	// Sources maps each object to the file it came from, relative to Root
	// (e.g. apps/web/deployment.yaml). For generated objects it is the
	// kustomization that generated them; for remote ones repo//path?ref=.
	Sources map[object.ID]string
	// Inputs are the files and directories below Root the build read.
	Inputs Inputs
}

// Build renders opts.Path with kustomize. A directory without a
// kustomization gets one listing its manifests. Kustomize runs with Flux's
// loading rules: a kustomization may read any file inside opts.Root (a
// patch in ../common, say), never one outside it, whatever symlinks say;
// without exec or KRM function plugins and, unless opts.AllowRemoteBases,
// without remote bases.
func Build(ctx context.Context, opts Options) (*Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := opts.check(); err != nil {
		return nil, err
	}
	if opts.chunkSize <= 0 {
		opts.chunkSize = defaultChunkSize
	}
	if opts.NoRemoteBases != "" {
		opts.AllowRemoteBases = false
	}
	root, path := opts.Root, opts.Path
	at := describe(root, path)
	fsys, err := newConfinedFS(root, opts.AllowRemoteBases)
	if err != nil {
		return nil, err
	}
	gen, err := generateKustomization(fsys, root, path)
	if err != nil {
		return nil, err
	}
	pre := &preflight{fsys: fsys, root: root, allowRemote: opts.AllowRemoteBases, refused: opts.NoRemoteBases, seen: map[string]bool{}}
	if gen != nil {
		pre.checked, pre.generated = gen.checked, gen.dir
	}
	user, err := pre.kustomization(path)
	if err != nil {
		return nil, err
	}
	if user != nil {
		kfile, err := kustomizationFile(fsys, path)
		if err == nil {
			err = replaceImages(fsys, kfile, opts.Images)
		}
		if err != nil {
			return nil, fmt.Errorf("kustomization of %s: %w", at, err)
		}
	}
	if objs, sources, ok := plainBuild(fsys, gen, opts); ok {
		return result(objs, sources, fsys, opts, at)
	}
	wrapper, cleanup, err := writeWrapper(fsys, path, opts, user)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var objs []*unstructured.Unstructured
	var sources []string
	for _, chunk := range chunks(gen, opts) {
		if chunk != nil {
			if err := gen.write(fsys, chunk); err != nil {
				return nil, err
			}
		}
		m, err := runKustomize(fsys, wrapper, user != nil && user.SortOptions != nil)
		if err != nil {
			err = newKustomizeError(err, at, root, wrapper, path)
			if fe := pre.locate(gen); fe != nil {
				fe.Err = err
				return nil, fe
			}
			return nil, err
		}
		o, s, err := toObjects(m, wrapper, root)
		if err != nil {
			return nil, fmt.Errorf("kustomize build of %s: %w", at, err)
		}
		objs, sources = append(objs, o...), append(sources, s...)
	}
	return result(objs, sources, fsys, opts, at)
}

// plainBuild is plainObjects for a plain directory that nothing
// transforms; ok is false for any other (or when opts.kustomizeOnly).
func plainBuild(fsys *confinedFS, gen *generated, opts Options) ([]*unstructured.Unstructured, []string, bool) {
	if opts.kustomizeOnly || gen == nil || !gen.filesOnly || opts.transforms() {
		return nil, nil, false
	}
	return plainObjects(fsys, gen, opts.Root)
}

// result checks and assembles a build's objects, in order, and the files
// they came from.
func result(objs []*unstructured.Unstructured, sources []string, fsys *confinedFS, opts Options, at string) (*Result, error) {
	lineOf := func(src string, id object.ID) int {
		data, _ := fsys.ReadFile(filepath.Join(opts.Root, filepath.FromSlash(src))) // no file, no line
		return object.Line(data, id)
	}
	if err := noDuplicates(objs, sources, lineOf); err != nil {
		return nil, fmt.Errorf("kustomize build of %s: %w", at, err)
	}
	clearClusterScopedNamespaces(objs, opts.TargetNamespace)
	res := &Result{Objects: objs, Sources: make(map[object.ID]string, len(objs)), Inputs: fsys.seen.inputs()}
	for i, u := range objs {
		if sources[i] != "" {
			res.Sources[object.IDOf(u)] = sources[i]
		}
	}
	return res, nil
}

// check validates opts. Root and Path come resolved (see Options), so
// every later containment check compares real paths.
func (opts Options) check() error {
	if !filepath.IsAbs(opts.Root) || !filepath.IsAbs(opts.Path) {
		return fmt.Errorf("build options: root %q and path %q must be absolute", opts.Root, opts.Path)
	}
	if err := opts.validate(); err != nil {
		return err
	}
	if !within(opts.Root, opts.Path) {
		return fmt.Errorf("path %s: %w", opts.Path, &outsideRootError{Path: opts.Path, Resolved: opts.Path, Root: opts.Root})
	}
	if fi, err := os.Stat(opts.Path); err != nil || !fi.IsDir() {
		return fmt.Errorf("path %s is not a directory: kustomize builds directories", opts.Path)
	}
	return nil
}

// validate checks the transformations, which kustomize would otherwise
// pass through for the API server to reject at apply time.
func (opts Options) validate() error {
	errs := []error{ValidateNamespace(opts.TargetNamespace), ValidateLabels(opts.Labels), ValidateAnnotations(opts.Annotations)}
	for _, img := range opts.Images {
		errs = append(errs, img.validate(img.String()))
	}
	return errors.Join(errs...)
}

// ValidateNamespace checks a namespace name (a DNS label); empty is valid.
func ValidateNamespace(ns string) error {
	if ns == "" {
		return nil
	}
	var errs []error
	for _, msg := range validation.IsDNS1123Label(ns) {
		errs = append(errs, fmt.Errorf("namespace %q: %s", ns, msg))
	}
	return errors.Join(errs...)
}

// ValidateLabels checks label keys and values.
func ValidateLabels(labels map[string]string) error {
	var errs []error
	for _, k := range sortedKeys(labels) {
		for _, msg := range validation.IsQualifiedName(k) {
			errs = append(errs, fmt.Errorf("label %q: %s", k, msg))
		}
		for _, msg := range validation.IsValidLabelValue(labels[k]) {
			errs = append(errs, fmt.Errorf("label %q value %q: %s", k, labels[k], msg))
		}
	}
	return errors.Join(errs...)
}

// ValidateAnnotations checks annotation keys.
func ValidateAnnotations(annotations map[string]string) error {
	var errs []error
	for _, k := range sortedKeys(annotations) {
		for _, msg := range validation.IsQualifiedName(k) {
			errs = append(errs, fmt.Errorf("annotation %q: %s", k, msg))
		}
	}
	return errors.Join(errs...)
}

// kustomizeMu serializes builds: kustomize keeps its OpenAPI schema in
// package state, and concurrent builds race on it (kustomize issue 3659,
// which Flux works around the same way).
var kustomizeMu sync.Mutex

// runKustomize builds dir. Output follows the kustomization's resource
// order, as in Flux, unless the root kustomization asks for sortOptions.
func runKustomize(fsys filesys.FileSystem, dir string, userSorts bool) (m resmap.ResMap, err error) {
	kustomizeMu.Lock()
	defer kustomizeMu.Unlock()
	// Kustomize panics on some malformed input; one bad kustomization
	// must fail the build, not the process.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("kustomize panicked: %v", r)
		}
	}()
	reorder := krusty.ReorderOptionNone
	if userSorts {
		// Unspecified defers to sortOptions without kustomize logging a
		// warning about the flag and the field both being set.
		reorder = krusty.ReorderOptionUnspecified
	}
	k := krusty.MakeKustomizer(&krusty.Options{
		Reorder: reorder,
		// The confined file system keeps every read inside the root;
		// kustomize's own root-only rule would also refuse files beside
		// the kustomization's directory, which Flux allows.
		LoadRestrictions: kustypes.LoadRestrictionsNone,
		PluginConfig:     kustypes.DisabledPluginConfig(),
	})
	return k.Run(fsys, dir)
}

// sortedKeys returns m's keys in order, for stable output.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
