// Package tags is how units and HelmReleases are tagged, and how a run
// picks them by tag, in kluctl's words (--include-tag, --exclude-tag).
package tags

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Annotation on a Flux Kustomization or a HelmRelease lists its tags,
// comma-separated ("backend, critical"): a run may include or exclude
// units and releases by them, as kluctl's --include-tag and --exclude-tag
// select deployment items.
const Annotation = "kustomize-deploy.dev/tags"

var tagPattern = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$`)

// Parse reads a comma-separated list of tags: each letters, digits,
// '.', '_' and '-', starting and ending with a letter or digit.
func Parse(v string) ([]string, error) {
	var tags []string
	for _, t := range strings.Split(v, ",") {
		t = strings.TrimSpace(t)
		if t == "" {
			continue
		}
		if !tagPattern.MatchString(t) {
			return tags, fmt.Errorf("tag %q: want letters, digits, '.', '_' and '-', starting and ending with a letter or digit", t)
		}
		if !slices.Contains(tags, t) {
			tags = append(tags, t)
		}
	}
	return tags, nil
}

// Selects reports whether a unit or release tagged tags runs when the run includes
// include (none: every unit) and excludes exclude, as kluctl decides: a
// unit with an excluded tag never runs; with include tags, a unit runs
// when it has one of them.
func Selects(tags, include, exclude []string) bool {
	for _, t := range tags {
		if slices.Contains(exclude, t) {
			return false
		}
	}
	if len(include) == 0 {
		return true
	}
	for _, t := range tags {
		if slices.Contains(include, t) {
			return true
		}
	}
	return false
}
