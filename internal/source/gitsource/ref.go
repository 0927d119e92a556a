// Package gitsource fetches a Flux GitRepository's tree: the commit its
// spec.ref names, checked out into a directory, with the revision in
// source-controller's format ("main@sha1:<hex>", "v1.2.3@sha1:<hex>",
// "sha1:<hex>").
package gitsource

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// DefaultBranch is the branch of a GitRepository whose spec.ref names
// none, as source-controller defaults it.
const DefaultBranch = "master"

// Ref is a GitRepository's spec.ref. Like source-controller, the most
// precise field wins: Commit (which may be combined with Branch, the
// branch fetched to find it), then Name, then SemVer, then Tag, then
// Branch; none means DefaultBranch.
type Ref struct {
	Branch, Tag, SemVer, Name, Commit string
}

// String names the ref as spec.ref has it, for messages.
func (r Ref) String() string {
	var parts []string
	for _, f := range []struct{ k, v string }{{"branch", r.Branch}, {"tag", r.Tag}, {"semver", r.SemVer}, {"name", r.Name}, {"commit", r.Commit}} {
		if f.v != "" {
			parts = append(parts, f.k+" "+f.v)
		}
	}
	if len(parts) == 0 {
		return "branch " + DefaultBranch + " (no spec.ref)"
	}
	return strings.Join(parts, ", ")
}

// strategy is how a Ref is fetched: which kind of reference, and the full
// reference name (refs/heads/..., refs/tags/...; a semver range for
// semver, a hash for commit).
type strategy struct {
	kind string // "commit", "name", "semver", "tag", "branch"
	// ref is the reference fetched: for commit, the branch to fetch
	// (refs/heads/BRANCH) or "" for every branch.
	ref string
	// want is the commit's hash, or the semver range.
	want string
}

var fullHash = regexp.MustCompile(`^[0-9a-f]{40}$`)

// strategy picks what to fetch for r, as source-controller does; an error
// says which field is malformed.
func (r Ref) strategy() (strategy, error) {
	switch {
	case r.Commit != "":
		c := strings.ToLower(r.Commit)
		if !fullHash.MatchString(c) {
			return strategy{}, fmt.Errorf("spec.ref.commit %q is not a full SHA-1 commit hash (40 hexadecimal digits)", r.Commit)
		}
		s := strategy{kind: "commit", want: c}
		if r.Branch != "" {
			s.ref = "refs/heads/" + r.Branch
		}
		return s, nil
	case r.Name != "":
		if !strings.HasPrefix(r.Name, "refs/") {
			return strategy{}, fmt.Errorf("spec.ref.name %q is not a full reference name (refs/heads/main, refs/tags/v1.0.0, refs/pull/1/head...)", r.Name)
		}
		return strategy{kind: "name", ref: r.Name}, nil
	case r.SemVer != "":
		if _, err := semver.NewConstraint(r.SemVer); err != nil {
			return strategy{}, fmt.Errorf("spec.ref.semver %q is not a semver range: %w", r.SemVer, err)
		}
		return strategy{kind: "semver", want: r.SemVer}, nil
	case r.Tag != "":
		return strategy{kind: "tag", ref: "refs/tags/" + r.Tag}, nil
	case r.Branch != "":
		return strategy{kind: "branch", ref: "refs/heads/" + r.Branch}, nil
	}
	return strategy{kind: "branch", ref: "refs/heads/" + DefaultBranch}, nil
}

// revision is the revision source-controller records for commit hash
// fetched at reference ref: the reference without its first two parts
// ("refs/heads/main" → "main", "refs/tags/v1" → "v1"), "@", then
// "sha1:<hex>"; the hash alone for a commit fetched without a branch.
func revision(ref, hash string) string {
	if parts := strings.SplitAfterN(ref, "/", 3); len(parts) == 3 {
		return parts[2] + "@sha1:" + hash
	}
	return "sha1:" + hash
}
