package report

import (
	"fmt"
	"html"
	"io"
	"strings"

	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// The events and container states of a failed wait are in the result's
// message (every output shows them); the last lines of failing
// containers' logs are rendered here: indented in the text, folded in
// markdown.

// textLogs writes the log tails of r's diagnostics.
func textLogs(w io.Writer, r *result.Result) {
	for _, d := range r.Diagnostics {
		for _, l := range d.Logs {
			fmt.Fprintf(w, "%s, last %d lines:\n", l.Title(), len(l.Lines))
			for _, line := range l.Lines {
				fmt.Fprintln(w, "  | "+line)
			}
		}
	}
}

// logBlocks are the log tails of r's diagnostics, each folded.
func logBlocks(r *result.Result) []block {
	var bs []block
	for _, d := range r.Diagnostics {
		for _, l := range d.Logs {
			f := fenced("", strings.Join(l.Lines, "\n"))
			summary := html.EscapeString(fmt.Sprintf("%s: %s, last %d lines", d.Object, l.Title(), len(l.Lines)))
			bs = append(bs, block{head: "<details><summary>" + summary + "</summary>\n\n" + f.head, body: f.body, tail: f.tail + "</details>\n\n"})
		}
	}
	return bs
}
