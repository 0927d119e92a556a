package gitsource_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/gittest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/fetch"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/gitsource"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/sourcetest"
)

// A repository of a few hundred bytes that checks out to a million files
// (one tree named ten times per level), or holding one huge file of
// zeros, fails at the limit it crosses, naming it, with nothing of the
// tree left; the memory the fetch takes stays far below what the tree
// would make.
func TestFetchLimits(t *testing.T) {
	srv := gittest.NewServer(t)
	bomb := srv.Repo("bomb")
	bomb.Bomb(10, 5, 16) // 10^6 files of 16 bytes
	large := srv.Repo("large")
	large.Large("zeros.bin", 64<<20)
	for _, tc := range []struct {
		name   string
		url    string
		limits gitsource.Limits
		want   string
		limit  string
	}{
		{"a git bomb: files", bomb.URL, gitsource.Limits{Files: 1000}, "the tree holds more than 1000 files and directories (the limit)", "files"},
		{"a git bomb: bytes", bomb.URL, gitsource.Limits{Bytes: 4096}, "the tree's files add up to more than 4096 bytes (the limit)", "bytes"},
		// Refused as the pack arrives: go-git would hold it whole.
		{"a huge blob", large.URL, gitsource.Limits{FileBytes: 1 << 20}, "the fetched pack holds a blob of 67108864 bytes, more than 1048576 bytes (the limit of one file)", "object bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "tree")
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := gitsource.Fetch(t.Context(), gitsource.Options{URL: tc.url, Dir: dir, Limits: tc.limits})
			runtime.ReadMemStats(&after)
			var le *gitsource.LimitError
			if !errors.As(err, &le) || le.Limit != tc.limit || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want a limit of %s: %q", err, tc.limit, tc.want)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("the tree of a failed fetch is left: %v", err)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 48<<20 {
				t.Errorf("the fetch allocated %d MiB", alloc>>20)
			}
		})
	}
}

// A GitRepository's URL that is a local path or file:// (another job's
// checkout on the runner) is refused by name before anything is read,
// as is git://; Flux fetches http, https and ssh only.
func TestFetchRefusesLocalURLs(t *testing.T) {
	srv := gittest.NewServer(t)
	r := srv.Repo("local")
	r.Commit("one", map[string]string{"secret.txt": "another job's file"})
	rel, err := filepath.Rel(mustGetwd(t), r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"file://" + r.Dir, r.Dir, rel, "./" + rel, "git://127.0.0.1/local"} {
		dir := filepath.Join(t.TempDir(), "tree")
		_, err := gitsource.Fetch(t.Context(), gitsource.Options{URL: u, Dir: dir})
		if err == nil || !strings.Contains(err.Error(), "http, https") {
			t.Errorf("%s: %v, want a refusal naming http, https and ssh", u, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "secret.txt")); err == nil {
			t.Errorf("%s: the repository was read", u)
		}
	}
}

func mustGetwd(t *testing.T) string {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}

// A server's answer to a failed request is never quoted: what an
// internal service behind it said would land in the PR comment.
func TestFetchErrorBodyNotQuoted(t *testing.T) {
	const body = "INTERNAL-METADATA-aws-secret-4f1e"
	for _, code := range []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusInternalServerError} {
		_, err := gitsource.Fetch(t.Context(), gitsource.Options{URL: sourcetest.Failing(t, code, body) + "/fleet", Dir: filepath.Join(t.TempDir(), "tree")})
		if err == nil || strings.Contains(err.Error(), body) {
			t.Errorf("%d: %v", code, err)
		}
	}
}

// A public Git host that redirects to an internal address (a cloud's
// metadata service, a neighbour on the runner's network) is refused
// before anything is sent there.
func TestFetchRedirectToInternalRefused(t *testing.T) {
	internal, hits := sourcetest.Internal(t)
	public := sourcetest.Redirecting(t, internal)
	sourcetest.Public(t, public)
	_, err := gitsource.Fetch(t.Context(), gitsource.Options{URL: public + "/fleet", Dir: filepath.Join(t.TempDir(), "tree")})
	var re *fetch.RedirectError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "to an internal address") {
		t.Fatalf("error %v, want a refused redirect", err)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the internal address was sent %d requests", n)
	}
}

// A Git server that never answers ends the fetch at its deadline.
func TestFetchSilentServer(t *testing.T) {
	_, err := gitsource.Fetch(t.Context(), gitsource.Options{URL: sourcetest.Silent(t) + "/fleet", Dir: filepath.Join(t.TempDir(), "tree"), Timeout: 100 * time.Millisecond})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want the deadline", err)
	}
}
