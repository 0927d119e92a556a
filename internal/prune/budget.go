package prune

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// DefaultProtect are the kinds whose prune loses data or takes other
// objects with it: a Namespace its contents, a CRD every resource of its
// kind, a PersistentVolumeClaim or PersistentVolume the data.
var DefaultProtect = []string{"Namespace", "CustomResourceDefinition", "PersistentVolumeClaim", "PersistentVolume"}

// DefaultMaxUnits is how many units that left a configuration one run
// may garbage-collect unless told otherwise.
const DefaultMaxUnits = 3

// Budget bounds what one run may prune: more than Max objects (0: no
// limit), or any object of a Protect kind, is refused unless Allow (a
// reviewer's label on the pull request, or force-prune). A run of a
// configuration that would garbage-collect more than MaxUnits units that
// left it (0: no limit) is refused too, and their objects count as one
// prune (see CheckCollect).
type Budget struct {
	Max int
	// Protect are kinds, e.g. Namespace, or Kind.group to name one group's
	// (Certificate.cert-manager.io); matched without regard to case.
	Protect  []string
	MaxUnits int
	Allow    bool
}

// BudgetError is a prune the budget refuses: every object it would
// delete, and which of them made it refuse.
type BudgetError struct {
	Prune     []object.ID
	Max       int
	Protected []object.ID
}

func (e *BudgetError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "refusing to prune %d object(s), %s; nothing was applied. It would delete:", len(e.Prune), e.why())
	for _, id := range e.Prune {
		b.WriteString("\n  - " + id.String())
	}
	return b.String()
}

// why says what makes the prune over the budget.
func (e *BudgetError) why() string {
	var why []string
	if e.Max > 0 && len(e.Prune) > e.Max {
		why = append(why, fmt.Sprintf("more than the %d allowed", e.Max))
	}
	if len(e.Protected) > 0 {
		names := make([]string, len(e.Protected))
		for i, id := range e.Protected {
			names[i] = id.String()
		}
		why = append(why, "of protected kinds: "+strings.Join(names, ", "))
	}
	return strings.Join(why, "; ")
}

// CollectError is a garbage collection of units that left a
// configuration that the budget refuses: every unit it would collect,
// and what made it refuse.
type CollectError struct {
	Units    []string
	MaxUnits int
	// Objects, when set, are the objects the collection would delete,
	// over the budget of a prune.
	Objects *BudgetError
	// Deleting says the units are deleted with their configuration, not
	// collected for leaving it.
	Deleting bool
}

func (e *CollectError) Error() string {
	var why []string
	if e.MaxUnits > 0 && len(e.Units) > e.MaxUnits {
		why = append(why, fmt.Sprintf("more than the %d unit(s) allowed", e.MaxUnits))
	}
	if e.Objects != nil {
		why = append(why, fmt.Sprintf("its %d object(s) to delete are %s", len(e.Objects.Prune), e.Objects.why()))
	}
	if e.Deleting {
		return fmt.Sprintf("refusing to delete %d unit(s) of the configuration (%s): %s; none is deleted",
			len(e.Units), strings.Join(e.Units, ", "), strings.Join(why, "; "))
	}
	return fmt.Sprintf("refusing to garbage-collect %d unit(s) that left the configuration (%s): %s; none is collected",
		len(e.Units), strings.Join(e.Units, ", "), strings.Join(why, "; "))
}

// CheckCollect returns a *CollectError when garbage-collecting units,
// which deletes objects, is over the budget: more than MaxUnits units,
// or objects that Check refuses as one prune.
func (b Budget) CheckCollect(units []string, objects []object.ID) error {
	if b.Allow || len(units) == 0 {
		return nil
	}
	e := &CollectError{Units: slices.Clone(units), MaxUnits: b.MaxUnits}
	slices.Sort(e.Units)
	if err := b.Check(objects); err != nil {
		e.Objects = err.(*BudgetError)
	}
	if e.Objects == nil && (b.MaxUnits <= 0 || len(units) <= b.MaxUnits) {
		return nil
	}
	return e
}

// Check returns a *BudgetError when pruning ids is over the budget.
func (b Budget) Check(ids []object.ID) error { return b.CheckCollected(ids, nil) }

// CheckCollected is Check of a prune in which the objects of collected
// are what a generator still in the build stopped generating (a
// ResourceSet's input that went away: a closed pull request's preview
// Namespace): the generator asked for their removal, so their kind
// does not protect them. They still count towards Max.
func (b Budget) CheckCollected(ids []object.ID, collected map[object.ID]bool) error {
	if b.Allow || len(ids) == 0 {
		return nil
	}
	e := &BudgetError{Prune: slices.Clone(ids), Max: b.Max}
	slices.SortFunc(e.Prune, func(x, y object.ID) int {
		if x.Less(y) {
			return -1
		}
		if y.Less(x) {
			return 1
		}
		return 0
	})
	for _, id := range e.Prune {
		if b.protects(id) && !collected[id] {
			e.Protected = append(e.Protected, id)
		}
	}
	if len(e.Protected) == 0 && (b.Max <= 0 || len(ids) <= b.Max) {
		return nil
	}
	return e
}

func (b Budget) protects(id object.ID) bool {
	for _, p := range b.Protect {
		kind, group, _ := strings.Cut(p, ".")
		if strings.EqualFold(kind, id.Kind) && (group == "" || strings.EqualFold(group, id.Group)) {
			return true
		}
	}
	return false
}

// ValidateProtect checks protect entries: Kind or Kind.group.
func ValidateProtect(kinds []string) error {
	for _, k := range kinds {
		kind, _, _ := strings.Cut(k, ".")
		if kind == "" || strings.ContainsAny(k, " /,") {
			return fmt.Errorf("%q is not a kind (Kind, or Kind.group)", k)
		}
	}
	return nil
}
