package inventory

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

func entry(kind, ns, name, version string) Entry {
	return Entry{ID: object.ID{Kind: kind, Namespace: ns, Name: name}, Version: version}
}

func TestUnionKeepsOrderAndNewVersions(t *testing.T) {
	t.Parallel()
	old := []Entry{entry("ConfigMap", "a", "x", "v1"), entry("Thing", "a", "y", "v1beta1")}
	cur := []Entry{entry("Thing", "a", "y", "v1"), entry("Service", "a", "z", "v1")}
	got := Union(old, cur)
	want := []Entry{entry("ConfigMap", "a", "x", "v1"), entry("Thing", "a", "y", "v1"), entry("Service", "a", "z", "v1")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Union mismatch (-want +got):\n%s", diff)
	}
}

func TestDiffIsWhatPruneDeletes(t *testing.T) {
	t.Parallel()
	old := []Entry{entry("ConfigMap", "a", "gone", "v1"), entry("ConfigMap", "a", "kept", "v1")}
	cur := []Entry{entry("ConfigMap", "a", "kept", "v1"), entry("ConfigMap", "a", "new", "v1")}
	if diff := cmp.Diff([]Entry{entry("ConfigMap", "a", "gone", "v1")}, Diff(old, cur)); diff != "" {
		t.Errorf("Diff mismatch (-want +got):\n%s", diff)
	}
	if len(Diff(nil, cur)) != 0 {
		t.Error("a first run must prune nothing")
	}
}

// An object is its ID on its cluster: the same ID on another cluster (a
// HelmRelease given a kubeConfig) is another object, which a prune of the
// first deletes; the account an object is applied as is not part of it.
func TestEntriesAreObjectsOnTheirCluster(t *testing.T) {
	t.Parallel()
	here := entry("ConfigMap", "a", "x", "v1")
	spoke := here
	spoke.Cluster = "spoke"
	asAccount := here
	asAccount.Account = "a/deployer"
	if diff := cmp.Diff([]Entry{here}, Diff([]Entry{here, spoke}, []Entry{spoke})); diff != "" {
		t.Errorf("Diff across clusters (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Entry{here, spoke}, Union([]Entry{here}, []Entry{spoke})); diff != "" {
		t.Errorf("Union across clusters (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Entry{asAccount}, Union([]Entry{here}, []Entry{asAccount})); diff != "" {
		t.Errorf("Union of one object applied as another account (-want +got):\n%s", diff)
	}
}

func TestValidateName(t *testing.T) {
	t.Parallel()
	for name, ok := range map[string]bool{
		"web": true, "web-1": true, "a": true, strings.Repeat("a", 63): true,
		"": false, "Web": false, "-web": false, "web-": false, "we_b": false, "web.app": false, strings.Repeat("a", 64): false,
	} {
		if err := ValidateName(name); (err == nil) != ok {
			t.Errorf("ValidateName(%q) = %v, want ok=%v", name, err, ok)
		}
	}
}

func TestFromSecretRejectsForeignSecrets(t *testing.T) {
	t.Parallel()
	s, err := toSecret(&Inventory{Name: "u", Namespace: "ns"})
	if err != nil {
		t.Fatal(err)
	}
	s.Type = "Opaque"
	if _, err := fromSecret(s); err == nil {
		t.Error("an Opaque Secret was read as an inventory")
	}
}

// A Secret holds at most 1 MiB. An inventory of 10,000 objects, each with
// a digest and a resourceVersion, plus the build's inputs, must fit with
// room to spare.
func TestLargeInventoryFitsInASecret(t *testing.T) {
	t.Parallel()
	const n = 10_000
	inv := &Inventory{Name: "big", Namespace: "ns", Inputs: &Inputs{Digest: strings.Repeat("f", 64)}}
	for i := range n {
		e := entry("ConfigMap", "shop-production", fmt.Sprintf("settings-%05d", i), "v1")
		sum := sha256.Sum256([]byte(e.Name))
		e.Digest, e.ResourceVersion = hex.EncodeToString(sum[:16]), fmt.Sprint(1_000_000+i*7)
		inv.Entries = append(inv.Entries, e)
		inv.Inputs.Files = append(inv.Inputs.Files, fmt.Sprintf("clusters/production/shop/config/settings-%05d.yaml", i))
	}
	s, err := toSecret(inv)
	if err != nil {
		t.Fatal(err)
	}
	size := 0
	for _, v := range s.Data {
		size += len(v)
	}
	if size > 512<<10 {
		t.Errorf("an inventory of %d objects takes %d KiB of a Secret's 1,024", n, size>>10)
	}
	back, err := fromSecret(s)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(inv.Entries, back.Entries); diff != "" {
		t.Errorf("entries did not survive the round trip (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(inv.Inputs, back.Inputs); diff != "" {
		t.Errorf("inputs did not survive the round trip (-want +got):\n%s", diff)
	}
	t.Logf("%d objects: %d KiB", n, size>>10)
}

// The build inputs are a cache: damaged, they read as none, with the
// reason; a damaged or missing object list is an error (nothing may be
// pruned from a list that cannot be read).
func TestDamagedInventory(t *testing.T) {
	t.Parallel()
	inv := &Inventory{Name: "u", Namespace: "ns", Entries: []Entry{entry("ConfigMap", "ns", "a", "v1")}, Inputs: &Inputs{Digest: "d"}}
	for _, tc := range []struct {
		key        string
		data       []byte
		fails      bool
		inputsErr  bool
		keepsItems bool
	}{
		{key: inputsKey, data: []byte("not gzip"), inputsErr: true, keepsItems: true},
		{key: inputsKey, data: []byte{0x1f, 0x8b, 0x08, 0x00}, inputsErr: true, keepsItems: true}, // truncated: unexpected EOF
		{key: objectsKey, data: []byte("garbage"), fails: true},
		{key: objectsKey, data: nil, fails: true}, // the data replaced by hand: missing, not empty
		{key: statusKey, data: []byte("{"), fails: true},
	} {
		s, err := toSecret(inv)
		if err != nil {
			t.Fatal(err)
		}
		s.Data[tc.key] = tc.data
		got, err := fromSecret(s)
		switch {
		case tc.fails:
			if err == nil || !strings.Contains(err.Error(), tc.key) {
				t.Errorf("damaged %s: %v, want an error naming it", tc.key, err)
			}
			continue
		case err != nil:
			t.Errorf("damaged %s: %v", tc.key, err)
			continue
		}
		if tc.inputsErr && (got.InputsErr == nil || got.Inputs != nil || !strings.Contains(got.InputsErr.Error(), inputsKey)) {
			t.Errorf("damaged %s: inputs %v, error %v", tc.key, got.Inputs, got.InputsErr)
		}
		if tc.keepsItems && len(got.Entries) != 1 {
			t.Errorf("damaged %s: entries %v", tc.key, got.Entries)
		}
	}
}
