package typed

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/rest"
)

// TestRequiredAPIMinorMatchesGoMod: requiredAPIMinor is the minor version
// of the k8s.io/api that go.mod requires; bumping one without the other
// fails here.
func TestRequiredAPIMinorMatchesGoMod(t *testing.T) {
	data, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*k8s\.io/api (v\S+)`).FindSubmatch(data)
	if m == nil {
		t.Fatal("go.mod requires no k8s.io/api")
	}
	minor, ok := moduleMinor(string(m[1]))
	if !ok || minor != requiredAPIMinor {
		t.Errorf("go.mod requires k8s.io/api %s, requiredAPIMinor is %d", m[1], requiredAPIMinor)
	}
}

// TestServerMinorVersion: the server versions protobuf is safe for are
// read as the server writes them; anything else is not read.
func TestServerMinorVersion(t *testing.T) {
	type read struct {
		Minor int
		OK    bool
	}
	for _, tc := range []struct {
		info *version.Info
		want read
	}{
		{&version.Info{Major: "1", Minor: "37"}, read{37, true}},
		{&version.Info{Major: "1", Minor: "38+"}, read{38, true}},
		{&version.Info{Major: "2", Minor: "0"}, read{}},
		{&version.Info{Major: "", Minor: ""}, read{}},
		{&version.Info{Major: "1", Minor: "x"}, read{}},
		{nil, read{}},
	} {
		var got read
		got.Minor, got.OK = serverMinorVersion(tc.info)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%+v (-want +got):\n%s", tc.info, diff)
		}
	}
}

// TestServerNoNewerThanAPI: protobuf is used for unstructured built-in
// kinds only when the server says it is no newer than the k8s.io/api of the
// build; a newer server, an answer that cannot be read, or none, means
// JSON.
func TestServerNoNewerThanAPI(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		body   string
		want   bool
	}{
		{"same minor", http.StatusOK, fmt.Sprintf(`{"major":"1","minor":"%d"}`, requiredAPIMinor), true},
		{"older", http.StatusOK, fmt.Sprintf(`{"major":"1","minor":"%d"}`, requiredAPIMinor-2), true},
		{"newer", http.StatusOK, fmt.Sprintf(`{"major":"1","minor":"%d"}`, requiredAPIMinor+1), false},
		{"newer, provider suffix", http.StatusOK, fmt.Sprintf(`{"major":"1","minor":"%d+"}`, requiredAPIMinor+1), false},
		{"no version", http.StatusOK, `{"major":"","minor":"","gitVersion":"v0.0.0-master"}`, false},
		{"forbidden", http.StatusForbidden, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403}`, false},
		{"not JSON", http.StatusOK, `<html>`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/version" {
					http.NotFound(w, r)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				fmt.Fprint(w, tc.body)
			}))
			defer server.Close()
			clients, _, err := Clients{Config: &rest.Config{Host: server.URL}}.resolve()
			if err != nil {
				t.Fatal(err)
			}
			if got := serverNoNewerThanAPI(clients); got != tc.want {
				t.Errorf("serverNoNewerThanAPI = %v, want %v", got, tc.want)
			}
		})
	}
}
