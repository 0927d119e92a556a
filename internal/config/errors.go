package config

import (
	"errors"
	"strconv"
	"strings"
)

// Error is one problem in a file, located as precisely as it can be, so a
// front end can print it or annotate the line. Read joins every Error it
// finds; Problems takes them apart again.
type Error struct {
	File string // relative to the root, slash-separated
	Line int    // 1-based; 0 when unknown
	// Object is "Kustomization flux-system/apps", "Secret default/db", …;
	// "" when the document could not be read far enough to name it.
	Object string
	// Field is the path of the field at fault, such as
	// "spec.dependsOn[1].name"; "" for the object as a whole.
	Field string
	Msg   string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line))
	}
	if e.Object != "" {
		b.WriteString(": " + e.Object)
	}
	if e.Field != "" {
		b.WriteString(": " + e.Field)
	}
	b.WriteString(": " + e.Msg)
	return b.String()
}

// Problems returns the *Errors in err, in order (Read joins them).
func Problems(err error) []*Error {
	var e *Error
	if errors.As(err, &e) && e == err {
		return []*Error{e}
	}
	var out []*Error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, err := range j.Unwrap() {
			out = append(out, Problems(err)...)
		}
	}
	return out
}
