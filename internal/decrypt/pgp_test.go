package decrypt

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/getsops/sops/v3/cmd/sops/formats"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/sopstest"
)

func newPGPKey(t *testing.T, name string) sopstest.PGPKey {
	t.Helper()
	k, err := sopstest.NewPGPKey(name)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// encryptPGP encrypts plain for key groups that may name the PGP keys.
func encryptPGP(t *testing.T, keys []sopstest.PGPKey, groups []sopstest.KeyGroup, plain []byte, f formats.Format, regex string) []byte {
	t.Helper()
	out, err := sopstest.EncryptGroupsWith(sopstest.Services{PGP: keys}, groups, 0, plain, f, regex)
	if err != nil {
		t.Fatalf("encrypting %s: %v", formatNames[f], err)
	}
	return out
}

// secretForPGP is testdata/secret.yaml encrypted for key, as built.
func secretForPGP(t *testing.T, key sopstest.PGPKey) *unstructured.Unstructured {
	t.Helper()
	return fromYAML(t, encryptPGP(t, []sopstest.PGPKey{key}, []sopstest.KeyGroup{{PGP: []string{key.Fingerprint}}}, readTestdata(t, "secret.yaml"), formats.Yaml, k8sRegex))
}

func newPGPDecryptor(t *testing.T, keys ...string) *Decryptor {
	t.Helper()
	d, err := New(Options{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// A PGP private key given as text decrypts in memory: no gpg on PATH, no
// GnuPG home, nothing written to TMPDIR, nothing logged.
func TestPGPDecryptObjects(t *testing.T) {
	key := newPGPKey(t, "deploy")
	u := secretForPGP(t, key)
	if !strings.Contains(string(mustJSON(t, u)), key.Fingerprint) {
		t.Fatal("the fingerprint is not in the sops metadata; the test premise is wrong")
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Setenv("PATH", t.TempDir())
	t.Setenv("GNUPGHOME", t.TempDir()+"/absent")
	logs := captureSopsLogs(t)
	if err := decryptSecret(t, newPGPDecryptor(t, key.Private), u); err != nil {
		t.Fatal(err)
	}
	assertDecryptedSecret(t, u)
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("decryption left files in TMPDIR: %v", entries)
	}
	if logs.Len() != 0 {
		t.Errorf("sops logged: %s", logs)
	}
}

// secretGenerator files encrypted for PGP decrypt in place, the MAC checked.
func TestPGPDecryptFilesSecretGenerator(t *testing.T) {
	key := newPGPKey(t, "deploy")
	root := t.TempDir()
	writeTree(t, root, map[string][]byte{
		"apps/kustomization.yaml": []byte("secretGenerator:\n  - name: app\n    envs: [app.env]\n"),
		"apps/app.env": encryptPGP(t, []sopstest.PGPKey{key}, []sopstest.KeyGroup{{PGP: []string{key.Fingerprint}}},
			readTestdata(t, "generator/app.env"), formats.Dotenv, ""),
	})
	if _, err := newPGPDecryptor(t, key.Private).DecryptFiles(context.Background(), root, "apps"); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, root, "apps/app.env"); !strings.Contains(got, "API_TOKEN=tok-plaintext-9f8e7d") || strings.Contains(got, "sops") {
		t.Errorf("apps/app.env after DecryptFiles:\n%s", got)
	}
}

// A file for age and PGP keys decrypts with either.
func TestPGPOrAge(t *testing.T) {
	key, age := newPGPKey(t, "deploy"), newTestKey(t)
	enc := encryptPGP(t, []sopstest.PGPKey{key}, []sopstest.KeyGroup{{Age: []string{age.recipient}, PGP: []string{key.Fingerprint}}}, readTestdata(t, "secret.yaml"), formats.Yaml, k8sRegex)
	for name, d := range map[string]*Decryptor{"pgp": newPGPDecryptor(t, key.Private), "age": newTestDecryptor(t, age)} {
		u := fromYAML(t, enc)
		if err := decryptSecret(t, d, u); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestPGPWrongKey(t *testing.T) {
	key, other := newPGPKey(t, "deploy"), newPGPKey(t, "other")
	u := secretForPGP(t, key)
	err := decryptSecret(t, newPGPDecryptor(t, other.Private), u)
	dke := dataKeyFailure(t, err)
	if !errors.Is(err, ErrNoMatchingPGPKey) || len(dke.Keys) != 1 || dke.Keys[0].Type != "pgp" || dke.Keys[0].Key != key.Fingerprint {
		t.Errorf("err = %v", err)
	}
	assertContains(t, err, "PGP key "+key.Fingerprint+": no matching PGP private key")
	assertNoKeyMaterial(t, err, other.Private)
}

func TestPGPNoKeys(t *testing.T) {
	key, age := newPGPKey(t, "deploy"), newTestKey(t)
	u := secretForPGP(t, key)
	err := decryptSecret(t, newTestDecryptor(t, age), u)
	dataKeyFailure(t, err)
	assertContains(t, err, "PGP key "+key.Fingerprint+": no matching PGP private key (no PGP private keys configured)")
}

// A changed encrypted data key fails the message's integrity check, or
// does not parse; either way the error says so and quotes nothing.
func TestPGPTamperedDataKey(t *testing.T) {
	key := newPGPKey(t, "deploy")
	u := secretForPGP(t, key)
	pgpKeys, _, _ := unstructured.NestedSlice(u.Object, "sops", "pgp")
	entry := pgpKeys[0].(map[string]any)
	block, err := armor.Decode(strings.NewReader(entry["enc"].(string)))
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	_, _ = body.ReadFrom(block.Body)
	raw := body.Bytes()
	raw[len(raw)-5] ^= 0xff
	var rearmored bytes.Buffer
	w, _ := armor.Encode(&rearmored, "PGP MESSAGE", nil)
	_, _ = w.Write(raw)
	w.Close()
	entry["enc"] = rearmored.String()
	_ = unstructured.SetNestedSlice(u.Object, pgpKeys, "sops", "pgp")

	err = decryptSecret(t, newPGPDecryptor(t, key.Private), u)
	dataKeyFailure(t, err)
	if !errors.Is(err, ErrInvalidCiphertext) && !errors.Is(err, ErrMalformed) {
		t.Errorf("err = %v, want invalid ciphertext or malformed", err)
	}
}

// assertNoKeyMaterial fails if err quotes a line of an armored key.
func assertNoKeyMaterial(t *testing.T, err error, armored string) {
	t.Helper()
	for line := range strings.Lines(armored) {
		line = strings.TrimSpace(line)
		if len(line) >= 16 && !strings.HasPrefix(line, "-----") && strings.Contains(err.Error(), line) {
			t.Errorf("error quotes key material %q: %v", line, err)
		}
	}
}

func protectedPGPKey(t *testing.T) (sopstest.PGPKey, string) {
	t.Helper()
	e, err := openpgp.NewEntity("locked", "", "locked@example.test", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.EncryptPrivateKeys([]byte("passphrase"), nil); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	w, _ := armor.Encode(&b, openpgp.PrivateKeyType, nil)
	if err := e.SerializePrivateWithoutSigning(w, nil); err != nil {
		t.Fatal(err)
	}
	w.Close()
	return sopstest.PGPKey{Fingerprint: pgpFingerprint(e)}, b.String()
}

func TestParseKeys(t *testing.T) {
	k1, k2 := newPGPKey(t, "one"), newPGPKey(t, "two")
	age := newTestKey(t)
	locked, lockedBlock := protectedPGPKey(t)
	body := strings.Split(k1.Private, "\n")
	truncated := strings.Join(body[:len(body)/2], "\n") + "\n-----END PGP PRIVATE KEY BLOCK-----\n"
	tests := []struct {
		name    string
		in      string
		want    []string
		wantErr string
	}{
		{name: "age and PGP in one text", in: "# age\n" + age.identity + "\n\n" + k1.Private + k2.Private, want: []string{age.identity, k1.Private, k2.Private}},
		{name: "PGP only", in: k1.Private, want: []string{k1.Private}},
		{name: "nothing", in: "# nothing\n", wantErr: "no AGE-SECRET-KEY-1 identity or PGP private key block found"},
		{name: "public key", in: k1.Public, wantErr: "a PGP public key block where a private key is needed"},
		{name: "passphrase", in: lockedBlock, wantErr: "PGP private key 1: PGP key " + locked.Fingerprint + " is protected by a passphrase"},
		{name: "truncated block", in: age.identity + "\n" + truncated, wantErr: "PGP private key 1: malformed PGP private key block"},
		{name: "no END line", in: k1.Private[:len(k1.Private)/2], wantErr: "PGP private key 1: the block has no END line"},
		{name: "bad age line after a block keeps its line number", in: k1.Private + "AGE-SECRET-KEY-1NOPE\n", wantErr: "age keys line " + itoa(strings.Count(k1.Private, "\n")+1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseKeys([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				assertNoKeyMaterial(t, err, tt.in)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d keys, want %d", len(got), len(tt.want))
			}
			for i := range got {
				if strings.TrimSpace(got[i]) != strings.TrimSpace(tt.want[i]) {
					t.Errorf("key %d differs", i)
				}
			}
			if _, err := New(Options{Keys: got}); err != nil {
				t.Errorf("New: %v", err)
			}
		})
	}
}

func TestParsePGPKeys(t *testing.T) {
	k := newPGPKey(t, "one")
	if _, err := ParsePGPKeys([]byte(k.Private + "AGE-SECRET-KEY-1X\n")); err == nil || !strings.Contains(err.Error(), "text outside the PGP private key blocks") {
		t.Errorf("err = %v", err)
	}
	if _, err := ParsePGPKeys([]byte("# comment\n")); err == nil || !strings.Contains(err.Error(), "no PGP private key block found") {
		t.Errorf("err = %v", err)
	}
	got, err := ParsePGPKeys([]byte("# deploy key\n" + k.Private))
	if err != nil || len(got) != 1 {
		t.Errorf("got %d, %v", len(got), err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
