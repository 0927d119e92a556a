package pipeline

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/build"
	"github.com/kustomize-deploy/kustomize-deploy/internal/decrypt"
	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
	"github.com/kustomize-deploy/kustomize-deploy/internal/images"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/paths"
	"github.com/kustomize-deploy/kustomize-deploy/internal/resourceset"
	"github.com/kustomize-deploy/kustomize-deploy/internal/workspace"
)

// Render builds the unit without touching any cluster: a scratch copy of the
// root is made (the checkout is never written), secretGenerator files are
// decrypted in it, kustomize builds, encrypted manifests are decrypted,
// variables substituted and HelmReleases rendered into their charts'
// objects (opts.Charts; a chart's values from outside the unit are read
// through opts.Charts.Lookup). Secret values are handed to opts.Mask
// first.
//
// A unit whose Flux objects were found by rendering it (FluxObjects)
// continues from that rendering when it can (see Builds).
func Render(ctx context.Context, opts Options) (*Rendered, error) {
	if saved := opts.Builds.takeRendering(renderKey(opts), true); saved != nil {
		return continueRender(ctx, saved, opts, false)
	}
	opts.Builds.rendering(opts.Name)
	ws, dir, err := copyWorkspace(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer ws.Close()
	// Every value it decrypts is masked at once, whatever kind of object
	// it is in.
	decryption := opts.Decryption
	decryption.Reveal = opts.Mask
	dec, err := decrypt.New(decryption)
	if err != nil {
		return nil, err
	}
	rewritten, err := dec.DecryptFiles(ctx, dir.Root, dir.Path)
	if err != nil {
		return nil, err
	}
	opts.Charts = opts.Charts.InCheckout(dir.Root)
	built, err := opts.Builds.build(buildKey(opts, rewritten), false, func() (*build.Result, error) { return buildUnit(ctx, opts, dir) })
	if err != nil {
		return nil, err
	}
	secret, revealed, err := decryptObjects(ctx, dec, built)
	if err != nil {
		return nil, err
	}
	maskWith(opts.Mask, revealed)
	rendered, substituted, err := substitute(built, secret, opts, dir.Root)
	if err != nil {
		return nil, err
	}
	maskWith(opts.Mask, substituted)
	if err := expandResourceSets(ctx, rendered, opts, dir.Root); err != nil {
		return nil, err
	}
	return finishRender(ctx, rendered, opts, false)
}

// continueRender finishes the unit's rendering from saved, what the
// rendering that found its Flux objects rendered up to its charts (see
// Builds): its Secrets' values are masked, as a rendering of its own
// masks them, and charts kept in the repository are read from a scratch
// copy, as such a rendering reads them.
func continueRender(ctx context.Context, saved *Rendered, opts Options, sealed bool) (*Rendered, error) {
	if !sealed {
		maskWith(opts.Mask, decrypt.SecretValues(saved.Objects))
	}
	if opts.Charts != nil && helm.HasReleases(saved.Objects) {
		ws, dir, err := copyWorkspace(ctx, opts)
		if err != nil {
			return nil, err
		}
		defer ws.Close()
		opts.Charts = opts.Charts.InCheckout(dir.Root)
	}
	return finishRender(ctx, saved, opts, sealed)
}

// RenderSealed is Render without decryption, for renderings made without
// keys (the offline diff of a pull request: a fork gets no secrets). SOPS
// values stay ciphertext, which diffs show masked (a changed ciphertext as
// a changed value); the sops metadata of encrypted manifests and the
// sops_* entries of encrypted env files are dropped. Objects with
// encrypted values are not valid as they are: validate them through
// decrypt.WithPlaceholders.
func RenderSealed(ctx context.Context, opts Options) (*Rendered, error) {
	return renderSealed(ctx, opts, false)
}

// renderSealed is RenderSealed; with save, its build is saved in
// opts.Builds for the unit's own rendering to take (see FluxObjects).
//
// With save, what it renders up to its charts is saved in opts.Builds for
// the unit's own rendering to continue from (see Builds); without, it
// continues from such a rendering when there is one.
func renderSealed(ctx context.Context, opts Options, save bool) (*Rendered, error) {
	if !save {
		if saved := opts.Builds.takeRendering(renderKey(opts), false); saved != nil {
			return continueRender(ctx, saved, opts, true)
		}
	}
	opts.Builds.rendering(opts.Name)
	ws, dir, err := copyWorkspace(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer ws.Close()
	sealer, err := decrypt.New(decrypt.Options{}) // no keys: nothing can be decrypted
	if err != nil {
		return nil, err
	}
	sealed, err := sealer.SealFiles(ctx, dir.Root, dir.Path)
	if err != nil {
		return nil, err
	}
	opts.Charts = opts.Charts.InCheckout(dir.Root)
	built, err := opts.Builds.build(buildKey(opts, sealed.Rewritten), save, func() (*build.Result, error) { return buildUnit(ctx, opts, dir) })
	if err != nil {
		return nil, err
	}
	plain := sealed.Encrypted == 0 && !slices.ContainsFunc(built.Objects, decrypt.HoldsCiphertext)
	decrypt.StripMetadata(built.Objects)
	// Ciphertext is not secret and is not masked: only what substitution
	// adds is.
	rendered, substituted, err := substitute(built, map[object.ID]*object.SecretFields{}, opts, dir.Root)
	if err != nil {
		return nil, err
	}
	maskWith(opts.Mask, substituted)
	generated := slices.ContainsFunc(rendered.Objects, resourceset.Is)
	if err := expandResourceSets(ctx, rendered, opts, dir.Root); err != nil {
		return nil, err
	}
	if save && sealed.Rewritten == 0 && !generated {
		// A ResourceSet's inputs may be read again by a later rendering
		// (the cluster, GitHub): those units render again.
		opts.Builds.saveRendering(renderKey(opts), buildKey(opts, 0), rendered, plain)
	}
	return finishRender(ctx, rendered, opts, true)
}

// finishRender renders the charts of rendered, a unit rendered up to
// them (sealed: without keys), and leaves out the Flux objects the
// unit's configuration runs; a rendering with keys then resolves images.
func finishRender(ctx context.Context, rendered *Rendered, opts Options, sealed bool) (*Rendered, error) {
	if opts.Charts != nil && sealed {
		charts := *opts.Charts
		charts.Sealed = true
		opts.Charts = &charts
	}
	if err := expandCharts(ctx, rendered, opts); err != nil {
		return nil, err
	}
	leaveOutFlux(rendered, opts)
	if !sealed && opts.ResolveImages != nil {
		if err := images.Resolve(ctx, rendered.Objects, opts.ResolveImages); err != nil {
			return nil, err
		}
	}
	return rendered, nil
}

// copyWorkspace copies the repository root, the files opts.Snapshot
// lists (or, for a snapshot of another root, those listed now), to a
// scratch directory the next steps may write, and returns the copy, to be
// closed, and the unit's directory in it.
func copyWorkspace(ctx context.Context, opts Options) (*workspace.Workspace, paths.Dir, error) {
	snap := opts.Snapshot
	if snap == nil || snap.Root() != opts.Dir.Root {
		var err error
		if snap, err = workspace.List(ctx, opts.Dir.Root, workspace.Options{}); err != nil {
			return nil, paths.Dir{}, err
		}
	}
	ws, err := snap.Copy(ctx)
	if err != nil {
		return nil, paths.Dir{}, err
	}
	return ws, opts.Dir.Join(ws.Root), nil
}

// buildUnit builds dir, in the scratch copy, with the unit's kustomize
// options. A directory that is a chart (Chart.yaml, no kustomization)
// builds to the HelmRelease that renders it (see helm.UnitRelease),
// named as the unit, in its target namespace, from this repository (the
// unit's source, else helm.ThisRepository, then added to the sources of
// opts.Charts' checkout: a copy made for this rendering).
func buildUnit(ctx context.Context, opts Options, dir paths.Dir) (*build.Result, error) {
	b := opts.Build
	b.Root, b.Path = dir.Root, dir.Path
	if !helm.IsChart(dir.Path) {
		return interruptible(ctx, func() (*build.Result, error) { return build.Build(ctx, b) })
	}
	if opts.Charts == nil {
		return nil, fmt.Errorf("%s holds a chart (Chart.yaml), which is rendered here, and rendering charts is off (helm-controller): give the unit a kustomization with a HelmRelease instead", dir.Rel)
	}
	src := helm.ThisRepository
	if c := opts.Charts.Checkout; c != nil && len(c.Sources) > 0 {
		src = c.Sources[0]
	} else {
		opts.Charts.Checkout.Sources = append(opts.Charts.Checkout.Sources, src)
	}
	return helm.UnitRelease(helm.UnitChart{Name: opts.Name, Namespace: or(b.TargetNamespace, opts.Namespace), Build: b, Source: src})
}

// decryptObjects decrypts the SOPS-encrypted manifests among built's
// objects, in place. It returns where each held ciphertext, recorded
// before decryption reveals it, and the values to mask: every Secret's,
// and what SOPS decrypted in any other kind.
func decryptObjects(ctx context.Context, dec *decrypt.Decryptor, built *build.Result) (map[object.ID]*object.SecretFields, []string, error) {
	encrypted := make([][]object.FieldPath, len(built.Objects))
	for i, u := range built.Objects {
		encrypted[i] = decrypt.EncryptedFields(u)
	}
	if err := dec.DecryptObjects(ctx, built.Objects, built.Sources); err != nil {
		return nil, nil, err
	}
	secret := map[object.ID]*object.SecretFields{}
	for i, u := range built.Objects {
		if len(encrypted[i]) > 0 {
			secret[object.IDOf(u)] = &object.SecretFields{Fields: encrypted[i]}
		}
	}
	return secret, slices.Concat(decrypt.SecretValues(built.Objects), fieldValues(built.Objects, encrypted)), nil
}

// substitute replaces the variables opts gives in built's objects, in
// place (see build.Substitute), adding to secret the fields secret
// variables land in; root is the copy built's sources are in, for the
// line of a failing placeholder. It returns the rendering, and the values
// to mask: those substitution put into Secrets.
func substitute(built *build.Result, secret map[object.ID]*object.SecretFields, opts Options, root string) (*Rendered, []string, error) {
	before := decrypt.SecretValues(built.Objects)
	vars := build.Variables{Values: opts.Substitute, Secret: opts.SubstituteSecret, Always: opts.SubstituteAlways, Root: root}
	if err := build.Substitute(built.Objects, vars, built.Sources, secret); err != nil {
		return nil, nil, err
	}
	rendered := &Rendered{Objects: built.Objects, Sources: built.Sources, SecretFields: secret, Inputs: built.Inputs}
	return rendered, added(before, decrypt.SecretValues(built.Objects)), nil
}

// maskWith hands values to the masker m, if there is one.
func maskWith(m func([]string), values []string) {
	if m != nil {
		m(values)
	}
}

// fieldValues are the values at each object's fields, as text.
func fieldValues(objs []*unstructured.Unstructured, fields [][]object.FieldPath) []string {
	var out []string
	for i, u := range objs {
		for _, p := range fields[i] {
			v, ok := p.Get(u.Object)
			if !ok {
				continue
			}
			if s, isString := v.(string); isString {
				out = append(out, s)
			} else {
				out = append(out, fmt.Sprint(v))
			}
		}
	}
	return out
}

// added is what is in after and not in before.
func added(before, after []string) []string {
	had := make(map[string]bool, len(before))
	for _, v := range before {
		had[v] = true
	}
	var out []string
	for _, v := range after {
		if !had[v] {
			out = append(out, v)
		}
	}
	return out
}
