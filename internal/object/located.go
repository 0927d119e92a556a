package object

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Located is an object and the file it came from (empty if unknown).
type Located struct {
	ID     ID
	Source string
}

func (l Located) String() string {
	if l.Source == "" {
		return l.ID.String()
	}
	return l.ID.String() + " (" + l.Source + ")"
}

// SampleSize is how many objects Sample names.
const SampleSize = 3

// Sample names objs, with their files, as one line: all of them up to
// SampleSize, else the first SampleSize and how many more, so that one
// cause shared by a thousand objects still reads as one line.
func Sample(objs []Located) string {
	names := make([]string, len(objs))
	for i, o := range objs {
		names[i] = o.String()
	}
	return Few(names)
}

// Few joins names, the first SampleSize of them and how many more.
func Few(names []string) string {
	if len(names) > SampleSize {
		return fmt.Sprintf("%s and %d more", strings.Join(names[:SampleSize], ", "), len(names)-SampleSize)
	}
	return strings.Join(names, ", ")
}

// KindName is a kind as kubectl names it: Kind for the core group, else
// Kind.group.
func KindName(gk schema.GroupKind) string {
	if gk.Group == "" {
		return gk.Kind
	}
	return gk.Kind + "." + gk.Group
}

// Failure is an object that failed, and why: Cause does not name the
// object, so that objects that failed alike share it.
type Failure struct {
	Located
	Cause string
}

// Group is one cause and the objects it failed, in order.
type Group struct {
	Cause   string
	Objects []Located
}

// String is the group as one line: "A (a.yaml): cause" for one object,
// else "cause — 50 objects, e.g. A (a.yaml), B (b.yaml), C (c.yaml) and
// 47 more", so that one missing namespace of fifty objects reads once.
func (g Group) String() string {
	if len(g.Objects) == 1 {
		return g.Objects[0].String() + ": " + g.Cause
	}
	names := make([]string, len(g.Objects))
	for i, o := range g.Objects {
		names[i] = o.String()
	}
	return g.Cause + " — " + Counted(names)
}

// Counted says how many names there are and names a few: "2 objects: A,
// B", or "50 objects, e.g. A, B, C and 47 more".
func Counted(names []string) string {
	if len(names) > SampleSize {
		return fmt.Sprintf("%d objects, e.g. %s", len(names), Few(names))
	}
	return fmt.Sprintf("%d objects: %s", len(names), Few(names))
}

// ByCause groups failures that share a cause, in the order causes first
// appear.
func ByCause(failures []Failure) []Group {
	var groups []Group
	at := map[string]int{}
	for _, f := range failures {
		i, ok := at[f.Cause]
		if !ok {
			i = len(groups)
			at[f.Cause] = i
			groups = append(groups, Group{Cause: f.Cause})
		}
		groups[i].Objects = append(groups[i].Objects, f.Located)
	}
	return groups
}
