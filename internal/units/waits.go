package units

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
)

// In Flux, a Kustomization with wait: true is Ready only once everything
// it applied is, and a Kustomization it applied is Ready once that one
// has reconciled: so a unit that depends on it waits, in Flux, for the
// Kustomizations it emitted as well (flux2-multi-tenancy's
// kyverno-policies, which needs the CRDs of the kyverno-controller
// Kustomization that kyverno applies and waits for). The same holds for
// a Kustomization it names in healthChecks. Here an emitted Kustomization
// is a unit of its own that runs after the one that emitted it, so that
// wait becomes dependencies: a unit depending on a waiting unit also
// depends on the units it emitted (and, through theirs, on what those
// wait for).

// waitedFor returns the units of set that the readiness of u includes
// beyond u itself, as Flux's health checks of u would see them: those
// its build emitted when u waits for what it applies, those its
// healthChecks name, and theirs in turn.
func waitedFor(set *config.Set, u *config.Unit) []*config.Unit {
	var out []*config.Unit
	seen := map[config.Ref]bool{u.Ref: true}
	var visit func(p *config.Unit)
	visit = func(p *config.Unit) {
		for _, x := range set.Units {
			if seen[x.Ref] || len(x.EmittedBy) == 0 || x.EmittedBy[len(x.EmittedBy)-1] != p.Ref {
				continue
			}
			if p.Wait || checksHealthOf(p, x) {
				seen[x.Ref] = true
				out = append(out, x)
				visit(x)
			}
		}
	}
	visit(u)
	return out
}

// checksHealthOf says whether p's healthChecks name the Kustomization x.
func checksHealthOf(p, x *config.Unit) bool {
	return slices.ContainsFunc(p.HealthChecks, func(h config.HealthCheck) bool {
		return h.Kind == "Kustomization" && strings.HasPrefix(h.APIVersion, "kustomize.toolkit.fluxcd.io/") &&
			h.Name == x.Ref.Name && h.Namespace == x.Ref.Namespace
	})
}

// addWaits adds to each unit of out, beside each dependency of this
// run its dependsOn names, the units that dependency's readiness includes (see waitedFor),
// with a note. An edge that would close a cycle (a unit the dependency
// waits for that itself waits for the unit) is left out: Flux would
// wait for it until the timeout.
func (c Config) addWaits(out []Unit) {
	byName := map[string]*config.Unit{}
	for _, u := range c.Set.Units {
		byName[u.Name] = u
	}
	index := map[string]int{}
	for i, u := range out {
		index[u.Options.Name] = i
	}
	for i := range out {
		var added []string
		self := byName[out[i].Options.Name]
		for _, dep := range slices.Clone(out[i].DependsOn) {
			d := byName[dep]
			if d == nil || self == nil || !slices.Contains(self.DependsOn, d.Ref) {
				continue // not a dependsOn: the unit that emitted it, which it only runs after
			}
			var via []string
			for _, x := range waitedFor(c.Set, d) {
				j, ok := index[x.Name]
				if !ok || j == i || slices.Contains(out[i].DependsOn, x.Name) || reaches(out, index, j, i) {
					continue
				}
				out[i].DependsOn = append(out[i].DependsOn, x.Name)
				via = append(via, x.Name)
			}
			if len(via) > 0 {
				added = append(added, fmt.Sprintf("%s (which %s waits for)", strings.Join(via, ", "), dep))
			}
		}
		if len(added) > 0 {
			out[i].Options.Notes = append(out[i].Options.Notes, fmt.Sprintf("runs after %s too: in Flux a Kustomization that waits is Ready once the Kustomizations it applies are", strings.Join(added, "; ")))
		}
	}
}

// reaches says whether unit from depends, directly or not, on unit to.
func reaches(out []Unit, index map[string]int, from, to int) bool {
	seen := map[int]bool{}
	stack := []int{from}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n == to {
			return true
		}
		if seen[n] {
			continue
		}
		seen[n] = true
		for _, d := range out[n].DependsOn {
			if j, ok := index[d]; ok {
				stack = append(stack, j)
			}
		}
	}
	return false
}
