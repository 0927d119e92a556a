package action

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// A fork's pull request runs with a read-only token: its diff is
// computed, but neither the comment nor the statuses can be posted. So
// every pull request run writes a report file (writeReport), the PR
// workflow uploads it as an artifact, and a workflow_run workflow of the
// base repository downloads it and runs mode publish, which posts the
// comment and statuses with the base repository's token. Publish builds
// nothing, reaches no cluster and runs none of the fork's code; the
// report is the fork's word (the fork may edit the PR workflow), so:
// the pull request and commit come from GitHub's event, a report about
// another one is refused, the comment is rendered here from result data
// (escaped), and status contexts are made here from checked names.

// ModePublish posts the report of a finished pull request run (see
// action.yml, input report).
const ModePublish = "publish"

const (
	// reportVersion is the report file's format; publish refuses
	// another, so both workflows must use the same release.
	reportVersion = 1
	// maxReport bounds a report file, read or written.
	maxReport = 10 << 20
	// maxReportUnits bounds the units, and so the statuses, of a report.
	maxReportUnits = 1000
	// reportSuffix ends every report file's name, so a directory of
	// downloaded artifacts is read as every report in it.
	reportSuffix = ".report.json"
)

// prReport is the report file: what publish needs to post a pull
// request run's comment and statuses.
type prReport struct {
	Version     int    `json:"version"`
	PullRequest int    `json:"pullRequest"`
	HeadSHA     string `json:"headSha"`
	// Title and Marker are the comment's (see outcome).
	Title  string `json:"title"`
	Marker string `json:"marker"`
	// Clusters name each unit's cluster ("" for none): its status
	// context.
	Clusters map[string]string `json:"clusters"`
	// Results are the units' results, masked, diffs included (the
	// comment shows them): the result output's JSON with diffs.
	Results []*result.Result `json:"results"`
	// Config, of a configuration's run that failed before any unit had
	// a result (the configuration unreadable, a cluster unreachable), is
	// the configuration's path: the one result is the run's, and its
	// status context config:<Config>, as the run's own status would be.
	Config string `json:"config,omitempty"`
	// Reach says which units the change reached (see outcome.reach).
	Reach *result.Reach `json:"reach,omitempty"`
}

// writeReport writes the report of a pull request's diff run next to the
// diff file and returns its path relative to the workspace; "" for other
// runs or without a workspace. Results were masked by maskResult. A
// report over maxReport leaves diffs out, then entries.
func (r *runner) writeReport(rep outcome) string {
	if r.mode != result.ModeDiff || r.ev == nil || r.ev.PR == 0 || r.ev.WorkspaceDir == "" {
		return ""
	}
	var data []byte
	for _, shrink := range []func(*result.Result) *result.Result{func(r *result.Result) *result.Result { return r }, withoutDiffs, withoutEntries} {
		results := make([]*result.Result, len(rep.results))
		for i, res := range rep.results {
			results[i] = shrink(res)
		}
		var err error
		data, err = json.Marshal(prReport{
			Version: reportVersion, PullRequest: r.ev.PR, HeadSHA: r.ev.SHA,
			Title: rep.title, Marker: rep.marker, Clusters: rep.clusters, Results: results, Config: rep.config, Reach: rep.reach,
		})
		if err != nil {
			r.gha.Warningf("writing the report file: %v", err)
			return ""
		}
		if len(data) <= maxReport {
			break
		}
	}
	rel := diffDir + "/" + r.outcomeFile(rep) + reportSuffix
	path := filepath.Join(r.ev.WorkspaceDir, filepath.FromSlash(rel))
	err := os.MkdirAll(filepath.Dir(path), 0o755)
	if err == nil {
		err = os.WriteFile(path, data, 0o644) // masked by maskResult
	}
	if err != nil {
		r.gha.Warningf("writing the report file: %v", err)
		return ""
	}
	return rel
}

// writeFailureReport writes the report of a pull request's diff run that
// failed before any unit had a result (msg, masked, says why): one failed
// result, the unit's or the configuration's, so that publish posts the
// failure on a fork's pull request, whose own run cannot. "" for other
// runs, and when the run's name or configuration path is not one publish
// would take (the failure may be that very input).
func (r *runner) writeFailureReport(msg string) string {
	if r.mode != result.ModeDiff || r.ev == nil || r.ev.PR == 0 {
		return ""
	}
	res := &result.Result{Unit: r.in.Name, Mode: result.ModeDiff, Revision: r.revision(), Reason: reasonNoResult, Message: msg, Entries: []result.Entry{}}
	rep := outcome{results: []*result.Result{res}, title: r.in.unitLabel(), marker: marker("unit="+r.in.Name, r.in.cluster()), file: r.in.Name}
	if r.in.Config != "" {
		rep.config = strings.Trim(filepath.ToSlash(filepath.Clean(r.in.Config)), "/")
		if !configPath.MatchString(rep.config) {
			return ""
		}
		if res.Unit = nameFromPath(rep.config); res.Unit == "" {
			res.Unit = "config"
		}
		rep.title, rep.marker, rep.file = r.in.configLabel(rep.config), marker("config="+rep.config, r.in.cluster()), res.Unit
	}
	if inventory.ValidateName(res.Unit) != nil || (r.in.cluster() != "" && !clusterName.MatchString(r.in.cluster())) {
		return ""
	}
	rep.clusters = map[string]string{res.Unit: r.in.cluster()}
	return r.writeReport(rep)
}

// configPath is a configuration's path publish takes for a status
// context: ".", or relative, of plain segments (none "." or "..").
var configPath = regexp.MustCompile(`^(?:\.|\.?[A-Za-z0-9_-][A-Za-z0-9._-]*(?:/\.?[A-Za-z0-9_-][A-Za-z0-9._-]*){0,31})$`)

// publish is mode publish: it reads the report file(s) of the input
// report, checks them against the workflow_run event, and posts each
// one's comment and statuses. Nothing is posted unless every report
// holds up.
func (r *runner) publish(ctx context.Context) int {
	reports, err := readReports(r.reportPath())
	if err != nil {
		return r.fail(ctx, fmt.Errorf("input 'report': %w", err))
	}
	pr, sha, err := r.publishTarget(ctx)
	if errors.Is(err, errNoOpenPR) {
		r.gha.Warningf("%s: nothing to publish", r.masker.String(err.Error()))
		r.setOutputs(outputs{result: &result.Set{Mode: result.ModeDiff, Units: []*result.Result{}}})
		return exitOK
	}
	if err != nil {
		return r.fail(ctx, err)
	}
	for _, rp := range reports {
		if rp.rep.PullRequest != pr || rp.rep.HeadSHA != sha {
			return r.fail(ctx, fmt.Errorf("input 'report': %s is about pull request #%d at %s, but the run that finished (the workflow_run event) is of #%d at %s: refused, nothing posted",
				rp.name, rp.rep.PullRequest, short(rp.rep.HeadSHA), pr, short(sha)))
		}
	}
	r.ev.PR, r.ev.SHA = pr, sha
	if r.ev.Run.URL != "" {
		r.ev.RunURL = r.ev.Run.URL // the PR run's page: its summary has every diff
	}
	var all []*result.Result
	fctx, cancel := finalContext(ctx)
	defer cancel()
	for _, rp := range reports {
		o := outcome{results: rp.rep.Results, title: rp.rep.Title, marker: rp.rep.Marker, clusters: rp.rep.Clusters, reach: rp.rep.Reach}
		for _, res := range o.results {
			r.maskResult(res) // the token, should the report quote it
		}
		r.files.addSummary(r.summary(o, ""))
		r.gh.comment(fctx, o)
		for _, res := range o.results {
			state, desc := statusOf(res)
			name := res.Unit
			if rp.rep.Config != "" {
				name = "config:" + rp.rep.Config
			}
			r.gh.status(fctx, statusContext(o.clusters[res.Unit], name), state, desc)
		}
		r.notAffectedStatuses(fctx, o)
		all = append(all, o.results...)
		fmt.Fprintf(r.log, "published %s: pull request #%d at %s, %d unit(s)\n", rp.name, pr, short(sha), len(o.results))
	}
	r.gh.summariseOverflow(fctx, true)
	set := &result.Set{Mode: result.ModeDiff, Revision: sha, Units: all}
	r.setOutputs(outcome{results: all, set: set}.outputs(sha))
	return exitOK
}

// reportPath is the report input, relative to the workspace.
func (r *runner) reportPath() string {
	path := r.in.Report
	if !filepath.IsAbs(path) && r.ev.WorkspaceDir != "" {
		path = filepath.Join(r.ev.WorkspaceDir, path)
	}
	return path
}

// errNoOpenPR: the run's commit is no longer an open pull request's head
// (pushed again, closed): a later run publishes, or nobody needs to.
var errNoOpenPR = errors.New("no open pull request")

// publishTarget is the pull request and commit of the run that finished,
// as GitHub says: workflow_run.head_sha, and the pull request the event
// lists, or, as GitHub lists none for a fork's, the open pull request
// whose head is the run's branch of the run's head repository at that
// commit.
func (r *runner) publishTarget(ctx context.Context) (int, string, error) {
	run := r.ev.Run
	if run == nil {
		return 0, "", fmt.Errorf("mode publish runs on a workflow_run event (on: workflow_run, types: [completed]), not %s: the pull request and commit it posts on come from that event, never from the report", r.ev.Name)
	}
	if run.Event != "pull_request" && run.Event != "pull_request_target" {
		return 0, "", fmt.Errorf("mode publish: the run that finished was triggered by %q, not a pull request", run.Event)
	}
	for _, pr := range run.PRs {
		if pr.HeadSHA == "" || pr.HeadSHA == run.HeadSHA {
			return pr.Number, run.HeadSHA, nil
		}
	}
	if r.gh.client == nil {
		return 0, "", errors.New("mode publish needs github-token to find the pull request of a fork's run")
	}
	if run.HeadOwner == "" || run.HeadBranch == "" {
		return 0, "", errors.New("event payload: workflow_run names no head repository owner or branch, and no pull request")
	}
	prs, err := r.gh.client.OpenPullRequests(ctx, r.ev.Owner, r.ev.Repo, run.HeadOwner, run.HeadBranch)
	if err != nil {
		return 0, "", err
	}
	var found []int
	for _, pr := range prs {
		if pr.HeadSHA == run.HeadSHA {
			found = append(found, pr.Number)
		}
	}
	switch len(found) {
	case 0:
		return 0, "", fmt.Errorf("%w from %s:%s has head %s", errNoOpenPR, run.HeadOwner, run.HeadBranch, short(run.HeadSHA))
	case 1:
		return found[0], run.HeadSHA, nil
	}
	return 0, "", fmt.Errorf("open pull requests %v all have head %s:%s at %s: which one the run was of is not known", found, run.HeadOwner, run.HeadBranch, short(run.HeadSHA))
}

// namedReport is a report and the file it was read from.
type namedReport struct {
	name string
	rep  *prReport
}

// readReports reads the report file at path, or every *.report.json in
// the directory path (artifacts downloaded together, one per cluster).
func readReports(path string) ([]namedReport, error) {
	if path == "" {
		return nil, errors.New("required with mode publish: the report file of the pull request run (actions/download-artifact)")
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	files := []string{path}
	if info.IsDir() {
		if files, err = filepath.Glob(filepath.Join(path, "*"+reportSuffix)); err != nil {
			return nil, err
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("%s holds no *%s file", path, reportSuffix)
		}
	}
	var out []namedReport
	for _, f := range files {
		rep, err := readReport(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Base(f), err)
		}
		out = append(out, namedReport{name: filepath.Base(f), rep: rep})
	}
	return out, nil
}

// readReport reads one report file strictly: a regular file of at most
// maxReport bytes, one JSON object with no field this version does not
// know, then checkReport.
func readReport(path string) (*prReport, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxReport+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxReport {
		return nil, fmt.Errorf("larger than %d MB: not a report of this action", maxReport>>20)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var rep prReport
	if err := dec.Decode(&rep); err != nil {
		return nil, fmt.Errorf("not a report of this action: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("not a report of this action: data after the report")
	}
	if err := checkReport(&rep); err != nil {
		return nil, err
	}
	return &rep, nil
}

// checkCounts refuses a result whose counts are not its entries': the
// comment's table, "No changes" and the status say what the counts say,
// the lists what the entries say, and a forged report made them disagree
// (no deletion counted above a listed prune). A report leaves out all of
// a unit's entries (writeReport) or none: then the counts are all there
// is, and must add up to the entries left out.
func checkCounts(res *result.Result) error {
	for i, e := range res.Entries {
		switch e.Action {
		case result.Created, result.Configured, result.Unchanged, result.Deleted, result.Skipped, result.Failed:
		default:
			return fmt.Errorf("entries[%d]: action %q is not one a run takes", i, e.Action)
		}
	}
	c := res.Counts
	if min(c.Created, c.Configured, c.Unchanged, c.Deleted, c.Skipped, c.Failed, res.EntriesOmitted) < 0 {
		return errors.New("a negative count")
	}
	if res.EntriesOmitted > 0 {
		if len(res.Entries) > 0 {
			return fmt.Errorf("%d entries left out, and %d listed: a report leaves out all of a unit's entries or none", res.EntriesOmitted, len(res.Entries))
		}
		if sum := c.Created + c.Configured + c.Unchanged + c.Deleted + c.Skipped + c.Failed; sum != res.EntriesOmitted {
			return fmt.Errorf("its counts add up to %d, not to the %d entries left out", sum, res.EntriesOmitted)
		}
		return nil
	}
	counted := *res
	counted.Tally()
	if counted.Counts != c {
		return fmt.Errorf("its counts (%d created, %d configured, %d deleted, %d unchanged, %d skipped, %d failed) are not its entries' (%d, %d, %d, %d, %d, %d)",
			c.Created, c.Configured, c.Deleted, c.Unchanged, c.Skipped, c.Failed,
			counted.Counts.Created, counted.Counts.Configured, counted.Counts.Deleted, counted.Counts.Unchanged, counted.Counts.Skipped, counted.Counts.Failed)
	}
	return nil
}

var (
	// reportMarker is a marker as marker makes it: nothing in it ends
	// the HTML comment or starts markup.
	reportMarker = regexp.MustCompile(`^<!-- kustomize-deploy:(unit|config)=[^\s<>]{1,300}( cluster=[A-Za-z0-9._/:@-]{1,100})? -->$`)
	// clusterName is a cluster as Inputs.cluster makes it, or none.
	clusterName = regexp.MustCompile(`^[A-Za-z0-9._/:@-]{0,100}$`)
)

// checkReport refuses a report whose values are not what a pull
// request's diff run writes: the status contexts made from its names
// stay under kustomize-deploy/, the marker is one of ours, and the
// counts are the entries' (checkCounts).
func checkReport(rep *prReport) error {
	if rep.Version != reportVersion {
		return fmt.Errorf("format version %d, this release reads %d: use the same release of the action in the pull request workflow and in the publish workflow", rep.Version, reportVersion)
	}
	if rep.PullRequest < 1 || !commitID.MatchString(rep.HeadSHA) {
		return errors.New("no pull request number or head commit")
	}
	if !reportMarker.MatchString(rep.Marker) {
		return fmt.Errorf("marker %q is not a kustomize-deploy comment marker", rep.Marker)
	}
	if len(rep.Title) > 300 || strings.ContainsAny(rep.Title, "\r\n") {
		return errors.New("title is not one line of at most 300 bytes")
	}
	if len(rep.Results) == 0 || len(rep.Results) > maxReportUnits {
		return fmt.Errorf("%d results, want 1 to %d", len(rep.Results), maxReportUnits)
	}
	if rep.Config != "" && (len(rep.Config) > 255 || !configPath.MatchString(rep.Config) || len(rep.Results) != 1) {
		return fmt.Errorf("config %q is not a configuration's path of a run's one result", rep.Config)
	}
	units := map[string]bool{}
	for i, res := range rep.Results {
		switch {
		case res == nil:
			return fmt.Errorf("results[%d] is null", i)
		case res.Mode != result.ModeDiff:
			return fmt.Errorf("unit %q: mode %q, a pull request's report is of mode diff", res.Unit, res.Mode)
		case inventory.ValidateName(res.Unit) != nil: // as every unit's: its status context stays under kustomize-deploy/
			return fmt.Errorf("results[%d]: unit name %q is not a unit name", i, res.Unit)
		case units[res.Unit]:
			return fmt.Errorf("unit %q appears twice", res.Unit)
		}
		units[res.Unit] = true
		if err := checkCounts(res); err != nil {
			return fmt.Errorf("unit %q: %w", res.Unit, err)
		}
	}
	for unit, c := range rep.Clusters {
		if !units[unit] {
			return fmt.Errorf("clusters names unit %q, which has no result", unit)
		}
		if !clusterName.MatchString(c) {
			return fmt.Errorf("unit %q: cluster %q is not a cluster name", unit, c)
		}
	}
	return nil
}
