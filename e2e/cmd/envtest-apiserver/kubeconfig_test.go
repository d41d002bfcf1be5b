package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// restFields are the rest.Config fields a kubeconfig carries.
type restFields struct {
	Host, ServerName, Token   string
	Insecure                  bool
	CAData, CertData, KeyData []byte
}

func fieldsOf(c *rest.Config) restFields {
	return restFields{
		Host: c.Host, ServerName: c.ServerName, Token: c.BearerToken, Insecure: c.Insecure,
		CAData: c.CAData, CertData: c.CertData, KeyData: c.KeyData,
	}
}

// TestKubeconfigFor: the kubeconfig holds the rest.Config's host, TLS
// settings and credentials in its one, current context, and clientcmd reads
// them back as they were; a config with a custom transport, which a
// kubeconfig cannot hold, is refused with an error that says so.
func TestKubeconfigFor(t *testing.T) {
	tests := []struct {
		name    string
		config  *rest.Config
		wantErr string
	}{
		{
			name: "loopback token and CA, as the embedded server's",
			config: &rest.Config{Host: "https://127.0.0.1:6443", BearerToken: "secret", TLSClientConfig: rest.TLSClientConfig{
				ServerName: "apiserver-loopback-client", CAData: []byte("CA"),
			}},
		},
		{
			name: "client certificate",
			config: &rest.Config{Host: "https://127.0.0.1:6443", TLSClientConfig: rest.TLSClientConfig{
				CAData: []byte("CA"), CertData: []byte("CERT"), KeyData: []byte("KEY"),
			}},
		},
		{
			name: "custom transport",
			config: &rest.Config{Host: "https://127.0.0.1:6443", WrapTransport: func(rt http.RoundTripper) http.RoundTripper {
				return rt
			}},
			wantErr: "custom transport",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kubeconfig, err := kubeconfigFor(tc.config)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("kubeconfigFor: %v, want an error saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := clientcmd.NewDefaultClientConfig(*kubeconfig, nil).ClientConfig()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(fieldsOf(tc.config), fieldsOf(got)); diff != "" {
				t.Errorf("config read back from the kubeconfig (-want +got):\n%s", diff)
			}
		})
	}
}
