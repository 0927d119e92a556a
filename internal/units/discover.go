package units

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/pipeline"
	"github.com/kustomize-deploy/kustomize-deploy/internal/resourceset"
)

// Kustomizations are found by building, as kustomize-controller reaches
// them: every unit that may emit one (see emitIndex) is rendered (its
// sources resolved, its values substituted, no chart rendered, nothing
// decrypted) before any runs, and
// the Flux Kustomizations its build emits become units of the same run
// (config.Set.Add), built in turn, down to config.MaxDepth. A unit so
// found depends on the unit that emitted it, which applies what it needs
// (its namespace, its service account) first; the units that emitted it
// do not apply it (see pipeline.RunByConfiguration). The sources, ConfigMaps
// and Secrets builds emit are what units' sourceRefs and substituteFrom
// resolve against.
//
// A unit whose build fails here runs all the same, and fails at its own
// build (or, with a cluster's values it could not read here, applies
// what it builds, its Kustomizations left out); since what it emits is
// unknown, no unit of the configuration is garbage-collected in that run.

// discoverError is why a unit could not be rendered to find the
// Kustomizations it emits.
type discoverError struct{ err error }

func (e *discoverError) Error() string {
	return "building it to find the Flux Kustomizations it applies: " + e.err.Error()
}
func (e *discoverError) Unwrap() error { return e.err }

// discover adds to c.Set the Kustomizations (and sources, ConfigMaps and
// Secrets) its units' builds emit, recursively, and names every unit. It
// returns why units could not be rendered, by unit ref; an error is a
// problem of the configuration (an emitted Kustomization that does not
// read, or that another defines otherwise).
func (c *Config) discover(ctx context.Context) (map[config.Ref]error, error) {
	failed := map[config.Ref]error{}
	if c.accounts == nil {
		c.accounts = map[string]string{}
	}
	if c.creates == nil {
		c.creates = &creations{}
	}
	var index *emitIndex
	if c.Base.Snapshot != nil {
		index = newEmitIndex(c.Base.Snapshot, c.Root)
	}
	level := c.Set.Units
	for len(level) > 0 {
		// The sources of the units found so far, all at once.
		c.resolver().Prefetch(ctx)
		found := c.renderLevel(ctx, level, index)
		var next []*config.Unit
		var errs []error
		for i, u := range level {
			f := found[i]
			if f.err != nil {
				failed[u.Ref] = &discoverError{err: f.err}
				continue
			}
			for _, sa := range f.accounts {
				if _, ok := c.accounts[sa]; !ok {
					c.accounts[sa] = u.Name
				}
			}
			if f.rendered {
				c.creates.add(u.Name, f.creates)
			}
			if len(f.objects) == 0 {
				continue
			}
			read, err := config.ReadObjects(f.objects)
			if err != nil {
				errs = append(errs, fmt.Errorf("Kustomization %s (%s) emits objects that do not read:\n%w", u.Chain(), where(u), err))
				continue
			}
			added, err := c.Set.Add(u, read)
			if err != nil {
				errs = append(errs, err)
			}
			next = append(next, added...)
		}
		if err := errors.Join(errs...); err != nil {
			return failed, err
		}
		if err := c.Set.Name(); err != nil {
			return failed, err
		}
		level = next
	}
	return failed, nil
}

// emitted is what one unit's build emitted of interest to the
// configuration.
type emitted struct {
	objects []config.Object
	// accounts are the ServiceAccounts of the build ("namespace/name").
	accounts []string
	// creates are the Secrets and ServiceAccounts of the build, as
	// createdKey names them; rendered says the unit was rendered.
	creates  []string
	rendered bool
	err      error
}

// renderLevel renders units, DefaultParallel at a time: those of the
// checkout only if index says they may emit a Flux object.
func (c *Config) renderLevel(ctx context.Context, units []*config.Unit, index *emitIndex) []emitted {
	out := make([]emitted, len(units))
	byRef := map[config.Ref]*config.Unit{}
	for _, u := range c.Set.Units {
		byRef[u.Ref] = u
	}
	sem := make(chan struct{}, DefaultParallel)
	var wg sync.WaitGroup
	for i, u := range units {
		unit, err := c.unit(ctx, u, byRef)
		if err != nil || unit.Err != nil {
			// A problem of its definition is reported with the
			// configuration's; a source that does not resolve, when
			// the unit runs: neither builds, nor emits anything.
			if unit.Err != nil {
				out[i].err = unit.Err
			}
			continue
		}
		if index != nil && unit.Options.Snapshot != nil && !index.mayEmit(unit.Options.Dir.Rel, u.Components) {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i] = c.emittedBy(ctx, unit)
		}()
	}
	wg.Wait()
	return out
}

// emittedBy renders unit and returns its Flux objects, with where each
// came from, as the build made them (config reads them as they are).
// The rendering is saved for the unit's own (see pipeline.Builds).
func (c *Config) emittedBy(ctx context.Context, unit Unit) emitted {
	objs, sources, err := pipeline.FluxObjects(ctx, unit.Options)
	if err != nil {
		return emitted{err: err}
	}
	lines := map[string]func(object.ID) int{} // by file, each read once
	var out []config.Object
	var accounts, creates []string
	for _, u := range objs {
		id := object.IDOf(u)
		if id.Group == "" && (id.Kind == "ServiceAccount" || id.Kind == "Secret") {
			creates = append(creates, createdKey(id.Kind, id.Namespace, id.Name))
		}
		if id.Group == "" && id.Kind == "ServiceAccount" {
			accounts = append(accounts, id.Namespace+"/"+id.Name)
			continue
		}
		if id.Group == "" && id.Kind == "Secret" && pipeline.SealedSecret(u) {
			continue // its values are read only once the unit decrypts them
		}
		if _, copied := u.GetAnnotations()[resourceset.CopyFromAnnotation]; copied && id.Group == "" && (id.Kind == "Secret" || id.Kind == "ConfigMap") {
			// A ResourceSet's copy of a cluster's object: rendered here
			// without its data (no cluster is read), which is copied as
			// the unit applies it; a source's credentials and a
			// substituteFrom read it from the cluster, not as empty.
			continue
		}
		o := config.Object{File: sources[id], Object: u.Object}
		if o.File == "" {
			o.File = unit.Options.Dir.Rel + " (generated)"
		} else {
			if lines[o.File] == nil {
				data, _ := os.ReadFile(filepath.Join(unit.Options.Dir.Root, filepath.FromSlash(o.File)))
				lines[o.File] = object.Lines(data)
			}
			o.Line = lines[o.File](id)
			if o.Line == 0 {
				// Generated by a ResourceSet of the file: at its line.
				l := u.GetLabels()
				if name := l[resourceset.OwnerNameLabel]; name != "" {
					o.Line = lines[o.File](object.ID{Group: resourceset.SetKind.Group, Kind: resourceset.SetKind.Kind, Namespace: l[resourceset.OwnerNamespaceLabel], Name: name})
				}
			}
		}
		if id.Group == "apps" && id.Kind == "Deployment" {
			o.Locate = locator(unit.Options.Dir.Root, unit.Options.Dir.Rel, o.File, o.Line)
		}
		out = append(out, o)
	}
	return emitted{objects: out, accounts: accounts, creates: creates, rendered: true}
}

// locator finds where a controller's argument is written, for the
// lockdown's notes: in the kustomizations from file's directory up to
// dir, the unit's (the patch adding it, as flux2-multi-tenancy's
// flux-system/kustomization.yaml does), else in file (relative to root,
// the Deployment's) from its line on. Files are read when asked, once a
// flag is found.
func locator(root, dir, file string, from int) func(text string) string {
	return func(text string) string {
		for d := path.Dir(file); file != ""; d = path.Dir(d) {
			for _, name := range []string{"kustomization.yaml", "kustomization.yml", "Kustomization"} {
				rel := path.Join(d, name)
				if l := lineWith(filepath.Join(root, filepath.FromSlash(rel)), text, 1); l > 0 {
					return fmt.Sprintf("%s:%d", rel, l)
				}
			}
			if d == dir || d == "." || d == "/" || !strings.HasPrefix(d, dir+"/") {
				break
			}
		}
		if file == "" {
			return ""
		}
		if l := lineWith(filepath.Join(root, filepath.FromSlash(file)), text, from); l > 0 {
			return fmt.Sprintf("%s:%d", file, l)
		}
		return ""
	}
}

// lineWith is the first line of the file at p, from line from on,
// holding text; 0 when none does (or the file does not read).
func lineWith(p, text string, from int) int {
	data, err := os.ReadFile(p)
	if err != nil {
		return 0
	}
	for i, line := range strings.Split(string(data), "\n") {
		if i+1 >= from && strings.Contains(line, text) {
			return i + 1
		}
	}
	return 0
}

// where says where u is defined, for messages.
func where(u *config.Unit) string {
	if u.Line > 0 {
		return fmt.Sprintf("%s:%d", u.File, u.Line)
	}
	return strings.TrimSpace(u.File)
}
