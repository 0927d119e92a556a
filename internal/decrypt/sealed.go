package decrypt

import (
	"bytes"
	"context"
	"regexp"

	"github.com/getsops/sops/v3/cmd/sops/formats"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// A rendering without keys (the offline diff of a pull request, where a
// fork has no secrets) decrypts nothing: encrypted values stay ciphertext,
// which diffs show masked, and a changed ciphertext as a changed value.
// What sops adds around the values (its metadata) is dropped, as it
// changes on every edit and is not part of any object.

// SealFiles is DecryptFiles for a rendering without keys. It decrypts
// nothing; it rewrites, in the scratch copy at root, the encrypted env
// files secretGenerators read without their sops_* metadata entries, which
// would otherwise become keys of the generated Secret. Other encrypted
// files are left as they are (one ciphertext document per key). Paths are
// confined and checked exactly as DecryptFiles checks them. It returns
// how many files it rewrote, and how many encrypted files it found
// (those DecryptFiles would decrypt).
func (d *Decryptor) SealFiles(ctx context.Context, root, path string) (Sealed, error) {
	return d.walkFiles(ctx, root, path, sealFile)
}

// Sealed is what SealFiles did: the files it rewrote, and the encrypted
// files it found.
type Sealed struct {
	Rewritten, Encrypted int
}

// sealFile drops the sops_* entries of an encrypted dotenv file.
func sealFile(_ context.Context, data []byte, f formats.Format) ([]byte, error) {
	if f != formats.Dotenv {
		return data, nil
	}
	var out [][]byte
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("sops_")) {
			out = append(out, line)
		}
	}
	return bytes.Join(out, nil), nil
}

// StripMetadata removes the sops metadata (the top-level "sops" field) of
// the encrypted manifests among objs, leaving their values encrypted.
func StripMetadata(objs []*unstructured.Unstructured) {
	for _, u := range objs {
		if u != nil {
			delete(u.Object, "sops")
		}
	}
}

var encType = regexp.MustCompile(`,type:(\w+)\]$`)

// placeholderString stands for an encrypted string: valid base64 too, for
// the data of a Secret.
const placeholderString = "c29wcy1lbmNyeXB0ZWQ=" // "sops-encrypted"

// WithPlaceholders returns a copy of u in which every encrypted value is
// replaced by a value of the type sops recorded for it (str → a base64
// string, int → 0, float → 0.0, bool → false), so a schema check sees the
// object's shape without being able to read its secrets.
func WithPlaceholders(u *unstructured.Unstructured) *unstructured.Unstructured {
	c := u.DeepCopy()
	c.Object = placeholders(c.Object).(map[string]any)
	return c
}

func placeholders(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = placeholders(e)
		}
	case []any:
		for i, e := range t {
			t[i] = placeholders(e)
		}
	case string:
		if !object.IsEncrypted(t) {
			return t
		}
		m := encType.FindStringSubmatch(t)
		if m == nil {
			return placeholderString
		}
		switch m[1] {
		case "int":
			return int64(0)
		case "float":
			return float64(0)
		case "bool":
			return false
		}
		return placeholderString
	}
	return v
}
