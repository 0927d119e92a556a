package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// The PR-review rows of the home-ops scenario (issue 34): a pull request
// changing one app's file, diffed offline against its base as the Action
// does without cluster access, once rendering every unit (--all-units: both
// commits, every unit) and once rendering only what the change reaches.
// The second must render one unit, give that unit the same diff, and
// take at most reviewRatioLimit of the first and reviewLimit.
const (
	reviewLimit      = 1 * time.Second
	reviewRatioLimit = 0.1
)

// reviewResult is the PR-review rows' measurements.
type reviewResult struct {
	// All renders every unit; Reached only what the change reaches.
	All, Reached measurement
	// Rendered of Units is what Reached rendered (its result's reach).
	Rendered, Units int
}

// runReview writes another copy of the layout, commits a change of one
// app's objects on top of it, and diffs it offline against its base.
func (h *homeRun) runReview(ctx context.Context, res *homeResult) error {
	l := newHomeLayout("kdr")
	config, err := l.Write(ctx, filepath.Join(h.work, "home-ops-review"), h.wait)
	if err != nil {
		return err
	}
	root := filepath.Join(h.work, "home-ops-review")
	app := l.App(3, 4)
	file := filepath.Join(root, "kubernetes/apps", l.Namespace(3), app, "app/objects.yaml")
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	if err := os.WriteFile(file, []byte(strings.Replace(string(data), "port: 80\n", "port: 81\n", 1)), 0o644); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "git", "-c", "user.email=bench@example.com", "-c", "user.name=bench", "-c", "commit.gpgsign=false", "commit", "-qam", "one app's port")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git commit in %s: %w\n%s", root, err, out)
	}
	rev := &reviewResult{}
	res.Review = rev
	t := tool{name: toolOurs, bin: h.ours.bin, keepStdout: true}
	args := []string{"diff", "--config", config, "--offline", "--base", "HEAD~1", "--output", "json"}
	what := fmt.Sprintf("PR review, offline diff of a one-file change, %d units", 1+l.Apps())
	for _, run := range []struct {
		m     *measurement
		extra []string
		title string
		log   string
	}{
		{&rev.All, []string{"--all-units"}, what + ", every unit rendered", "home-review-all.log"},
		{&rev.Reached, nil, what + ", what the change reaches", "home-review-reached.log"},
	} {
		*run.m = measure(ctx, t, append(args, run.extra...), exitZero, h.home, filepath.Join(h.logs, run.log), h.timeout)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		h.progress("home-ops %-60s %8s  CPU %8s  peak RSS %4d MB", run.title, fmtDuration(run.m.Wall), fmtDuration(run.m.CPU), run.m.MaxRSS>>20)
		if run.m.Err == nil {
			run.m.Err = checkReview(run.m.Stdout, app, run.extra != nil, 1+l.Apps(), rev)
		}
		if run.m.Err != nil {
			h.progress("  FAILED: %v", run.m.Err)
			h.rep.note("home-ops: %s: %v", run.title, run.m.Err)
		}
	}
	return nil
}

// checkReview checks a PR-review diff's JSON result: app configured, no
// other unit changed; rendering every unit, all units there; else one.
func checkReview(stdout []byte, app string, all bool, units int, rev *reviewResult) error {
	var set result.Set
	if err := json.Unmarshal(stdout, &set); err != nil {
		return fmt.Errorf("reading the JSON result: %w", err)
	}
	var errs []error
	for _, r := range set.Units {
		c := r.Counts
		switch {
		case r.Failed():
			errs = append(errs, fmt.Errorf("unit %s failed: %s", r.Unit, r.Message))
		case r.Unit == app && c.Configured != 1:
			errs = append(errs, fmt.Errorf("unit %s: %+v, want 1 configured", r.Unit, c))
		case r.Unit != app && c.Created+c.Configured+c.Deleted > 0:
			errs = append(errs, fmt.Errorf("unit %s changed: %+v", r.Unit, c))
		}
	}
	switch {
	case all && (len(set.Units) != units || set.Reach != nil):
		errs = append(errs, fmt.Errorf("%d units diffed, want %d", len(set.Units), units))
	case !all && (set.Reach == nil || set.Reach.Rendered != 1 || len(set.Units) != 1):
		errs = append(errs, fmt.Errorf("%d units diffed (reach %+v), want 1", len(set.Units), set.Reach))
	case !all:
		rev.Rendered, rev.Units = set.Reach.Rendered, set.Reach.Units
	}
	return errors.Join(errs...)
}

// reviewRows are the PR-review rows of the home-ops table, and its
// target.
func (r *report) reviewRows(b *strings.Builder) {
	h := r.Home
	if h == nil || h.Review == nil {
		return
	}
	rev := h.Review
	fmt.Fprintf(b, "| PR review: offline diff of a one-file change, every unit rendered (`--all-units`) | %s | %s | %s | – |\n", cellOf(rev.All), cpu(rev.All), rss(rev.All))
	fmt.Fprintf(b, "| PR review: the same, rendering only what the change reaches (%d of %d units) | %s | %s | %s | – |\n", rev.Rendered, rev.Units, cellOf(rev.Reached), cpu(rev.Reached), rss(rev.Reached))
}

// reviewTarget is the PR-review target's row.
func (r *report) reviewTarget(b *strings.Builder) {
	target := fmt.Sprintf("PR review, offline diff of a one-file change ≤ %.1f× rendering every unit, and ≤ %s", reviewRatioLimit, fmtDuration(reviewLimit))
	h := r.Home
	if h == nil || h.Review == nil || h.Review.All.Err != nil || h.Review.Reached.Err != nil || h.Review.All.Wall <= 0 {
		fmt.Fprintf(b, "| %s | not measured | – |\n", target)
		return
	}
	rev := h.Review
	x := ratio(rev.Reached.Wall, rev.All.Wall)
	fmt.Fprintf(b, "| %s | %.3f× (%s vs %s; CPU %s vs %s) | %s |\n", target, x, fmtDuration(rev.Reached.Wall), fmtDuration(rev.All.Wall),
		cpu(rev.Reached), cpu(rev.All), yesNo(x <= reviewRatioLimit && rev.Reached.Wall <= reviewLimit))
}
