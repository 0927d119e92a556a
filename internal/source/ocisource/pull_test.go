package ocisource_test

import (
	"archive/tar"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/ocitest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/ocisource"
)

func pull(t *testing.T, o ocisource.Options) (ocisource.Artifact, string, error) {
	t.Helper()
	if o.Dir == "" {
		o.Dir = filepath.Join(t.TempDir(), "artifact")
	}
	a, err := ocisource.Pull(context.Background(), o)
	return a, o.Dir, err
}

func TestPullRefs(t *testing.T) {
	reg := helmtest.NewRegistry(t)
	repo := reg.Host + "/manifests/app"
	digests := map[string]string{}
	for _, tag := range []string{"1.0.0", "1.2.0", "v1.3.0", "2.0.0-rc.1", "1.4.0-dev", "latest", "stable"} {
		digests[tag] = ocitest.Push(t, repo+":"+tag, ocitest.Flux(t, map[string]string{"version.txt": tag}, "", ""), "", "", nil)
	}
	for _, tc := range []struct {
		name string
		ref  ocisource.Ref
		want string // the tag whose content is pulled
		rev  string // the revision, "" for tag@digest
		err  string
	}{
		{"none is latest", ocisource.Ref{}, "latest", "", ""},
		{"a tag", ocisource.Ref{Tag: "stable"}, "stable", "", ""},
		{"semver over tag", ocisource.Ref{Tag: "stable", SemVer: ">=1.0.0 <2.0.0"}, "v1.3.0", "", ""},
		{"a prerelease only when asked", ocisource.Ref{SemVer: ">=1.4.0-0"}, "2.0.0-rc.1", "", ""},
		{"semverFilter", ocisource.Ref{SemVer: ">=1.0.0-0", SemVerFilter: ".*-dev$"}, "1.4.0-dev", "", ""},
		{"digest over all", ocisource.Ref{Digest: "DIGEST:1.0.0", SemVer: "*", Tag: "stable"}, "1.0.0", "sha256", ""},
		{"no semver match", ocisource.Ref{SemVer: ">=3.0.0"}, "", "", `no tag matches semver range ">=3.0.0" (7 tags: 2.0.0-rc.1, 1.4.0-dev, v1.3.0, 1.2.0, 1.0.0)`},
		{"no filter match", ocisource.Ref{SemVer: "*", SemVerFilter: "^x"}, "", "", `7 tags, 0 matching semverFilter "^x"`},
		{"bad filter", ocisource.Ref{SemVer: "*", SemVerFilter: "("}, "", "", "spec.ref.semverFilter"},
		{"bad range", ocisource.Ref{SemVer: "nope"}, "", "", `spec.ref.semver "nope" is not a range`},
		{"missing tag", ocisource.Ref{Tag: "gone"}, "", "", "MANIFEST_UNKNOWN"},
		{"bad digest", ocisource.Ref{Digest: "sha256:123"}, "", "", "spec.ref.digest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ref := tc.ref
			if d, ok := strings.CutPrefix(ref.Digest, "DIGEST:"); ok {
				ref.Digest = digests[d]
			}
			a, dir, err := pull(t, ocisource.Options{URL: "oci://" + repo, Ref: ref})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join(dir, "version.txt"))
			if err != nil || string(got) != tc.want {
				t.Errorf("pulled %q (%v), want %s's content", got, err, tc.want)
			}
			want := tc.want + "@" + digests[tc.want]
			if tc.rev == "sha256" {
				want = digests[tc.want]
			}
			if a.Revision != want || a.Digest != digests[tc.want] {
				t.Errorf("revision %q, digest %q; want %q", a.Revision, a.Digest, want)
			}
		})
	}
}

// The annotations flux push artifact writes are read: the origin of the
// content, and when it was pushed.
func TestPullAnnotations(t *testing.T) {
	reg := helmtest.NewRegistry(t)
	ocitest.Push(t, reg.Host+"/app:latest", ocitest.Flux(t, map[string]string{"a.yaml": "a: 1\n"}, "https://github.com/acme/app", "main@sha1:0123456789abcdef0123456789abcdef01234567"), "", "", nil)
	a, _, err := pull(t, ocisource.Options{URL: "oci://" + reg.Host + "/app"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Source != "https://github.com/acme/app" || a.OriginRevision != "main@sha1:0123456789abcdef0123456789abcdef01234567" || !a.Created.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Errorf("got %+v", a)
	}
}

func TestPullLayerSelector(t *testing.T) {
	reg := helmtest.NewRegistry(t)
	ref := reg.Host + "/layers:latest"
	tree := map[string]string{"deploy/app.yaml": "a: 1\n", "deploy/logo.png": "png", ".github/ci.yaml": "on: push\n"}
	ocitest.Push(t, ref, ocitest.Artifact{Layers: []ocitest.Layer{
		{MediaType: "application/vnd.acme.docs.v1.tar+gzip", Data: ocitest.TarGz(t, ocitest.Files(map[string]string{"README.md": "docs"}))},
		{MediaType: ocitest.ContentMediaType, Data: ocitest.TarGz(t, ocitest.Files(tree))},
		{MediaType: "text/plain", Data: []byte("not a tarball")},
	}}, "", "", nil)
	url := "oci://" + reg.Host + "/layers"
	ignore := "/deploy/*.png\n"
	for _, tc := range []struct {
		name   string
		sel    ocisource.LayerSelector
		ignore *string
		want   []string
		err    string
	}{
		{"the first layer by default", ocisource.LayerSelector{}, nil, []string{"README.md"}, ""},
		{"by media type, ignore rules applied", ocisource.LayerSelector{MediaType: ocitest.ContentMediaType}, nil, []string{"deploy/app.yaml"}, ""},
		{"spec.ignore", ocisource.LayerSelector{MediaType: ocitest.ContentMediaType, Operation: "extract"}, &ignore, []string{".github/ci.yaml", "deploy/app.yaml"}, ""},
		{"copy: the blob as is", ocisource.LayerSelector{MediaType: ocitest.ContentMediaType, Operation: "copy"}, &ignore, []string{".github/ci.yaml", "deploy/app.yaml", "deploy/logo.png"}, ""},
		{"no such media type", ocisource.LayerSelector{MediaType: "application/x-nope"}, nil, nil,
			"no layer of media type application/x-nope (spec.layerSelector.mediaType) in the artifact: its layers are application/vnd.acme.docs.v1.tar+gzip, " + ocitest.ContentMediaType + ", text/plain"},
		{"not a tar+gzip", ocisource.LayerSelector{MediaType: "text/plain"}, nil, nil, "the layer is not gzip-compressed"},
		{"bad operation", ocisource.LayerSelector{Operation: "unpack"}, nil, nil, `spec.layerSelector.operation "unpack" is neither extract nor copy`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, dir, err := pull(t, ocisource.Options{URL: url, Layer: tc.sel, Ignore: tc.ignore})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := files(t, dir); !slices.Equal(got, tc.want) {
				t.Errorf("files %v, want %v", got, tc.want)
			}
		})
	}
}

// A layer crafted to write outside the directory, or through a link,
// or to fill the disk, is refused by name; nothing lands outside.
func TestPullExtractionSafety(t *testing.T) {
	reg := helmtest.NewRegistry(t)
	for i, tc := range []struct {
		name    string
		entries []ocitest.Entry
		op      string
		max     int64
		want    []string // files extracted, when no error
		err     string
	}{
		{"climbing out", []ocitest.Entry{{Name: "ok.yaml", Body: "a"}, {Name: "../evil.yaml", Body: "x"}}, "", 0, nil, `entry "../evil.yaml": a path climbing out of the artifact (..) is refused`},
		{"climbing out, deeper", []ocitest.Entry{{Name: "a/b/../../../evil.yaml", Body: "x"}}, "", 0, nil, "is refused"},
		{"absolute", []ocitest.Entry{{Name: "/tmp/evil.yaml", Body: "x"}}, "", 0, nil, `entry "/tmp/evil.yaml": an absolute path is refused`},
		{"backslash", []ocitest.Entry{{Name: `..\evil.yaml`, Body: "x"}}, "", 0, nil, "a backslash in a name is refused"},
		{"a symlink out, then a file through it: the link skipped", []ocitest.Entry{
			{Name: "out", Type: tar.TypeSymlink, Link: "/tmp"}, {Name: "out/evil.yaml", Body: "x"}, {Name: "app.yaml", Body: "a"},
		}, "", 0, []string{"app.yaml", "out/evil.yaml"}, ""},
		{"a symlink, copied: refused", []ocitest.Entry{{Name: "out", Type: tar.TypeSymlink, Link: "../.."}}, "copy", 0, nil, `entry "out" is a symbolic link (to "../..")`},
		{"a hard link, copied: refused", []ocitest.Entry{{Name: "x", Body: "a"}, {Name: "y", Type: tar.TypeLink, Link: "x"}}, "copy", 0, nil, `entry "y" is a hard link`},
		{"a device", []ocitest.Entry{{Name: "dev", Type: tar.TypeChar}}, "", 0, nil, `entry "dev" is of tar type`},
		{"too big", []ocitest.Entry{{Name: "a", Body: strings.Repeat("a", 600)}, {Name: "b", Body: strings.Repeat("b", 600)}}, "", 1000, nil, `entry "b": the layer extracts to more than 1000 bytes`},
		{"directories and modes", []ocitest.Entry{{Name: "d/", Type: tar.TypeDir, Mode: 0o000}, {Name: "d/x.sh", Body: "#!/bin/sh", Mode: 0o777}}, "", 0, []string{"d/x.sh"}, ""},
	} {
		repo := fmt.Sprintf("%s/crafted/%d", reg.Host, i)
		t.Run(tc.name, func(t *testing.T) {
			ocitest.Push(t, repo+":latest", ocitest.Artifact{Layers: []ocitest.Layer{{MediaType: ocitest.ContentMediaType, Data: ocitest.TarGz(t, tc.entries)}}}, "", "", nil)
			parent := t.TempDir()
			dir := filepath.Join(parent, "artifact")
			_, _, err := pull(t, ocisource.Options{URL: "oci://" + repo, Dir: dir, MaxSize: tc.max, Layer: ocisource.LayerSelector{Operation: tc.op}})
			if tc.err != "" {
				var ee *ocisource.ExtractError
				if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.As(err, &ee) {
					t.Fatalf("error %v, want an ExtractError saying %q", err, tc.err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if got := files(t, parent); !slices.Equal(got, prefixed("artifact/", tc.want)) {
				t.Errorf("files %v, want %v under artifact/", got, tc.want)
			}
			if _, err := os.Stat("/tmp/evil.yaml"); err == nil {
				t.Error("/tmp/evil.yaml was written")
			}
			if tc.name == "directories and modes" {
				info, err := os.Stat(filepath.Join(dir, "d/x.sh"))
				if err != nil || info.Mode().Perm() != 0o755 {
					t.Errorf("d/x.sh: %v %v; want 0755 (never writable by others)", info.Mode(), err)
				}
			}
		})
	}
}

func prefixed(p string, names []string) []string {
	var out []string
	for _, n := range names {
		out = append(out, p+n)
	}
	return out
}

// A registry that wants credentials: without them, and with wrong ones,
// the pull is an *AuthError saying which; with them, it pulls. The
// password shows in no error.
func TestPullAuth(t *testing.T) {
	const password = "oci-pw-7e1f0c"
	reg := helmtest.NewRegistryWithAuth(t, "flux", password)
	ocitest.Push(t, reg.Host+"/private:latest", ocitest.Flux(t, map[string]string{"a.yaml": "a: 1\n"}, "", ""), "flux", password, nil)
	url := "oci://" + reg.Host + "/private"
	auth := func(user, pw string) *ocisource.Auth {
		a, err := ocisource.ParseAuth([]byte(`{"auths": {"` + reg.Host + `": {"auth": "` + base64.StdEncoding.EncodeToString([]byte(user+":"+pw)) + `"}}}`))
		if err != nil {
			t.Fatal(err)
		}
		return &a
	}
	for _, tc := range []struct {
		name string
		auth *ocisource.Auth
		err  string
	}{
		{"none", nil, "no credentials were given (spec.secretRef)"},
		{"wrong", auth("flux", "oci-wrong-000"), "the credentials given for spec.secretRef were refused"},
		{"another registry's", auth("flux", password), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := ocisource.Options{URL: url, Auth: tc.auth}
			if tc.name == "another registry's" {
				a, err := ocisource.ParseAuth([]byte(`{"auths": {"registry.example.com": {"username": "flux", "password": "` + password + `"}}}`))
				if err != nil {
					t.Fatal(err)
				}
				o.Auth = &a
				tc.err = "were refused"
			}
			_, _, err := pull(t, o)
			var ae *ocisource.AuthError
			if err == nil || !errors.As(err, &ae) || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %v, want an AuthError saying %q", err, tc.err)
			}
			if strings.Contains(err.Error(), password) || strings.Contains(err.Error(), "oci-wrong-000") {
				t.Errorf("a password shows: %v", err)
			}
		})
	}
	if _, dir, err := pull(t, ocisource.Options{URL: url, Auth: auth("flux", password)}); err != nil {
		t.Fatal(err)
	} else if got := files(t, dir); !slices.Equal(got, []string{"a.yaml"}) {
		t.Errorf("files %v", got)
	}
}

// An HTTPS registry is reached with the transport given.
func TestPullTLS(t *testing.T) {
	reg := helmtest.NewTLSRegistry(t)
	ocitest.Push(t, reg.Host+"/tls:v1", ocitest.Flux(t, map[string]string{"a.yaml": "a: 1\n"}, "", ""), "", "", reg.Client)
	if _, _, err := pull(t, ocisource.Options{URL: "oci://" + reg.Host + "/tls", Ref: ocisource.Ref{Tag: "v1"}, Transport: reg.Client.Transport}); err != nil {
		t.Fatal(err)
	}
}

func TestRepository(t *testing.T) {
	for _, tc := range []struct {
		url      string
		insecure bool
		scheme   string
		err      string
	}{
		{"oci://ghcr.io/acme/manifests", false, "https", ""},
		{"oci://registry.example.com:5000/acme/app", true, "http", ""},
		{"oci://127.0.0.1:5000/app", false, "http", ""}, // go-containerregistry's rule for loopback
		{"https://ghcr.io/acme/manifests", false, "", "is not oci://<host>/<repository>"},
		{"oci://ghcr.io/acme/manifests:v1", false, "", "names a tag or digest: give it in spec.ref"},
		{"oci://ghcr.io/acme/manifests@sha256:0123", false, "", "names a tag or digest"},
		{"oci://ghcr.io/Acme", false, "", "spec.url"},
	} {
		repo, err := ocisource.Repository(tc.url, tc.insecure)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want one saying %q", tc.url, err, tc.err)
			}
			continue
		}
		if err != nil || repo.Scheme() != tc.scheme {
			t.Errorf("%s (insecure %v): %v, scheme %q; want %s", tc.url, tc.insecure, err, repo.Scheme(), tc.scheme)
		}
	}
}

func files(t *testing.T, dir string) []string {
	t.Helper()
	var got []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			got = append(got, filepath.ToSlash(rel))
		}
		return err
	})
	return got
}
