// Command release-gate refuses a release unless the tagged commit is on
// main and the CI workflow passed for it (see internal/release).
// .github/workflows/release.yml runs it before anything is published.
// The token comes from GITHUB_TOKEN, the API from GITHUB_API_URL.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"

	"github.com/kustomize-deploy/kustomize-deploy/internal/release"
)

func main() {
	g := release.DefaultCIGate()
	root := flag.String("root", ".", "the repository's work tree")
	mainRef := flag.String("main", "origin/main", "the main branch's ref in --root")
	flag.StringVar(&g.Commit, "commit", "", "the commit to release (full SHA)")
	flag.StringVar(&g.Repository, "repository", os.Getenv("GITHUB_REPOSITORY"), "<owner>/<name> whose Actions runs are read")
	flag.StringVar(&g.Workflow, "workflow", g.Workflow, "the CI workflow's file name")
	flag.DurationVar(&g.Wait, "wait", g.Wait, "how long to wait for a CI run still queued or in progress")
	flag.Parse()
	g.APIURL, g.Token = os.Getenv("GITHUB_API_URL"), os.Getenv("GITHUB_TOKEN")
	if g.APIURL == "" {
		g.APIURL = "https://api.github.com"
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, g, *root, *mainRef); err != nil {
		fmt.Fprintln(os.Stderr, "release-gate:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, g release.CIGate, root, mainRef string) error {
	if g.Commit == "" || g.Repository == "" {
		return fmt.Errorf("--commit and --repository are required")
	}
	if err := release.CheckOnMain(ctx, root, g.Commit, mainRef); err != nil {
		return err
	}
	fmt.Printf("%s is on %s; waiting up to %s for workflow %s to pass for it\n", g.Commit, mainRef, g.Wait, g.Workflow)
	if err := g.WaitForCI(ctx); err != nil {
		return err
	}
	fmt.Printf("workflow %s passed for %s\n", g.Workflow, g.Commit)
	return nil
}
