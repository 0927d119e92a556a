package health

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// maxWarningLines bounds the Warning events one wait prints as they
// happen: the verdict lists them all anyway.
const maxWarningLines = 20

// warnings follows, while a wait lasts, the Warning events recorded on
// the objects waited for and on what they own (their ReplicaSets and
// Pods), as werf's kubedog does: a line for each new one, the same
// reason and message on the same object said once, so that a pod that
// keeps failing to be scheduled is one line, not one per retry.
type warnings struct {
	list  func(ctx context.Context, ns string) ([]corev1.Event, error)
	owner func(ctx context.Context, ns string, ref corev1.ObjectReference) (*metav1.OwnerReference, error)

	waited map[object.ID]bool
	since  time.Time
	// roots caches, by uid, the waited-for object an object belongs to
	// ("" for none).
	roots   map[types.UID]string
	said    map[string]bool
	printed int
	// refused are the namespaces whose events may not be read: said once.
	refused map[string]bool
}

func newWarnings(waited []object.ID, since time.Time) *warnings {
	w := &warnings{waited: map[object.ID]bool{}, since: since.Truncate(time.Second),
		roots: map[types.UID]string{}, said: map[string]bool{}, refused: map[string]bool{}}
	for _, id := range waited {
		w.waited[object.ID{Kind: id.Kind, Namespace: id.Namespace, Name: id.Name}] = true
	}
	return w
}

// namespaces are those of the objects waited for.
func (w *warnings) namespaces() []string {
	var out []string
	for id := range w.waited {
		if id.Namespace != "" && !slices.Contains(out, id.Namespace) {
			out = append(out, id.Namespace)
		}
	}
	slices.Sort(out)
	return out
}

// poll lists the namespaces' Warning events and returns a line for each
// new one.
func (w *warnings) poll(ctx context.Context) []string {
	var lines []string
	for _, ns := range w.namespaces() {
		if w.refused[ns] {
			continue
		}
		events, err := w.list(ctx, ns)
		if err != nil {
			if note := forbiddenNote(err, "Warning events in namespace "+ns, "list events"); note != "" {
				w.refused[ns] = true
				lines = append(lines, "note: "+note)
			}
			continue
		}
		lines = append(lines, w.lines(ctx, ns, events)...)
	}
	return lines
}

// lines are the lines for the events not said yet, oldest first, up to
// maxWarningLines for the whole wait, then one that says more were left
// out.
func (w *warnings) lines(ctx context.Context, ns string, events []corev1.Event) []string {
	slices.SortStableFunc(events, func(a, b corev1.Event) int { return lastSeen(a).Compare(lastSeen(b)) })
	var out []string
	for _, e := range events {
		if e.Type != corev1.EventTypeWarning || lastSeen(e).Before(w.since) {
			continue
		}
		root := w.root(ctx, ns, e.InvolvedObject)
		if root == "" {
			continue
		}
		on := ""
		if self := e.InvolvedObject.Kind + "/" + ns + "/" + e.InvolvedObject.Name; self != root {
			on = " on " + e.InvolvedObject.Kind + "/" + e.InvolvedObject.Name
		}
		key := root + "\x00" + e.Reason + "\x00" + e.Message
		if w.said[key] {
			continue
		}
		w.said[key] = true
		w.printed++
		switch {
		case w.printed <= maxWarningLines:
			out = append(out, fmt.Sprintf("warning: %s: %s%s: %s", root, e.Reason, on, oneLine(e.Message)))
		case w.printed == maxWarningLines+1:
			out = append(out, "warning: more Warning events: the verdict lists them if the wait fails")
		}
	}
	return out
}

// root is the object waited for that ref is, or belongs to (a Pod of its
// ReplicaSet, of its Job...), as "Kind/namespace/name"; "" for none.
func (w *warnings) root(ctx context.Context, ns string, ref corev1.ObjectReference) string {
	r := ""
	var chain []types.UID // the objects between ref and r, cached with it
	cur := ref
	for hop := 0; hop < 3; hop++ {
		if cached, ok := w.roots[cur.UID]; ok && cur.UID != "" {
			r = cached
			break
		}
		chain = append(chain, cur.UID)
		id := object.ID{Kind: cur.Kind, Namespace: ns, Name: cur.Name}
		if w.waited[id] {
			r = id.String()
			break
		}
		if cur.Kind != "Pod" && cur.Kind != "ReplicaSet" {
			break
		}
		owner, err := w.owner(ctx, ns, cur)
		if err != nil || owner == nil {
			break
		}
		cur = corev1.ObjectReference{Kind: owner.Kind, Name: owner.Name, APIVersion: owner.APIVersion, UID: owner.UID}
	}
	for _, uid := range chain {
		if uid != "" {
			w.roots[uid] = r
		}
	}
	return r
}

func oneLine(s string) string {
	out := []rune{}
	space := false
	for _, r := range s {
		if r == '\n' || r == '\r' || r == '\t' || r == ' ' {
			space = len(out) > 0
			continue
		}
		if space {
			out = append(out, ' ')
			space = false
		}
		out = append(out, r)
	}
	return string(out)
}

// startWarnings prints, every interval until stop, the new Warning
// events of what Wait waits for (see warnings) to out.
func startWarnings(ctx context.Context, c *kube.Clients, ids []object.ID, out io.Writer, every time.Duration) (stop func()) {
	if c == nil || c.Config == nil {
		return func() {}
	}
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return func() {}
	}
	w := newWarnings(ids, time.Now())
	if len(w.namespaces()) == 0 {
		return func() {}
	}
	w.list = func(ctx context.Context, ns string) ([]corev1.Event, error) {
		list, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{
			FieldSelector: fields.OneTermEqualSelector("type", corev1.EventTypeWarning).String(), Limit: 500,
		})
		if err != nil {
			return nil, err
		}
		return list.Items, nil
	}
	w.owner = func(ctx context.Context, ns string, ref corev1.ObjectReference) (*metav1.OwnerReference, error) {
		u := &unstructured.Unstructured{}
		gv, _ := schema.ParseGroupVersion(ref.APIVersion)
		u.SetGroupVersionKind(gv.WithKind(ref.Kind))
		if err := c.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, u); err != nil {
			return nil, err
		}
		return metav1.GetControllerOfNoCopy(u), nil
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				for _, l := range w.poll(ctx) {
					if ctx.Err() == nil {
						io.WriteString(out, l+"\n")
					}
				}
			}
		}
	})
	return func() {
		cancel()
		wg.Wait()
	}
}
