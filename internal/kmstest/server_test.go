package kmstest_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"

	"github.com/kustomize-deploy/kustomize-deploy/internal/kmstest"
)

const (
	userID     = "AKIAUSERTESTKEY00001"
	userSecret = "user-secret-access-key"
	roleARN    = "arn:aws:iam::111122223333:role/deployer"
)

// setup starts a server that knows one user, points the environment at it
// and returns a KMS client signing as that user.
func setup(t *testing.T) (*kmstest.Server, *kms.Client, aws.Config) {
	t.Helper()
	srv := kmstest.New(t)
	srv.AddUser(userID, userSecret)
	srv.Setenv(t)
	kmstest.SetCredentials(t, userID, userSecret)
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return srv, kms.NewFromConfig(cfg), cfg
}

func errorCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

func TestEncryptDecrypt(t *testing.T) {
	srv, client, _ := setup(t)
	arn := srv.CreateKey("sops")
	srv.Allow(arn, userID)
	ctx := context.Background()
	plain := []byte("data-key-plaintext-0123456789abc")
	encCtx := map[string]string{"app": "db", "env": "prod"}

	enc, err := client.Encrypt(ctx, &kms.EncryptInput{KeyId: aws.String("alias/sops"), Plaintext: plain, EncryptionContext: encCtx})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(enc.KeyId) != arn || bytes.Contains(enc.CiphertextBlob, plain) {
		t.Fatalf("Encrypt: KeyId %s, blob holds plaintext: %v", aws.ToString(enc.KeyId), bytes.Contains(enc.CiphertextBlob, plain))
	}
	// The blob names its key, so KeyId is optional on Decrypt.
	for _, keyID := range []*string{nil, aws.String(arn)} {
		dec, err := client.Decrypt(ctx, &kms.DecryptInput{KeyId: keyID, CiphertextBlob: enc.CiphertextBlob, EncryptionContext: encCtx})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(dec.Plaintext, plain) || aws.ToString(dec.KeyId) != arn {
			t.Errorf("Decrypt = %q, %s", dec.Plaintext, aws.ToString(dec.KeyId))
		}
	}

	gen, err := client.GenerateDataKey(ctx, &kms.GenerateDataKeyInput{KeyId: aws.String(arn), KeySpec: "AES_256"})
	if err != nil {
		t.Fatal(err)
	}
	dec, err := client.Decrypt(ctx, &kms.DecryptInput{CiphertextBlob: gen.CiphertextBlob})
	if err != nil {
		t.Fatal(err)
	}
	if len(gen.Plaintext) != 32 || !bytes.Equal(dec.Plaintext, gen.Plaintext) {
		t.Errorf("GenerateDataKey: %d bytes, decrypts back: %v", len(gen.Plaintext), bytes.Equal(dec.Plaintext, gen.Plaintext))
	}

	var targets []string
	for _, r := range srv.Requests() {
		if r.AccessKeyID != userID || r.Key != arn || r.Error != "" {
			t.Errorf("request %+v", r)
		}
		targets = append(targets, r.Target)
	}
	want := "TrentService.Encrypt TrentService.Decrypt TrentService.Decrypt TrentService.GenerateDataKey TrentService.Decrypt"
	if got := strings.Join(targets, " "); got != want {
		t.Errorf("targets = %s, want %s", got, want)
	}
}

func TestDecryptFailures(t *testing.T) {
	srv, client, _ := setup(t)
	ctx := context.Background()
	arn, other := srv.CreateKey(""), srv.CreateKey("")
	srv.Allow(arn, userID)
	srv.Allow(other, userID)
	enc, err := client.Encrypt(ctx, &kms.EncryptInput{KeyId: aws.String(arn), Plaintext: []byte("x"), EncryptionContext: map[string]string{"env": "prod"}})
	if err != nil {
		t.Fatal(err)
	}
	blob := enc.CiphertextBlob
	tampered := append([]byte(nil), blob...)
	tampered[len(tampered)-1] ^= 1

	tests := []struct {
		name string
		in   kms.DecryptInput
		want string
	}{
		{"wrong context", kms.DecryptInput{CiphertextBlob: blob, EncryptionContext: map[string]string{"env": "dev"}}, "InvalidCiphertextException"},
		{"missing context", kms.DecryptInput{CiphertextBlob: blob}, "InvalidCiphertextException"},
		{"tampered blob", kms.DecryptInput{CiphertextBlob: tampered, EncryptionContext: map[string]string{"env": "prod"}}, "InvalidCiphertextException"},
		{"another key", kms.DecryptInput{KeyId: aws.String(other), CiphertextBlob: blob, EncryptionContext: map[string]string{"env": "prod"}}, "IncorrectKeyException"},
		{"unknown key", kms.DecryptInput{KeyId: aws.String("alias/nope"), CiphertextBlob: blob}, "NotFoundException"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := client.Decrypt(ctx, &tt.in)
			if got := errorCode(err); got != tt.want {
				t.Errorf("err = %v, want %s", err, tt.want)
			}
		})
	}

	srv.DeleteKey(arn)
	_, err = client.Decrypt(ctx, &kms.DecryptInput{CiphertextBlob: blob, EncryptionContext: map[string]string{"env": "prod"}})
	if errorCode(err) != "NotFoundException" || !strings.Contains(err.Error(), arn) {
		t.Errorf("deleted key: err = %v", err)
	}
}

func TestAccessRules(t *testing.T) {
	srv, client, cfg := setup(t)
	ctx := context.Background()
	arn := srv.CreateKey("")
	srv.AddUser("AKIAOTHERUSER0000001", "other-secret")

	_, err := client.Encrypt(ctx, &kms.EncryptInput{KeyId: aws.String(arn), Plaintext: []byte("x")})
	if errorCode(err) != "AccessDeniedException" || !strings.Contains(err.Error(), arn) {
		t.Errorf("not allowed yet: err = %v", err)
	}
	srv.Allow(arn, "AKIAOTHERUSER0000001")
	if _, err := client.Encrypt(ctx, &kms.EncryptInput{KeyId: aws.String(arn), Plaintext: []byte("x")}); errorCode(err) != "AccessDeniedException" {
		t.Errorf("allowed to another user: err = %v", err)
	}

	as := func(id, secret string) *kms.Client {
		c := cfg.Copy()
		c.Credentials = credentials.NewStaticCredentialsProvider(id, secret, "")
		return kms.NewFromConfig(c)
	}
	if _, err := as("AKIAOTHERUSER0000001", "other-secret").Encrypt(ctx, &kms.EncryptInput{KeyId: aws.String(arn), Plaintext: []byte("x")}); err != nil {
		t.Errorf("allowed user: %v", err)
	}
	if _, err := as("AKIAOTHERUSER0000001", "wrong-secret").Encrypt(ctx, &kms.EncryptInput{KeyId: aws.String(arn), Plaintext: []byte("x")}); errorCode(err) != "InvalidSignatureException" {
		t.Errorf("wrong secret: err = %v", err)
	}
	if _, err := as("AKIAUNKNOWN000000001", "x").Encrypt(ctx, &kms.EncryptInput{KeyId: aws.String(arn), Plaintext: []byte("x")}); errorCode(err) != "UnrecognizedClientException" {
		t.Errorf("unknown access key: err = %v", err)
	}
}

// Requests without a signature, or whose body changed after signing, are
// rejected.
func TestRejectsUnsignedAndTampered(t *testing.T) {
	srv, _, _ := setup(t)
	arn := srv.CreateKey("")
	srv.Allow(arn, userID)
	body := `{"KeyId":"` + arn + `","Plaintext":"eA=="}`
	newReq := func(body string) *http.Request {
		req, err := http.NewRequest(http.MethodPost, srv.URL()+"/", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Amz-Target", "TrentService.Encrypt")
		req.Header.Set("Content-Type", "application/x-amz-json-1.1")
		return req
	}
	send := func(req *http.Request) (int, string) {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	if status, got := send(newReq(body)); status != http.StatusBadRequest || !strings.Contains(got, `"__type":"MissingAuthenticationTokenException"`) {
		t.Errorf("unsigned: %d %s", status, got)
	}

	signed := newReq(body)
	sum := sha256.Sum256([]byte(body))
	creds := aws.Credentials{AccessKeyID: userID, SecretAccessKey: userSecret}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, signed, hex.EncodeToString(sum[:]), "kms", kmstest.Region, time.Now()); err != nil {
		t.Fatal(err)
	}
	tampered := newReq(strings.Replace(body, "eA==", "eQ==", 1))
	tampered.Header = signed.Header.Clone()
	if status, got := send(tampered); status != http.StatusBadRequest || !strings.Contains(got, "InvalidSignatureException") {
		t.Errorf("tampered body: %d %s", status, got)
	}
	signed.Body = io.NopCloser(strings.NewReader(body))
	if status, got := send(signed); status != http.StatusOK || !strings.Contains(got, "CiphertextBlob") {
		t.Errorf("hand-signed request: %d %s", status, got)
	}
}

func TestAssumeRole(t *testing.T) {
	srv, client, cfg := setup(t)
	ctx := context.Background()
	arn := srv.CreateKey("")
	srv.AllowRole(arn, roleARN)

	if _, err := client.Encrypt(ctx, &kms.EncryptInput{KeyId: aws.String(arn), Plaintext: []byte("x")}); errorCode(err) != "AccessDeniedException" {
		t.Fatalf("the user itself: err = %v", err)
	}
	out, err := sts.NewFromConfig(cfg).AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String(roleARN), RoleSessionName: aws.String("ci")})
	if err != nil {
		t.Fatal(err)
	}
	if got := aws.ToString(out.AssumedRoleUser.Arn); got != "arn:aws:sts::111122223333:assumed-role/deployer/ci" {
		t.Errorf("assumed role ARN = %s", got)
	}
	c := cfg.Copy()
	c.Credentials = credentials.NewStaticCredentialsProvider(*out.Credentials.AccessKeyId, *out.Credentials.SecretAccessKey, *out.Credentials.SessionToken)
	if _, err := kms.NewFromConfig(c).Encrypt(ctx, &kms.EncryptInput{KeyId: aws.String(arn), Plaintext: []byte("x")}); err != nil {
		t.Fatalf("the role's session: %v", err)
	}
	c.Credentials = credentials.NewStaticCredentialsProvider(*out.Credentials.AccessKeyId, *out.Credentials.SecretAccessKey, "forged")
	if _, err := kms.NewFromConfig(c).Encrypt(ctx, &kms.EncryptInput{KeyId: aws.String(arn), Plaintext: []byte("x")}); errorCode(err) != "UnrecognizedClientException" {
		t.Errorf("wrong session token: err = %v", err)
	}

	srv.TrustRole(roleARN, "AKIASOMEONEELSE00001")
	_, err = sts.NewFromConfig(cfg).AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String(roleARN), RoleSessionName: aws.String("ci")})
	if errorCode(err) != "AccessDenied" {
		t.Errorf("untrusted caller: err = %v", err)
	}
	if n := srv.Count("STS.AssumeRole"); n != 2 {
		t.Errorf("%d AssumeRole requests, want 2", n)
	}
}

// The SDK's web identity provider, as configured by GitHub's OIDC login
// (AWS_ROLE_ARN and AWS_WEB_IDENTITY_TOKEN_FILE), gets credentials from the
// server.
func TestWebIdentity(t *testing.T) {
	srv := kmstest.New(t)
	srv.Setenv(t)
	arn := srv.CreateKey("")
	srv.AllowRole(arn, roleARN)
	srv.AllowWebIdentity(roleARN, "oidc-token")
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("oidc-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_ROLE_ARN", roleARN)
	t.Setenv("AWS_WEB_IDENTITY_TOKEN_FILE", token)
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kms.NewFromConfig(cfg).Encrypt(context.Background(), &kms.EncryptInput{KeyId: aws.String(arn), Plaintext: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	if n := srv.Count("STS.AssumeRoleWithWebIdentity"); n != 1 {
		t.Errorf("%d AssumeRoleWithWebIdentity requests, want 1", n)
	}
}

func TestGetCallerIdentity(t *testing.T) {
	srv, _, cfg := setup(t)
	out, err := sts.NewFromConfig(cfg).GetCallerIdentity(context.Background(), &sts.GetCallerIdentityInput{})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(out.Arn) != "arn:aws:iam::111122223333:user/"+userID || aws.ToString(out.Account) != kmstest.AccountID {
		t.Errorf("caller %s in %s", aws.ToString(out.Arn), aws.ToString(out.Account))
	}
	if srv.Count("STS.GetCallerIdentity") != 1 {
		t.Errorf("requests %+v", srv.Requests())
	}
}
