package units

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/tags"
)

// selectTags is the run's Only once include and exclude tags select its
// units (config.Selects) among only (none: all of set's): unchanged
// without tags. A selection of no unit is an error, not a run that does
// nothing; a run of some units never garbage-collects (see Only).
func selectTags(set *config.Set, only, include, exclude []string, progress io.Writer) ([]string, error) {
	if len(include)+len(exclude) == 0 {
		return only, nil
	}
	for _, t := range slices.Concat(include, exclude) {
		if _, err := tags.Parse(t); err != nil || strings.Contains(t, ",") {
			return nil, fmt.Errorf("tag %q: want letters, digits, '.', '_' and '-'", t)
		}
	}
	var candidates, selected []string
	for _, u := range set.Units {
		if len(only) > 0 && !slices.Contains(only, u.Name) {
			continue
		}
		candidates = append(candidates, u.Name)
		if tags.Selects(u.Tags, include, exclude) {
			selected = append(selected, u.Name)
		}
	}
	var how []string
	if len(include) > 0 {
		how = append(how, "including tags "+strings.Join(include, ", "))
	}
	if len(exclude) > 0 {
		how = append(how, "excluding tags "+strings.Join(exclude, ", "))
	}
	if len(selected) == 0 {
		return nil, fmt.Errorf("no unit of the configuration is selected %s (of %d: %s); units are tagged with the annotation %s", strings.Join(how, " and "), len(candidates), strings.Join(candidates, ", "), tags.Annotation)
	}
	fmt.Fprintf(progress, "%s selects %d of %d units: %s\n", strings.Join(how, " and "), len(selected), len(candidates), strings.Join(selected, ", "))
	return selected, nil
}
