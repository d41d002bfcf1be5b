package cache

import "sigs.k8s.io/controller-runtime/pkg/cache"

var newCache = cache.New
