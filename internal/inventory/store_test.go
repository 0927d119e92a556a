package inventory

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/testcluster"
)

var cluster *testcluster.Cluster

func TestMain(m *testing.M) { os.Exit(testcluster.Main(m, &cluster)) }

func setup(t *testing.T) (client.Client, string) {
	t.Helper()
	c, err := kube.New(cluster.Config, "default", kube.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	return c.Client, cluster.Namespace(t)
}

func names(entries []Entry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Name)
	}
	return out
}

// Two runs read the same inventory and write in turn: the second write
// conflicts, is merged with the first, and no entry is lost.
func TestSaveMergesAConflictingWrite(t *testing.T) {
	t.Parallel()
	c, ns := setup(t)
	ctx := t.Context()
	first, err := Save(ctx, c, &Inventory{Name: "web", Namespace: ns, Entries: []Entry{entry("ConfigMap", ns, "a", "v1")}})
	if err != nil {
		t.Fatal(err)
	}
	// Both read the same version.
	mine, theirs := *first, *first
	theirs.Entries = append(slices.Clone(first.Entries), entry("ConfigMap", ns, "theirs", "v1"))
	theirs.Status.Ready = Condition{Status: "Unknown", Reason: result.ReasonProgressing}
	if _, err := Save(ctx, c, &theirs); err != nil {
		t.Fatal(err)
	}
	mine.Entries = append(slices.Clone(first.Entries), entry("ConfigMap", ns, "mine", "v1"))
	mine.Status.Ready = Condition{Status: "True", Reason: result.ReasonApplySucceed}
	saved, err := Save(ctx, c, &mine)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Load(ctx, c, ns, "web")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a", "theirs", "mine"}, names(got.Entries)); diff != "" {
		t.Errorf("a conflicting write lost an entry (-want +got):\n%s", diff)
	}
	if got.Status.Ready.Reason != result.ReasonApplySucceed || saved.ResourceVersion != got.ResourceVersion {
		t.Errorf("status %s, versions %s/%s: the merged write must keep its own status and report its version", got.Status.Ready.Reason, saved.ResourceVersion, got.ResourceVersion)
	}
}

// A run that found no inventory creates one; if another created it in
// between, the two are merged too.
func TestSaveMergesAConcurrentCreate(t *testing.T) {
	t.Parallel()
	c, ns := setup(t)
	ctx := t.Context()
	if _, err := Save(ctx, c, &Inventory{Name: "web", Namespace: ns, Entries: []Entry{entry("ConfigMap", ns, "theirs", "v1")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := Save(ctx, c, &Inventory{Name: "web", Namespace: ns, Entries: []Entry{entry("ConfigMap", ns, "mine", "v1")}}); err != nil {
		t.Fatal(err)
	}
	got, err := Load(ctx, c, ns, "web")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"theirs", "mine"}, names(got.Entries)); diff != "" {
		t.Errorf("entries mismatch (-want +got):\n%s", diff)
	}
}

// A Secret of the same name that is not an inventory is never overwritten.
func TestSaveRefusesAForeignSecret(t *testing.T) {
	t.Parallel()
	c, ns := setup(t)
	foreign := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: SecretName("web")}, StringData: map[string]string{"password": "keep-me"}}
	if err := c.Create(t.Context(), foreign); err != nil {
		t.Fatal(err)
	}
	_, err := Save(t.Context(), c, &Inventory{Name: "web", Namespace: ns})
	if err == nil || !strings.Contains(err.Error(), "not a kustomize-deploy inventory") {
		t.Fatalf("err = %v", err)
	}
	var live corev1.Secret
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(foreign), &live); err != nil || string(live.Data["password"]) != "keep-me" {
		t.Errorf("the foreign Secret changed: %v %v", err, live.Data)
	}
}

// A suspend said while a run is under way survives the run's next write,
// and the suspend does not undo what the run recorded.
func TestSettingsAndRunsMergeByOwner(t *testing.T) {
	t.Parallel()
	c, ns := setup(t)
	ctx := t.Context()
	read, err := Save(ctx, c, &Inventory{Name: "web", Namespace: ns, Entries: []Entry{entry("ConfigMap", ns, "a", "v1")}})
	if err != nil {
		t.Fatal(err)
	}
	// suspend, while the run is under way
	if _, err := Update(ctx, c, ns, "web", func(inv *Inventory) { inv.Status.Suspended = true }); err != nil {
		t.Fatal(err)
	}
	// the run writes over the version it read: a conflict
	run := *read
	run.Entries = append(slices.Clone(read.Entries), entry("ConfigMap", ns, "b", "v1"))
	run.Status.Ready = Condition{Status: "True", Reason: result.ReasonApplySucceed}
	afterRun, err := Save(ctx, c, &run)
	if err != nil {
		t.Fatal(err)
	}
	// pin, after both
	if _, err := Update(ctx, c, ns, "web", func(inv *Inventory) { inv.Status.Pinned = "abc123" }); err != nil {
		t.Fatal(err)
	}
	got, err := Load(ctx, c, ns, "web")
	if err != nil {
		t.Fatal(err)
	}
	if !got.Status.Suspended || got.Status.Pinned != "abc123" || got.Status.Ready.Reason != result.ReasonApplySucceed {
		t.Errorf("status %+v (after run: %+v)", got.Status, afterRun.Status)
	}
	if diff := cmp.Diff([]string{"a", "b"}, names(got.Entries)); diff != "" {
		t.Errorf("entries mismatch (-want +got):\n%s", diff)
	}
}
