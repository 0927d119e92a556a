package helm

import (
	"encoding/json"
	"fmt"
)

// Remediation strategies of a failed upgrade (spec.upgrade.remediation.
// strategy), as helm-controller names them.
const (
	StrategyRollback  = "rollback"
	StrategyUninstall = "uninstall"
)

// MaxRetries bounds the retries of a run: helm-controller retries a
// negative count without end, one reconciliation after another; a run
// ends, so it retries that many times at most.
const MaxRetries = 3

// Remediation is what a HelmRelease says to do when its install
// (spec.install.remediation) or upgrade (spec.upgrade.remediation) fails,
// with helm-controller's defaults.
type Remediation struct {
	// Retries is how many times the action is tried again after a
	// failure, the release remediated in between.
	Retries int
	// Strategy is how a failed upgrade is remediated: rollback (to the
	// release last applied successfully) or uninstall. A failed install
	// is always uninstalled.
	Strategy string
	// RemediateLastFailure says to remediate the last failure too, once
	// no retry is left: default false, and for an upgrade true when
	// Retries is above 0.
	RemediateLastFailure bool
	// IgnoreTestFailures says a failing test does not fail the release:
	// default spec.test.ignoreFailures.
	IgnoreTestFailures bool
}

// Remediates reports whether the failure of attempt (from 1) is
// remediated: always between attempts, and after the last when
// RemediateLastFailure says so.
func (r Remediation) Remediates(attempt int) bool {
	return attempt <= r.Retries || r.RemediateLastFailure
}

// Retry reports whether attempt (from 1), failing, is tried again.
func (r Remediation) Retry(attempt int) bool { return attempt <= r.Retries }

// Tests is spec.test: whether the chart's test hooks run after an
// install or upgrade, and whether their failure fails the release.
type Tests struct {
	Enable, IgnoreFailures bool
}

type remediationSpec struct {
	Retries              *int    `json:"retries"`
	IgnoreTestFailures   *bool   `json:"ignoreTestFailures"`
	RemediateLastFailure *bool   `json:"remediateLastFailure"`
	Strategy             *string `json:"strategy"`
}

type testSpec struct {
	Enable         bool            `json:"enable"`
	IgnoreFailures bool            `json:"ignoreFailures"`
	Filters        json.RawMessage `json:"filters"`
	Timeout        json.RawMessage `json:"timeout"`
}

// readTests reads spec.test.
func readTests(raw json.RawMessage) (Tests, []string, error) {
	var t testSpec
	if len(raw) == 0 || string(raw) == "null" {
		return Tests{}, nil, nil
	}
	if err := json.Unmarshal(raw, &t); err != nil {
		return Tests{}, nil, fmt.Errorf("spec.test: %w", err)
	}
	var notes []string
	if len(t.Filters) > 0 && string(t.Filters) != "null" {
		notes = append(notes, "spec.test.filters is read but not acted on: every test hook runs")
	}
	if len(t.Timeout) > 0 && string(t.Timeout) != "null" {
		notes = append(notes, "spec.test.timeout is read but not acted on: spec.timeout bounds each test hook")
	}
	return Tests{Enable: t.Enable, IgnoreFailures: t.IgnoreFailures}, notes, nil
}

// readRemediation reads spec.install.remediation (upgrade false) or
// spec.upgrade.remediation, with helm-controller's defaults.
func readRemediation(raw json.RawMessage, upgrade bool, tests Tests) (Remediation, error) {
	field := "spec.install.remediation"
	if upgrade {
		field = "spec.upgrade.remediation"
	}
	r := Remediation{Strategy: StrategyUninstall, IgnoreTestFailures: tests.IgnoreFailures}
	if upgrade {
		r.Strategy = StrategyRollback
	}
	var s remediationSpec
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &s); err != nil {
			return r, fmt.Errorf("%s: %w", field, err)
		}
	}
	if s.Retries != nil {
		r.Retries = *s.Retries
		if r.Retries < 0 {
			r.Retries = MaxRetries
		}
	}
	if s.IgnoreTestFailures != nil {
		r.IgnoreTestFailures = *s.IgnoreTestFailures
	}
	r.RemediateLastFailure = upgrade && r.Retries > 0
	if s.RemediateLastFailure != nil {
		r.RemediateLastFailure = *s.RemediateLastFailure
	}
	if s.Strategy != nil {
		if !upgrade {
			return r, fmt.Errorf("%s.strategy: not a field of an install's remediation (a failed install is uninstalled)", field)
		}
		if *s.Strategy != StrategyRollback && *s.Strategy != StrategyUninstall {
			return r, fmt.Errorf("%s.strategy: want rollback or uninstall, got %q", field, *s.Strategy)
		}
		r.Strategy = *s.Strategy
	}
	return r, nil
}
