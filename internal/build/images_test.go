package build

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	kustypes "sigs.k8s.io/kustomize/api/types"
)

func TestParseImage(t *testing.T) {
	t.Parallel()
	digest := "sha256:" + strings.Repeat("0f", 32)
	for _, tc := range []struct {
		in      string
		want    Image
		wantErr string
	}{
		{in: "nginx=registry.example.com/nginx:1.27", want: Image{Name: "nginx", NewName: "registry.example.com/nginx", NewTag: "1.27"}},
		{in: "nginx=:1.27", want: Image{Name: "nginx", NewTag: "1.27"}},
		{in: "nginx=registry.example.com/nginx", want: Image{Name: "nginx", NewName: "registry.example.com/nginx"}},
		{in: "nginx@" + digest, want: Image{Name: "nginx", Digest: digest}},
		{in: "nginx=registry.example.com/nginx@" + digest, want: Image{Name: "nginx", NewName: "registry.example.com/nginx", Digest: digest}},
		{in: "localhost:5000/app=localhost:5000/app:v2", want: Image{Name: "localhost:5000/app", NewName: "localhost:5000/app", NewTag: "v2"}},
		{in: "app=registry:5000/app", want: Image{Name: "app", NewName: "registry:5000/app"}},

		{in: "nginx", wantErr: "expected name=newName:newTag, name=:newTag"},
		{in: "nginx:1.25", wantErr: "expected name=newName:newTag"},
		{in: "nginx=", wantErr: "nothing after '='"},
		{in: "=nginx:1.27", wantErr: "missing the image name"},
		{in: "nginx:1.25=nginx:1.27", wantErr: `must not carry a tag: use "nginx"`},
		{in: "nginx=:", wantErr: "nothing to change"},
		{in: "nginx=nginx:", wantErr: "empty tag"},
		{in: "nginx=:bad/tag", wantErr: "not a valid tag"},
		{in: "nginx@sha256:abc", wantErr: "expected sha256:<64 hex digits>"},
		{in: "nginx=@" + digest, wantErr: "a digest needs a name"},
		{in: "nginx=my nginx", wantErr: "is not an image name"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseImage(tc.in)
			if tc.wantErr != "" {
				wantErr(t, err, tc.wantErr, tc.in)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("image mismatch (-want +got):\n%s", diff)
			}
			if back, err := ParseImage(got.String()); err != nil || back != got {
				t.Errorf("String() = %q does not parse back: %+v, %v", got.String(), back, err)
			}
		})
	}
}

func TestKustomizeImagesLastWins(t *testing.T) {
	t.Parallel()
	got := kustomizeImages([]Image{{Name: "a", NewTag: "1"}, {Name: "b", NewTag: "2"}, {Name: "a", NewTag: "3"}})
	want := []kustypes.Image{{Name: "a", NewTag: "3"}, {Name: "b", NewTag: "2"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("images mismatch (-want +got):\n%s", diff)
	}
}
