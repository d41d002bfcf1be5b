package encodedsize

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// marshalledLen is what JSON must return: the length of json.Marshal's
// output, 0 where it fails.
func marshalledLen(v any) int {
	data, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(data)
}

// realisticPod is testdata/realistic-pod.json as an unstructured object's
// content holds it (json.Unmarshal's numbers are float64 there; the
// dynamic client's are int64: both are in the cases).
func realisticPod(t testing.TB) map[string]any {
	t.Helper()
	data, err := os.ReadFile("../../testdata/realistic-pod.json")
	if err != nil {
		t.Fatal(err)
	}
	var content map[string]any
	if err := json.Unmarshal(data, &content); err != nil {
		t.Fatal(err)
	}
	return content
}

// TestJSONIsMarshalsLength: JSON is len(json.Marshal(v)) for every kind of
// value an unstructured object holds, the strings and numbers encoding/json
// writes in more bytes than they hold included.
func TestJSONIsMarshalsLength(t *testing.T) {
	pod := realisticPod(t)
	tests := []struct {
		name  string
		value any
	}{
		{"nil", nil},
		{"nil map", map[string]any(nil)},
		{"nil slice", []any(nil)},
		{"empty map", map[string]any{}},
		{"empty slice", []any{}},
		{"true", true},
		{"false", false},
		{"plain string", "kube-system"},
		{"empty string", ""},
		{"quotes and backslashes", `say "hi" \ bye`},
		{"control characters", "a\b\f\n\r\tz\x00\x01\x1f\x7f"},
		{"HTML characters", "<a href='x'>&amp;</a>"},
		{"multi-byte UTF-8", "héllo, 世界, 🚀"},
		{"invalid UTF-8", "a\xffb\xc3(c\xe2\x82"},
		{"line and paragraph separators", "a\u2028b\u2029c"},
		{"int64", int64(-9223372036854775808)},
		{"int", 42},
		{"int8, int16, int32", []any{int8(-8), int16(1600), int32(-320000)}},
		{"unsigned", []any{uint(7), uint8(255), uint16(65535), uint32(4294967295), uint64(18446744073709551615)}},
		{"float64 integral", 3.0},
		{"float64 fraction", -0.125},
		{"float64 negative zero", math.Copysign(0, -1)},
		{"float64 small: exponent", 1e-7},
		{"float64 just above the cutoff", 1e-6},
		{"float64 large: exponent", 1e21},
		{"float64 just below the cutoff", 1e20},
		{"float64 long exponent", 1.5e-300},
		{"float32", float32(3.14159)},
		{"float32 exponent", float32(1e-7)},
		{"json.Number", json.Number("12.50")},
		{"NaN: Marshal fails, 0", math.NaN()},
		{"infinity: Marshal fails, 0", math.Inf(1)},
		{"another kind: Marshal's length", struct {
			A int    `json:"a"`
			B string `json:"b,omitempty"`
		}{A: 1}},
		{"nested", map[string]any{"metadata": map[string]any{"name": "x", "labels": map[string]any{"app": "<web>"}}, "list": []any{int64(1), "two", nil, []any{}, map[string]any{}}}},
		{"a realistic Pod", pod},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want, got := marshalledLen(tc.value), JSON(tc.value)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("JSON(%#v) (-want +got):\n%s", tc.value, diff)
			}
		})
	}
}

// FuzzString: String is the length of json.Marshal's string, whatever the
// bytes.
func FuzzString(f *testing.F) {
	for _, s := range []string{"", "plain", "<>&", "\x00\x1f\"\\", "\xff\xfe", "\u2028\u2029", "日本語"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if want, got := marshalledLen(s), String(s); want != got {
			t.Errorf("String(%q) = %d, json.Marshal wrote %d bytes", s, got, want)
		}
	})
}

// TestJSONAllocatesNothing: measuring an object costs a walk of it, not an
// encoding.
func TestJSONAllocatesNothing(t *testing.T) {
	pod := realisticPod(t)
	got := testing.AllocsPerRun(20, func() { JSON(pod) })
	if diff := cmp.Diff(0.0, got); diff != "" {
		t.Errorf("allocations of JSON of a realistic Pod (-want +got):\n%s", diff)
	}
}
