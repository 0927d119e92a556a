package bucketsource_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/source/bucketsource"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/sourcetest"
)

var objects = map[string]string{
	"apps/web/cm.yaml":       "kind: ConfigMap\n",
	"apps/web/logo.png":      "png",
	"apps/db/cm.yaml":        "kind: ConfigMap # db\n",
	"other/readme.md":        "x",
	"apps/web/.sourceignore": "",
}

// A Bucket's objects under its prefix are downloaded with the Secret's
// keys; the revision is the digest of the objects' index, the same for
// the same objects; the default ignore rules apply; wrong keys are
// refused with S3's error code, never the server's message.
func TestDownload(t *testing.T) {
	endpoint := sourcetest.S3(t, "fleet", objects, "AKIABUCKETKEY0001")
	o := bucketsource.Options{Endpoint: endpoint, Bucket: "fleet", Prefix: "apps/", Insecure: true, AccessKey: "AKIABUCKETKEY0001", SecretKey: "bucket-secret-0001"}
	o.Dir = filepath.Join(t.TempDir(), "a")
	a, err := bucketsource.Download(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(a.Revision, "sha256:") || a.Objects != 4 {
		t.Errorf("artifact %+v", a)
	}
	for name, want := range map[string]bool{"apps/web/cm.yaml": true, "apps/db/cm.yaml": true, "apps/web/logo.png": false, "other/readme.md": false} {
		if _, err := os.Stat(filepath.Join(o.Dir, name)); (err == nil) != want {
			t.Errorf("%s: present %v, want %v", name, err == nil, want)
		}
	}
	o.Dir = filepath.Join(t.TempDir(), "b")
	if again, err := bucketsource.Download(t.Context(), o); err != nil || again.Revision != a.Revision {
		t.Errorf("the same objects: %+v, %v; want revision %s", again, err, a.Revision)
	}

	o.SecretKey, o.AccessKey, o.Dir = "x", "AKIAWRONG", filepath.Join(t.TempDir(), "c")
	_, err = bucketsource.Download(t.Context(), o)
	if err == nil || !strings.Contains(err.Error(), "403 Forbidden (AccessDenied)") || strings.Contains(err.Error(), "INTERNAL-DETAIL") {
		t.Errorf("wrong keys: %v", err)
	}
	if _, err := os.Stat(o.Dir); !os.IsNotExist(err) {
		t.Errorf("a failed download left %s", o.Dir)
	}
}

// A bucket over its limits, or a key climbing out of the tree, fails
// naming them, with nothing kept.
func TestDownloadLimits(t *testing.T) {
	endpoint := sourcetest.S3(t, "fleet", map[string]string{"a.yaml": strings.Repeat("x", 2048), "b.yaml": "y", "../../etc/passwd": "z"}, "")
	for _, tc := range []struct {
		name   string
		prefix string
		limits bucketsource.Limits
		want   string
	}{
		{"objects", "", bucketsource.Limits{Objects: 1}, "more than 1 objects"},
		{"one object's bytes", "a", bucketsource.Limits{ObjectBytes: 1024}, "object a.yaml is larger than 1024 bytes"},
		{"bytes", "", bucketsource.Limits{Bytes: 1024}, "add up to more than 1024 bytes"},
		{"a key out of the tree", "..", bucketsource.Limits{}, `object "../../etc/passwd": a key climbing out`},
	} {
		dir := filepath.Join(t.TempDir(), "a")
		_, err := bucketsource.Download(t.Context(), bucketsource.Options{Endpoint: endpoint, Bucket: "fleet", Prefix: tc.prefix, Insecure: true, Dir: dir, Limits: tc.limits})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
		var le *bucketsource.LimitError
		if tc.name != "a key out of the tree" && !errors.As(err, &le) {
			t.Errorf("%s: not a *LimitError: %v", tc.name, err)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%s: a failed download left its directory", tc.name)
		}
	}
}
