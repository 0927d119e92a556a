package inventory

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// HistoryLimit is how many apply runs a unit's inventory remembers.
const HistoryLimit = 10

// Revision is one apply run of a unit, as its history keeps it: which
// source revision, when, how it ended, what it changed, who ran it. It
// holds no object and no value: a rollback re-renders the unit at
// SourceRevision (see kustomize-deploy rollback), so nothing of a Secret
// is ever stored in it.
type Revision struct {
	// Revision numbers the unit's runs, from 1.
	Revision int `json:"revision"`
	// SourceRevision is the commit (or artifact revision) applied.
	SourceRevision string    `json:"sourceRevision,omitempty"`
	Time           time.Time `json:"time"`
	// Ready and Reason are how the run ended.
	Ready  bool          `json:"ready"`
	Reason result.Reason `json:"reason"`
	Counts result.Counts `json:"counts"`
	// Digest sums up the objects the unit owned after the run (their
	// IDs, versions and recorded digests).
	Digest string `json:"digest,omitempty"`
	// By is who ran it (the GitHub actor, else the user); RunURL, the
	// GitHub Actions run.
	By     string `json:"by,omitempty"`
	RunURL string `json:"runURL,omitempty"`
	// RollbackOf, of a rollback, is the revision it applied again.
	RollbackOf int `json:"rollbackOf,omitempty"`
}

// Record appends rev to the status's history, numbered after the last,
// and keeps the last HistoryLimit; it returns rev as numbered.
func (s *Status) Record(rev Revision) Revision {
	rev.Revision = 1
	if n := len(s.History); n > 0 {
		rev.Revision = s.History[n-1].Revision + 1
	}
	s.History = append(slices.Clone(s.History), rev)
	if n := len(s.History); n > HistoryLimit {
		s.History = s.History[n-HistoryLimit:]
	}
	return rev
}

// Find is the revision of the history numbered n.
func (s *Status) Find(n int) (Revision, bool) {
	for _, r := range s.History {
		if r.Revision == n {
			return r, true
		}
	}
	return Revision{}, false
}

// PreviousReady is the last revision before the last applied one that
// ended ready with another source revision: where a rollback goes by
// default.
func (s *Status) PreviousReady() (Revision, bool) {
	for i := len(s.History) - 1; i >= 0; i-- {
		r := s.History[i]
		if r.Ready && r.SourceRevision != "" && r.SourceRevision != s.LastAppliedRevision {
			return r, true
		}
	}
	return Revision{}, false
}

// EntriesDigest sums up entries: their IDs, versions and digests, in
// order of ID.
func EntriesDigest(entries []Entry) string {
	lines := make([]string, len(entries))
	for i, e := range entries {
		lines[i] = e.ID.String() + " " + e.ID.Group + " " + e.Version + " " + e.Digest
	}
	slices.Sort(lines)
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return "sha256:" + hex.EncodeToString(sum[:])
}
