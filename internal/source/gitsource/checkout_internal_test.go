package gitsource

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/kustomize-deploy/kustomize-deploy/internal/gittest"
)

// The checkout takes the fetch's context: a git bomb checked out within
// generous limits still ends when its context does, as the fetch ends
// (go-git's own checkout takes none, and ran on past the fetch's bound).
func TestCheckoutEndsWithItsContext(t *testing.T) {
	srv := gittest.NewServer(t)
	r := srv.Repo("bomb")
	head := r.Bomb(10, 5, 16)
	repo, err := git.PlainOpen(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	c, err := repo.CommitObject(plumbing.NewHash(head))
	if err != nil {
		t.Fatal(err)
	}
	store := repo.Storer.(*filesystem.Storage)
	ctx, cancel := context.WithCancel(t.Context())
	dir := t.TempDir()
	// Cancelled once the checkout has written a few hundred entries.
	go func() {
		defer cancel()
		for {
			entries, _ := os.ReadDir(dir + "/e00/e00/e00/e00")
			if len(entries) >= 3 {
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	err = checkout(ctx, store, c, dir, Limits{Files: 1 << 30, Bytes: 1 << 40, FileBytes: 1 << 20})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want the context's", err)
	}
}
