package action

import (
	"bufio"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode"

	"sigs.k8s.io/yaml"
)

// This file runs action.yml as GitHub's runner runs a composite action: a
// workflow step `uses: ./` with inputs, the action's steps one after the
// other, each `run:` with bash and the runner's file commands, the
// expressions evaluated, and the action's outputs read from its steps'.
// What the runner would do that this does not model (an expression, a
// step key, an action used) fails the test, so action.yml cannot grow
// something untested here.

// compositeAction is what action.yml declares. Decoded strictly: a key the
// harness does not know fails.
type compositeAction struct {
	Name        string                     `json:"name"`
	Description string                     `json:"description"`
	Author      string                     `json:"author"`
	Branding    map[string]string          `json:"branding"`
	Inputs      map[string]compositeInput  `json:"inputs"`
	Outputs     map[string]compositeOutput `json:"outputs"`
	Runs        struct {
		Using string          `json:"using"`
		Steps []compositeStep `json:"steps"`
	} `json:"runs"`
}

type compositeInput struct {
	Description        string  `json:"description"`
	Required           bool    `json:"required"`
	Default            *string `json:"default"`
	DeprecationMessage string  `json:"deprecationMessage"`
}

type compositeOutput struct {
	Description string `json:"description"`
	Value       string `json:"value"`
}

type compositeStep struct {
	ID    string            `json:"id"`
	Name  string            `json:"name"`
	If    string            `json:"if"`
	Uses  string            `json:"uses"`
	With  map[string]string `json:"with"`
	Shell string            `json:"shell"`
	Env   map[string]string `json:"env"`
	Run   string            `json:"run"`
}

func readComposite(t *testing.T, path string) *compositeAction {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var a compositeAction
	if err := yaml.UnmarshalStrict(data, &a); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if a.Runs.Using != "composite" {
		t.Fatalf("%s: runs.using %q, want composite", path, a.Runs.Using)
	}
	return &a
}

// compositeRun is one run of the composite action in a job.
type compositeRun struct {
	t      *testing.T
	action *compositeAction
	// actionPath is github.action_path: the action's checkout.
	actionPath string
	// with are the workflow step's inputs.
	with map[string]string
	// job is the job's environment as the runner gives it to every step
	// (GITHUB_*, RUNNER_*, PATH, HOME...); GITHUB_ENV and GITHUB_PATH
	// change it for later steps, as on the runner.
	job map[string]string
	// github and runner are the contexts' values the action may read.
	github, runner map[string]string

	// cache is the repository's Actions cache (actions/cache/restore and
	// save): jobs that share it see each other's saves.
	cache *actionsCache

	inputs  map[string]string
	outputs map[string]map[string]string // step id → its outputs
	ran     []string                     // ids (or uses) of the steps that ran
	log     strings.Builder
}

// actionsCache is the Actions cache of a repository, as actions/cache sees
// it: entries by exact key, each a copy of the directory saved; an entry
// is never overwritten.
type actionsCache struct {
	dir     string
	mu      sync.Mutex
	entries map[string]string // key → the saved copy
	saves   int
}

func newActionsCache(t *testing.T) *actionsCache {
	return &actionsCache{dir: t.TempDir(), entries: map[string]string{}}
}

// newCompositeRun prepares a run of the action at actionPath, for a job
// whose runner environment is env (the GITHUB_* of an event, from newRun)
// and whose step gives with. The job's temp dir is fresh; the process
// environment contributes only what a runner's machine has (PATH, HOME,
// Go's caches), never an INPUT_* or GITHUB_* variable.
func newCompositeRun(t *testing.T, actionPath string, env, with map[string]string, token string) *compositeRun {
	t.Helper()
	abs, err := filepath.Abs(actionPath)
	if err != nil {
		t.Fatal(err)
	}
	job := map[string]string{}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "INPUT_") || strings.HasPrefix(k, "GITHUB_") || strings.HasPrefix(k, "RUNNER_") || strings.HasPrefix(k, "KD_") {
			continue
		}
		job[k] = v
	}
	for k, v := range env {
		job[k] = v
	}
	job["RUNNER_TEMP"], job["RUNNER_TOOL_CACHE"] = t.TempDir(), t.TempDir()
	job["RUNNER_OS"], job["RUNNER_ARCH"] = runnerOS(), runnerArch()
	job["GITHUB_STEP_SUMMARY"] = filepath.Join(job["RUNNER_TEMP"], "step_summary")
	r := &compositeRun{
		t: t, action: readComposite(t, filepath.Join(abs, "action.yml")), actionPath: abs, with: with, job: job,
		github: map[string]string{
			"action_path": abs,
			"action_ref":  "", // uses: ./ names no ref
			"token":       token,
			"workspace":   env["GITHUB_WORKSPACE"],
			"server_url":  env["GITHUB_SERVER_URL"],
			"repository":  env["GITHUB_REPOSITORY"],
			"sha":         env["GITHUB_SHA"],
			"event_name":  env["GITHUB_EVENT_NAME"],
		},
		runner:  map[string]string{"temp": job["RUNNER_TEMP"], "os": job["RUNNER_OS"], "arch": job["RUNNER_ARCH"]},
		outputs: map[string]map[string]string{},
		cache:   newActionsCache(t),
	}
	return r
}

// withoutGo drops from the job's PATH every directory that holds a go
// binary: a runner image without Go.
func (r *compositeRun) withoutGo() {
	var keep []string
	for _, d := range filepath.SplitList(r.job["PATH"]) {
		if _, err := os.Stat(filepath.Join(d, "go")); err == nil {
			continue
		}
		keep = append(keep, d)
	}
	r.job["PATH"] = strings.Join(keep, string(os.PathListSeparator))
}

func runnerOS() string {
	switch runtime.GOOS {
	case "darwin":
		return "macOS"
	case "windows":
		return "Windows"
	}
	return "Linux"
}

func runnerArch() string {
	if runtime.GOARCH == "arm64" {
		return "ARM64"
	}
	return "X64"
}

// run runs the action's steps and returns its outputs and whether every
// step succeeded. A step that fails skips the rest (no step asks for
// always()), as on the runner.
func (r *compositeRun) run() (map[string]string, error) {
	t := r.t
	t.Helper()
	if err := r.resolveInputs(); err != nil {
		t.Fatal(err)
	}
	var failed error
	for i, s := range r.action.Runs.Steps {
		what := s.ID
		if what == "" {
			what, _, _ = strings.Cut(s.Uses, "@")
		}
		if what == "" {
			what = fmt.Sprintf("step %d", i+1)
		}
		if s.If != "" {
			v, err := r.eval(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(s.If), "${{"), "}}"), i)
			if err != nil {
				t.Fatalf("%s: if: %v", what, err)
			}
			if !truthy(v) {
				continue
			}
		}
		r.ran = append(r.ran, what)
		switch {
		case s.Uses != "":
			r.uses(s, i)
		case s.Run != "":
			if err := r.runStep(s, i, what); err != nil {
				failed = err
			}
		default:
			t.Fatalf("%s: neither run nor uses", what)
		}
		if failed != nil {
			break
		}
	}
	outs := map[string]string{}
	for name, o := range r.action.Outputs {
		v, err := r.expand(o.Value, len(r.action.Runs.Steps))
		if err != nil {
			t.Fatalf("output %s: %v", name, err)
		}
		outs[name] = v
	}
	return outs, failed
}

// resolveInputs sets every input the action declares: the step's value,
// else the declared default (expressions evaluated), else "". An input
// the action does not declare fails (the runner only warns: a typo would
// pass unnoticed).
func (r *compositeRun) resolveInputs() error {
	r.inputs = map[string]string{}
	for k := range r.with {
		if _, ok := r.action.Inputs[k]; !ok {
			return fmt.Errorf("with: input %q is not declared by action.yml", k)
		}
	}
	for name, in := range r.action.Inputs {
		v, given := r.with[name]
		if !given && in.Default != nil {
			var err error
			if v, err = r.expand(*in.Default, 0); err != nil {
				return fmt.Errorf("input %s: default: %w", name, err)
			}
		}
		r.inputs[name] = v
	}
	return nil
}

// uses models the actions the composite may use. actions/setup-go: the
// test's own toolchain stands in, after checking it is asked for the
// action's own go.mod, with its cache off (the action's go.sum is outside
// the workspace, where setup-go's cache cannot key on it).
// actions/cache/restore and save: r.cache, by exact key only.
func (r *compositeRun) uses(s compositeStep, i int) {
	t := r.t
	t.Helper()
	name, _, _ := strings.Cut(s.Uses, "@")
	with := map[string]string{}
	for k, v := range s.With {
		ev, err := r.expand(v, i)
		if err != nil {
			t.Fatalf("%s: with %s: %v", name, k, err)
		}
		with[k] = ev
	}
	wantKeys := func(keys ...string) {
		t.Helper()
		got := slices.Sorted(maps.Keys(with))
		if slices.Sort(keys); !slices.Equal(got, keys) {
			t.Errorf("%s: with %v, want exactly %v", name, got, keys)
		}
	}
	switch name {
	case "actions/setup-go":
		wantKeys("go-version-file", "cache")
		if filepath.Clean(with["go-version-file"]) != filepath.Join(r.actionPath, "go.mod") && filepath.Clean(with["go-version-file"]) != filepath.Join(filepath.Dir(r.actionPath), "go.mod") {
			t.Errorf("setup-go: go-version-file %q, want the action's go.mod", with["go-version-file"])
		}
		if with["cache"] != "false" {
			t.Errorf("setup-go: cache %q, want false", with["cache"])
		}
		// As setup-go, put the Go it installed first on PATH.
		goBin, err := exec.LookPath("go")
		if err != nil {
			t.Fatalf("setup-go: the test's own go: %v", err)
		}
		r.job["PATH"] = filepath.Dir(goBin) + string(os.PathListSeparator) + r.job["PATH"]
	case "actions/cache/restore":
		wantKeys("path", "key")
		r.outputs[s.ID] = r.cache.restore(t, with["key"], with["path"], &r.log)
	case "actions/cache/save":
		wantKeys("path", "key")
		r.cache.save(t, with["key"], with["path"], &r.log)
	default:
		t.Fatalf("step %d uses %s, which this harness does not model", i+1, s.Uses)
	}
}

// restore copies the entry of key, if any, to path: its outputs as
// actions/cache/restore sets them.
func (c *actionsCache) restore(t *testing.T, key, path string, log *strings.Builder) map[string]string {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if key == "" || path == "" {
		t.Fatalf("actions/cache/restore: key %q, path %q: both are required", key, path)
	}
	saved, ok := c.entries[key]
	if !ok {
		fmt.Fprintf(log, "== actions/cache/restore\nCache not found for input keys: %s\n", key)
		return map[string]string{"cache-hit": "false", "cache-primary-key": key}
	}
	copyTree(t, saved, path)
	fmt.Fprintf(log, "== actions/cache/restore\nCache restored from key: %s\n", key)
	return map[string]string{"cache-hit": "true", "cache-primary-key": key, "cache-matched-key": key}
}

// save keeps a copy of path under key, unless key is taken.
func (c *actionsCache) save(t *testing.T, key, path string, log *strings.Builder) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[key]; ok {
		fmt.Fprintf(log, "== actions/cache/save\nFailed to save: cache entry %s already exists\n", key)
		return
	}
	if _, err := os.Stat(path); err != nil {
		fmt.Fprintf(log, "== actions/cache/save\nWarning: Path Validation Error: %s does not exist\n", path)
		return
	}
	dst := filepath.Join(c.dir, fmt.Sprint(len(c.entries)))
	copyTree(t, path, dst)
	c.entries[key] = dst
	c.saves++
	fmt.Fprintf(log, "== actions/cache/save\nCache saved with key: %s\n", key)
}

// copyTree copies the files under src to dst, modes kept (actions/cache
// archives with tar).
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(target, info.Mode().Perm()|0o700)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm())
	})
	if err != nil {
		t.Fatalf("copying %s to %s: %v", src, dst, err)
	}
}

// runStep runs a run: step as the runner does for shell: bash (bash
// --noprofile --norc -eo pipefail {0}), in the workspace, with the job's
// environment and the step's env, and fresh GITHUB_OUTPUT, GITHUB_ENV and
// GITHUB_PATH files read back after it.
func (r *compositeRun) runStep(s compositeStep, i int, what string) error {
	t := r.t
	t.Helper()
	if s.Shell != "bash" {
		t.Fatalf("%s: shell %q: bash is the shell every runner OS has", what, s.Shell)
	}
	dir := t.TempDir()
	script, err := r.expand(s.Run, i)
	if err != nil {
		t.Fatalf("%s: run: %v", what, err)
	}
	scriptPath := filepath.Join(dir, "step.sh")
	writeFile(t, scriptPath, script)
	files := map[string]string{"GITHUB_OUTPUT": "output", "GITHUB_ENV": "env", "GITHUB_PATH": "path"}
	env := map[string]string{}
	for k, v := range r.job {
		env[k] = v
	}
	for k, f := range files {
		env[k] = filepath.Join(dir, f)
		writeFile(t, env[k], "")
	}
	env["GITHUB_ACTION_PATH"] = r.actionPath
	env["GITHUB_ACTION_REF"] = r.github["action_ref"]
	for k, v := range s.Env {
		ev, err := r.expand(v, i)
		if err != nil {
			t.Fatalf("%s: env %s: %v", what, k, err)
		}
		env[k] = ev
	}
	cmd := exec.CommandContext(t.Context(), "bash", "--noprofile", "--norc", "-eo", "pipefail", scriptPath)
	cmd.Dir = r.job["GITHUB_WORKSPACE"]
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, runErr := cmd.CombinedOutput()
	fmt.Fprintf(&r.log, "== %s\n%s", what, out)

	outputs, err := readFileCommand(env["GITHUB_OUTPUT"])
	if err != nil {
		t.Fatalf("%s: GITHUB_OUTPUT: %v", what, err)
	}
	if s.ID != "" {
		r.outputs[s.ID] = outputs
	}
	vars, err := readFileCommand(env["GITHUB_ENV"])
	if err != nil {
		t.Fatalf("%s: GITHUB_ENV: %v", what, err)
	}
	for k, v := range vars {
		r.job[k] = v
	}
	paths, _ := os.ReadFile(env["GITHUB_PATH"])
	for _, p := range strings.Split(strings.TrimSpace(string(paths)), "\n") {
		if p != "" {
			r.job["PATH"] = p + string(os.PathListSeparator) + r.job["PATH"]
		}
	}
	if runErr != nil {
		return fmt.Errorf("%s: %v", what, runErr)
	}
	return nil
}

// readFileCommand reads GITHUB_OUTPUT or GITHUB_ENV as the runner does:
// name=value lines and name<<DELIMITER blocks.
func readFileCommand(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	sc.Buffer(make([]byte, 1<<20), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		if name, delim, ok := strings.Cut(line, "<<"); ok && !strings.Contains(name, "=") {
			var val []string
			closed := false
			for sc.Scan() {
				if sc.Text() == delim {
					closed = true
					break
				}
				val = append(val, sc.Text())
			}
			if !closed {
				return nil, fmt.Errorf("%s: no closing %s", name, delim)
			}
			out[name] = strings.Join(val, "\n")
			continue
		}
		name, val, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("line %q is neither name=value nor name<<DELIMITER", line)
		}
		out[name] = val
	}
	return out, sc.Err()
}

// expression is a ${{ }} expression.
var expression = regexp.MustCompile(`\$\{\{(.*?)\}\}`)

// expand replaces every ${{ }} of s with its value, as seen by step i.
func (r *compositeRun) expand(s string, i int) (string, error) {
	var errs []string
	out := expression.ReplaceAllStringFunc(s, func(m string) string {
		v, err := r.eval(expression.FindStringSubmatch(m)[1], i)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", m, err))
		}
		return v
	})
	if len(errs) > 0 {
		return "", fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return out, nil
}

// eval evaluates an expression of the subset action.yml may use: context
// references (inputs.X, github.X, runner.X, steps.ID.outputs.X of a step
// before i), 'string' literals, ==, != (case-insensitive, as GitHub
// compares strings), !, &&, || (the first truthy operand, as GitHub
// returns it) and parentheses. Anything else is an error.
func (r *compositeRun) eval(expr string, i int) (string, error) {
	p := &exprParser{r: r, step: i}
	if err := p.tokenize(expr); err != nil {
		return "", err
	}
	v, err := p.or()
	if err != nil {
		return "", err
	}
	if p.pos != len(p.toks) {
		return "", fmt.Errorf("unexpected %q in %q", p.toks[p.pos], expr)
	}
	return v, nil
}

func truthy(v string) bool { return v != "" && v != "false" }

type exprParser struct {
	r    *compositeRun
	step int
	toks []string
	pos  int
}

func (p *exprParser) tokenize(s string) error {
	for i := 0; i < len(s); {
		c := rune(s[i])
		switch {
		case unicode.IsSpace(c):
			i++
		case strings.HasPrefix(s[i:], "==") || strings.HasPrefix(s[i:], "!=") || strings.HasPrefix(s[i:], "&&") || strings.HasPrefix(s[i:], "||"):
			p.toks = append(p.toks, s[i:i+2])
			i += 2
		case c == '!' || c == '(' || c == ')':
			p.toks = append(p.toks, string(c))
			i++
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return fmt.Errorf("unterminated string in %q", s)
			}
			p.toks = append(p.toks, s[i:i+j+2])
			i += j + 2
		case unicode.IsLetter(c) || c == '_':
			j := i
			for j < len(s) && (unicode.IsLetter(rune(s[j])) || unicode.IsDigit(rune(s[j])) || strings.ContainsRune("_-.", rune(s[j]))) {
				j++
			}
			p.toks = append(p.toks, s[i:j])
			i = j
		default:
			return fmt.Errorf("the harness does not understand %q in %q", s[i:], s)
		}
	}
	return nil
}

func (p *exprParser) next() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return ""
}

func (p *exprParser) or() (string, error) {
	v, err := p.and()
	for err == nil && p.next() == "||" {
		p.pos++
		var w string
		if w, err = p.and(); !truthy(v) {
			v = w
		}
	}
	return v, err
}

func (p *exprParser) and() (string, error) {
	v, err := p.unary()
	for err == nil && p.next() == "&&" {
		p.pos++
		var w string
		if w, err = p.unary(); truthy(v) {
			v = w
		}
	}
	return v, err
}

func (p *exprParser) unary() (string, error) {
	if p.next() == "!" {
		p.pos++
		v, err := p.unary()
		return fmt.Sprint(!truthy(v)), err
	}
	v, err := p.primary()
	if err != nil {
		return "", err
	}
	if op := p.next(); op == "==" || op == "!=" {
		p.pos++
		w, err := p.primary()
		return fmt.Sprint(strings.EqualFold(v, w) == (op == "==")), err
	}
	return v, nil
}

func (p *exprParser) primary() (string, error) {
	tok := p.next()
	p.pos++
	switch {
	case tok == "":
		return "", fmt.Errorf("expression ends early")
	case tok == "(":
		v, err := p.or()
		if err == nil && p.next() != ")" {
			err = fmt.Errorf("no closing parenthesis")
		}
		p.pos++
		return v, err
	case strings.HasPrefix(tok, "'"):
		return strings.Trim(tok, "'"), nil
	}
	return p.r.context(tok, p.step)
}

// context is the value of a context reference, as seen by step i.
func (r *compositeRun) context(ref string, i int) (string, error) {
	parts := strings.Split(ref, ".")
	lookup := func(m map[string]string, what, key string) (string, error) {
		v, ok := m[key]
		if !ok {
			return "", fmt.Errorf("%s.%s is not modelled by the harness (or not declared)", what, key)
		}
		return v, nil
	}
	switch {
	case len(parts) == 2 && parts[0] == "inputs":
		return lookup(r.inputs, "inputs", parts[1])
	case len(parts) == 2 && parts[0] == "github":
		return lookup(r.github, "github", parts[1])
	case len(parts) == 2 && parts[0] == "runner":
		return lookup(r.runner, "runner", parts[1])
	case len(parts) == 4 && parts[0] == "steps" && parts[2] == "outputs":
		at := slices.IndexFunc(r.action.Runs.Steps, func(s compositeStep) bool { return s.ID == parts[1] })
		if at < 0 || at >= i {
			return "", fmt.Errorf("%s: no step %s before this one", ref, parts[1])
		}
		return r.outputs[parts[1]][parts[3]], nil // a skipped step's outputs are empty
	}
	return "", fmt.Errorf("the harness does not understand %q", ref)
}

// withInputs splits newRun's variables into what the runner gives every
// step of the job and the workflow step's with: (its INPUT_* variables,
// which a composite action does not receive as such), and the job's
// token (github.token, the default of input github-token).
func withInputs(e *runEnv) (env, with map[string]string, token string) {
	env, with = map[string]string{}, map[string]string{}
	for k, v := range e.vars {
		if name, ok := strings.CutPrefix(k, "INPUT_"); ok {
			with[strings.ToLower(name)] = v
			continue
		}
		env[k] = v
	}
	token = with["github-token"]
	delete(with, "github-token")
	return env, with, token
}
