package objectedit

// ForIngest returns what the ingest does to every object it converted,
// before the user's transform and before it hands the object on:
// managedFields stripped if strip, and labels of its own (OwnLabels) if
// transformed, since a transform may edit them in place; nil if there is
// nothing to do. The object given to the function returned is not nil.
func ForIngest(strip, transformed bool) func(obj any) {
	if !strip && !transformed {
		return nil
	}
	return func(obj any) {
		if strip {
			StripManagedFields(obj)
		}
		if transformed {
			OwnLabels(obj)
		}
	}
}
