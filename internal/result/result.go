// Package result is the one value every run produces. The CLI's text and
// JSON, the PR comment, the job summary, commit statuses and step outputs
// are all renderings of it. Its JSON form is a stable, documented schema
// (see docs/concepts.md: "JSON output").
package result

import (
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// Action is what happened, or would happen, to one object.
type Action string

// Actions, in kubectl/Flux vocabulary.
const (
	Created    Action = "created"
	Configured Action = "configured"
	Unchanged  Action = "unchanged"
	Deleted    Action = "deleted"
	Skipped    Action = "skipped"
	Failed     Action = "failed"
)

// Stage is the apply stage an object belongs to.
type Stage string

// Stages in the order they are applied; pruning comes last.
const (
	StageDefinitions Stage = "definitions" // CRDs, Namespaces, ClusterRoles
	StageClasses     Stage = "classes"     // StorageClass, IngressClass, ...
	StageResources   Stage = "resources"
	StagePrune       Stage = "prune"
	// StageHooks are a Helm release's lifecycle hooks, created and run
	// on an install or upgrade of the release: never in the inventory.
	StageHooks Stage = "hooks"
)

// Entry is one object's outcome.
type Entry struct {
	Object  object.ID `json:"object"`
	Version string    `json:"version,omitempty"`
	Source  string    `json:"source,omitempty"` // file it came from, relative to the repository
	Stage   Stage     `json:"stage"`
	Action  Action    `json:"action"`
	Reason  string    `json:"reason,omitempty"` // why it was skipped or failed, or a note on it (not validated)
	// Release, for an object a chart rendered (or a hook), is its
	// HelmRelease: HelmRelease/namespace/name.
	Release string `json:"release,omitempty"`
	Diff    string `json:"diff,omitempty"` // unified YAML diff, Secret values masked
	// Recreate says the change touches a field that cannot change: the
	// object must be deleted and created again (apply --force).
	Recreate bool `json:"recreate,omitempty"`
	// Dangers are what the change risks that a review can tell without
	// a cluster (package danger): immutable fields, deletions that take
	// data with them, RBAC grants, a unit's prune or suspend flipped.
	Dangers []Danger `json:"dangers,omitempty"`
	// Noise says the change touches only fields a review folds (a chart's
	// version label, app.kubernetes.io/version, checksum/* annotations,
	// and the paths given to fold): its diff is kept, the comment counts
	// it in one line per release.
	Noise bool `json:"noise,omitempty"`

	// Change, in a three-way diff, is what the pull request itself does
	// to the object: a unified diff of its render at Result.Base against
	// the head, masked as Diff is. Empty when the PR leaves it alone.
	Change string `json:"change,omitempty"`
	// Drift, in a three-way diff, are the fields someone changed in the
	// cluster since this tool applied them (it no longer owns them there)
	// and that the apply would set again.
	Drift []FieldDrift `json:"drift,omitempty"`
	// Gone, in a three-way diff, says the object was last applied and is
	// missing from the cluster: deleted there, not in Git.
	Gone bool `json:"gone,omitempty"`
	// Pending, in a three-way diff, says the apply also changes fields
	// that neither the pull request nor Drift explains: the desired state
	// moved since the last apply (commits not yet deployed, values the
	// unit substitutes).
	Pending bool `json:"pending,omitempty"`
}

// FieldDrift is one field changed in the cluster since it was applied.
// Values are as the API server returns them, Secret values and values
// from secrets masked: strings as they are (an empty one as ""), other
// values as JSON, and "" for a field that is absent.
type FieldDrift struct {
	// Field is the field's path, e.g. spec.replicas or
	// metadata.labels["app.kubernetes.io/name"].
	Field string `json:"field"`
	// Live is the value in the cluster.
	Live string `json:"live"`
	// Applied is the value Git sets without the pull request (at its
	// base): what was applied, unless the base moved on since.
	Applied string `json:"applied"`
	// Merged is the value once the pull request is merged and applied.
	Merged string `json:"merged"`
	// Reverted says merging puts back the value last applied: the pull
	// request leaves the field alone, and undoes the change made in the
	// cluster.
	Reverted bool `json:"reverted"`
}

// Result is the outcome of one run for one unit.
type Result struct {
	Unit     string `json:"unit"`
	Mode     Mode   `json:"mode"`
	Revision string `json:"revision,omitempty"`
	// AppliedRevision is the revision the unit's inventory named as last
	// applied when the run began: what the cluster ran before it. Empty
	// for a unit never applied, or a run that ended before reading it.
	AppliedRevision string `json:"appliedRevision,omitempty"`
	// HistoryRevision, of an apply, is the number the unit's history
	// gave the run (see kustomize-deploy history); RollbackOf, of a
	// rollback, the revision of the history it applied again.
	HistoryRevision int    `json:"historyRevision,omitempty"`
	RollbackOf      int    `json:"rollbackOf,omitempty"`
	Ready           bool   `json:"ready"`
	Reason          Reason `json:"reason"`
	Message         string `json:"message"`
	// Fix, on a failure that an option gets past, names it: force (an
	// immutable field), force-prune (over the prune budget) or
	// allow-remote-bases. Each front end says it with its own flag or
	// input.
	Fix string `json:"fix,omitempty"`
	// Validation is the validation that ran (or failed); empty when the
	// run ended before it, or did not need it (nothing changed).
	Validation Validation `json:"validation,omitempty"`
	// Namespace is the namespace given to objects of namespaced kinds that
	// named none; empty when every object named its own.
	Namespace string `json:"namespace,omitempty"`
	// Drifted, in drift mode, says the cluster differed from Git.
	Drifted bool `json:"drifted,omitempty"`
	// Base, of a three-way diff (a pull request's diff against the
	// cluster), is the PR's base revision: entries' Change compares the
	// unit there with Revision.
	Base string `json:"base,omitempty"`
	// Suspension, of a three-way diff of a configuration, says that
	// merging flips the unit's spec.suspend: it suspends the unit (runs
	// skip it from then on) or resumes it (the next run applies all that
	// waited).
	Suspension Suspension `json:"suspension,omitempty"`
	// Notes say what the run could not do, and why (e.g. no three-way
	// diff without the PR base in the checkout).
	Notes []string `json:"notes,omitempty"`
	// FileErrors, of a run that failed before it had objects (a build, a
	// substitution), say which files of the repository caused it and
	// where: annotations point into them.
	FileErrors []FileError `json:"fileErrors,omitempty"`
	// Diagnostics, of a run whose health check failed or timed out (or
	// whose hook failed), say for each object that was not ready what
	// the cluster itself said about it: events, container states, the
	// last lines of a failing container's log.
	Diagnostics []Diagnostic `json:"diagnostics,omitempty"`
	// Remediations say what was done about Helm releases whose install or
	// upgrade failed (see Remediation), in order.
	Remediations []Remediation `json:"remediations,omitempty"`
	// Releases are the Helm releases the unit's HelmReleases rendered,
	// each with its chart: their objects' entries name them (Release).
	Releases []Release `json:"releases,omitempty"`
	// Images, of a pull request's diff, are the images its containers
	// change (base → head), the objects running them named.
	Images  []ImageChange `json:"images,omitempty"`
	Entries []Entry       `json:"entries"`
	// EntriesOmitted, in a copy made to fit a size (the Action's result
	// output), is how many entries were left out; their counts remain.
	EntriesOmitted int       `json:"entriesOmitted,omitempty"`
	Counts         Counts    `json:"counts"`
	StartedAt      time.Time `json:"startedAt"`
	Duration       string    `json:"duration"`
}

// FileError is a failure a file of the repository caused.
type FileError struct {
	// File is relative to the repository, with forward slashes.
	File string `json:"file"`
	// Line is 1-based; 0 (left out) when only the file is known.
	Line int `json:"line,omitempty"`
	// Message says what is wrong there.
	Message string `json:"message"`
}

// Release is a Helm release a unit's HelmRelease rendered.
type Release struct {
	// HelmRelease names it: HelmRelease/namespace/name.
	HelmRelease string `json:"helmRelease"`
	// Chart, Version and Digest say which chart it rendered, from where.
	Chart   string `json:"chart"`
	Version string `json:"version"`
	Digest  string `json:"digest,omitempty"`
	// FromVersion, of a pull request's diff, is the chart version at its
	// base when it differs (a chart bump).
	FromVersion string `json:"fromVersion,omitempty"`
	// Name and Namespace are the Helm release's.
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	// Objects are the objects it rendered (hooks aside).
	Objects []object.ID `json:"objects"`
	// InstalledAs, when set, says the release is installed as another
	// identity, or to another cluster, than its unit (its
	// serviceAccountName, its kubeConfig).
	InstalledAs string `json:"installedAs,omitempty"`
	// Labels and Annotations are the HelmRelease's, for its notification
	// events (not part of the JSON output).
	Labels      map[string]string `json:"-"`
	Annotations map[string]string `json:"-"`
}

// Suspension is what a merge does to a unit's spec.suspend.
type Suspension string

// Suspensions.
const (
	Suspends Suspension = "suspends"
	Resumes  Suspension = "resumes"
)

// Counts tallies entries by action.
type Counts struct {
	Created    int `json:"created"`
	Configured int `json:"configured"`
	Unchanged  int `json:"unchanged"`
	Deleted    int `json:"deleted"`
	Skipped    int `json:"skipped"`
	Failed     int `json:"failed"`
}

// Tally recomputes r.Counts from r.Entries.
func (r *Result) Tally() {
	var c Counts
	for _, e := range r.Entries {
		switch e.Action {
		case Created:
			c.Created++
		case Configured:
			c.Configured++
		case Unchanged:
			c.Unchanged++
		case Deleted:
			c.Deleted++
		case Skipped:
			c.Skipped++
		case Failed:
			c.Failed++
		}
	}
	r.Counts = c
}

// Failed reports whether the run failed: not ready, and not because it
// skipped the unit on purpose. Exit codes and commit statuses follow it.
func (r *Result) Failed() bool { return !r.Ready && !r.Reason.SkipsByDesign() }

// Changed reports whether the run changed (or would change) anything.
func (r *Result) Changed() bool {
	return r.Counts.Created+r.Counts.Configured+r.Counts.Deleted > 0
}

// MaskTexts replaces, through mask, the texts of r that may quote a
// secret value: its message, notes and file errors, each entry's reason
// (an API server's error quotes what it refused), and the names of its
// entries' objects (a name may be made of a substituted value), and its
// diagnostics (a container may print a secret). Diffs are left as they are: they
// are masked by where values came from when they are made, and show the
// rest of an object as Git has it.
func (r *Result) MaskTexts(mask func(string) string) {
	r.Message = mask(r.Message)
	for i, n := range r.Notes {
		r.Notes[i] = mask(n)
	}
	for i := range r.FileErrors {
		r.FileErrors[i].Message = mask(r.FileErrors[i].Message)
	}
	for i := range r.Entries {
		e := &r.Entries[i]
		e.Reason = mask(e.Reason)
		for j := range e.Dangers {
			e.Dangers[j].Consequence = mask(e.Dangers[j].Consequence)
		}
		e.Object.Name, e.Object.Namespace = mask(e.Object.Name), mask(e.Object.Namespace)
	}
	for i := range r.Diagnostics {
		r.Diagnostics[i].Mask(mask)
	}
	for i := range r.Images {
		im := &r.Images[i]
		im.Container, im.From, im.To = mask(im.Container), mask(im.From), mask(im.To)
		for j := range im.Objects {
			im.Objects[j].Name, im.Objects[j].Namespace = mask(im.Objects[j].Name), mask(im.Objects[j].Namespace)
		}
	}
	for i := range r.Remediations {
		r.Remediations[i].Error = mask(r.Remediations[i].Error)
	}
}

// NameReleases sets, on every entry of an object one of r's Releases
// rendered, which HelmRelease rendered it.
func (r *Result) NameReleases() {
	if len(r.Releases) == 0 {
		return
	}
	of := map[object.ID]string{}
	for _, rel := range r.Releases {
		for _, id := range rel.Objects {
			of[id] = rel.HelmRelease
		}
	}
	for i, e := range r.Entries {
		if name, ok := of[e.Object]; ok && e.Release == "" {
			r.Entries[i].Release = name
		}
	}
}
