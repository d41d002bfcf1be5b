package generictest

// RESTRequests returns "METHOD PATH[ MEDIA-TYPE]" of every request the
// REST front of f (Config) has served, in order: the media type is that of
// the request's body, if it has one.
func RESTRequests(f *Fake) []string { return f.front.served() }
