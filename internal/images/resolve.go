package images

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/ocisource"
)

// Resolver says which manifest digest an image reference (a tag) names
// now, e.g. sha256:…, for a pod whose imagePullSecrets are pullSecrets
// (Secret names).
type Resolver interface {
	Digest(ctx context.Context, ref string, pullSecrets []string) (string, error)
}

// Registry resolves through each image's registry (a HEAD request on its
// manifest, ocisource.Digest) with the credentials sources get: those of
// the Secrets the pod's imagePullSecrets name, as Secrets (the Docker
// config Secrets the configuration maps, by name: --oci-secret, input
// oci-secrets) hold them for the image's registry host, else what
// Keychain finds for it (the environment's Docker config), else none.
// Credentials go only to the registry host they are for.
type Registry struct {
	Secrets   map[string]ocisource.Auth
	Keychain  authn.Keychain
	Transport http.RoundTripper
}

var _ Resolver = Registry{}

// Digest implements Resolver.
func (r Registry) Digest(ctx context.Context, ref string, pullSecrets []string) (string, error) {
	parsed, err := name.ParseReference(ref)
	if err != nil {
		return "", err
	}
	var chain []authn.Keychain
	var secrets []string
	for _, secret := range pullSecrets {
		a, ok := r.Secrets[secret]
		if !ok {
			continue
		}
		if auth, err := a.Resolve(parsed.Context()); err != nil || auth == authn.Anonymous {
			continue // none for this registry
		}
		chain = append(chain, a)
		secrets = append(secrets, a.Secrets()...)
	}
	if r.Keychain != nil {
		chain = append(chain, r.Keychain)
	}
	return ocisource.Digest(ctx, ref, authn.NewMultiKeychain(chain...), secrets, r.Transport)
}

// Resolve pins the image of every container and init container of objs'
// workloads (see Of) to the digest its tag names now: "web:1.4" becomes
// "web:1.4@sha256:…", so that what was reviewed is what runs (kbld's
// lock). An image with a digest already is left as it is. Every image
// that does not resolve is named with its object and container, in one
// error; objs are changed in place.
func Resolve(ctx context.Context, objs []*unstructured.Unstructured, r Resolver) error {
	digests := map[string]string{}
	var errs []error
	for _, u := range objs {
		gvk := u.GroupVersionKind()
		path, ok := podSpec[gvk.Group+"/"+gvk.Kind]
		if !ok {
			continue
		}
		pullSecrets := pullSecretNames(u, path)
		for _, list := range []string{"initContainers", "containers"} {
			at := append(append([]string(nil), path...), list)
			cs, found, _ := unstructured.NestedSlice(u.Object, at...)
			if !found {
				continue
			}
			changed := false
			for _, c := range cs {
				m, ok := c.(map[string]any)
				if !ok {
					continue
				}
				image, _ := m["image"].(string)
				if image == "" || strings.Contains(image, "@") {
					continue
				}
				key := image + "\x00" + strings.Join(pullSecrets, "\x00")
				d, ok := digests[key]
				if !ok {
					var err error
					if d, err = r.Digest(ctx, image, pullSecrets); err != nil {
						errs = append(errs, fmt.Errorf("%s: container %v: resolving image %s: %w", object.IDOf(u), m["name"], image, err))
						continue
					}
					digests[key] = d
				}
				m["image"] = image + "@" + d
				changed = true
			}
			if changed {
				if err := unstructured.SetNestedSlice(u.Object, cs, at...); err != nil {
					return err
				}
			}
		}
	}
	return errors.Join(errs...)
}

// pullSecretNames are the Secrets the imagePullSecrets of u's pod spec
// (at path) name.
func pullSecretNames(u *unstructured.Unstructured, path []string) []string {
	refs, _, _ := unstructured.NestedSlice(u.Object, append(append([]string(nil), path...), "imagePullSecrets")...)
	var out []string
	for _, ref := range refs {
		if m, ok := ref.(map[string]any); ok {
			if name, _ := m["name"].(string); name != "" {
				out = append(out, name)
			}
		}
	}
	return out
}
