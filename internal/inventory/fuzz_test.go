package inventory

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// FuzzFromSecret reads an inventory Secret whose data is anything (a
// Secret anyone with write access to the namespace may have edited): the
// object list, the inputs cache and the status either decode or fail with
// an error naming the Secret and the key, never panic; what decodes writes
// back to a Secret that reads as the same inventory. With compress, the
// fuzzer's bytes are the JSON inside the gzip streams (a mutated stream
// rarely survives its checksum); without, they are the streams.
func FuzzFromSecret(f *testing.F) {
	when := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, inv := range []*Inventory{
		{},
		{Entries: []Entry{entry("ConfigMap", "shop", "settings", "v1")}},
		{
			Entries: []Entry{
				{ID: entry("Deployment", "shop", "web", "").ID, Version: "apps/v1", Digest: "9f2c", ResourceVersion: "1042"},
				entry("Namespace", "", "shop", "v1"),
				entry("Widget", "shop", "w", "example.com/v1beta1"),
			},
			Inputs: &Inputs{Digest: strings.Repeat("ab", 32), Files: []string{"deploy/web/kustomization.yaml", "deploy/web/deployment.yaml"}, Dirs: []string{"deploy/web"}},
			Status: Status{
				Ready:                   Condition{Status: "True", Reason: result.ReasonApplySucceed, Message: "applied revision abc123", LastTransitionTime: when},
				LastAppliedRevision:     "abc123",
				LastAttemptedRevision:   "abc123",
				LastAppliedRevisionTime: &when,
				Config:                  "acme/deployments:clusters/production",
				DeletionPolicy:          "Delete",
			},
		},
		{Status: Status{Suspended: true, Pinned: "def456", Ready: Condition{Status: "False", Reason: result.ReasonBuildFailed, Message: "kustomize build failed:\n  missing file"}}},
	} {
		inv.Name, inv.Namespace = "web", "shop"
		s, err := toSecret(inv)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(s.Data[objectsKey], s.Data[inputsKey], s.Data[statusKey], false)
		objects, err := json.Marshal(inv.Entries)
		if err != nil {
			f.Fatal(err)
		}
		var inputs []byte
		if inv.Inputs != nil {
			if inputs, err = json.Marshal(inv.Inputs); err != nil {
				f.Fatal(err)
			}
		}
		f.Add(objects, inputs, s.Data[statusKey], true)
	}
	// What an edit by hand leaves: JSON that was never compressed, a
	// truncated stream, an empty gzip member, a status that is not JSON.
	f.Add([]byte(`[{"kind":"ConfigMap","name":"x","version":"v1"}]`), []byte(nil), []byte(`{}`), false)
	f.Add(gzipped(`[{"kind":"ConfigMap","name":"x","version":"v1"}]`)[:20], gzipped(`{"digest":"x"}`), []byte(`{"ready":`), false)
	f.Add([]byte(``), []byte(`null`), []byte(`null`), true)
	f.Add([]byte(`{"kind":"ConfigMap"}`), []byte(`{"files":"not a list"}`), []byte(`{"ready":{"lastTransitionTime":"yesterday"}}`), true)
	f.Add([]byte(`[{"kind":"ConfigMap","Kind":"Secret","name":"\u00e9","version":1}]`), []byte(`{"digest":"x","files":["a","a"],"dirs":null}`), []byte(`{"lastAppliedRevisionTime":"2025-03-01T12:00:00.123456789+05:30"}`), true)

	f.Fuzz(func(t *testing.T, objects, inputs, status []byte, compress bool) {
		if compress {
			if objects != nil {
				objects = gzipped(string(objects))
			}
			if inputs != nil {
				inputs = gzipped(string(inputs))
			}
		}
		s := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: SecretName("web"), Namespace: "shop", Labels: map[string]string{UnitLabel: "web"}},
			Type:       SecretType,
			Data:       map[string][]byte{},
		}
		for k, v := range map[string][]byte{objectsKey: objects, inputsKey: inputs, statusKey: status} {
			if v != nil {
				s.Data[k] = v
			}
		}
		inv, err := fromSecret(s)
		if err != nil {
			if inv != nil {
				t.Fatalf("an inventory and an error: %v", err)
			}
			if len(s.Data[objectsKey]) == 0 {
				if !strings.Contains(err.Error(), objectsKey+" is missing") {
					t.Fatalf("no object list, and the error does not say so: %v", err)
				}
				return
			}
			prefix := "inventory Secret shop/" + SecretName("web") + ": reading "
			if !strings.HasPrefix(err.Error(), prefix) {
				t.Fatalf("error does not name the Secret: %v", err)
			}
			key, _, _ := strings.Cut(strings.TrimPrefix(err.Error(), prefix), ":")
			if len(s.Data[key]) == 0 {
				t.Fatalf("error names key %q, which holds nothing: %v", key, err)
			}
			return
		}
		if inv.Name != "web" || inv.Namespace != "shop" {
			t.Fatalf("inventory of %s/%s, want shop/web", inv.Namespace, inv.Name)
		}
		if len(inputs) > 0 && inv.Inputs == nil && inv.InputsErr == nil {
			t.Fatal("inputs were given but neither read nor said to be damaged")
		}

		// Written back and read again, it is the same inventory.
		back, err := toSecret(inv)
		if err != nil {
			t.Fatalf("an inventory that was read cannot be written: %v", err)
		}
		again, err := fromSecret(back)
		if err != nil {
			t.Fatalf("an inventory that was written cannot be read: %v", err)
		}
		if a, b := canonical(t, inv), canonical(t, again); a != b {
			t.Fatalf("the inventory changed on a round trip:\n%s\n%s", a, b)
		}
	})
}

func gzipped(s string) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write([]byte(s)) // writes to a bytes.Buffer do not fail
	_ = zw.Close()
	return buf.Bytes()
}

// canonical is inv's content as JSON, so two inventories compare by value
// (times with equal instants and offsets but distinct *time.Location).
func canonical(t *testing.T, inv *Inventory) string {
	data, err := json.Marshal(struct {
		Entries []Entry
		Status  Status
		Inputs  *Inputs
	}{inv.Entries, inv.Status, inv.Inputs})
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
