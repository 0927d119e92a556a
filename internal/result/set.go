package result

import "time"

// Set is the outcome of a run of several units (a configuration of Flux
// Kustomizations), one Result per unit in the configuration's order.
type Set struct {
	Mode      Mode      `json:"mode"`
	Revision  string    `json:"revision,omitempty"`
	Ready     bool      `json:"ready"` // no unit failed
	Units     []*Result `json:"units"`
	StartedAt time.Time `json:"startedAt"`
	Duration  string    `json:"duration"`
	// Builds is how many kustomize builds the run made, those that found
	// Kustomizations by building included: a unit built then and run is
	// built once (absent when none).
	Builds int `json:"builds,omitempty"`
	// Renders is how many times the run rendered a unit (its build,
	// decrypted and substituted), those that found Kustomizations by
	// building included; RenderedTwice names the units rendered more
	// than once (none when the rendering that found a unit's
	// Kustomizations is the one the unit applies).
	Renders       int      `json:"renders,omitempty"`
	RenderedTwice []string `json:"renderedTwice,omitempty"`
}

// Failed returns the units that failed.
func (s *Set) Failed() []*Result {
	var out []*Result
	for _, r := range s.Units {
		if r.Failed() {
			out = append(out, r)
		}
	}
	return out
}

// Changed reports whether any unit changed (or would change) anything.
func (s *Set) Changed() bool {
	for _, r := range s.Units {
		if r.Changed() {
			return true
		}
	}
	return false
}

// MaskTexts masks the texts of every unit's result (see Result.MaskTexts).
func (s *Set) MaskTexts(mask func(string) string) {
	for _, r := range s.Units {
		r.MaskTexts(mask)
	}
}
