package main

import (
	"context"
	"fmt"
	"path/filepath"
)

// firstPair is one extra pair of first deploys at a size (--repeat-first):
// kapp's, then ours, of the same manifests; then the same objects as bare
// creates, the API server's floor (see bareCreates).
type firstPair struct {
	Kapp, Ours, Bare measurement
}

// firstPair deploys a fresh copy of the size-n workload with kapp, then
// with ours, then as bare creates, each into its own Namespace (and app,
// and unit) that is deleted, untimed, before the next command. It is
// pair i of of.
func (b *testbed) firstPair(ctx context.Context, kapp, ours tool, n, i, of int) error {
	var pair firstPair
	for _, t := range []tool{kapp, ours} {
		name := fmt.Sprintf("bench-%s-%d-r%d", shortName(t.name), n, i)
		w := newWorkload(name, n)
		dir := filepath.Join(b.work, fmt.Sprintf("%s-%d-r%d", t.name, n, i))
		if err := w.Write(dir); err != nil {
			return err
		}
		logPath := filepath.Join(b.logs, fmt.Sprintf("%s-%d-first-r%d.log", t.name, n, i))
		m := measure(ctx, t, t.apply(name, dir), exitZero, b.home, logPath, b.timeout)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		title := fmt.Sprintf("first deploy, %d of %d", i, of)
		b.progress("N=%d %-16s %-22s %8s  peak RSS %4d MB", n, t.name, title, fmtDuration(m.Wall), m.MaxRSS>>20)
		if m.Err != nil {
			b.progress("  FAILED: %v", m.Err)
			b.rep.note("N=%d %s %s failed: %v", n, t.name, title, m.Err)
		} else if err := b.checkConfigMaps(ctx, name, w.ConfigMaps); err != nil {
			// A run that did less must not count as fast.
			b.progress("  CHECK FAILED: %v", err)
			b.rep.note("N=%d %s %s: %v", n, t.name, title, err)
			m.Err = err
		}
		if t.name == toolKapp {
			pair.Kapp = m
		} else {
			pair.Ours = m
		}
		b.progress("N=%d %s: deleting namespace %s (untimed)", n, t.name, name)
		if err := b.deleteNamespaces(ctx, name); err != nil {
			return err
		}
	}
	name := fmt.Sprintf("bench-bare-%d-r%d", n, i)
	w := newWorkload(name, n)
	dir := filepath.Join(b.work, fmt.Sprintf("bare-%d-r%d", n, i))
	if err := w.Write(dir); err != nil {
		return err
	}
	pair.Bare = bareCreates(ctx, b.config, dir, b.timeout)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	b.progress("N=%d %-16s %-22s %8s  (rolled out %s)", n, "bare creates", fmt.Sprintf("first deploy, %d of %d", i, of), fmtDuration(pair.Bare.Wall), fmtDuration(pair.Bare.RolledOut))
	if pair.Bare.Err != nil {
		b.progress("  FAILED: %v", pair.Bare.Err)
		b.rep.note("N=%d bare creates %d of %d failed: %v", n, i, of, pair.Bare.Err)
	} else if err := b.checkConfigMaps(ctx, name, w.ConfigMaps); err != nil {
		b.progress("  CHECK FAILED: %v", err)
		pair.Bare.Err = err
	}
	if err := b.deleteNamespaces(ctx, name); err != nil {
		return err
	}
	b.rep.addRepeat(n, pair)
	if q, ok := pair.ratio(); ok {
		b.progress("N=%d first deploy %d of %d: ours/kapp %.2f×", n, i, of, q)
	}
	if q, ok := pair.bareRatio(); ok {
		r, _ := pair.rolloutRatio()
		b.progress("N=%d first deploy %d of %d: ours/bare creates %.2f×, ours/bare creates rolled out %.2f×", n, i, of, q, r)
	}
	return nil
}

// bareRatio is ours over the bare creates, when both succeeded.
func (p firstPair) bareRatio() (float64, bool) {
	if p.Bare.Err != nil || p.Ours.Err != nil || p.Bare.Wall <= 0 {
		return 0, false
	}
	return ratio(p.Ours.Wall, p.Bare.Wall), true
}

// rolloutRatio is ours over the bare creates until their Deployments
// were rolled out: the floor of a run that waits for health.
func (p firstPair) rolloutRatio() (float64, bool) {
	if p.Bare.Err != nil || p.Ours.Err != nil || p.Bare.RolledOut <= 0 {
		return 0, false
	}
	return ratio(p.Ours.Wall, p.Bare.RolledOut), true
}

// ratio is ours over kapp, when both runs succeeded.
func (p firstPair) ratio() (float64, bool) {
	if p.Kapp.Err != nil || p.Ours.Err != nil || p.Kapp.Wall <= 0 {
		return 0, false
	}
	return ratio(p.Ours.Wall, p.Kapp.Wall), true
}

func exitZero(code int) bool { return code == 0 }
