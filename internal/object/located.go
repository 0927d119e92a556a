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
