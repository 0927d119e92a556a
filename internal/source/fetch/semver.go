package fetch

// The tag a Flux source's spec.ref.semver range names, as
// source-controller picks it for a GitRepository's tags, an
// OCIRepository's and a chart's in an OCI registry: one picker.

import (
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// HighestTag is the tag of the highest version matching the semver range
// rng among tags, as source-controller picks it: a tag is a version when
// it is strict semver, with or without a leading "v"; among versions
// equal but for build metadata (or a "v"), the greatest name wins. ok is
// false when none matches; err is rng not being a range.
func HighestTag(rng string, tags []string) (tag string, ok bool, err error) {
	c, err := semver.NewConstraint(rng)
	if err != nil {
		return "", false, err
	}
	var best *semver.Version
	for _, t := range slices.Sorted(slices.Values(tags)) {
		v, err := ParseVersion(t)
		if err != nil || !c.Check(v) {
			continue
		}
		if best == nil || !v.LessThan(best) {
			best, tag = v, t
		}
	}
	return tag, best != nil, nil
}

// ParseVersion is semver.StrictNewVersion but for a leading "v", as Flux reads
// tags (fluxcd/pkg/version.ParseVersion).
func ParseVersion(tag string) (*semver.Version, error) {
	if _, err := semver.StrictNewVersion(strings.TrimPrefix(tag, "v")); err != nil {
		return nil, err
	}
	return semver.NewVersion(tag)
}
