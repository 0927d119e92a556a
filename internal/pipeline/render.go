package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/fluxcd/pkg/ssa/utils"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/build"
	"github.com/kustomize-deploy/kustomize-deploy/internal/decrypt"
	"github.com/kustomize-deploy/kustomize-deploy/internal/diff"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/workspace"
)

// Rendered is a unit's desired state: decrypted, substituted objects and the
// files they came from.
type Rendered struct {
	Objects []*unstructured.Unstructured
	Sources map[object.ID]string
	// SecretFields say where objects hold values that came from a
	// secret: decrypted from SOPS, or substituted from a Secret (or a
	// decrypted source). Diffs and renderings mask those, and the values
	// of Secrets, and show the rest as Git has it. Objects holding none
	// have no entry.
	SecretFields map[object.ID]*object.SecretFields
	// Inputs are what the build read below the repository root.
	Inputs build.Inputs
}

// Render builds the unit without touching any cluster: a scratch copy of the
// root is made (the checkout is never written), secretGenerator files are
// decrypted in it, kustomize builds, encrypted manifests are decrypted and
// variables substituted. Secret values are handed to opts.Mask first.
func Render(ctx context.Context, opts Options) (*Rendered, error) {
	return render(ctx, opts, true)
}

// RenderSealed is Render without decryption, for renderings made without
// keys (the offline diff of a pull request: a fork gets no secrets). SOPS
// values stay ciphertext, which diffs show masked (a changed ciphertext as
// a changed value); the sops metadata of encrypted manifests and the
// sops_* entries of encrypted env files are dropped. Objects with
// encrypted values are not valid as they are: validate them through
// decrypt.WithPlaceholders.
func RenderSealed(ctx context.Context, opts Options) (*Rendered, error) {
	return render(ctx, opts, false)
}

func render(ctx context.Context, opts Options, decrypting bool) (*Rendered, error) {
	snap := opts.Snapshot
	if snap == nil || snap.Root() != opts.Dir.Root {
		var err error
		if snap, err = workspace.List(ctx, opts.Dir.Root, workspace.Options{}); err != nil {
			return nil, err
		}
	}
	ws, err := snap.Copy(ctx)
	if err != nil {
		return nil, err
	}
	defer ws.Close()
	scratch := opts.Dir.Join(ws.Root)

	// Every decrypted value is masked at once, whatever kind of object it
	// is in.
	dec, err := decrypt.New(decrypt.Options{AgeIdentities: opts.AgeIdentities, AWSKMS: opts.AWSKMS, Reveal: opts.Mask})
	if !decrypting {
		dec, err = decrypt.New(decrypt.Options{}) // no keys: nothing can be decrypted
	}
	if err != nil {
		return nil, err
	}
	files := dec.DecryptFiles
	if !decrypting {
		files = dec.SealFiles
	}
	if err := files(ctx, scratch.Root, scratch.Path); err != nil {
		return nil, err
	}
	bo := opts.Build
	bo.Root, bo.Path = scratch.Root, scratch.Path
	built, err := build.Build(ctx, bo)
	if err != nil {
		return nil, err
	}
	// What SOPS encrypted is recorded before decryption reveals it.
	encrypted := make([][]object.FieldPath, len(built.Objects))
	if decrypting {
		for i, u := range built.Objects {
			encrypted[i] = decrypt.EncryptedFields(u)
		}
		err = dec.DecryptObjects(ctx, built.Objects, built.Sources)
	} else {
		decrypt.StripMetadata(built.Objects)
	}
	if err != nil {
		return nil, err
	}
	secret := map[object.ID]*object.SecretFields{}
	for i, u := range built.Objects {
		if len(encrypted[i]) > 0 {
			secret[object.IDOf(u)] = &object.SecretFields{Fields: encrypted[i]}
		}
	}
	// Decrypted values are masked at once: a Secret's, and what SOPS
	// decrypted in any other kind. Ciphertext (sealed) is not secret and
	// is not masked: only what substitution adds is.
	before := decrypt.SecretValues(built.Objects)
	if opts.Mask != nil && decrypting {
		opts.Mask(slices.Concat(before, fieldValues(built.Objects, encrypted)))
	}
	vars := build.Variables{Values: opts.Substitute, Secret: opts.SubstituteSecret, Always: opts.SubstituteAlways}
	if err := build.Substitute(built.Objects, vars, built.Sources, secret); err != nil {
		return nil, err
	}
	if opts.Mask != nil { // substitution may have put values into Secrets
		opts.Mask(added(before, decrypt.SecretValues(built.Objects)))
	}
	return &Rendered{Objects: built.Objects, Sources: built.Sources, SecretFields: secret, Inputs: built.Inputs}, nil
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

// WriteYAML prints the rendered objects as a YAML stream with every
// secret value masked: the values of Secrets, and every field whose value
// came from a secret (see SecretFields).
func (r *Rendered) WriteYAML(w io.Writer) error {
	out, err := utils.ObjectsToYAML(r.masked())
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, out)
	return err
}

// WriteJSON prints the rendered objects as one v1 List, as kubectl -o json
// does, with every secret value masked as WriteYAML masks them.
func (r *Rendered) WriteJSON(w io.Writer) error {
	items := make([]any, len(r.Objects))
	for i, u := range r.masked() {
		items[i] = u.Object
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
}

// masked returns the objects with their secret values masked.
func (r *Rendered) masked() []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, len(r.Objects))
	for i, u := range r.Objects {
		out[i] = diff.Masked(u, r.SecretFields[object.IDOf(u)])
	}
	return out
}
