package workspace

import (
	"os"
	"path/filepath"
)

// linkableTempDir is where copies go, and whether files can be
// hard-linked there: the system's temporary directory if a file of the
// root can be linked there, else the root's .git directory if it can be
// there (a checkout mounted from another filesystem, as GitHub's Docker
// actions get theirs: copying every file for every unit would cost far
// more), else the system's, copying. Worked out once per Snapshot.
func (s *Snapshot) linkableTempDir() (string, bool) {
	s.probe.Do(func() {
		s.tempDir, s.linkable = os.TempDir(), true
		var sample string
		for _, e := range s.entries {
			if e.mode.IsRegular() {
				sample = filepath.Join(s.root, e.rel)
				break
			}
		}
		if sample == "" || s.canLink(sample, s.tempDir) {
			return
		}
		gitDir := filepath.Join(s.root, ".git")
		if fi, err := os.Stat(gitDir); err == nil && fi.IsDir() && s.canLink(sample, gitDir) {
			s.tempDir = gitDir
			return
		}
		s.linkable = false
	})
	return s.tempDir, s.linkable
}

// canLink reports whether file can be hard-linked into a new directory
// of dir.
func (s *Snapshot) canLink(file, dir string) bool {
	tmp, err := os.MkdirTemp(dir, "kustomize-deploy-probe-")
	if err != nil {
		return false
	}
	defer os.RemoveAll(tmp)
	return s.opts.link(file, filepath.Join(tmp, "probe")) == nil
}
