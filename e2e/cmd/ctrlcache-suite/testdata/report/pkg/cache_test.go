package cache_test

import "testing"

func TestReaderWaitsForCacheSync(t *testing.T) {}

func TestIndexFieldDoesNotBlock(t *testing.T) {}
