// Package paths answers the one question every step that reads the
// repository asks: does this path stay inside the root?
package paths

import (
	"path/filepath"
	"strings"
)

// Within reports whether p is root or below it, and returns p relative to
// root. Both are cleaned first; symlinks are not resolved (callers resolve
// them before asking).
func Within(root, p string) (string, bool) {
	rel, err := filepath.Rel(filepath.Clean(root), filepath.Clean(p))
	if err != nil || Escapes(rel) {
		return "", false
	}
	return rel, true
}

// Escapes reports whether the clean relative path rel leaves its base.
func Escapes(rel string) bool {
	return filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
