package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/getsops/sops/v3/cmd/sops/formats"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kustomize-deploy/kustomize-deploy/internal/decrypt"
	"github.com/kustomize-deploy/kustomize-deploy/internal/sopstest"
)

// BenchmarkDecryptSecret decrypts an age-encrypted Secret of 10 keys, as
// the pipeline does for every encrypted manifest. It lives here rather than
// in internal/decrypt, which is being reworked in parallel; it uses only
// decrypt.New and DecryptObjects.
func BenchmarkDecryptSecret(b *testing.B) {
	key, err := sopstest.NewKey()
	if err != nil {
		b.Fatal(err)
	}
	var plain strings.Builder
	plain.WriteString("apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n  namespace: bench\ntype: Opaque\nstringData:\n")
	for i := range 10 {
		fmt.Fprintf(&plain, "  key-%02d: value-%02d-%s\n", i, i, strings.Repeat("x", 32))
	}
	enc, err := sopstest.Encrypt(key.Recipient, []byte(plain.String()), formats.Yaml, sopstest.K8sSecretRegex)
	if err != nil {
		b.Fatal(err)
	}
	var obj map[string]any
	if err := yaml.Unmarshal(enc, &obj); err != nil {
		b.Fatal(err)
	}
	encrypted := &unstructured.Unstructured{Object: obj}
	d, err := decrypt.New(decrypt.Options{Keys: []string{key.Identity}})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		u := encrypted.DeepCopy() // DecryptObjects decrypts in place
		if err := d.DecryptObjects(ctx, []*unstructured.Unstructured{u}, nil); err != nil {
			b.Fatal(err)
		}
	}
}
