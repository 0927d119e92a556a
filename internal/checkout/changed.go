package checkout

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Changed lists the files of the work tree at dir (a directory of it: the
// paths are relative to it, slash-separated, and limited to it) that
// differ from commit rev: committed since, modified, deleted, and new
// files not ignored. A rename lists both paths. What a pull request's
// head changed since its base, whether committed or not.
func Changed(ctx context.Context, dir, rev string) ([]string, error) {
	if _, err := Git(ctx, dir, "cat-file", "-e", rev+"^{commit}"); err != nil {
		return nil, fmt.Errorf("commit %s %w", Short(rev), ErrMissing)
	}
	diff, err := Git(ctx, dir, "-c", "core.quotePath=false", "diff", "--name-only", "--no-renames", "--relative", "-z", rev, "--")
	if err != nil {
		return nil, err
	}
	untracked, err := Git(ctx, dir, "-c", "core.quotePath=false", "ls-files", "--others", "--exclude-standard", "-z", "--", ".")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, list := range []string{diff, untracked} {
		for _, f := range strings.Split(list, "\x00") {
			if f != "" {
				out = append(out, f)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
