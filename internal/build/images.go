package build

import (
	"fmt"
	"regexp"
	"strings"

	kustypes "sigs.k8s.io/kustomize/api/types"
)

// Image overrides a container image everywhere it is used, with the
// semantics of a kustomization's images entry: containers whose image name
// is Name get NewName (if set) and NewTag or Digest (if set).
type Image struct {
	Name    string
	NewName string
	NewTag  string
	Digest  string
}

// imageForms is quoted in every parse error so the user sees what works.
const imageForms = "name=newName:newTag, name=:newTag, name=newName, name@sha256:<digest> or name=newName@sha256:<digest>"

var (
	// tagPattern is the OCI distribution tag grammar.
	tagPattern = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)
	// digestPattern accepts sha256 digests, the only kind registries serve.
	digestPattern = regexp.MustCompile(`^sha256:[a-f0-9]{64}$`)
)

// ParseImage parses an image override in one of these forms:
//
//	name=newName:newTag   replace name and tag
//	name=:newTag          replace the tag only
//	name=newName          replace the name only
//	name@sha256:<digest>  pin to a digest
//	name=newName@sha256:<digest>
//
// Registry ports are understood: "app=registry:5000/app" has no tag.
func ParseImage(s string) (Image, error) {
	name, rhs, hasEq := strings.Cut(s, "=")
	if !hasEq {
		name, digest, hasAt := strings.Cut(s, "@")
		if !hasAt {
			return Image{}, fmt.Errorf("image %q: expected %s", s, imageForms)
		}
		img := Image{Name: name, Digest: digest}
		return img, img.validate(s)
	}
	if rhs == "" {
		return Image{}, fmt.Errorf("image %q: nothing after '=': expected %s", s, imageForms)
	}
	img := Image{Name: name}
	switch {
	case strings.HasPrefix(rhs, ":"):
		img.NewTag = rhs[1:]
	case strings.Contains(rhs, "@"):
		img.NewName, img.Digest, _ = strings.Cut(rhs, "@")
		if img.NewName == "" {
			return Image{}, fmt.Errorf("image %q: a digest needs a name before '@': expected %s", s, imageForms)
		}
	case strings.HasSuffix(rhs, ":"):
		return Image{}, fmt.Errorf("image %q: empty tag after ':': expected %s", s, imageForms)
	default:
		img.NewName, img.NewTag = splitTag(rhs)
	}
	return img, img.validate(s)
}

// splitTag splits "repo:tag" at the last colon after the last slash, so a
// registry port is not mistaken for a tag.
func splitTag(ref string) (name, tag string) {
	i := strings.LastIndex(ref, ":")
	if i < 0 || i < strings.LastIndex(ref, "/") {
		return ref, ""
	}
	return ref[:i], ref[i+1:]
}

// validate checks each part of an image parsed from s.
func (img Image) validate(s string) error {
	if img.Name == "" {
		return fmt.Errorf("image %q: missing the image name to replace: expected %s", s, imageForms)
	}
	if n, tag := splitTag(img.Name); tag != "" {
		return fmt.Errorf("image %q: the name to replace must not carry a tag: use %q, which matches every tag of it", s, n)
	}
	for _, part := range []string{img.Name, img.NewName} {
		if strings.ContainsAny(part, " \t@") {
			return fmt.Errorf("image %q: %q is not an image name: expected %s", s, part, imageForms)
		}
	}
	if img.NewTag != "" && !tagPattern.MatchString(img.NewTag) {
		return fmt.Errorf("image %q: %q is not a valid tag (letters, digits, '_', '.', '-'; at most 128)", s, img.NewTag)
	}
	if img.Digest != "" && !digestPattern.MatchString(img.Digest) {
		return fmt.Errorf("image %q: %q is not a digest: expected sha256:<64 hex digits>", s, img.Digest)
	}
	if img.NewName == "" && img.NewTag == "" && img.Digest == "" {
		return fmt.Errorf("image %q: nothing to change: expected %s", s, imageForms)
	}
	return nil
}

// String formats img in the form ParseImage reads.
func (img Image) String() string {
	s := img.Name
	switch {
	case img.NewName == "" && img.NewTag == "":
		return s + "@" + img.Digest
	case img.NewName == "":
		return s + "=:" + img.NewTag
	}
	s += "=" + img.NewName
	if img.NewTag != "" {
		s += ":" + img.NewTag
	}
	if img.Digest != "" {
		s += "@" + img.Digest
	}
	return s
}

// kustomizeImages converts images for a kustomization, the last entry for
// a name winning so a later flag overrides an earlier one.
func kustomizeImages(images []Image) []kustypes.Image {
	var out []kustypes.Image
	index := map[string]int{}
	for _, img := range images {
		k := kustypes.Image{Name: img.Name, NewName: img.NewName, NewTag: img.NewTag, Digest: img.Digest}
		if i, ok := index[img.Name]; ok {
			out[i] = k
			continue
		}
		index[img.Name] = len(out)
		out = append(out, k)
	}
	return out
}
