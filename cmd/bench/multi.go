package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// The many-unit scenario: multiUnits units of multiObjects objects each,
// multiLevels[i] of them at level i+1 of the dependency graph.
const (
	multiUnits   = 20
	multiObjects = 50
)

var multiLevels = []int{4, 8, 8}

// multiConfigDir is where the configuration's Kustomizations are, relative
// to the repository root, as `flux bootstrap` lays a cluster out.
const multiConfigDir = "clusters/bench"

// dagUnit is one unit of the many-unit scenario.
type dagUnit struct {
	// Name names the unit, its Namespace, its kapp app and its inventory.
	Name  string
	Level int
	// DependsOn is the unit of the level above it waits for; "" at level 1.
	DependsOn string
}

// dag returns the scenario's units, named <prefix>-u01 and on, in
// dependency order: every unit of a level depends on one unit of the level
// above, spread evenly (with 4, 8, 8: each unit of level 1 has two
// dependents, each of level 2 one).
func dag(prefix string) []dagUnit {
	var units []dagUnit
	var above []string
	for level, n := range multiLevels {
		var this []string
		for i := range n {
			u := dagUnit{Name: fmt.Sprintf("%s-u%02d", prefix, len(units)+1), Level: level + 1}
			if len(above) > 0 {
				u.DependsOn = above[i%len(above)]
			}
			units = append(units, u)
			this = append(this, u.Name)
		}
		above = this
	}
	return units
}

// fluxKustomization is u's Kustomization in the configuration: its
// manifests in units/<name>, pruned, waited for as wait says, after the
// unit it depends on.
func fluxKustomization(u dagUnit, wait bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: %s
  namespace: flux-system
spec:
  interval: 10m
  sourceRef:
    kind: GitRepository
    name: flux-system
  path: ./units/%s
  prune: true
  wait: %t
  timeout: 5m
`, u.Name, u.Name, wait)
	if u.DependsOn != "" {
		fmt.Fprintf(&b, "  dependsOn:\n  - name: %s\n", u.DependsOn)
	}
	return b.String()
}

// writeFluxRepo replaces root with a repository of the units: each unit's
// manifests in units/<name>/, its Kustomization in
// clusters/bench/<name>.yaml. It returns the configuration's directory.
func writeFluxRepo(root string, units []dagUnit, wait bool) (string, error) {
	if err := writeUnitDirs(filepath.Join(root, "units"), units); err != nil {
		return "", err
	}
	config := filepath.Join(root, multiConfigDir)
	if err := os.MkdirAll(config, 0o755); err != nil {
		return "", err
	}
	for _, u := range units {
		if err := os.WriteFile(filepath.Join(config, u.Name+".yaml"), []byte(fluxKustomization(u, wait)), 0o644); err != nil {
			return "", err
		}
	}
	return config, nil
}

// writeUnitDirs replaces dir with one directory of manifests per unit,
// dir/<name>.
func writeUnitDirs(dir string, units []dagUnit) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	for _, u := range units {
		if err := newWorkload(u.Name, multiObjects).Write(filepath.Join(dir, u.Name)); err != nil {
			return err
		}
	}
	return nil
}

// writeFlat replaces dir with every unit's manifests in one directory,
// file names prefixed with the unit's: one unit of all the objects.
func writeFlat(dir string, units []dagUnit) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, u := range units {
		if err := newWorkload(u.Name, multiObjects).WriteInto(dir, u.Name+"-"); err != nil {
			return err
		}
	}
	return nil
}

// multiResult is what the many-unit scenario measured.
type multiResult struct {
	// Kapp are kapp's deploys of the units, one after another in
	// dependency order; KappSum adds them up (its peak RSS the largest),
	// failed when any of them or the count afterwards failed.
	Kapp    []measurement
	KappSum measurement
	// Single is ours deploying every unit's objects as one unit.
	Single measurement
	// First and Noop are ours running the configuration of the units
	// (apply --config), twice; FirstUnits and NoopUnits are its units'
	// times, from its JSON result.
	First, Noop           measurement
	FirstUnits, NoopUnits []unitTime
}

// unitTime is one unit of an apply --config run.
type unitTime struct {
	Name  string
	Level int
	// Start is when the unit started, after the run's units started.
	Start, Took time.Duration
	Ready       bool
	Counts      result.Counts
}

// unitTimes reads the units' times from the JSON result of an apply
// --config run, each with its level in units.
func unitTimes(stdout []byte, units []dagUnit) ([]unitTime, error) {
	var set result.Set
	if err := json.Unmarshal(stdout, &set); err != nil {
		return nil, fmt.Errorf("reading the JSON result: %w", err)
	}
	level := map[string]int{}
	for _, u := range units {
		level[u.Name] = u.Level
	}
	var out []unitTime
	for _, r := range set.Units {
		took, err := time.ParseDuration(r.Duration)
		if err != nil && r.Duration != "" {
			return nil, fmt.Errorf("unit %s: duration %q: %w", r.Unit, r.Duration, err)
		}
		out = append(out, unitTime{
			Name: r.Unit, Level: level[r.Unit], Start: r.StartedAt.Sub(set.StartedAt), Took: took,
			Ready: r.Ready, Counts: r.Counts,
		})
	}
	if len(out) != len(units) {
		return out, fmt.Errorf("%d unit(s) in the result, want %d", len(out), len(units))
	}
	return out, nil
}

// multiRun runs the many-unit scenario: kapp unit by unit, ours with the
// objects as one unit, ours with the configuration of units (first deploy
// and no-op). Each copy has its own names (kapp-u01, kd1-u01, kd-u01) and
// its Namespaces are deleted, untimed, before the next copy.
type multiRun struct {
	*testbed
	kapp, ours, config tool
	configArgs         func(root, dir string) []string
	wait               bool
}

func (m *multiRun) run(ctx context.Context) error {
	res := &multiResult{}
	m.rep.Multi = res
	if err := m.runKapp(ctx, res); err != nil {
		return err
	}
	if err := m.runSingle(ctx, res); err != nil {
		return err
	}
	return m.runConfig(ctx, res)
}

// step measures one command of the scenario and counts what it left in
// the units' Namespaces; a failed count fails the measurement, so that a
// tool that did less does not look fast.
func (m *multiRun) step(ctx context.Context, t tool, args []string, log, title string, units []dagUnit) (measurement, error) {
	meas := measure(ctx, t, args, exitZero, m.home, filepath.Join(m.logs, log), m.timeout)
	if ctx.Err() != nil {
		return meas, ctx.Err()
	}
	line := fmt.Sprintf("multi %-16s %-34s %8s  peak RSS %4d MB", t.name, title, fmtDuration(meas.Wall), meas.MaxRSS>>20)
	if meas.Requests != nil {
		line += fmt.Sprintf("  %d API requests", meas.Requests.Total)
	}
	m.progress("%s", line)
	if meas.Err != nil {
		m.progress("  FAILED: %v", meas.Err)
		m.rep.note("%d units: %s %s failed: %v", multiUnits, t.name, title, meas.Err)
		return meas, nil
	}
	if units != nil {
		if err := m.checkUnits(ctx, units); err != nil {
			m.progress("  CHECK FAILED: %v", err)
			m.rep.note("%d units: %s %s: %v", multiUnits, t.name, title, err)
			meas.Err = err
		}
	}
	return meas, nil
}

// checkUnits counts every unit's ConfigMaps.
func (m *multiRun) checkUnits(ctx context.Context, units []dagUnit) error {
	var errs []error
	for _, u := range units {
		errs = append(errs, m.checkConfigMaps(ctx, u.Name, newWorkload(u.Name, multiObjects).ConfigMaps))
	}
	return errors.Join(errs...)
}

func (m *multiRun) deleteUnits(ctx context.Context, what string, units []dagUnit) error {
	names := make([]string, len(units))
	for i, u := range units {
		names[i] = u.Name
	}
	m.progress("multi %s: deleting namespaces %s to %s (untimed)", what, names[0], names[len(names)-1])
	return m.deleteNamespaces(ctx, names...)
}

// runKapp deploys the units with kapp one after another, in dependency
// order: kapp has no order between apps, so a pipeline would run them so.
func (m *multiRun) runKapp(ctx context.Context, res *multiResult) error {
	units := dag("kapp")
	dir := filepath.Join(m.work, "multi-kapp")
	if err := writeUnitDirs(dir, units); err != nil {
		return err
	}
	sum := measurement{}
	for i, u := range units {
		title := fmt.Sprintf("%s (level %d, %d of %d)", u.Name, u.Level, i+1, len(units))
		// Only the last deploy counts every unit.
		var check []dagUnit
		if i == len(units)-1 {
			check = units
		}
		meas, err := m.step(ctx, m.kapp, m.kapp.apply(u.Name, filepath.Join(dir, u.Name)), "multi-kapp-"+u.Name+".log", title, check)
		if err != nil {
			return err
		}
		res.Kapp = append(res.Kapp, meas)
		sum.Wall += meas.Wall
		sum.MaxRSS = max(sum.MaxRSS, meas.MaxRSS)
		if sum.Err == nil && meas.Err != nil {
			sum.Err = fmt.Errorf("%s: %w", u.Name, meas.Err)
		}
	}
	res.KappSum = sum
	m.progress("multi %-16s %-34s %8s", toolKapp, fmt.Sprintf("%d units one after another, sum", len(units)), fmtDuration(sum.Wall))
	return m.deleteUnits(ctx, toolKapp, units)
}

// runSingle deploys the same objects as one unit.
func (m *multiRun) runSingle(ctx context.Context, res *multiResult) error {
	units := dag("kd1")
	dir := filepath.Join(m.work, "multi-kd1")
	if err := writeFlat(dir, units); err != nil {
		return err
	}
	var err error
	res.Single, err = m.step(ctx, m.ours, m.ours.apply("kd1-all", dir), "multi-kd1-single.log",
		fmt.Sprintf("one unit of %d objects", multiUnits*multiObjects), units)
	if err != nil {
		return err
	}
	return m.deleteUnits(ctx, toolOurs+" (one unit)", units)
}

// runConfig runs the configuration of the units twice: the first deploy,
// then a no-op.
func (m *multiRun) runConfig(ctx context.Context, res *multiResult) error {
	units := dag("kd")
	root := filepath.Join(m.work, "multi-kd")
	if err := os.RemoveAll(root); err != nil {
		return err
	}
	config, err := writeFluxRepo(root, units, m.wait)
	if err != nil {
		return err
	}
	args := m.configArgs(root, config)
	for _, run := range []struct {
		key, what string
		meas      *measurement
		times     *[]unitTime
	}{
		{"first", "first deploy", &res.First, &res.FirstUnits},
		{"noop", "no-op", &res.Noop, &res.NoopUnits},
	} {
		title := fmt.Sprintf("--config, %d units, %s", len(units), run.what)
		meas, err := m.step(ctx, m.config, args, "multi-kd-config-"+run.key+".log", title, units)
		if err != nil {
			return err
		}
		*run.meas = meas
		times, err := unitTimes(meas.Stdout, units)
		if err != nil {
			m.rep.note("%d units: %s %s: %v", multiUnits, toolOurs, title, err)
		}
		*run.times = times
		m.progress("  %s", levelSummary(times))
		if run.key == "noop" {
			if changed := changedUnits(times); len(changed) > 0 {
				m.rep.note("%d units: %s %s changed unit(s) %s", multiUnits, toolOurs, title, strings.Join(changed, ", "))
			}
		}
	}
	return m.deleteUnits(ctx, toolOurs+" (--config)", units)
}

// changedUnits are the units whose run created, changed or deleted
// something.
func changedUnits(times []unitTime) []string {
	var out []string
	for _, t := range times {
		if c := t.Counts; c.Created+c.Configured+c.Deleted > 0 {
			out = append(out, t.Name)
		}
	}
	return out
}

// levelStats sums up the units of one level of a run.
type levelStats struct {
	Level, Units          int
	FirstStart, LastStart time.Duration
	Shortest, Longest     time.Duration
	LastEnd               time.Duration
	NotReady              int
}

// byLevel groups a run's units by level, in level order.
func byLevel(times []unitTime) []levelStats {
	var out []levelStats
	top := 0
	for _, t := range times {
		top = max(top, t.Level)
	}
	for level := 1; level <= top; level++ {
		s := levelStats{Level: level}
		for _, t := range times {
			if t.Level != level {
				continue
			}
			if s.Units == 0 {
				s.FirstStart, s.LastStart, s.Shortest, s.Longest = t.Start, t.Start, t.Took, t.Took
			}
			s.Units++
			s.FirstStart, s.LastStart = min(s.FirstStart, t.Start), max(s.LastStart, t.Start)
			s.Shortest, s.Longest = min(s.Shortest, t.Took), max(s.Longest, t.Took)
			s.LastEnd = max(s.LastEnd, t.Start+t.Took)
			if !t.Ready {
				s.NotReady++
			}
		}
		if s.Units > 0 {
			out = append(out, s)
		}
	}
	return out
}

// levelSummary is a progress line of a run's units by level.
func levelSummary(times []unitTime) string {
	var parts []string
	for _, s := range byLevel(times) {
		parts = append(parts, fmt.Sprintf("level %d: %d units started %.1f–%.1f s, took %.1f–%.1f s",
			s.Level, s.Units, s.FirstStart.Seconds(), s.LastStart.Seconds(), s.Shortest.Seconds(), s.Longest.Seconds()))
	}
	if len(parts) == 0 {
		return "no unit times"
	}
	return strings.Join(parts, "; ")
}
