package cache

import "testing"

func TestDefaultOpts(t *testing.T) {}
