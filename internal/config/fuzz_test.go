package config

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzRead reads one file of any content: Read must not panic, must return
// a Set or located problems, and every unit it returns must be valid.
func FuzzRead(f *testing.F) {
	err := filepath.WalkDir("testdata", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") && !strings.HasSuffix(p, ".yml") {
			return err
		}
		data, err := os.ReadFile(p)
		f.Add(data)
		return err
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		root, err := filepath.EvalSymlinks(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(root, "clusters", "k.yaml")
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		set, err := Read(root, file)
		if (set == nil) == (err == nil) {
			t.Fatalf("set %v and error %v", set, err)
		}
		for _, p := range Problems(err) {
			if p.File != "clusters/k.yaml" || p.Line < 1 || p.Msg == "" {
				t.Errorf("problem not located: %+v", p)
			}
		}
		if err != nil && len(Problems(err)) == 0 {
			t.Errorf("error without problems: %v", err)
		}
		if set == nil {
			return
		}
		for _, p := range Problems(set.Refusals()) {
			if p.File != "clusters/k.yaml" || p.Line < 1 || p.Msg == "" {
				t.Errorf("problem not located: %+v", p)
			}
		}
		for _, u := range set.Units {
			if len(u.Refused) > 0 {
				continue // refused when its turn comes
			}
			if validateUnitName(u.Name) != nil || u.Path == "" || strings.HasPrefix(u.Path, "..") || u.Timeout <= 0 {
				t.Errorf("unit not valid: %+v", u)
			}
		}
	})
}
