package prune

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

func TestBudget(t *testing.T) {
	t.Parallel()
	cm := func(i int) object.ID { return object.ID{Kind: "ConfigMap", Namespace: "a", Name: fmt.Sprint(i)} }
	ns := object.ID{Kind: "Namespace", Name: "a"}
	pvc := object.ID{Kind: "PersistentVolumeClaim", Namespace: "a", Name: "data"}
	cert := object.ID{Group: "cert-manager.io", Kind: "Certificate", Namespace: "a", Name: "tls"}
	otherCert := object.ID{Group: "example.com", Kind: "Certificate", Namespace: "a", Name: "tls"}
	for _, tc := range []struct {
		name          string
		budget        Budget
		prune         []object.ID
		collected     map[object.ID]bool
		wantProtected []object.ID
		refused       bool
	}{
		{"nothing to prune", Budget{Max: 1, Protect: DefaultProtect}, nil, nil, nil, false},
		{"within the count", Budget{Max: 2}, []object.ID{cm(1), cm(2)}, nil, nil, false},
		{"over the count", Budget{Max: 2}, []object.ID{cm(1), cm(2), cm(3)}, nil, nil, true},
		{"no limit", Budget{}, []object.ID{cm(1), cm(2), cm(3)}, nil, nil, false},
		{"a protected kind", Budget{Protect: DefaultProtect}, []object.ID{cm(1), pvc, ns}, nil, []object.ID{ns, pvc}, true},
		{"kinds match without case", Budget{Protect: []string{"namespace"}}, []object.ID{ns}, nil, []object.ID{ns}, true},
		{"Kind.group names one group", Budget{Protect: []string{"Certificate.cert-manager.io"}}, []object.ID{cert, otherCert}, nil, []object.ID{cert}, true},
		{"what a generator stopped generating is not protected", Budget{Protect: DefaultProtect}, []object.ID{ns, pvc}, map[object.ID]bool{ns: true}, []object.ID{pvc}, true},
		{"all of it collected", Budget{Protect: DefaultProtect}, []object.ID{cm(1), ns}, map[object.ID]bool{ns: true}, nil, false},
		{"collected objects still count", Budget{Max: 1, Protect: DefaultProtect}, []object.ID{cm(1), ns}, map[object.ID]bool{ns: true}, nil, true},
		{"allowed", Budget{Max: 1, Protect: DefaultProtect, Allow: true}, []object.ID{cm(1), cm(2), ns}, nil, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.budget.CheckCollected(tc.prune, tc.collected)
			var be *BudgetError
			if errors.As(err, &be) != tc.refused {
				t.Fatalf("Check = %v, refused want %v", err, tc.refused)
			}
			if !tc.refused {
				return
			}
			if diff := cmp.Diff(tc.wantProtected, be.Protected); diff != "" {
				t.Errorf("protected mismatch (-want +got):\n%s", diff)
			}
			for _, id := range tc.prune {
				if !strings.Contains(err.Error(), "\n  - "+id.String()) {
					t.Errorf("the error does not list %s:\n%v", id, err)
				}
			}
		})
	}
	if err := ValidateProtect([]string{"Namespace", "Certificate.cert-manager.io"}); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{"", "apps/Deployment", "a b", ".group"} {
		if ValidateProtect([]string{bad}) == nil {
			t.Errorf("protect %q accepted", bad)
		}
	}
}

// Garbage-collecting units that left a configuration is bounded by their
// number, and their objects count as one prune.
func TestCheckCollect(t *testing.T) {
	t.Parallel()
	cm := func(i int) object.ID { return object.ID{Kind: "ConfigMap", Namespace: "a", Name: fmt.Sprint(i)} }
	ns := object.ID{Kind: "Namespace", Name: "a"}
	for _, tc := range []struct {
		name    string
		budget  Budget
		units   []string
		objects []object.ID
		want    string // the error, "" when allowed
	}{
		{"nothing to collect", Budget{MaxUnits: 1, Max: 1}, nil, nil, ""},
		{"within", Budget{MaxUnits: 2, Max: 2, Protect: DefaultProtect}, []string{"b", "a"}, []object.ID{cm(1), cm(2)}, ""},
		{"no limits", Budget{}, []string{"a", "b", "c", "d"}, []object.ID{cm(1), ns}, ""},
		{"too many units", Budget{MaxUnits: 2}, []string{"c", "a", "b"}, nil,
			"refusing to garbage-collect 3 unit(s) that left the configuration (a, b, c): more than the 2 unit(s) allowed; none is collected"},
		{"too many objects together", Budget{MaxUnits: 3, Max: 2}, []string{"a", "b"}, []object.ID{cm(1), cm(2), cm(3)},
			"refusing to garbage-collect 2 unit(s) that left the configuration (a, b): its 3 object(s) to delete are more than the 2 allowed; none is collected"},
		{"a protected kind", Budget{Protect: DefaultProtect}, []string{"a"}, []object.ID{cm(1), ns},
			"refusing to garbage-collect 1 unit(s) that left the configuration (a): its 2 object(s) to delete are of protected kinds: Namespace/a; none is collected"},
		{"both", Budget{MaxUnits: 1, Protect: DefaultProtect}, []string{"a", "b"}, []object.ID{ns},
			"refusing to garbage-collect 2 unit(s) that left the configuration (a, b): more than the 1 unit(s) allowed; its 1 object(s) to delete are of protected kinds: Namespace/a; none is collected"},
		{"allowed", Budget{MaxUnits: 1, Max: 1, Protect: DefaultProtect, Allow: true}, []string{"a", "b"}, []object.ID{cm(1), cm(2), ns}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.budget.CheckCollect(tc.units, tc.objects)
			got := ""
			if err != nil {
				got = err.Error()
				if !errors.As(err, new(*CollectError)) {
					t.Errorf("%T is not a *CollectError", err)
				}
			}
			if got != tc.want {
				t.Errorf("CheckCollect:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}
