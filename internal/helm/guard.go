package helm

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/template/parse"

	chart "helm.sh/helm/v4/pkg/chart/v2"
)

// Helm bounds `include` recursion (1,000 deep) and text/template bounds
// `template` nesting, but nothing bounds `tpl`: a value that tpl renders
// into itself recurses until the Go runtime kills the process (a fatal
// stack overflow, which nothing can recover). So every call of tpl takes
// its template through a guard function first: the chart's templates are
// rewritten before rendering (`tpl A B` becomes `tpl (guard A) B`), and
// the guard rewrites the templates it passes on the same way, so tpl text
// made at render time (a value, a file, printf) is guarded too. The guard
// fails the render when the stack is deeper than MaxTemplateFrames, when
// tpl ran MaxTplCalls times, or when ctx ends.
const (
	// MaxTemplateFrames bounds the Go stack (in frames) under a tpl call:
	// about 400 tpl calls nested in each other, a few MiB of stack, far
	// from the runtime's 1 GB and far beyond any chart's needs.
	MaxTemplateFrames = 5000
	// MaxTplCalls bounds the tpl calls of one release's render: a
	// template calling tpl twice on itself doubles the work at each level.
	MaxTplCalls = 20000
	// tplDepthEvery is how often (in tpl calls) the guard measures the
	// stack: measuring costs as much as the stack is deep.
	tplDepthEvery = 8
)

// tplGuardFunc is the guard's name in templates.
const tplGuardFunc = "kustomizeDeployTplGuard"

// errTemplateRecursion is the guard's refusal.
var errTemplateRecursion = errors.New("tpl")

// tplGuard is one render's guard (renders of one release run on one
// goroutine).
type tplGuard struct {
	ctx      context.Context
	calls    int
	pcs      []uintptr
	rewrites map[string]string
	// err is the guard's refusal, once it refused.
	err error
}

func newTplGuard(ctx context.Context) *tplGuard {
	return &tplGuard{ctx: ctx, rewrites: map[string]string{}}
}

// guard is the template function: text, guarded, or an error.
func (g *tplGuard) guard(text string) (string, error) {
	g.calls++
	switch {
	case g.err != nil:
	case g.calls > MaxTplCalls:
		g.err = fmt.Errorf("%w was called more than %d times: a template that calls tpl on itself more than once?", errTemplateRecursion, MaxTplCalls)
	case g.ctx.Err() != nil:
		g.err = fmt.Errorf("%w: rendering stopped: %w", errTemplateRecursion, context.Cause(g.ctx))
	case g.calls%tplDepthEvery == 0:
		if g.pcs == nil {
			g.pcs = make([]uintptr, MaxTemplateFrames)
		}
		if runtime.Callers(0, g.pcs) == len(g.pcs) {
			g.err = fmt.Errorf("%w nests deeper than %d stack frames: a template that renders itself through tpl (a value holding tpl of itself)?", errTemplateRecursion, MaxTemplateFrames)
		}
	}
	if g.err != nil {
		return "", g.err
	}
	if out, ok := g.rewrites[text]; ok {
		return out, nil
	}
	out := guardTpl(text)
	if len(g.rewrites) < 1000 {
		g.rewrites[text] = out
	}
	return out, nil
}

// guardChart is ch with the templates that call tpl, its dependencies'
// included, rewritten so that each call goes through the guard (see
// guardTpl). ch itself is never changed (a cache may hold it, and other
// renders read it): a chart whose templates call no tpl is returned as it
// is, another is copied, each of its charts.
func guardChart(ch *chart.Chart) *chart.Chart {
	if !callsTpl(ch) {
		return ch
	}
	return guardedCopy(ch)
}

// guardedCopy is a copy of ch and of each of its dependencies, their
// templates that call tpl rewritten.
func guardedCopy(ch *chart.Chart) *chart.Chart {
	out := *ch
	out.Templates = slices.Clone(ch.Templates)
	for i, f := range out.Templates {
		if guarded := guardTpl(string(f.Data)); guarded != string(f.Data) {
			c := *f
			c.Data = []byte(guarded)
			out.Templates[i] = &c
		}
	}
	var deps []*chart.Chart
	for _, d := range ch.Dependencies() {
		deps = append(deps, guardedCopy(d))
	}
	out.SetDependencies(deps...)
	return &out
}

// callsTpl says whether a template of ch or of its dependencies may call
// tpl.
func callsTpl(ch *chart.Chart) bool {
	for _, f := range ch.Templates {
		if strings.Contains(string(f.Data), "tpl") {
			return true
		}
	}
	return slices.ContainsFunc(ch.Dependencies(), callsTpl)
}

// guardTpl is text with every call of tpl taking its template through
// the guard: `tpl A B` becomes `tpl (kustomizeDeployTplGuard A) B`; text
// is returned as it is when it calls no tpl, or does not parse (Helm then
// says why).
func guardTpl(text string) string {
	if !strings.Contains(text, "tpl") {
		return text
	}
	trees := map[string]*parse.Tree{}
	t := parse.New("guard")
	t.Mode = parse.SkipFuncCheck
	if _, err := t.Parse(text, "", "", trees); err != nil {
		return text
	}
	changed := guardNode(t.Root)
	for _, tr := range trees {
		if tr != t && guardNode(tr.Root) {
			changed = true
		}
	}
	if !changed {
		return text
	}
	var b strings.Builder
	b.WriteString(t.Root.String())
	for _, name := range slices.Sorted(maps.Keys(trees)) {
		if tr := trees[name]; tr != t {
			b.WriteString("{{define " + strconv.Quote(name) + "}}" + tr.Root.String() + "{{end}}")
		}
	}
	return b.String()
}

// guardNode wraps the template argument of every tpl call under n in the
// guard, and says whether there was one.
func guardNode(n parse.Node) bool {
	changed := false
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return false
		}
		for _, c := range n.Nodes {
			changed = guardNode(c) || changed
		}
	case *parse.ActionNode:
		changed = guardNode(n.Pipe)
	case *parse.IfNode:
		changed = guardBranch(&n.BranchNode)
	case *parse.RangeNode:
		changed = guardBranch(&n.BranchNode)
	case *parse.WithNode:
		changed = guardBranch(&n.BranchNode)
	case *parse.TemplateNode:
		changed = guardNode(n.Pipe)
	case *parse.PipeNode:
		if n == nil {
			return false
		}
		for _, c := range n.Cmds {
			changed = guardNode(c) || changed
		}
	case *parse.ChainNode:
		changed = guardNode(n.Node)
	case *parse.CommandNode:
		for _, a := range n.Args {
			changed = guardNode(a) || changed
		}
		if id, ok := n.Args[0].(*parse.IdentifierNode); ok && id.Ident == "tpl" && len(n.Args) >= 2 {
			n.Args[1] = &parse.PipeNode{NodeType: parse.NodePipe, Cmds: []*parse.CommandNode{{
				NodeType: parse.NodeCommand,
				Args:     []parse.Node{parse.NewIdentifier(tplGuardFunc), n.Args[1]},
			}}}
			changed = true
		}
	}
	return changed
}

func guardBranch(b *parse.BranchNode) bool {
	changed := guardNode(b.Pipe)
	changed = guardNode(b.List) || changed
	if b.ElseList != nil {
		changed = guardNode(b.ElseList) || changed
	}
	return changed
}
