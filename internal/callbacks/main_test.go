package callbacks

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if a drain goroutine is left behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
