package units

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/notify"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// A configuration's notification Providers and Alerts (in its files, or
// emitted by its units' builds) are not applied: after each unit, the
// run posts the events Flux's controllers would send about it (see
// notify.Events) to the Provider of every Alert that takes them. A
// failed post is a warning, on the progress writer and in the unit's
// notes, never a failure of the unit.

// notificationSecret reads the Secrets Providers name: the front end's
// stand-ins by name (secrets), else the configuration's (a SOPS-encrypted
// one decrypted with the run's keys), else the cluster of the unit that
// emitted the Provider (the default cluster for one of the
// configuration's files), where a unit of this run may have applied it.
func (c Config) notificationSecret(secrets map[string]notify.Secret) func(context.Context, *notify.Provider, string) (map[string]string, error) {
	return func(ctx context.Context, p *notify.Provider, name string) (map[string]string, error) {
		if s, ok := secrets[name]; ok {
			return s, nil
		}
		ref := config.Ref{Namespace: p.Ref.Namespace, Name: name}
		found := c.Set.Lookup("Secret", ref)
		switch {
		case len(found) > 1:
			var where []string
			for _, v := range found {
				where = append(where, fmt.Sprintf("%s:%d", v.File, v.Line))
			}
			return nil, fmt.Errorf("defined more than once in the configuration (%s)", strings.Join(where, ", "))
		case len(found) == 1 && found[0].Encrypted:
			o := c.Base
			o.Decryption.Keys = slices.Clone(c.Base.Decryption.Keys)
			for _, name := range slices.Sorted(maps.Keys(c.DecryptionKeys)) {
				o.Decryption.Keys = append(o.Decryption.Keys, c.DecryptionKeys[name]...)
			}
			return decrypted(ctx, found[0], o)
		case len(found) == 1:
			return found[0].Data, nil
		}
		var kc *config.KubeConfig
		if emitter := c.Set.Unit(p.Emitter); emitter != nil {
			kc = emitter.KubeConfig
		}
		cl, _, err := c.Cluster(kc)
		if err != nil {
			return nil, err
		}
		if cl == nil {
			return nil, errors.New("not in the configuration's files, and there is no cluster to read it from")
		}
		data, err := fromCluster(ctx, cl, "Secret", ref.Namespace, ref.Name)
		switch {
		case apierrors.IsNotFound(err):
			return nil, fmt.Errorf("Secret %s is neither given to the run, nor in the configuration's files, nor in the cluster", ref)
		case err != nil:
			return nil, fmt.Errorf("reading Secret %s from the cluster: %w", ref, err)
		}
		return data, nil
	}
}

// notifications posts the events of units' runs, each as its result is
// known, while the run goes on; wait returns once every post is done.
type notifications struct {
	n     *notify.Notifier
	wg    sync.WaitGroup
	sem   chan struct{}
	mu    sync.Mutex
	notes map[*result.Result][]string
}

// notifyParallel bounds the units whose events are posted at once.
const notifyParallel = 4

func newNotifications(n *notify.Notifier) *notifications {
	return &notifications{n: n, sem: make(chan struct{}, notifyParallel), notes: map[*result.Result][]string{}}
}

// post posts the events of u's run, which ended with res, in the
// background, saying what it posted on progress.
func (ns *notifications) post(ctx context.Context, u Unit, res *result.Result, progress io.Writer) {
	if !ns.n.Active() || res == nil {
		return
	}
	ns.wg.Add(1)
	go func() {
		defer ns.wg.Done()
		ns.sem <- struct{}{}
		defer func() { <-ns.sem }()
		var notes []string
		for _, d := range ns.n.Notify(ctx, u.Event, res) {
			switch {
			case d.Err != nil:
				fmt.Fprintf(progress, "warning: notification: %s\n", d)
				notes = append(notes, "notification: "+d.String())
			default:
				fmt.Fprintf(progress, "notification: %s\n", d)
			}
		}
		if len(notes) > 0 {
			ns.mu.Lock()
			ns.notes[res] = append(ns.notes[res], notes...)
			ns.mu.Unlock()
		}
	}()
}

// wait waits for every post, then adds the failed ones to the notes of
// their units' results: a failed post never fails a unit.
func (ns *notifications) wait() {
	ns.wg.Wait()
	for res, notes := range ns.notes {
		res.Notes = append(res.Notes, notes...)
	}
}
