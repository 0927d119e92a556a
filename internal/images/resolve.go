package images

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// Resolver says which manifest digest an image reference (a tag) names
// now, e.g. sha256:…
type Resolver interface {
	Digest(ctx context.Context, ref string) (string, error)
}

// Registry resolves through each image's registry (a HEAD request on its
// manifest, go-containerregistry), with the credentials Keychain finds
// for the registry's host, else anonymously. Loopback registries are
// spoken to in plain HTTP, as go-containerregistry does.
type Registry struct {
	Keychain  authn.Keychain
	Transport http.RoundTripper
}

var _ Resolver = Registry{}

// Digest implements Resolver.
func (r Registry) Digest(ctx context.Context, ref string) (string, error) {
	parsed, err := name.ParseReference(ref)
	if err != nil {
		return "", err
	}
	opts := []remote.Option{remote.WithContext(ctx)}
	if r.Keychain != nil {
		opts = append(opts, remote.WithAuthFromKeychain(r.Keychain))
	}
	if r.Transport != nil {
		opts = append(opts, remote.WithTransport(r.Transport))
	}
	desc, err := remote.Head(parsed, opts...)
	if err != nil {
		return "", err
	}
	return desc.Digest.String(), nil
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
				d, ok := digests[image]
				if !ok {
					var err error
					if d, err = r.Digest(ctx, image); err != nil {
						errs = append(errs, fmt.Errorf("%s: container %v: resolving image %s: %w", object.IDOf(u), m["name"], image, err))
						continue
					}
					digests[image] = d
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
