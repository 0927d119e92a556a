package units

import (
	"context"
	"io"

	"github.com/kustomize-deploy/kustomize-deploy/internal/pipeline"
)

// Rendered is one unit of a configuration rendered offline, or why it
// did not render.
type Rendered struct {
	Name string
	*pipeline.Rendered
	Err error
}

// Render renders every unit of the run without a cluster and without
// keys, as the offline diff renders them (see renderSealed: charts see
// the configuration's CRDs; independent units in parallel), in
// configuration order: a whole-repository
// render for CI, a release snapshot. Secret values stay masked in what
// the caller writes (pipeline.Rendered.WriteYAML).
func (r *Run) Render(ctx context.Context) []Rendered {
	heads, opts, _ := r.renderSealed(ctx)
	out := make([]Rendered, len(r.units))
	r.each(len(r.units), func(i int) {
		u := r.units[i]
		out[i] = Rendered{Name: opts[i].Name, Rendered: heads[i], Err: u.Err}
		if heads[i] == nil && u.Err == nil {
			o := opts[i]
			o.Progress = io.Discard
			_, out[i].Err = pipeline.RenderSealed(ctx, o) // renders again, to say why
		}
	})
	return out
}
