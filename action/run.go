package action

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/sethvargo/go-githubactions"

	"github.com/kustomize-deploy/kustomize-deploy/internal/mask"
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
	// TempDir receives the kubeconfig written from the input and the PR
	// base's worktree; empty means os.TempDir(). Never RUNNER_TEMP: a
	// container action sees it only on recent runners, and the
	// container's own temp dir keeps credentials off the runner's disk.
	TempDir string
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

// runner is one action run.
type runner struct {
	env    Env
	gha    *githubactions.Action
	log    *mask.Writer // masked
	masker *mask.Masker
	in     Inputs
	ev     *event
	mode   result.Mode
	gh     *ghReporter
	drift  bool
	// fileWarned records the file commands already reported unwritable.
	fileWarned map[string]bool
}

// Run is `kustomize-deploy action`: it reads the inputs and the event,
// runs the unit in the mode the event calls for, and reports through
// outputs, the job summary, a sticky PR comment and a commit status.
//
// Every step output is set whatever happens, failures included, and a
// panic ends the run as a failure with its outputs and final status set.
func Run(ctx context.Context, env Env) (code int) {
	m := mask.New()
	r := &runner{
		env:    env,
		gha:    githubactions.New(githubactions.WithGetenv(env.Getenv), githubactions.WithWriter(env.Stdout)),
		masker: m,
		log:    m.Writer(env.Stdout),
	}
	defer r.log.Flush()
	defer func() {
		if p := recover(); p != nil {
			code = r.fail(ctx, fmt.Errorf("internal error: %v", p))
		}
	}()
	res, err := r.run(ctx)
	if err != nil {
		return r.fail(ctx, err)
	}
	if !res.Ready || (r.drift && r.in.FailOnDrift) {
		return exitFail
	}
	return exitOK
}

// fail ends a run that produced no result: an error annotation, the
// outputs of a failed run and a final "error" status.
func (r *runner) fail(ctx context.Context, err error) int {
	msg := r.masker.String(err.Error())
	r.log.Flush()
	r.gha.Errorf("%s", msg)
	r.setOutputs(&result.Result{Unit: r.in.Name, Mode: r.mode, Revision: r.revision(), Message: msg, Entries: []result.Entry{}}, "")
	if r.gh != nil {
		fctx, cancel := finalContext(ctx)
		defer cancel()
		r.gh.status(fctx, "error", firstLine(msg))
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

func (r *runner) run(ctx context.Context) (*result.Result, error) {
	in, err := readInputs(r.gha)
	if err != nil {
		return nil, err
	}
	r.in = in
	r.maskValues(in.GitHubToken)
	if r.ev, err = readEvent(r.gha); err != nil {
		return nil, err
	}
	if r.mode, err = resolveMode(in.Mode, r.ev.Name); err != nil {
		return nil, err
	}
	r.maskValues(in.SopsAgeKey)
	r.gh = newGHReporter(r)
	if in.Mode == ModeAuto && r.ev.Name == "pull_request_target" {
		if err := checkPullRequestTarget(r.ev, r.checkedOut(ctx)); err != nil {
			return nil, err
		}
	}
	r.gh.status(ctx, "pending", fmt.Sprintf("%s of %s running", r.mode, r.unitLabel()))

	res, err := r.runMode(ctx)
	if res == nil {
		if err == nil {
			err = errors.New("no result")
		}
		return nil, err
	}
	r.report(ctx, res)
	return res, nil
}

// report renders res everywhere: annotations, outputs, summary, comment,
// status. The comment and the status outlive a cancelled run.
func (r *runner) report(ctx context.Context, res *result.Result) {
	r.annotate(res)
	diffFile := r.writeDiffFile(res)
	r.setOutputs(res, diffFile)
	r.addSummary(r.masker.String(r.summary(res, diffFile)))
	fctx, cancel := finalContext(ctx)
	defer cancel()
	r.gh.comment(fctx, res)
	state, desc := statusOf(res, r.drift)
	r.gh.status(fctx, state, desc)
}

// setOutputs sets every step output from res; diffFile is the path of the
// full diff, relative to the workspace, or "".
func (r *runner) setOutputs(res *result.Result, diffFile string) {
	data, err := json.Marshal(res)
	if err != nil {
		data = []byte("{}")
	}
	r.setOutput("result", r.masker.String(string(data)))
	r.setOutput("changed", strconv.FormatBool(res.Changed()))
	r.setOutput("drifted", strconv.FormatBool(r.drift))
	r.setOutput("revision", res.Revision)
	r.setOutput("objects", strconv.Itoa(objectCount(res)))
	r.setOutput("diff-file", diffFile)
}

// annotate turns failed entries into error annotations on the file that
// caused them, and a failed run into one more naming its reason.
func (r *runner) annotate(res *result.Result) {
	for _, e := range res.Entries {
		if e.Action != result.Failed {
			continue
		}
		a := r.gha
		if e.Source != "" {
			a = r.gha.WithFieldsMap(map[string]string{"file": e.Source})
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
