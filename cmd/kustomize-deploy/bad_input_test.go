package main

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/getsops/sops/v3/cmd/sops/formats"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/sopstest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/testcluster"
)

// badInputDir is the corpus of bad input: one folder per case, each with
// a case.yaml (badCase), the case's input files and a want.txt.
var badInputDir = filepath.Join("..", "..", "testdata", "bad")

// minBadCases is how many cases the corpus must hold at least.
const minBadCases = 30

// badCase is a case's case.yaml: how to run it. Paths are relative to the
// case folder; NAMESPACE, in every file of the folder, in the arguments
// and in want.txt, becomes the case's own namespace. Each line of
// want.txt is text the output (stdout and stderr) must hold, or, after a
// "!", must not (a secret, a misleading word).
type badCase struct {
	// About says what the case shows and what the test sets up for it.
	About string `json:"about"`
	// Args is the command line, which runs the unit app (badUnit). Unit
	// commands (apply, diff, drift) get the test cluster's flags and -n
	// NAMESPACE unless they name their own; --path, --root, --config,
	// --kubeconfig, --sops-age-key-file and --substitute-from are made
	// absolute.
	Args []string `json:"args"`
	// Exit is the exit code the command must end with: 1 (the default)
	// for a failed run, 2 for a command-line mistake.
	Exit int `json:"exit,omitempty"`
	// Env is the command's environment: the action's INPUT_* variables
	// (the test adds GITHUB_*, and the cluster's kubeconfig, inventory
	// namespace, namespace and name inputs unless set), or SOPS_AGE_KEY.
	Env map[string]string `json:"env,omitempty"`
	// Cluster is what the command finds at the other end: "" the test
	// cluster; "unreachable" a kubeconfig naming a closed port; "frozen"
	// a cluster of the case's own whose API server answers nothing.
	Cluster string `json:"cluster,omitempty"`
	// Inventory damages the unit's inventory Secret after the good
	// version was applied: "garbage" overwrites its object list with
	// bytes that are not gzip, "replaced" its whole data with a key of
	// its own.
	Inventory string `json:"inventory,omitempty"`
	// Generate are files the test writes into the copy of the folder
	// before the run: what would be big, binary, secret or not a file.
	Generate []generatedFile `json:"generate,omitempty"`
	// BuildMemory bounds the peak resident memory of the build command
	// of --path, run in a process of its own ("600Mi").
	BuildMemory string `json:"buildMemory,omitempty"`
	// Good is how the good version of the unit is applied before the
	// run: "" with --name and --path; "config" as the one Kustomization
	// of a configuration flux/ (goodConfig), which the case's own flux/
	// then stands for: a unit that leaves it would be garbage-collected.
	Good string `json:"good,omitempty"`
}

// generatedFile is a file the test writes: exactly one of ConfigMap,
// Symlink, FIFO and Encrypt is set.
type generatedFile struct {
	// File is where, in the case folder.
	File string `json:"file"`
	// ConfigMap is the size of a ConfigMap, named after the file, whose
	// one value makes the file that large ("20Mi").
	ConfigMap string `json:"configMap,omitempty"`
	// Symlink is where a symlink points: "outside" is a ConfigMap in a
	// directory outside the case folder; anything else is taken as is.
	Symlink string `json:"symlink,omitempty"`
	// FIFO makes a named pipe.
	FIFO bool `json:"fifo,omitempty"`
	// Encrypt is a plaintext file of the case folder that sops encrypts
	// into File for a fresh age key (YAML: data and stringData only).
	Encrypt string `json:"encrypt,omitempty"`
	// Key is the age identity the command gets in SOPS_AGE_KEY:
	// "matching", "other" (a key the file was not encrypted for) or
	// "none".
	Key string `json:"key,omitempty"`
	// Tamper changes the encrypted file after encryption: "mac" alters
	// the ciphertext of its MAC, "value" that of its first value.
	Tamper string `json:"tamper,omitempty"`
}

// TestBadInput runs every case of the bad-input corpus: the command exits
// with the case's code, says what want.txt says (the file, object or
// field at fault), does not panic, and leaves the cluster as it found it:
// the objects of the unit's good version untouched, none of the bad
// version's created, the inventory's object list unchanged.
func TestBadInput(t *testing.T) {
	entries, err := os.ReadDir(badInputDir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	if len(names) < minBadCases {
		t.Fatalf("%s holds %d cases, want at least %d", badInputDir, len(names), minBadCases)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runBadCase(t, name)
		})
	}
}

func runBadCase(t *testing.T, name string) {
	bc, dir, want := loadBadCase(t, name)
	c := newCLI(t)
	dir, want = instantiate(t, dir, want, c.ns)
	bc.generate(t, dir, c)

	target := targetCluster{config: cluster, client: cluster.Client(t)}
	if bc.Cluster == "frozen" {
		own, client := ownCluster(t, c.ns)
		target = targetCluster{config: own, client: client}
	}
	args := bc.command(t, dir, c, target)
	switch bc.Good {
	case "":
		target.applyGood(t, c)
	case "config":
		target.applyGoodConfig(t, c)
	default:
		t.Fatalf("good %q: want config or nothing", bc.Good)
	}
	bc.damageInventory(t, target, c.ns)
	before := target.snapshot(t, c.ns)

	if bc.Cluster == "frozen" {
		target.config.FreezeAPIServer()
	}
	start := time.Now()
	o := c.runAsIs(args...)
	if bc.Cluster == "frozen" {
		target.config.ThawAPIServer()
	}
	t.Logf("%q: exit %d in %s\nstdout:\n%s\nstderr:\n%s", args, o.code, time.Since(start).Round(time.Millisecond), o.stdout, o.stderr)

	out := o.stdout + o.stderr
	if wantCode := cmp.Or(bc.Exit, exitFail); o.code != wantCode {
		t.Errorf("exit %d, want %d", o.code, wantCode)
	}
	for _, line := range strings.Split(want, "\n") {
		line = strings.TrimSpace(line)
		if unwanted, ok := strings.CutPrefix(line, "!"); ok {
			if strings.Contains(out, unwanted) {
				t.Errorf("the output says %q", unwanted)
			}
		} else if line != "" && !strings.Contains(out, line) {
			t.Errorf("the output does not say %q", line)
		}
	}
	for _, s := range []string{"panic", "goroutine "} {
		if strings.Contains(out, s) {
			t.Errorf("the output mentions %q", s)
		}
	}
	target.snapshot(t, c.ns).same(t, before, bc.Inventory != "")
	if bc.BuildMemory != "" {
		bc.checkBuildMemory(t, dir, args)
	}
}

// loadBadCase reads a case's case.yaml and want.txt.
func loadBadCase(t *testing.T, name string) (*badCase, string, string) {
	t.Helper()
	dir := filepath.Join(badInputDir, name)
	data, err := os.ReadFile(filepath.Join(dir, "case.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var bc badCase
	if err := yaml.UnmarshalStrict(data, &bc); err != nil {
		t.Fatalf("%s/case.yaml: %v", name, err)
	}
	if bc.About == "" || len(bc.Args) == 0 {
		t.Fatalf("%s/case.yaml: about and args are required", name)
	}
	want, err := os.ReadFile(filepath.Join(dir, "want.txt"))
	if err != nil || strings.TrimSpace(string(want)) == "" {
		t.Fatalf("%s: want.txt must say what the output names: %v", name, err)
	}
	return &bc, dir, string(want)
}

// instantiate copies the case folder to a temp dir with NAMESPACE
// replaced by ns, in every file and in want; case.yaml and want.txt stay
// behind, so they are never input.
func instantiate(t *testing.T, src, want, ns string) (string, string) {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "case")
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if rel == "case.yaml" || rel == "want.txt" {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), bytes.ReplaceAll(data, []byte("NAMESPACE"), []byte(ns)), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst, strings.ReplaceAll(want, "NAMESPACE", ns)
}

// generate writes the case's generated files into dir, and gives the
// command the age key the case asks for.
func (bc *badCase) generate(t *testing.T, dir string, c *cli) {
	t.Helper()
	var key sopstest.Key
	for _, g := range bc.Generate {
		path := filepath.Join(dir, filepath.FromSlash(g.File))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		switch {
		case g.ConfigMap != "":
			size := resource.MustParse(g.ConfigMap)
			name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
			writeSizedConfigMap(t, path, name, int(size.Value()))
		case g.Symlink != "":
			target := g.Symlink
			if target == "outside" {
				target = filepath.Join(t.TempDir(), "outside.yaml")
				writeFile(t, target, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: outside\n")
			}
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
		case g.FIFO:
			if err := syscall.Mkfifo(path, 0o644); err != nil {
				t.Fatal(err)
			}
		case g.Encrypt != "":
			if key.Identity == "" {
				key = newKey(t)
			}
			plain, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(g.Encrypt)))
			if err != nil {
				t.Fatal(err)
			}
			f, regex := formats.Yaml, sopstest.K8sSecretRegex
			if strings.HasSuffix(path, ".env") {
				f, regex = formats.Dotenv, ""
			}
			encryptFile(t, key, path, string(plain), f, regex)
			if g.Tamper != "" {
				tamper(t, path, g.Tamper)
			}
			switch g.Key {
			case "matching":
				c.env["SOPS_AGE_KEY"] = key.Identity
			case "other":
				c.env["SOPS_AGE_KEY"] = newKey(t).Identity
			case "none":
			default:
				t.Fatalf("generate %s: key %q: want matching, other or none", g.File, g.Key)
			}
		default:
			t.Fatalf("generate %s: nothing to generate", g.File)
		}
	}
}

// writeSizedConfigMap writes a ConfigMap name whose file is size bytes.
func writeSizedConfigMap(t *testing.T, path, name string, size int) {
	t.Helper()
	head := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  blob: ", name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := bytes.Repeat([]byte("x"), 1<<16)
	_, err = f.WriteString(head)
	for n := size - len(head) - 1; n > 0 && err == nil; n -= len(chunk) {
		_, err = f.Write(chunk[:min(n, len(chunk))])
	}
	if err == nil {
		_, err = f.WriteString("\n")
	}
	if err != nil {
		t.Fatal(err)
	}
}

// sopsCiphertext finds the data of an ENC[...] value: group 1 is what
// comes before the value (its key), group 2 the base64 ciphertext.
var sopsCiphertext = regexp.MustCompile(`(?m)^(\s*[\w.-]+[:=]\s*)ENC\[AES256_GCM,data:([A-Za-z0-9+/=]+)`)

// tamper alters one ciphertext of the encrypted file at path: the MAC's
// ("mac") or the first value's ("value"), as an edit by hand would.
func tamper(t *testing.T, path, what string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range sopsCiphertext.FindAllSubmatchIndex(data, -1) {
		key := strings.Trim(string(data[m[2]:m[3]]), " \t\n:=")
		isMAC := key == "mac" || key == "sops_mac"
		if isMAC != (what == "mac") {
			continue
		}
		i := m[4] // the first character of the ciphertext
		if data[i] == 'A' {
			data[i] = 'B'
		} else {
			data[i] = 'A'
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("tamper %s: no such ciphertext in %s", what, path)
}

// pathFlags take a path relative to the case folder.
var pathFlags = []string{"--path", "--root", "--config", "--kubeconfig", "--sops-age-key-file", "--sops-pgp-key-file", "--substitute-from"}

// command is the case's command line, with paths made absolute and the
// cluster flags the case does not set itself; an action case gets its
// environment.
func (bc *badCase) command(t *testing.T, dir string, c *cli, target targetCluster) []string {
	t.Helper()
	var args []string
	has := map[string]bool{}
	for i := 0; i < len(bc.Args); i++ {
		a := strings.ReplaceAll(bc.Args[i], "NAMESPACE", c.ns)
		name, value, inline := strings.Cut(a, "=")
		has[name] = true
		if !slices.Contains(pathFlags, name) {
			args = append(args, a)
			continue
		}
		if !inline {
			if i+1 == len(bc.Args) {
				args = append(args, a)
				continue
			}
			i++
			value = bc.Args[i]
		}
		if !filepath.IsAbs(value) {
			value = filepath.Join(dir, value)
		}
		args = append(args, name, value)
	}
	kubeconfig := target.config.Kubeconfig
	if bc.Cluster == "unreachable" {
		kubeconfig = closedPortKubeconfig(t)
	}
	switch args[0] {
	case "apply", "diff", "drift":
		if !has["--kubeconfig"] {
			args = append(args, "--kubeconfig", kubeconfig)
		}
		args = append(args, "--inventory-namespace", c.ns)
		if !has["--config"] && !has["-n"] && !has["--namespace"] {
			args = append(args, "-n", c.ns)
		}
	case "action":
		tmp := t.TempDir()
		for _, f := range []string{"output", "summary"} {
			writeFile(t, filepath.Join(tmp, f), "")
		}
		for k, v := range map[string]string{
			"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "workflow_dispatch", "GITHUB_WORKSPACE": dir,
			"GITHUB_REPOSITORY": "acme/deployments", "GITHUB_SHA": strings.Repeat("4", 40),
			"GITHUB_OUTPUT": filepath.Join(tmp, "output"), "GITHUB_STEP_SUMMARY": filepath.Join(tmp, "summary"),
			"INPUT_KUBECONFIG": kubeconfig, "INPUT_INVENTORY-NAMESPACE": c.ns, "INPUT_NAMESPACE": c.ns,
			"INPUT_NAME": badUnit, "INPUT_MODE": "apply", "INPUT_STATUS": "false", "INPUT_COMMENT": "never",
		} {
			c.env[k] = v
		}
	}
	for k, v := range bc.Env {
		c.env[k] = strings.ReplaceAll(v, "NAMESPACE", c.ns)
	}
	return args
}

// closedPortKubeconfig writes a kubeconfig for a server on a port of
// 127.0.0.1 that nothing listens on.
func closedPortKubeconfig(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	writeFile(t, path, `apiVersion: v1
kind: Config
clusters:
- name: closed
  cluster:
    server: https://`+addr+`
    insecure-skip-tls-verify: true
users:
- name: nobody
  user:
    token: not-a-token
contexts:
- name: closed
  context: {cluster: closed, user: nobody}
current-context: closed
`)
	return path
}

// targetCluster is the cluster a case runs against.
type targetCluster struct {
	config *testcluster.Cluster
	client kubernetes.Interface
}

// badUnit is the unit every case runs; goodUnit is its good version,
// applied before the case runs, so that "nothing applied, nothing
// deleted" is checked against objects a run of the bad version would
// change or prune: a ConfigMap the bad versions leave out and one they
// change (state: bad).
const badUnit = "app"

const goodUnit = `apiVersion: v1
kind: ConfigMap
metadata:
  name: sentinel
data:
  state: good
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  state: good
`

// applyGood applies goodUnit as badUnit, in its own environment.
func (tc targetCluster) applyGood(t *testing.T, c *cli) {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "good.yaml"), goodUnit)
	good := &cli{t: t, ns: c.ns, env: map[string]string{}}
	o := good.runAsIs("apply", "--name", badUnit, "--path", dir, "-n", c.ns, "--kubeconfig", tc.config.Kubeconfig, "--inventory-namespace", c.ns, "--timeout", "60s")
	if o.code != exitOK {
		t.Fatalf("the good version of %s: exit %d\n%s\n%s", badUnit, o.code, o.stdout, o.stderr)
	}
}

// goodConfig is the configuration flux/ whose one Kustomization applies
// goodUnit (in unit/) as badUnit, in namespace NAMESPACE.
const goodConfig = `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: app
  namespace: NAMESPACE
spec:
  interval: 10m
  path: ./unit
  prune: true
  targetNamespace: NAMESPACE
  sourceRef: {kind: GitRepository, name: flux-system}
`

// applyGoodConfig applies goodUnit as badUnit from the configuration
// flux/ of a repository of its own that is not a git work tree, as the
// case's folder is not: both name the configuration "flux", so the
// inventory records the configuration the case's flux/ stands for.
func (tc targetCluster) applyGoodConfig(t *testing.T, c *cli) {
	t.Helper()
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "unit", "good.yaml"), goodUnit)
	writeFile(t, filepath.Join(root, "flux", "app.yaml"), strings.ReplaceAll(goodConfig, "NAMESPACE", c.ns))
	good := &cli{t: t, ns: c.ns, env: map[string]string{}}
	o := good.runAsIs("apply", "--config", filepath.Join(root, "flux"), "--root", root, "--kubeconfig", tc.config.Kubeconfig, "--inventory-namespace", c.ns)
	if o.code != exitOK {
		t.Fatalf("the good version of %s, as a configuration: exit %d\n%s\n%s", badUnit, o.code, o.stdout, o.stderr)
	}
}

// damageInventory edits the unit's inventory Secret as the case says.
func (bc *badCase) damageInventory(t *testing.T, tc targetCluster, ns string) {
	t.Helper()
	if bc.Inventory == "" {
		return
	}
	secrets := tc.client.CoreV1().Secrets(ns)
	s, err := secrets.Get(t.Context(), inventory.SecretName(badUnit), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	switch bc.Inventory {
	case "garbage":
		s.Data["objects.json.gz"] = []byte("this is not what kustomize-deploy wrote")
	case "replaced":
		s.Data = map[string][]byte{"garbage": []byte("edited by hand")}
	default:
		t.Fatalf("inventory %q: want garbage or replaced", bc.Inventory)
	}
	if _, err := secrets.Update(t.Context(), s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// clusterState is what a case may not change: the resourceVersion of
// every object of the kinds the corpus's units hold (Namespaces named
// NAMESPACE-…), and the inventory Secret's data.
type clusterState struct {
	objects   map[string]string
	inventory map[string][]byte
}

func (tc targetCluster) snapshot(t *testing.T, ns string) clusterState {
	t.Helper()
	ctx := t.Context()
	s := clusterState{objects: map[string]string{}}
	add := func(kind string, items []metav1.Object, err error) {
		if err != nil {
			t.Fatalf("listing %ss: %v", kind, err)
		}
		for _, o := range items {
			switch {
			case kind == "Secret" && o.GetName() == inventory.SecretName(badUnit):
				continue // compared on its own: a failed run records its attempt
			case kind == "ConfigMap" && o.GetName() == "kube-root-ca.crt":
				continue // the controller-manager publishes it when it gets to it
			}
			s.objects[kind+"/"+o.GetName()] = o.GetResourceVersion()
		}
	}
	cms, err := tc.client.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	add("ConfigMap", metas(cms.Items), err)
	secrets, err := tc.client.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
	add("Secret", metas(secrets.Items), err)
	services, err := tc.client.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
	add("Service", metas(services.Items), err)
	deployments, err := tc.client.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	add("Deployment", metas(deployments.Items), err)
	// Namespaces a case's unit creates are named after the case's own.
	namespaces, err := tc.client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err == nil {
		namespaces.Items = slices.DeleteFunc(namespaces.Items, func(n corev1.Namespace) bool { return !strings.HasPrefix(n.Name, ns+"-") })
	}
	add("Namespace", metas(namespaces.Items), err)
	inv, err := tc.client.CoreV1().Secrets(ns).Get(ctx, inventory.SecretName(badUnit), metav1.GetOptions{})
	switch {
	case err == nil:
		s.inventory = inv.Data
	case !apierrors.IsNotFound(err):
		t.Fatal(err)
	}
	return s
}

func metas[T any, P interface {
	*T
	metav1.Object
}](items []T) []metav1.Object {
	out := make([]metav1.Object, len(items))
	for i := range items {
		out[i] = P(&items[i])
	}
	return out
}

// same fails unless s, after the run, is what was before: every object
// there as it was, none added; the inventory's object list as it was,
// and its whole data when the case damaged it (a damaged inventory is
// never overwritten).
func (s clusterState) same(t *testing.T, before clusterState, damaged bool) {
	t.Helper()
	for id, rv := range before.objects {
		switch got, ok := s.objects[id]; {
		case !ok:
			t.Errorf("%s was deleted", id)
		case got != rv:
			t.Errorf("%s was changed (resourceVersion %s, was %s)", id, got, rv)
		}
	}
	for id := range s.objects {
		if _, ok := before.objects[id]; !ok {
			t.Errorf("%s was created", id)
		}
	}
	keys := []string{"objects.json.gz"}
	if damaged {
		keys = nil
		for k := range before.inventory {
			keys = append(keys, k)
		}
		if len(s.inventory) != len(before.inventory) {
			t.Errorf("the damaged inventory was overwritten: keys %v, were %v", mapKeys(s.inventory), mapKeys(before.inventory))
		}
	}
	for _, k := range keys {
		if !bytes.Equal(s.inventory[k], before.inventory[k]) {
			t.Errorf("the inventory's %s changed", k)
		}
	}
}

func mapKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// checkBuildMemory runs the build command of the case's --path in a
// process of its own and bounds its peak resident memory. The race
// detector multiplies memory use, so a race build only reports it.
func (bc *badCase) checkBuildMemory(t *testing.T, dir string, args []string) {
	t.Helper()
	build := []string{"build"}
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "--path" || args[i] == "--root" {
			build = append(build, args[i], args[i+1])
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	cmd := command(ctx, &out, build...)
	cmd.Stdout = nil // the rendered objects
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("%q: %v", build, err)
	}
	peak := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10 // KiB on Linux
	limit := resource.MustParse(bc.BuildMemory)
	t.Logf("%q: peak RSS %d MiB (exit %d)", build, peak>>20, cmd.ProcessState.ExitCode())
	if raceEnabled() {
		return
	}
	if peak > limit.Value() {
		t.Errorf("%q: peak RSS %d MiB, over %s\n%s", build, peak>>20, bc.BuildMemory, out.String())
	}
}

// raceEnabled reports whether the test binary was built with -race.
func raceEnabled() bool {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range info.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}
