package typed

import (
	"os"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/version"
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
