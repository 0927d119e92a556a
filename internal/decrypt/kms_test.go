package decrypt

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/getsops/sops/v3/cmd/sops/formats"
	"github.com/getsops/sops/v3/logging"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/kmstest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/sopstest"
)

// The KMS tests talk to an in-process KMS and STS (kmstest) through sops's
// own KMS key source and the AWS SDK, with the environment pointed at it:
// they use t.Setenv and cannot be parallel. Fixtures are encrypted by an
// "admin" user allowed on every key; decryption then runs as the "ci" user,
// with whatever the test allows it.
const (
	adminKeyID  = "AKIAADMINTESTKEY0001"
	adminSecret = "admin-secret-access-key"
	ciKeyID     = "AKIACITESTKEY0000001"
	ciSecret    = "ci-secret-access-key"
	deployRole  = "arn:aws:iam::111122223333:role/deployer"
	// encContext's value appears only in the sops metadata, so a test can
	// change it there.
	encContextValue = "kustomize-deploy-test"
)

var encContext = map[string]string{"purpose": encContextValue}

// newKMSServer starts a KMS and STS double that knows the admin and ci
// users and points the AWS environment at it, with no credentials set.
func newKMSServer(t *testing.T) *kmstest.Server {
	t.Helper()
	srv := kmstest.New(t)
	srv.AddUser(adminKeyID, adminSecret)
	srv.AddUser(ciKeyID, ciSecret)
	srv.Setenv(t)
	return srv
}

// createKey creates a KMS key the admin may use.
func createKey(t *testing.T, srv *kmstest.Server, alias string) string {
	t.Helper()
	arn := srv.CreateKey(alias)
	srv.Allow(arn, adminKeyID)
	return arn
}

// encryptGroups encrypts plain through sops as the admin user, then leaves
// the environment without credentials.
func encryptGroups(t *testing.T, groups []sopstest.KeyGroup, threshold int, plain []byte, f formats.Format, regex string) []byte {
	t.Helper()
	kmstest.SetCredentials(t, adminKeyID, adminSecret)
	defer func() {
		kmstest.Unsetenv(t, "AWS_ACCESS_KEY_ID")
		kmstest.Unsetenv(t, "AWS_SECRET_ACCESS_KEY")
	}()
	out, err := sopstest.EncryptGroups(groups, threshold, plain, f, regex)
	if err != nil {
		t.Fatalf("encrypting %s: %v", formatNames[f], err)
	}
	return out
}

func encryptKMS(t *testing.T, keys []sopstest.KMSKey, plain []byte, f formats.Format, regex string) []byte {
	t.Helper()
	return encryptGroups(t, []sopstest.KeyGroup{{KMS: keys}}, 0, plain, f, regex)
}

// secretForKMS encrypts testdata/secret.yaml for one KMS key, bound to
// encContext, and parses it as a built object would be.
func secretForKMS(t *testing.T, key sopstest.KMSKey) *unstructured.Unstructured {
	t.Helper()
	key.Context = encContext
	return fromYAML(t, encryptKMS(t, []sopstest.KMSKey{key}, readTestdata(t, "secret.yaml"), formats.Yaml, k8sRegex))
}

func newKMSDecryptor(t *testing.T, keys ...testKey) *Decryptor {
	t.Helper()
	var ids []string
	for _, k := range keys {
		ids = append(ids, k.identity)
	}
	d, err := New(Options{Keys: ids, AWSKMS: true})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// decryptSecret runs DecryptObjects on u, as built from src/secret.enc.yaml.
func decryptSecret(t *testing.T, d *Decryptor, u *unstructured.Unstructured) error {
	t.Helper()
	return d.DecryptObjects(context.Background(), []*unstructured.Unstructured{u},
		map[object.ID]string{object.IDOf(u): "src/secret.enc.yaml"})
}

func assertDecryptedSecret(t *testing.T, u *unstructured.Unstructured) {
	t.Helper()
	if _, ok := u.Object["sops"]; ok {
		t.Error("sops field still present")
	}
	if got, _, _ := unstructured.NestedString(u.Object, "data", "password"); got != "czNjcjN0LWRiLXBhc3N3b3Jk" {
		t.Errorf("data.password = %q", got)
	}
	if got, _, _ := unstructured.NestedString(u.Object, "stringData", "username"); got != "admin-plaintext-user" {
		t.Errorf("stringData.username = %q", got)
	}
}

// dataKeyFailure checks that err is an *Error for Secret/db wrapping a
// *DataKeyError, that the message holds no plaintext, and returns it.
func dataKeyFailure(t *testing.T, err error) *DataKeyError {
	t.Helper()
	if err == nil {
		t.Fatal("decryption succeeded")
	}
	t.Log(err)
	assertNoPlaintext(t, err)
	var de *Error
	var dke *DataKeyError
	if !errors.As(err, &de) || !errors.As(err, &dke) {
		t.Fatalf("err = %v, want *Error wrapping *DataKeyError", err)
	}
	assertContains(t, err, "decryption failed for 'Secret/db' (src/secret.enc.yaml)")
	return dke
}

// countBy returns how many requests had target and were signed by
// accessKeyID.
func countBy(srv *kmstest.Server, target, accessKeyID string) int {
	n := 0
	for _, r := range srv.Requests() {
		if r.Target == target && r.AccessKeyID == accessKeyID {
			n++
		}
	}
	return n
}

func TestKMSDecryptObjects(t *testing.T) {
	srv := newKMSServer(t)
	arn := createKey(t, srv, "sops")
	srv.Allow(arn, ciKeyID)
	u := secretForKMS(t, sopstest.KMSKey{ARN: arn})
	if !strings.Contains(string(mustJSON(t, u)), encContextValue) {
		t.Fatal("the encryption context is not in the sops metadata; the test premise is wrong")
	}

	kmstest.SetCredentials(t, ciKeyID, ciSecret)
	// Nothing of the key or the data key lands in a temp dir, or in sops's
	// loggers.
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	logs := captureSopsLogs(t)
	if err := decryptSecret(t, newKMSDecryptor(t), u); err != nil {
		t.Fatal(err)
	}
	assertDecryptedSecret(t, u)
	if n := countBy(srv, "TrentService.Decrypt", ciKeyID); n != 1 {
		t.Errorf("%d KMS Decrypt calls by ci, want 1", n)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("decryption left files in TMPDIR: %v", entries)
	}
	if logs.Len() != 0 {
		t.Errorf("sops logged: %s", logs)
	}
}

func TestKMSDecryptFilesSecretGenerator(t *testing.T) {
	srv := newKMSServer(t)
	arn := createKey(t, srv, "")
	srv.Allow(arn, ciKeyID)
	root := t.TempDir()
	writeTree(t, root, map[string][]byte{
		"apps/kustomization.yaml": []byte("secretGenerator:\n  - name: app\n    envs: [app.env]\n"),
		"apps/app.env": encryptKMS(t, []sopstest.KMSKey{{ARN: arn, Context: encContext}},
			readTestdata(t, "generator/app.env"), formats.Dotenv, ""),
	})

	kmstest.SetCredentials(t, ciKeyID, ciSecret)
	if _, err := newKMSDecryptor(t).DecryptFiles(context.Background(), root, "apps"); err != nil {
		t.Fatal(err)
	}
	got := readFile(t, root, "apps/app.env")
	if !strings.Contains(got, "API_TOKEN=tok-plaintext-9f8e7d") || strings.Contains(got, "sops") {
		t.Errorf("apps/app.env after DecryptFiles:\n%s", got)
	}
}

func TestKMSAccessDenied(t *testing.T) {
	srv := newKMSServer(t)
	arn := createKey(t, srv, "") // not allowed to ci
	u := secretForKMS(t, sopstest.KMSKey{ARN: arn})

	kmstest.SetCredentials(t, ciKeyID, ciSecret)
	err := decryptSecret(t, newKMSDecryptor(t), u)
	dke := dataKeyFailure(t, err)
	if !errors.Is(err, ErrAccessDenied) || len(dke.Keys) != 1 || dke.Keys[0].Key != arn || dke.Keys[0].Type != "kms" {
		t.Errorf("err = %#v, want one kms key %s denied", dke, arn)
	}
	assertContains(t, err, "AWS KMS key "+arn+": access denied", "AccessDeniedException", "kms:Decrypt")
	if _, ok := u.Object["sops"]; !ok {
		t.Error("the failed object lost its sops field")
	}
}

func TestKMSUnknownKey(t *testing.T) {
	srv := newKMSServer(t)
	arn := createKey(t, srv, "")
	srv.Allow(arn, ciKeyID)
	u := secretForKMS(t, sopstest.KMSKey{ARN: arn})
	srv.DeleteKey(arn)

	kmstest.SetCredentials(t, ciKeyID, ciSecret)
	err := decryptSecret(t, newKMSDecryptor(t), u)
	dataKeyFailure(t, err)
	if !errors.Is(err, ErrKeyNotFound) {
		t.Errorf("err = %v, want ErrKeyNotFound", err)
	}
	assertContains(t, err, "AWS KMS key "+arn+": key not found", "NotFoundException")
}

// The encryption context is recorded in the sops metadata, outside the
// MAC; KMS refuses the data key if it is changed.
func TestKMSWrongEncryptionContext(t *testing.T) {
	srv := newKMSServer(t)
	arn := createKey(t, srv, "")
	srv.Allow(arn, ciKeyID)
	enc := encryptKMS(t, []sopstest.KMSKey{{ARN: arn, Context: encContext}}, readTestdata(t, "secret.yaml"), formats.Yaml, k8sRegex)
	if bytes.Count(enc, []byte(encContextValue)) != 1 {
		t.Fatalf("the context value should appear once, in the metadata:\n%s", enc)
	}
	u := fromYAML(t, bytes.Replace(enc, []byte(encContextValue), []byte("another-purpose"), 1))

	kmstest.SetCredentials(t, ciKeyID, ciSecret)
	err := decryptSecret(t, newKMSDecryptor(t), u)
	dataKeyFailure(t, err)
	if !errors.Is(err, ErrInvalidCiphertext) {
		t.Errorf("err = %v, want ErrInvalidCiphertext", err)
	}
	assertContains(t, err, "AWS KMS key "+arn+": invalid ciphertext: wrong encryption context", "InvalidCiphertextException")
}

// A key usable only by a role: sops assumes the role through STS with the
// CI credentials, then calls KMS with the role's temporary credentials.
func TestKMSAssumeRole(t *testing.T) {
	srv := newKMSServer(t)
	arn := createKey(t, srv, "")
	srv.AllowRole(arn, deployRole)
	srv.TrustRole(deployRole, adminKeyID, ciKeyID)
	u := secretForKMS(t, sopstest.KMSKey{ARN: arn, Role: deployRole})
	if !strings.Contains(string(mustJSON(t, u)), deployRole) {
		t.Fatal("the role is not in the sops metadata; the test premise is wrong")
	}

	kmstest.SetCredentials(t, ciKeyID, ciSecret)
	if err := decryptSecret(t, newKMSDecryptor(t), u); err != nil {
		t.Fatal(err)
	}
	assertDecryptedSecret(t, u)
	if n := countBy(srv, "STS.AssumeRole", ciKeyID); n != 1 {
		t.Errorf("%d AssumeRole calls by ci, want 1", n)
	}
	var byRole int
	for _, r := range srv.Requests() {
		if r.Target == "TrentService.Decrypt" {
			if r.Error != "" || !strings.HasPrefix(r.Principal, "arn:aws:sts::111122223333:assumed-role/deployer/") {
				t.Errorf("Decrypt request %+v, want success by the deployer role", r)
			}
			byRole++
		}
	}
	if byRole != 1 {
		t.Errorf("%d KMS Decrypt calls, want 1", byRole)
	}
}

// The role's trust policy does not name the caller: the error says the
// role could not be assumed.
func TestKMSAssumeRoleDenied(t *testing.T) {
	srv := newKMSServer(t)
	arn := createKey(t, srv, "")
	srv.AllowRole(arn, deployRole)
	srv.TrustRole(deployRole, adminKeyID)
	u := secretForKMS(t, sopstest.KMSKey{ARN: arn, Role: deployRole})

	kmstest.SetCredentials(t, ciKeyID, ciSecret)
	err := decryptSecret(t, newKMSDecryptor(t), u)
	dataKeyFailure(t, err)
	if !errors.Is(err, ErrAccessDenied) {
		t.Errorf("err = %v, want ErrAccessDenied", err)
	}
	assertContains(t, err, "AWS KMS key "+arn+" (role "+deployRole+"): assuming the role: access denied", "sts:AssumeRole")
	if n := countBy(srv, "TrentService.Decrypt", ""); n != 0 {
		t.Errorf("KMS was called without credentials")
	}
}

// GitHub's OIDC login leaves AWS_ROLE_ARN and AWS_WEB_IDENTITY_TOKEN_FILE
// in the environment; the SDK's chain exchanges the token with STS.
func TestKMSWebIdentity(t *testing.T) {
	srv := newKMSServer(t)
	arn := createKey(t, srv, "")
	srv.AllowRole(arn, deployRole)
	srv.AllowWebIdentity(deployRole, "github-oidc-token")
	u := secretForKMS(t, sopstest.KMSKey{ARN: arn})

	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("github-oidc-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_ROLE_ARN", deployRole)
	t.Setenv("AWS_WEB_IDENTITY_TOKEN_FILE", token)
	if err := decryptSecret(t, newKMSDecryptor(t), u); err != nil {
		t.Fatal(err)
	}
	assertDecryptedSecret(t, u)
	if n := srv.Count("STS.AssumeRoleWithWebIdentity"); n != 1 {
		t.Errorf("%d AssumeRoleWithWebIdentity calls, want 1", n)
	}
}

// A web identity token the role does not trust leaves the chain without
// credentials; the error carries STS's reason.
func TestKMSWebIdentityRejected(t *testing.T) {
	srv := newKMSServer(t)
	arn := createKey(t, srv, "")
	srv.AllowRole(arn, deployRole)
	srv.AllowWebIdentity(deployRole, "github-oidc-token")
	u := secretForKMS(t, sopstest.KMSKey{ARN: arn})

	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("expired-oidc-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_ROLE_ARN", deployRole)
	t.Setenv("AWS_WEB_IDENTITY_TOKEN_FILE", token)
	err := decryptSecret(t, newKMSDecryptor(t), u)
	dataKeyFailure(t, err)
	if !errors.Is(err, ErrNoCredentials) || !errors.Is(err, ErrAccessDenied) {
		t.Errorf("err = %v, want ErrNoCredentials and ErrAccessDenied", err)
	}
	assertContains(t, err, "AWS KMS key "+arn+": no AWS credentials: STS AssumeRoleWithWebIdentity failed: access denied")
	if strings.Contains(err.Error(), "expired-oidc-token") {
		t.Errorf("error quotes the token: %v", err)
	}
}

// AWS_ENDPOINT_URL alone (no service-specific variables) reaches both KMS
// and STS.
func TestKMSGenericEndpoint(t *testing.T) {
	srv := newKMSServer(t)
	arn := createKey(t, srv, "")
	srv.AllowRole(arn, deployRole)
	u := secretForKMS(t, sopstest.KMSKey{ARN: arn, Role: deployRole})

	kmstest.Unsetenv(t, "AWS_ENDPOINT_URL_KMS")
	kmstest.Unsetenv(t, "AWS_ENDPOINT_URL_STS")
	t.Setenv("AWS_ENDPOINT_URL", srv.URL())
	kmstest.SetCredentials(t, ciKeyID, ciSecret)
	before := len(srv.Requests())
	if err := decryptSecret(t, newKMSDecryptor(t), u); err != nil {
		t.Fatal(err)
	}
	var targets []string
	for _, r := range srv.Requests()[before:] {
		targets = append(targets, r.Target)
	}
	if got := strings.Join(targets, " "); got != "STS.AssumeRole TrentService.Decrypt" {
		t.Errorf("requests = %s", got)
	}
}

func TestKMSNoCredentials(t *testing.T) {
	srv := newKMSServer(t)
	arn := createKey(t, srv, "")
	srv.Allow(arn, ciKeyID)
	u := secretForKMS(t, sopstest.KMSKey{ARN: arn})
	before := len(srv.Requests())

	err := decryptSecret(t, newKMSDecryptor(t), u)
	dataKeyFailure(t, err)
	if !errors.Is(err, ErrNoCredentials) {
		t.Errorf("err = %v, want ErrNoCredentials", err)
	}
	assertContains(t, err, "AWS KMS key "+arn+": no AWS credentials")
	if n := len(srv.Requests()) - before; n != 0 {
		t.Errorf("%d requests reached the server without credentials", n)
	}
}

func TestKMSDisabled(t *testing.T) {
	srv := newKMSServer(t)
	arn := createKey(t, srv, "")
	srv.Allow(arn, ciKeyID)
	u := secretForKMS(t, sopstest.KMSKey{ARN: arn})
	before := len(srv.Requests())

	kmstest.SetCredentials(t, ciKeyID, ciSecret)
	err := decryptSecret(t, newTestDecryptor(t), u) // AWSKMS off
	dataKeyFailure(t, err)
	if !errors.Is(err, ErrKMSDisabled) {
		t.Errorf("err = %v, want ErrKMSDisabled", err)
	}
	assertContains(t, err, "AWS KMS key "+arn+": not tried: AWS KMS decryption is disabled")
	if n := len(srv.Requests()) - before; n != 0 {
		t.Errorf("%d requests reached KMS while it is disabled", n)
	}
}

// Documents encrypted for both age recipients and KMS keys decrypt with
// whichever kind is available: in one key group, as `sops --age R --kms
// ARN` writes them, and with two Shamir key groups that each hold an age
// recipient and a KMS key and are both needed (sops needs a threshold of at
// least 2).
func TestKMSMixedWithAge(t *testing.T) {
	layouts := []struct {
		name   string
		groups func(recipients, arns [2]string) []sopstest.KeyGroup
	}{
		{
			name: "one key group",
			groups: func(r, arns [2]string) []sopstest.KeyGroup {
				return []sopstest.KeyGroup{{Age: []string{r[0]}, KMS: []sopstest.KMSKey{{ARN: arns[0], Context: encContext}}}}
			},
		},
		{
			name: "two key groups",
			groups: func(r, arns [2]string) []sopstest.KeyGroup {
				return []sopstest.KeyGroup{
					{Age: []string{r[0]}, KMS: []sopstest.KMSKey{{ARN: arns[0], Context: encContext}}},
					{KMS: []sopstest.KMSKey{{ARN: arns[1]}}, Age: []string{r[1]}},
				}
			},
		},
	}
	for _, layout := range layouts {
		setup := func(t *testing.T) (*kmstest.Server, [2]testKey, [2]string, *unstructured.Unstructured) {
			srv := newKMSServer(t)
			keys := [2]testKey{newTestKey(t), newTestKey(t)}
			arns := [2]string{createKey(t, srv, ""), createKey(t, srv, "")}
			groups := layout.groups([2]string{keys[0].recipient, keys[1].recipient}, arns)
			u := fromYAML(t, encryptGroups(t, groups, 0, readTestdata(t, "secret.yaml"), formats.Yaml, k8sRegex))
			kmstest.SetCredentials(t, ciKeyID, ciSecret)
			return srv, keys, arns, u
		}
		t.Run(layout.name+"/only the age keys", func(t *testing.T) {
			srv, keys, _, u := setup(t) // ci may use no KMS key
			if err := decryptSecret(t, newKMSDecryptor(t, keys[0], keys[1]), u); err != nil {
				t.Fatal(err)
			}
			assertDecryptedSecret(t, u)
			// Age keys are tried first, so KMS was not even asked.
			if n := countBy(srv, "TrentService.Decrypt", ciKeyID); n != 0 {
				t.Errorf("%d KMS Decrypt calls by ci, want 0", n)
			}
		})
		t.Run(layout.name+"/only the KMS keys", func(t *testing.T) {
			srv, _, arns, u := setup(t)
			srv.Allow(arns[0], ciKeyID)
			srv.Allow(arns[1], ciKeyID)
			if err := decryptSecret(t, newKMSDecryptor(t, newTestKey(t)), u); err != nil {
				t.Fatal(err)
			}
			assertDecryptedSecret(t, u)
			if n, want := countBy(srv, "TrentService.Decrypt", ciKeyID), len(layout.groups([2]string{}, arns)); n != want {
				t.Errorf("%d KMS Decrypt calls by ci, want %d", n, want)
			}
		})
	}
}

// With Shamir key groups that all must decrypt, one available group is not
// enough, and the error says how many groups are needed.
func TestKMSShamirNeedsEveryGroup(t *testing.T) {
	srv := newKMSServer(t)
	arn := createKey(t, srv, "")
	key := newTestKey(t)
	groups := []sopstest.KeyGroup{{Age: []string{key.recipient}}, {KMS: []sopstest.KMSKey{{ARN: arn}}}}
	enc := encryptGroups(t, groups, 2, readTestdata(t, "secret.yaml"), formats.Yaml, k8sRegex)
	kmstest.SetCredentials(t, ciKeyID, ciSecret)

	err := decryptSecret(t, newKMSDecryptor(t, key), fromYAML(t, enc))
	dke := dataKeyFailure(t, err)
	if dke.Groups != 2 || dke.Threshold != 2 || len(dke.Keys) != 1 || !errors.Is(err, ErrAccessDenied) {
		t.Errorf("err = %#v", dke)
	}
	assertContains(t, err, "(2 of its 2 key groups are needed)", arn)

	srv.Allow(arn, ciKeyID)
	u := fromYAML(t, enc)
	if err := decryptSecret(t, newKMSDecryptor(t, key), u); err != nil {
		t.Fatal(err)
	}
	assertDecryptedSecret(t, u)
}

// When nothing works, every key is listed with its own reason, in the order
// sops tried them (age first).
func TestKMSEveryFailureListed(t *testing.T) {
	srv := newKMSServer(t)
	denied := createKey(t, srv, "denied")
	gone := createKey(t, srv, "gone")
	srv.Allow(gone, ciKeyID)
	key := newTestKey(t)
	u := fromYAML(t, encryptGroups(t, []sopstest.KeyGroup{{
		KMS: []sopstest.KMSKey{{ARN: denied}, {ARN: gone}},
		Age: []string{key.recipient},
	}}, 0, readTestdata(t, "secret.yaml"), formats.Yaml, k8sRegex))
	srv.DeleteKey(gone)

	kmstest.SetCredentials(t, ciKeyID, ciSecret)
	logs := captureSopsLogs(t)
	err := decryptSecret(t, newKMSDecryptor(t, newTestKey(t)), u)
	dke := dataKeyFailure(t, err)
	if logs.Len() != 0 {
		t.Errorf("sops logged: %s", logs)
	}
	want := []struct {
		key      string
		sentinel error
	}{
		{key.recipient, ErrNoMatchingIdentity},
		{denied, ErrAccessDenied},
		{gone, ErrKeyNotFound},
	}
	if len(dke.Keys) != len(want) {
		t.Fatalf("%d keys listed, want %d: %v", len(dke.Keys), len(want), err)
	}
	for i, w := range want {
		if k := dke.Keys[i]; k.Key != w.key || !errors.Is(k, w.sentinel) {
			t.Errorf("key %d = %s: %v, want %s: %v", i, k.Key, k.Err, w.key, w.sentinel)
		}
	}
	assertContains(t, err,
		"age recipient "+key.recipient+": no matching age identity; AWS KMS key "+denied+": access denied",
		"; AWS KMS key "+gone+": key not found")
}

// captureSopsLogs sends every sops logger to a buffer for the rest of the
// test.
func captureSopsLogs(t *testing.T) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	for name, l := range logging.Loggers {
		out := l.Out
		l.SetOutput(&buf)
		t.Cleanup(func() { logging.Loggers[name].SetOutput(out) })
	}
	return &buf
}

func mustJSON(t *testing.T, u *unstructured.Unstructured) []byte {
	t.Helper()
	b, err := u.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}
