package units

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

func nodes(spec ...string) []Node {
	var out []Node
	for _, s := range spec { // "name:dep,dep"
		name, deps, _ := strings.Cut(s, ":")
		n := Node{Name: name}
		if deps != "" {
			n.DependsOn = strings.Split(deps, ",")
		}
		out = append(out, n)
	}
	return out
}

func TestNewGraphRefuses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		nodes []Node
		want  string
	}{
		{"a cycle, named in order", nodes("istio:webapp-frontend", "webapp-common:istio", "webapp-backend:webapp-common", "webapp-frontend:webapp-backend"),
			"dependency cycle: istio → webapp-frontend → webapp-backend → webapp-common → istio"},
		{"a unit depending on itself", nodes("a:a"), "dependency cycle: a → a"},
		{"a cycle beside a chain", nodes("x", "y:x", "a:b", "b:a"), "dependency cycle: a → b → a"},
		{"a missing dependency", nodes("a", "b:ghost"), "unit b depends on ghost, which is not in this run"},
		{"a duplicate", nodes("a", "a"), "unit a is defined twice"},
		{"a cycle, where each is defined", []Node{{Name: "app", DependsOn: []string{"infra"}, Where: "flux/apps.yaml:1"}, {Name: "infra", DependsOn: []string{"app"}, Where: "flux/infra.yaml:3"}},
			"dependency cycle: app (flux/apps.yaml:1) → infra (flux/infra.yaml:3) → app"},
		{"a duplicate, where each is defined", []Node{{Name: "a", Where: "x.yaml:1"}, {Name: "a", Where: "y.yaml:9"}}, "unit a is defined twice: at x.yaml:1 and at y.yaml:9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewGraph(tc.nodes)
			if err == nil || err.Error() != tc.want {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// recorder runs units, failing those named in fail, and records the order
// units started and the most that ran at once.
type recorder struct {
	mu      sync.Mutex
	started []string
	running int
	most    int
	fail    map[string]bool
	// gate, when set, holds every unit until the test releases it.
	gate chan struct{}
}

func (r *recorder) run(g *Graph) func(context.Context, int) Outcome {
	return func(_ context.Context, i int) Outcome {
		name := g.nodes[i].Name
		r.mu.Lock()
		r.started = append(r.started, name)
		r.running++
		r.most = max(r.most, r.running)
		r.mu.Unlock()
		if r.gate != nil {
			<-r.gate
		}
		r.mu.Lock()
		r.running--
		r.mu.Unlock()
		ok := !r.fail[name]
		res := &result.Result{Unit: name, Ready: ok, Reason: result.ReasonApplySucceed}
		if !ok {
			res.Reason = result.ReasonHealthCheckFailed
		}
		return Outcome{Result: res, Satisfied: ok}
	}
}

func skipped(g *Graph) func(int, []string) Outcome {
	return func(i int, blockers []string) Outcome {
		msg := "not started"
		if len(blockers) > 0 {
			msg = "blocked by " + strings.Join(blockers, ",")
		}
		return Outcome{Result: &result.Result{Unit: g.nodes[i].Name, Reason: result.ReasonDependencyNotReady, Message: msg}}
	}
}

func summary(out []Outcome) []string {
	var s []string
	for _, o := range out {
		s = append(s, o.Result.Unit+"="+string(o.Result.Reason)+" "+o.Result.Message)
	}
	return s
}

// The seed chain runs in dependency order; a failure in the middle skips
// only what depends on it, transitively.
func TestRunChainAndFailure(t *testing.T) {
	g, err := NewGraph(nodes("webapp-frontend:webapp-backend", "istio", "webapp-backend:webapp-common", "webapp-common:istio", "monitoring"))
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{fail: map[string]bool{"webapp-common": true}}
	out := g.Run(context.Background(), 4, r.run(g), skipped(g))
	want := []string{
		"webapp-frontend=DependencyNotReady blocked by webapp-backend",
		"istio=ApplySucceed ",
		"webapp-backend=DependencyNotReady blocked by webapp-common",
		"webapp-common=HealthCheckFailed ",
		"monitoring=ApplySucceed ",
	}
	if got := summary(out); !slices.Equal(got, want) {
		t.Errorf("outcomes\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if i, j := slices.Index(r.started, "istio"), slices.Index(r.started, "webapp-common"); i < 0 || j < i {
		t.Errorf("started %v: webapp-common before istio", r.started)
	}
	if slices.Contains(r.started, "webapp-backend") || slices.Contains(r.started, "webapp-frontend") {
		t.Errorf("dependents of a failed unit ran: %v", r.started)
	}
}

// Independent units run together, never more than parallel at once.
func TestRunParallelLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g, err := NewGraph(nodes("a", "b", "c", "d", "e", "f", "z:a,b,c,d,e,f"))
		if err != nil {
			t.Fatal(err)
		}
		r := &recorder{gate: make(chan struct{})}
		done := make(chan []Outcome)
		go func() { done <- g.Run(context.Background(), 4, r.run(g), skipped(g)) }()
		// Units running before each release: four of the six, until fewer
		// than four are left; z only once all six are done.
		for i, want := range []int{4, 4, 4, 3, 2, 1, 1} {
			synctest.Wait() // every goroutine is blocked: the scheduler started all it will
			r.mu.Lock()
			running := r.running
			r.mu.Unlock()
			if running != want {
				t.Fatalf("before release %d: %d units running, want %d (started %v)", i, running, want, r.started)
			}
			r.gate <- struct{}{}
		}
		out := <-done
		if r.most != 4 || r.started[len(r.started)-1] != "z" || !out[6].Satisfied {
			t.Errorf("most %d at once, started %v", r.most, r.started)
		}
	})
}

// Units not started when the context ends are skipped, not run.
func TestRunCancelled(t *testing.T) {
	g, err := NewGraph(nodes("a", "b:a", "c"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := &recorder{}
	out := g.Run(ctx, 2, r.run(g), skipped(g))
	if len(r.started) != 0 {
		t.Errorf("started %v after the context ended", r.started)
	}
	for _, o := range out {
		if o.Result.Message != "not started" {
			t.Errorf("%s: %s", o.Result.Unit, o.Result.Message)
		}
	}
}
