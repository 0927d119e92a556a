package inventory

import (
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// The history numbers runs on from the last, keeps HistoryLimit of them,
// and finds the last ready revision of another commit.
func TestHistory(t *testing.T) {
	t.Parallel()
	var st Status
	for i := range HistoryLimit + 3 {
		rev := st.Record(Revision{SourceRevision: string(rune('a' + i%3)), Ready: i%4 != 3})
		if rev.Revision != i+1 {
			t.Fatalf("run %d numbered %d", i+1, rev.Revision)
		}
	}
	if len(st.History) != HistoryLimit || st.History[0].Revision != 4 || st.History[HistoryLimit-1].Revision != HistoryLimit+3 {
		t.Fatalf("history keeps %d, %d to %d; want the last %d", len(st.History), st.History[0].Revision, st.History[len(st.History)-1].Revision, HistoryLimit)
	}
	if _, ok := st.Find(3); ok {
		t.Error("revision 3 is past the limit and still found")
	}
	if r, ok := st.Find(5); !ok || r.Revision != 5 {
		t.Errorf("Find(5) = %+v, %v", r, ok)
	}
	// Runs 13 (commit a, ready) is applied now; 12 (c) failed, 11 (b) is ready.
	st.LastAppliedRevision = "a"
	if r, ok := st.PreviousReady(); !ok || r.Revision != 11 {
		t.Errorf("PreviousReady = %+v, %v; want revision 11", r, ok)
	}
}

func TestEntriesDigest(t *testing.T) {
	t.Parallel()
	a := Entry{ID: object.ID{Kind: "ConfigMap", Namespace: "ns", Name: "a"}, Version: "v1", Digest: "x"}
	b := Entry{ID: object.ID{Kind: "ConfigMap", Namespace: "ns", Name: "b"}, Version: "v1"}
	if EntriesDigest([]Entry{a, b}) != EntriesDigest([]Entry{b, a}) {
		t.Error("the digest depends on the entries' order")
	}
	changed := a
	changed.Digest = "y"
	if EntriesDigest([]Entry{a, b}) == EntriesDigest([]Entry{changed, b}) {
		t.Error("the digest misses an object's digest")
	}
}
