package cache_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
)

func TestSource(t *testing.T) {
	RunSpecs(t, "Cache Suite")
}
