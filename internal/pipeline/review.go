package pipeline

import (
	"strings"

	"github.com/kustomize-deploy/kustomize-deploy/internal/danger"
	"github.com/kustomize-deploy/kustomize-deploy/internal/diff"
	"github.com/kustomize-deploy/kustomize-deploy/internal/images"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// review marks what a reviewer of a pull request sees first, from its
// render at the base to the head: on each entry, the dangers of its
// change (package danger) and whether the change is noise only (see
// diff.Noise); on res, the images the change changes, and each release's
// chart version at the base. values are secret values the renders hold
// (a three-way diff's substitutions): an image holding one is masked.
func review(res *result.Result, entries []result.Entry, base, head *Rendered, noise diff.Noise, values []string) {
	if base == nil {
		base = &Rendered{}
	}
	before, after := byID(base.Objects), byID(head.Objects)
	release := releaseOf(base, head)
	var changes []images.Change
	for i := range entries {
		e := &entries[i]
		old, now := before[e.Object], after[e.Object]
		if old == nil && now == nil {
			continue
		}
		e.Dangers = danger.Check(old, now)
		e.Noise = noise.Only(old, now)
		secret := head.SecretFields[e.Object].Union(base.SecretFields[e.Object])
		for _, c := range images.Changed(e.Object, old, now) {
			c.From, c.To = maskImage(c.From, secret, values), maskImage(c.To, secret, values)
			changes = append(changes, c)
		}
	}
	res.Images = images.Group(changes, release)
	was := map[string]string{}
	for _, c := range base.Charts {
		was[c.Release.String()] = c.Version
	}
	for i, rel := range res.Releases {
		if v, ok := was[rel.HelmRelease]; ok && v != rel.Version {
			res.Releases[i].FromVersion = v
		}
	}
}

// releaseOf names the HelmRelease of an object either render's charts
// rendered.
func releaseOf(base, head *Rendered) func(object.ID) string {
	of := map[object.ID]string{}
	for _, r := range []*Rendered{base, head} {
		for _, c := range r.Charts {
			for _, id := range c.Objects {
				of[id] = c.Release.String()
			}
		}
	}
	return func(id object.ID) string { return of[id] }
}

// maskImage is image, or a mask when it may hold a secret: an image
// field came from one, or it holds a secret value.
func maskImage(image string, fields *object.SecretFields, values []string) string {
	if image == "" {
		return ""
	}
	if fields != nil {
		for _, p := range fields.Fields {
			if len(p) > 0 && p[len(p)-1] == "image" {
				return "***"
			}
		}
	}
	for _, v := range values {
		if v != "" && strings.Contains(image, v) {
			return "***"
		}
	}
	return image
}
