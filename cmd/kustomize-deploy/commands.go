package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/mask"
	"github.com/kustomize-deploy/kustomize-deploy/internal/pipeline"
	"github.com/kustomize-deploy/kustomize-deploy/internal/report"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// env is what a command sees of the world; tests replace it.
type env struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	masker         *mask.Masker
	// requests counts API requests when KUSTOMIZE_DEPLOY_COUNT_REQUESTS is
	// set (make bench); nil otherwise.
	requests *kube.RequestCounter
}

type command struct {
	name, summary string
	setup         func(*flags, *flag.FlagSet)
	run           func(context.Context, *flags, *env) error
}

var commands = []command{
	{"build", "render the unit's YAML (Secret values masked); needs no cluster",
		func(f *flags, fs *flag.FlagSet) { f.buildFlags(fs) }, runBuild},
	{"diff", "show what apply would change, and what prune would delete; writes nothing",
		(*flags).unitRunFlags, runDiff},
	{"apply", "build, decrypt, validate, apply in stages, prune and wait for health",
		(*flags).unitRunFlags, runApply},
	{"delete", "delete every object the unit owns, then its inventory",
		func(f *flags, fs *flag.FlagSet) {
			f.unitName(fs)
			f.cluster(fs)
			f.out(fs)
			fs.StringVar(&f.serviceAccount, "service-account", "", "delete as this service account of the inventory namespace")
		}, runDelete},
	{"status", "list units with their revision, last result, reason and object count",
		func(f *flags, fs *flag.FlagSet) { f.unitName(fs); f.cluster(fs); f.out(fs) }, runStatus},
}

func runBuild(ctx context.Context, f *flags, e *env) error {
	opts, err := f.pipelineOptions(pipeline.NeedPath, e.getenv)
	if err != nil {
		return err
	}
	opts.Mask = func(v []string) { e.masker.Add(v...) }
	rendered, err := pipeline.Render(ctx, opts)
	if err != nil {
		return err
	}
	return rendered.WriteYAML(e.stdout)
}

func runApply(ctx context.Context, f *flags, e *env) error {
	return runUnit(ctx, f, e, pipeline.Apply, false)
}

func runDiff(ctx context.Context, f *flags, e *env) error {
	return runUnit(ctx, f, e, pipeline.Diff, true)
}

func runUnit(ctx context.Context, f *flags, e *env, step func(context.Context, *kube.Clients, pipeline.Options) (*result.Result, error), diffs bool) error {
	opts, err := f.pipelineOptions(pipeline.NeedName|pipeline.NeedPath, e.getenv)
	if err != nil {
		return err
	}
	c, err := f.unitClients(e.requests)
	if err != nil {
		return err
	}
	opts.Progress = e.stderr
	opts.Mask = func(v []string) { e.masker.Add(v...) }
	res, err := step(ctx, c, opts)
	return render(e, f.output, res, err, diffs)
}

func runDelete(ctx context.Context, f *flags, e *env) error {
	opts, err := f.pipelineOptions(pipeline.NeedName, e.getenv)
	if err != nil {
		return err
	}
	c, err := f.unitClients(e.requests)
	if err != nil {
		return err
	}
	opts.Progress = e.stderr
	res, err := pipeline.Delete(ctx, c, opts)
	return render(e, f.output, res, err, false)
}

// unitRunFlags are the flags of the commands that run a unit: diff and apply.
func (f *flags) unitRunFlags(fs *flag.FlagSet) {
	f.unitName(fs)
	f.buildFlags(fs)
	f.applyFlags(fs)
	f.cluster(fs)
	f.out(fs)
}

// unitClients checks the flags every unit command needs, then connects.
func (f *flags) unitClients(requests *kube.RequestCounter) (*kube.Clients, error) {
	if err := checkOutput(f.output); err != nil {
		return nil, err
	}
	return f.clients(requests)
}

// errReported marks a failure whose result was already printed.
var errReported = errors.New("reported")

func render(e *env, output string, res *result.Result, err error, diffs bool) error {
	if res == nil {
		return err
	}
	if output == "json" {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if encErr := enc.Encode(res); encErr != nil {
			return encErr
		}
	} else {
		report.Text(e.stdout, res, diffs)
	}
	if err != nil {
		if hint := fixHint(err); hint != "" {
			fmt.Fprintln(e.stderr, "hint: "+hint)
		}
		return errReported
	}
	return nil
}

// fixHint names the flag that gets a run past its failure, if one does.
func fixHint(err error) string {
	var f *pipeline.Failure
	if !errors.As(err, &f) {
		return ""
	}
	switch f.Fix {
	case pipeline.OptForce:
		return "--force recreates objects whose immutable fields changed"
	case pipeline.OptAllowRemoteBases:
		return "--allow-remote-bases lets the build fetch remote resources"
	}
	return ""
}

func checkOutput(o string) error {
	if o != "text" && o != "json" {
		return usagef("--output must be text or json, not %q", o)
	}
	return nil
}

func runStatus(ctx context.Context, f *flags, e *env) error {
	if err := checkOutput(f.output); err != nil {
		return err
	}
	c, err := f.clients(e.requests)
	if err != nil {
		return err
	}
	ns := f.inventoryNS
	if ns == "" {
		ns = c.Namespace
	}
	var invs []*inventory.Inventory
	if f.name != "" {
		inv, err := inventory.Load(ctx, c.Client, ns, f.name)
		if err != nil {
			return err
		}
		if inv == nil {
			return fmt.Errorf("unit '%s' has no inventory in namespace %s", f.name, ns)
		}
		invs = append(invs, inv)
	} else if invs, err = inventory.List(ctx, c.Client, ns); err != nil {
		return err
	}
	rows := make([]statusRow, len(invs))
	for i, inv := range invs {
		rows[i] = statusRow{Unit: inv.Name, Namespace: inv.Namespace, Objects: len(inv.Entries), Status: inv.Status}
	}
	if f.output == "json" {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	if len(rows) == 0 {
		fmt.Fprintf(e.stdout, "no units in namespace %s\n", ns)
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "UNIT\tREADY\tREASON\tREVISION\tOBJECTS\tAGE\tMESSAGE")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", r.Unit, r.Status.Ready.Status, r.Status.Ready.Reason,
			short(r.Status.LastAppliedRevision), r.Objects, age(r.Status.Ready.LastTransitionTime), firstLine(r.Status.Ready.Message))
	}
	return tw.Flush()
}

type statusRow struct {
	Unit      string           `json:"unit"`
	Namespace string           `json:"namespace"`
	Objects   int              `json:"objects"`
	Status    inventory.Status `json:"status"`
}
