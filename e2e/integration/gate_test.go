package integration

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"syscall"

	"k8s.io/client-go/rest"
)

// gate sits in a rest.Config's transport and can cut the connection to the
// API server: Cut ends every open response stream (the watch) and fails new
// requests as a refused connection would, until Restore. It also watches
// the watch streams for 410 Gone.
type gate struct {
	mu   sync.Mutex
	cut  bool
	open map[*gatedBody]struct{}
	gone int // watch streams that carried a 410 Gone
}

func newGate(config *rest.Config) (*rest.Config, *gate) {
	g := &gate{open: map[*gatedBody]struct{}{}}
	config = rest.CopyConfig(config)
	config.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			g.mu.Lock()
			cut := g.cut
			g.mu.Unlock()
			if cut {
				return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
			}
			resp, err := rt.RoundTrip(req)
			if err == nil && resp.StatusCode == http.StatusGone {
				g.mu.Lock()
				g.gone++
				g.mu.Unlock()
			}
			if err != nil || req.URL.Query().Get("watch") != "true" {
				return resp, err
			}
			body := &gatedBody{ReadCloser: resp.Body, gate: g}
			g.mu.Lock()
			g.open[body] = struct{}{}
			g.mu.Unlock()
			resp.Body = body
			return resp, nil
		})
	})
	return config, g
}

// Cut ends the open watch streams, cleanly (their readers see io.EOF, as when
// the server ends a watch), and refuses new requests.
func (g *gate) Cut() {
	g.mu.Lock()
	g.cut = true
	open := g.open
	g.open = map[*gatedBody]struct{}{}
	g.mu.Unlock()
	for body := range open {
		body.ended.Store(true)
		body.ReadCloser.Close()
	}
}

// Restore lets requests through again.
func (g *gate) Restore() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.cut = false
}

// Gone returns how many watch streams carried a 410 Gone.
func (g *gate) Gone() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.gone
}

// gatedBody is a watch response body the gate can end; it looks for the
// Status of a 410 Gone in what it reads.
type gatedBody struct {
	io.ReadCloser
	gate  *gate
	ended atomic.Bool
}

// goneReason is the reason of a 410 Gone Status ("Expired"), as it appears
// in both its JSON and its protobuf encoding.
var goneReason = []byte("Expired")

func (b *gatedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && b.ended.Load() {
		err = io.EOF
	}
	if bytes.Contains(p[:n], goneReason) {
		b.gate.mu.Lock()
		b.gate.gone++
		b.gate.mu.Unlock()
	}
	return n, err
}

func (b *gatedBody) Close() error {
	b.gate.mu.Lock()
	delete(b.gate.open, b)
	b.gate.mu.Unlock()
	return b.ReadCloser.Close()
}
