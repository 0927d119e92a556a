package gcp

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/kmstest"
)

func TestTokenSourceFromTheEnvironment(t *testing.T) {
	g := kmstest.NewGCP(t)
	dir := t.TempDir()
	saFile := filepath.Join(dir, "sa.json")
	if err := os.WriteFile(saFile, g.ServiceAccountKey("sa@kmstest.iam.gserviceaccount.com"), 0o600); err != nil {
		t.Fatal(err)
	}
	tok := g.IssueToken("user:me")
	home := t.TempDir()
	adc := filepath.Join(home, ".config", "gcloud", "application_default_credentials.json")
	if err := os.MkdirAll(filepath.Dir(adc), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(adc, g.ServiceAccountKey("adc@kmstest.iam.gserviceaccount.com"), 0o600); err != nil {
		t.Fatal(err)
	}
	meta := kmstest.NewGCEMetadata(t, g, "vm@kmstest.iam.gserviceaccount.com")
	tests := []struct {
		name       string
		env        map[string]string
		wantSource string
		wantErr    string
	}{
		{name: "nothing", wantErr: "no Google credentials: set GOOGLE_APPLICATION_CREDENTIALS"},
		{name: "nothing, and the home directory looked in", env: map[string]string{"HOME": t.TempDir()},
			wantErr: "(tried: GOOGLE_OAUTH_ACCESS_TOKEN, GOOGLE_CREDENTIALS and GOOGLE_APPLICATION_CREDENTIALS are not set; gcloud's application default credentials: no "},
		{name: "gcloud's application default credentials", env: map[string]string{"HOME": home, "GCE_METADATA_HOST": meta.Host()},
			wantSource: adc + " (service_account)"},
		{name: "CLOUDSDK_CONFIG", env: map[string]string{"HOME": "/nowhere", "CLOUDSDK_CONFIG": filepath.Dir(adc)},
			wantSource: adc + " (service_account)"},
		{name: "the metadata server named", env: map[string]string{"HOME": t.TempDir(), "GCE_METADATA_HOST": meta.Host()},
			wantSource: "the metadata server's service account vm@kmstest.iam.gserviceaccount.com (GCE_METADATA_HOST=" + meta.Host() + ")"},
		{name: "the environment wins over the metadata server", env: map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": saFile, "GCE_METADATA_HOST": meta.Host()},
			wantSource: "GOOGLE_APPLICATION_CREDENTIALS (service_account)"},
		{name: "a metadata server that is not there", env: map[string]string{"GCE_METADATA_HOST": "127.0.0.1:1"},
			wantErr: "the metadata server (GCE_METADATA_HOST=127.0.0.1:1): no answer from 127.0.0.1:1"},
		{name: "a detection override Google's libraries do not know", env: map[string]string{"METADATA_SERVER_DETECTION": "always"},
			wantErr: `METADATA_SERVER_DETECTION="always": want assume-present, none, bios-only or ping-only`},
		{name: "an access token wins", env: map[string]string{"GOOGLE_OAUTH_ACCESS_TOKEN": tok, "GOOGLE_APPLICATION_CREDENTIALS": saFile}, wantSource: "GOOGLE_OAUTH_ACCESS_TOKEN"},
		{name: "application default credentials", env: map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": saFile}, wantSource: "GOOGLE_APPLICATION_CREDENTIALS (service_account)"},
		{name: "sops's variable, as a path", env: map[string]string{"GOOGLE_CREDENTIALS": saFile, "GOOGLE_APPLICATION_CREDENTIALS": "/nowhere"}, wantSource: "GOOGLE_CREDENTIALS (service_account)"},
		{name: "missing file", env: map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": filepath.Join(dir, "absent.json")}, wantErr: "GOOGLE_APPLICATION_CREDENTIALS: reading the credentials file"},
		{name: "not JSON", env: map[string]string{"GOOGLE_CREDENTIALS": "{not json"}, wantErr: "GOOGLE_CREDENTIALS: not a credentials file (JSON)"},
		{name: "a client secret for a browser flow", env: map[string]string{"GOOGLE_CREDENTIALS": `{"installed":{"client_id":"x","client_secret":"hush"}}`}, wantErr: `credentials of type "" are not supported`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := notGoogle(t)
			m.Client = nil // GCE_METADATA_HOST's server is reached directly
			opts := Options{Getenv: func(k string) string { return tt.env[k] }, HTTPClient: kmstest.Client(g), Metadata: m}
			creds, err := TokenSource(context.Background(), opts, CloudPlatformScope)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "hush") {
					t.Error("the error quotes the credentials")
				}
				if strings.HasPrefix(tt.name, "nothing") && !errors.Is(err, ErrNoCredentials) {
					t.Error("not ErrNoCredentials")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if creds.Source != tt.wantSource {
				t.Errorf("source %q, want %q", creds.Source, tt.wantSource)
			}
			got, err := creds.Token()
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := g.Principal(got.AccessToken); !ok {
				t.Error("the token is not one Google issued")
			}
		})
	}
}

// notGoogle is a machine off Google: its DMI product name is another
// vendor's, metadata.google.internal does not resolve, and a request to
// the metadata server fails the test.
func notGoogle(t *testing.T) Metadata {
	return Metadata{
		ProductName: func() string { return "Virtual Machine\n" },
		LookupHost: func(_ context.Context, host string) ([]string, error) {
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		},
		Client: &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
			t.Errorf("a request to the metadata server: %s %s", r.Method, r.URL)
			return nil, errors.New("no metadata server here")
		})},
	}
}

// The metadata server is used where it is known to be, as Google's
// libraries find it: the machine's DMI product name, the name
// metadata.google.internal resolving to it, or METADATA_SERVER_DETECTION.
// Its token is the one the server issued, and Cloud KMS takes it.
func TestTokenSourceFindsTheMetadataServer(t *testing.T) {
	g := kmstest.NewGCP(t)
	meta := kmstest.NewGCEMetadata(t, g, "runner@shop.iam.gserviceaccount.com")
	key := g.CreateKey("ring", "key")
	g.AllowKey(key, "serviceAccount:runner@shop.iam.gserviceaccount.com")
	resolves := func(_ context.Context, host string) ([]string, error) {
		if host != "metadata.google.internal." {
			t.Errorf("resolved %q", host)
		}
		return []string{"169.254.169.254"}, nil
	}
	tests := []struct {
		name    string
		env     map[string]string
		machine func(*Metadata)
		how     string
	}{
		{"a GCE VM or GKE node", nil, func(m *Metadata) { m.ProductName = func() string { return "Google Compute Engine\n" } },
			"the machine's DMI product name is Google Compute Engine"},
		{"metadata.google.internal resolves", nil, func(m *Metadata) { m.LookupHost = resolves },
			"metadata.google.internal resolves to 169.254.169.254"},
		{"ping-only skips the product name", map[string]string{"METADATA_SERVER_DETECTION": "ping-only"},
			func(m *Metadata) {
				m.ProductName = func() string { t.Error("the product name was read"); return "" }
				m.LookupHost = resolves
			},
			"metadata.google.internal resolves to 169.254.169.254"},
		{"assume-present", map[string]string{"METADATA_SERVER_DETECTION": "assume-present"}, func(*Metadata) {},
			"METADATA_SERVER_DETECTION=assume-present"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := notGoogle(t)
			m.Client = kmstest.Client(meta) // 169.254.169.254 is the double
			tt.machine(&m)
			env := map[string]string{"HOME": t.TempDir()}
			for k, v := range tt.env {
				env[k] = v
			}
			creds, err := TokenSource(context.Background(), Options{Getenv: func(k string) string { return env[k] }, HTTPClient: kmstest.Client(g), Metadata: m}, CloudPlatformScope)
			if err != nil {
				t.Fatal(err)
			}
			if want := "the metadata server's service account runner@shop.iam.gserviceaccount.com (" + tt.how + ")"; creds.Source != want {
				t.Errorf("source %q, want %q", creds.Source, want)
			}
			tok, err := creds.Token()
			if err != nil {
				t.Fatal(err)
			}
			reqs := meta.Requests()
			if last := reqs[len(reqs)-1]; last.Target != "Metadata.Token" || last.Key != CloudPlatformScope {
				t.Errorf("last request to the metadata server %+v", last)
			}
			if p, ok := g.Principal(tok.AccessToken); !ok || p != "serviceAccount:runner@shop.iam.gserviceaccount.com" {
				t.Errorf("the token is of %q (%v)", p, ok)
			}
		})
	}
}

// Off Google, nothing is sent to the metadata server's address, and the
// error says every source tried. With credentials in the environment, the
// machine is not even looked at.
func TestTokenSourceProbesNothingUnasked(t *testing.T) {
	g := kmstest.NewGCP(t)
	for _, mode := range []string{"", "bios-only", "none"} {
		t.Run("detection "+mode, func(t *testing.T) {
			lookups := 0
			m := notGoogle(t)
			lookup := m.LookupHost
			m.LookupHost = func(ctx context.Context, host string) ([]string, error) { lookups++; return lookup(ctx, host) }
			home := t.TempDir()
			env := map[string]string{"HOME": home, "METADATA_SERVER_DETECTION": mode}
			_, err := TokenSource(context.Background(), Options{Getenv: func(k string) string { return env[k] }, HTTPClient: kmstest.Client(g), Metadata: m}, CloudPlatformScope)
			want := map[string]string{
				"":          "the metadata server: not found (not a Google machine: metadata.google.internal does not resolve; GCE_METADATA_HOST names the server))",
				"bios-only": "the metadata server: not found (the machine's DMI product name is not Google's; METADATA_SERVER_DETECTION=bios-only))",
				"none":      "the metadata server: not looked for (METADATA_SERVER_DETECTION=none))",
			}[mode]
			adc := filepath.Join(home, ".config", "gcloud", "application_default_credentials.json")
			if !errors.Is(err, ErrNoCredentials) || !strings.HasSuffix(err.Error(), "gcloud's application default credentials: no "+adc+"; "+want) {
				t.Errorf("err = %v", err)
			}
			if wantLookups := map[string]int{"": 1}[mode]; lookups != wantLookups {
				t.Errorf("%d DNS probes, want %d", lookups, wantLookups)
			}
		})
	}
	t.Run("credentials in the environment", func(t *testing.T) {
		m := Metadata{
			ProductName: func() string { t.Error("the product name was read"); return "" },
			LookupHost: func(context.Context, string) ([]string, error) {
				t.Error("a DNS probe")
				return nil, errors.New("no")
			},
			Client: notGoogle(t).Client,
		}
		env := map[string]string{"GOOGLE_OAUTH_ACCESS_TOKEN": g.IssueToken("user:me"), "HOME": t.TempDir()}
		if _, err := TokenSource(context.Background(), Options{Getenv: func(k string) string { return env[k] }, Metadata: m}, CloudPlatformScope); err != nil {
			t.Fatal(err)
		}
	})
}
