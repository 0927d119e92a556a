package action

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/sethvargo/go-githubactions"

	"github.com/kustomize-deploy/kustomize-deploy/internal/checkout"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/mask"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// Env is everything the action takes from the runner.
type Env struct {
	Getenv func(string) string
	// Stdout receives workflow commands (::add-mask::, ::group::, ...) and
	// logs. What the action prints itself is masked first.
	Stdout io.Writer
	// HTTPClient talks to the GitHub API; nil means internal/github's
	// default (each attempt bounded, retries on 5xx and rate limits).
	HTTPClient *http.Client
	// CloudClient talks to key services and clouds (Vault, Google, Azure)
	// for a unit of its own; nil means each client's default.
	CloudClient *http.Client
	// TempDir receives the kubeconfig written from the input and the PR
	// base's worktree; empty means os.TempDir(). The command gives it
	// RUNNER_TEMP when it exists (the binary runs on the runner, which
	// empties it when the job ends).
	TempDir string
	// Requests, if set, counts the requests sent to the clusters (the
	// command tells from it whether anything was written when a signal
	// comes).
	Requests *kube.RequestCounter
}

// Exit codes, as the CLI's.
const (
	exitOK   = 0
	exitFail = 1
)

// finalTimeout bounds the final commit status and PR comment. They use a
// context detached from the run's, which a cancelled job ends: a status
// left "pending" would block the PR for ever.
const finalTimeout = 30 * time.Second

// runner is one action run: the runner's world (environment, workflow
// commands, the masked log, file commands, worktrees of other commits),
// then what setup found in it (inputs, event, mode, GitHub). Nothing is
// changed after setup: what a run produces is returned (an outcome) and
// handed to report.
type runner struct {
	env    Env
	gha    *githubactions.Action
	log    *mask.Writer // masked
	masker *mask.Masker
	files  *fileCommands
	// revs holds the worktrees of other commits (the PR base) that diffs
	// render.
	revs *checkout.Worktrees

	in   Inputs
	ev   *event
	mode result.Mode
	gh   *ghReporter
	// pruneAllowed lifts the prune budget: force-prune, or the PR's label
	// (for a push, the label of the PR that merged the commit).
	pruneAllowed bool
}

// Run is `kustomize-deploy action`: it reads the inputs and the event,
// runs the unit (or the configuration's units) in the mode the event
// calls for, and reports through outputs, the job summary, a sticky PR
// comment, commit statuses and, of a drift check, an issue per drifted
// unit.
//
// Every step output is set whatever happens, failures included, and a
// panic ends the run as a failure with its outputs and final status set.
func Run(ctx context.Context, env Env) (code int) {
	m := mask.New()
	// Workflow commands (::add-mask:: as units of a configuration decrypt
	// values at once) and log lines share the job's output: one writer,
	// one write at a time.
	out := &lockedWriter{w: env.Stdout}
	gha := githubactions.New(githubactions.WithGetenv(env.Getenv), githubactions.WithWriter(out))
	r := &runner{
		env:    env,
		gha:    gha,
		masker: m,
		log:    m.Writer(out),
		files:  &fileCommands{getenv: env.Getenv, gha: gha},
		revs:   &checkout.Worktrees{TempDir: env.TempDir},
	}
	defer r.log.Flush()
	defer r.revs.Close()
	defer func() {
		if p := recover(); p != nil {
			code = r.fail(ctx, fmt.Errorf("internal error: %v", p))
		}
	}()
	if err := r.setup(ctx); err != nil {
		return r.fail(ctx, err)
	}
	if r.in.Mode == ModePublish {
		return r.publish(ctx)
	}
	var o outcome
	var err error
	if r.in.Config != "" {
		o, err = r.runConfig(ctx)
	} else {
		o, err = r.runUnit(ctx)
	}
	if err != nil {
		return r.fail(ctx, err)
	}
	r.report(ctx, o)
	if !o.ready || (o.drifted && r.in.FailOnDrift) {
		return exitFail
	}
	return exitOK
}

// setup reads the inputs and the event, picks the mode, connects to
// GitHub and decides whether prunes over the budget are allowed. What it
// could read before failing stays on r, for fail to report with.
func (r *runner) setup(ctx context.Context) error {
	in, err := readInputs(r.gha)
	r.in = in
	r.maskValues(in.GitHubToken)
	if err != nil {
		// A pull request's diff that fails on its inputs still writes
		// its report (see fail): what publish posts on a fork's PR.
		if ev, everr := readEvent(r.gha); everr == nil && in.Mode != ModePublish {
			if mode, merr := resolveMode(in.Mode, ev.Name); merr == nil {
				r.ev, r.mode = ev, mode
			}
		}
		return err
	}
	if r.ev, err = readEvent(r.gha); err != nil {
		return err
	}
	if in.Mode == ModePublish { // what it publishes: a pull request's diff
		r.mode = result.ModeDiff
		r.gh = newGHReporter(r.env, r.gha, r.log, r.masker, in, r.ev, r.mode)
		return nil
	}
	if r.mode, err = resolveMode(in.Mode, r.ev.Name); err != nil {
		return err
	}
	r.maskValues(in.SopsAgeKey, in.SopsPGPKey)
	r.gh = newGHReporter(r.env, r.gha, r.log, r.masker, in, r.ev, r.mode)
	if in.Mode == ModeAuto && r.ev.Name == "pull_request_target" {
		if err := checkPullRequestTarget(r.ev, r.checkedOut(ctx)); err != nil {
			return err
		}
	}
	r.pruneAllowed = r.allowPrune(ctx)
	return nil
}

// fail ends a run that produced no result: an error annotation, the
// outputs of a failed run, the report of a pull request's diff (for
// publish to post the failure on a fork's pull request) and a final
// "error" status on every status left pending (else one for the run).
func (r *runner) fail(ctx context.Context, err error) int {
	msg := r.masker.String(err.Error())
	r.log.Flush()
	r.gha.Errorf("%s", msg)
	var out any = &result.Result{Unit: r.in.Name, Mode: r.mode, Revision: r.revision(), Message: msg, Entries: []result.Entry{}}
	failed := r.in.Name
	if r.in.Config != "" {
		out, failed = &result.Set{Mode: r.mode, Revision: r.revision(), Units: []*result.Result{}}, ""
	}
	o := outputs{result: out, revision: r.revision(), reason: reasonNoResult, failedUnits: failed}
	if r.in.Mode != ModePublish {
		o.reportFile = r.writeFailureReport(msg)
	}
	r.setOutputs(o)
	// A publish run that failed posts nothing: its event's commit is the
	// base branch's, and a report it refused is no one's word.
	if r.gh != nil && r.in.Mode != ModePublish {
		fctx, cancel := finalContext(ctx)
		defer cancel()
		r.gh.failPending(fctx, r.in.runStatusContext(), firstLine(msg))
	}
	return exitFail
}

// finalContext is the context of the final status and comment: it lives
// on when ctx is cancelled, for at most finalTimeout.
func finalContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), finalTimeout)
}

func (r *runner) revision() string {
	if r.ev == nil {
		return ""
	}
	return r.ev.SHA
}

// maskValues registers values as secret with the runner and our own writer.
func (r *runner) maskValues(values ...string) {
	for _, v := range r.masker.Add(values...) {
		r.gha.AddMask(v)
	}
}

// runUnit runs the unit in the run's mode and returns what to report.
func (r *runner) runUnit(ctx context.Context) (outcome, error) {
	if r.mode != result.ModeDrift { // a drift check's status goes on the commit the cluster runs, known later
		r.gh.status(ctx, r.in.statusContext(), "pending", fmt.Sprintf("%s of %s running", r.mode, r.in.unitLabel()))
	}
	res, err := r.runMode(ctx)
	if res == nil {
		if err == nil {
			err = errors.New("no result")
		}
		return outcome{}, err
	}
	return outcome{
		results: []*result.Result{res}, title: r.in.unitLabel(), marker: marker("unit="+r.in.Name, r.in.cluster()), file: r.in.Name,
		clusters: map[string]string{res.Unit: r.in.cluster()},
		ready:    res.Ready, drifted: res.Drifted,
	}, nil
}

// outcome is what a run shows: one unit's result, or every unit's of a
// configuration.
// notAffectedStatuses gives each unit the change does not reach (see
// outcome.reach) a successful status: a required check of it passes.
func (r *runner) notAffectedStatuses(ctx context.Context, rep outcome) {
	if rep.reach == nil {
		return
	}
	for _, name := range rep.reach.NotAffectedUnits {
		r.gh.status(ctx, statusContext(rep.clusters[name], name), "success", "not affected by this change: not rendered")
	}
}

type outcome struct {
	results []*result.Result
	// title names the run for people: the unit or the configuration, and
	// the cluster.
	title string
	// marker finds the sticky PR comment again.
	marker string
	// file names the diff file (without .diff).
	file string
	// set, for a configuration, writes the diff file as the CLI's text.
	set *result.Set
	// clusters name each unit's cluster, "" when the run names none: its
	// commit status context and drift issue are per unit and cluster.
	clusters map[string]string
	// ready: every unit succeeded; drifted: some unit drifted.
	ready, drifted bool
	// config, of a configuration's run that failed before any unit had a
	// result, is the configuration (see prReport.Config).
	config string
	// reach, of a diff against the PR base, says which units the change
	// reaches (the others were not rendered); nil when every unit was.
	reach *result.Reach
}

// outputs are the step outputs of o.
func (o outcome) outputs(revision string) outputs {
	if o.set != nil {
		objects := 0
		for _, res := range o.set.Units {
			objects += objectCount(res)
		}
		return outputs{result: o.set, changed: o.set.Changed(), drifted: o.drifted, revision: revision, objects: objects,
			reason: reasonOutput(o.set.Units), failedUnits: failedUnitsOutput(o.set.Units)}
	}
	res := o.results[0]
	return outputs{result: res, changed: res.Changed(), drifted: o.drifted, revision: res.Revision, objects: objectCount(res),
		reason: reasonOutput(o.results), failedUnits: failedUnitsOutput(o.results)}
}

// report renders a run everywhere: annotations, outputs, summary, comment,
// statuses and, of a drift check, drift issues. What goes to GitHub
// outlives a cancelled run.
func (r *runner) report(ctx context.Context, rep outcome) {
	for _, res := range rep.results {
		r.maskResult(res)
		r.annotate(res)
	}
	out := rep.outputs(r.revision())
	out.diffFile = r.writeDiffFile(rep)
	out.reportFile = r.writeReport(rep)
	r.setOutputs(out)
	r.files.addSummary(r.summary(rep, out.diffFile))
	fctx, cancel := finalContext(ctx)
	defer cancel()
	if r.in.Mode != ModeTest { // a test's verdicts are the summary's and the statuses'
		r.gh.comment(fctx, rep)
	}
	for _, res := range rep.results {
		name := statusContext(rep.clusters[res.Unit], res.Unit)
		if r.mode == result.ModeDrift {
			state, desc := driftStatus(res)
			r.gh.statusOn(fctx, r.gh.driftStatusSHA(res), name, state, desc)
			continue
		}
		state, desc := statusOf(res)
		r.gh.status(fctx, name, state, desc)
	}
	r.notAffectedStatuses(fctx, rep)
	r.gh.summariseOverflow(fctx, true)
	if r.mode != result.ModeDrift {
		return
	}
	ictx, cancelIssues := finalContext(ctx)
	defer cancelIssues()
	for _, res := range rep.results {
		r.gh.driftIssue(ictx, res, rep.clusters[res.Unit])
	}
}

// maskResult masks the texts of res in place, before anything renders
// them: markdown backslash-escapes & and \ in a message quoting a value,
// which a masker run over the rendered comment would no longer find.
// Diffs are not masked by value: the engine masked what came from a
// secret in them, and the rest is Git's text, shown as it is (a word a
// Secret also holds included). Everything rendered from res (outputs,
// summary, comment, diff file, drift issue) is therefore not masked by
// value again; the log still is, and so are texts made of anything else.
func (r *runner) maskResult(res *result.Result) {
	res.MaskTexts(r.masker.String)
}

// outputs are the step outputs (see action.yml).
type outputs struct {
	result           any // *result.Result, or *result.Set of a configuration
	changed, drifted bool
	revision         string
	objects          int
	diffFile         string // relative to the workspace, "" without a diff
	reportFile       string // relative to the workspace, "" but for a pull request's diff
	reason           string
	failedUnits      string // comma-separated
}

// setOutputs sets every step output.
func (r *runner) setOutputs(o outputs) {
	r.files.setOutput("result", resultOutput(o.result)) // masked by maskResult
	r.files.setOutput("changed", strconv.FormatBool(o.changed))
	r.files.setOutput("drifted", strconv.FormatBool(o.drifted))
	r.files.setOutput("revision", o.revision)
	r.files.setOutput("objects", strconv.Itoa(o.objects))
	r.files.setOutput("diff-file", o.diffFile)
	r.files.setOutput("report-file", o.reportFile)
	r.files.setOutput("reason", o.reason)
	r.files.setOutput("failed-units", o.failedUnits)
}

// annotate turns failed entries, and the files a failed build or
// substitution names (res.FileErrors), into error annotations on the file
// and line that caused them (shown in a pull request's Files tab), and a
// failed run into one more naming its reason.
func (r *runner) annotate(res *result.Result) {
	for _, fe := range res.FileErrors {
		fields := map[string]string{"file": fe.File, "title": r.masker.String(fmt.Sprintf("%s in %s", res.Reason, res.Unit))}
		if fe.Line > 0 {
			fields["line"] = strconv.Itoa(fe.Line)
		}
		r.gha.WithFieldsMap(fields).Errorf("%s", r.masker.String(fe.Message))
	}
	files := map[string][]byte{}
	for _, e := range res.Entries {
		if e.Action != result.Failed {
			continue
		}
		a := r.gha
		if e.Source != "" {
			fields := map[string]string{"file": e.Source}
			if line := r.lineOf(files, e); line > 0 {
				fields["line"] = strconv.Itoa(line)
			}
			a = r.gha.WithFieldsMap(fields)
		}
		a.Errorf("%s", r.masker.String(e.Reason))
	}
	if !res.Ready {
		r.gha.Errorf("%s", r.masker.String(fmt.Sprintf("%s: %s: %s", res.Unit, res.Reason, res.Message)))
	}
}

// objectCount is the number of objects in the desired state.
func objectCount(res *result.Result) int {
	n := 0
	for _, e := range res.Entries {
		if e.Stage != result.StagePrune {
			n++
		}
	}
	return n
}

// checkedOut is the commit checked out where the unit lives, "" if that
// is not a git work tree.
func (r *runner) checkedOut(ctx context.Context) string {
	dir := r.spec().Path
	if dir == "" {
		dir = r.ev.WorkspaceDir
	}
	head, err := gitOutput(ctx, dir, "rev-parse", "HEAD")
	if err != nil {
		return ""
	}
	return head
}

func firstLine(s string) string {
	for i, c := range s {
		if c == '\n' {
			return s[:i]
		}
	}
	return s
}

// lockedWriter serializes writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// lineOf is the line of e's object in its file (read once into files),
// 0 when the file does not hold it as written (a generator's, a chart's).
func (r *runner) lineOf(files map[string][]byte, e result.Entry) int {
	data, ok := files[e.Source]
	if !ok {
		path := e.Source
		if !filepath.IsAbs(path) {
			path = filepath.Join(r.ev.WorkspaceDir, path)
		}
		data, _ = os.ReadFile(path) // no file, no line
		files[e.Source] = data
	}
	return object.Line(data, e.Object)
}
