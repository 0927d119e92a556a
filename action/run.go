package action

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

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
	// HTTPClient talks to the GitHub API; nil means http.DefaultClient.
	HTTPClient *http.Client
}

// Exit codes, as the CLI's.
const (
	exitOK   = 0
	exitFail = 1
)

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
}

// Run is `kustomize-deploy action`: it reads the inputs and the event,
// runs the unit in the mode the event calls for, and reports through
// outputs, the job summary, a sticky PR comment and a commit status.
func Run(ctx context.Context, env Env) int {
	if env.HTTPClient == nil {
		env.HTTPClient = http.DefaultClient
	}
	m := mask.New()
	r := &runner{
		env:    env,
		gha:    githubactions.New(githubactions.WithGetenv(env.Getenv), githubactions.WithWriter(env.Stdout)),
		masker: m,
		log:    m.Writer(env.Stdout),
	}
	defer r.log.Flush()
	res, err := r.run(ctx)
	if err != nil {
		r.gha.Errorf("%s", r.masker.String(err.Error()))
		return exitFail
	}
	if !res.Ready || (r.drift && r.in.FailOnDrift) {
		return exitFail
	}
	return exitOK
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
	r.gh.status(ctx, "pending", fmt.Sprintf("%s of %s running", r.mode, in.Name))

	res, err := r.runMode(ctx)
	if res == nil {
		if err == nil {
			err = errors.New("no result")
		}
		r.gh.status(ctx, "error", firstLine(r.masker.String(err.Error())))
		return nil, err
	}
	r.report(ctx, res)
	return res, nil
}

// report renders res everywhere: annotations, outputs, summary, comment,
// status.
func (r *runner) report(ctx context.Context, res *result.Result) {
	r.annotate(res)
	data, _ := json.Marshal(res)
	r.gha.SetOutput("result", r.masker.String(string(data)))
	r.gha.SetOutput("changed", strconv.FormatBool(res.Changed()))
	r.gha.SetOutput("drifted", strconv.FormatBool(r.drift))
	r.gha.SetOutput("revision", res.Revision)
	r.gha.SetOutput("objects", strconv.Itoa(objectCount(res)))
	r.gha.AddStepSummary(r.masker.String(r.summary(res)))
	r.gh.comment(ctx, res)
	state, desc := statusOf(res, r.drift)
	r.gh.status(ctx, state, desc)
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

func firstLine(s string) string {
	for i, c := range s {
		if c == '\n' {
			return s[:i]
		}
	}
	return s
}
