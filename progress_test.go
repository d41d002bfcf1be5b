package generic_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/generic-informers/generic"
)

// slowListerWatcher is a scriptedListerWatcher whose lists take delay to
// come back, as a large list does from a large cluster.
type slowListerWatcher struct {
	*scriptedListerWatcher
	delay time.Duration
}

func (lw slowListerWatcher) List(options metav1.ListOptions) (runtime.Object, error) {
	time.Sleep(lw.delay)
	return lw.scriptedListerWatcher.List(options)
}

// progressLine is what a test keeps of a progress log line.
type progressLine struct {
	Verbosity int    `json:"level"`
	Message   string `json:"msg"`
	GVR       string `json:"gvr"`
	Received  int64  `json:"received"`
}

// progressLog collects the informer's progress lines from a funcr logger,
// each line whole as funcr writes it (one call a line, whatever goroutine
// logs it).
type progressLog struct {
	t     *testing.T
	mu    sync.Mutex
	lines []progressLine
}

func (l *progressLog) logger(verbosity int) klog.Logger {
	return funcr.NewJSON(func(obj string) {
		var line progressLine
		if err := json.Unmarshal([]byte(obj), &line); err != nil {
			l.t.Errorf("log line %s: %v", obj, err)
			return
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lines = append(l.lines, line)
	}, funcr.Options{Verbosity: verbosity})
}

// progressOnly keeps the lines of the initial sync's progress.
func (l *progressLog) progressOnly() []progressLine {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []progressLine
	for _, line := range l.lines {
		if line.Message == "Initial sync in progress" || line.Message == "Initial sync done" {
			out = append(out, line)
		}
	}
	return out
}

// TestSyncProgressLogLines checks the initial sync's klog lines: one "in
// progress" line once objects have come in for ProgressLogInterval, one
// "done" line when the cache is filled, both at ProgressLogVerbosity and
// through the logger of the context the informer runs with.
func TestSyncProgressLogLines(t *testing.T) {
	gvr := configMapsGVR.String()
	tests := []struct {
		name      string
		verbosity int
		listDelay time.Duration
		want      []progressLine
	}{
		{
			name: "a quick list: only the done line", verbosity: generic.ProgressLogVerbosity,
			want: []progressLine{{Verbosity: 2, Message: "Initial sync done", GVR: gvr, Received: 2}},
		},
		{
			name: "a list slower than the interval: a progress line, then done", verbosity: generic.ProgressLogVerbosity,
			listDelay: generic.ProgressLogInterval + 100*time.Millisecond,
			want: []progressLine{
				{Verbosity: 2, Message: "Initial sync in progress", GVR: gvr, Received: 2},
				{Verbosity: 2, Message: "Initial sync done", GVR: gvr, Received: 2},
			},
		},
		{
			name: "below the verbosity: no lines", verbosity: generic.ProgressLogVerbosity - 1,
			listDelay: generic.ProgressLogInterval + 100*time.Millisecond,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lw := slowListerWatcher{
				scriptedListerWatcher: newScriptedListerWatcher(unstructuredList("10", namedConfigMap("a", "1"), namedConfigMap("b", "2"))),
				delay:                 tc.listDelay,
			}
			informer := newInformer[*unstructured.Unstructured](lw, configMapsGVR, nil)
			log := &progressLog{t: t}
			ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), log.logger(tc.verbosity)))
			done := make(chan struct{})
			go func() {
				defer close(done)
				informer.Run(ctx)
			}()
			defer func() {
				cancel()
				<-done
			}()
			if !cache.WaitForCacheSync(testDone(t), informer.HasSynced) {
				t.Fatal("not synced")
			}
			// The done line is logged as the informer hears that its cache
			// is filled, a moment after HasSynced, on a goroutine that Run
			// waits for: wait until the fill is recorded (Elapsed stops
			// growing), then stop the informer. Every line it logs has been
			// logged then, those below the verbosity included, had there
			// been any.
			waitUntil(t, "the fill is recorded", func() bool {
				before := informer.Status().Progress.Elapsed
				time.Sleep(10 * time.Millisecond)
				return informer.Status().Progress.Elapsed == before
			})
			cancel()
			<-done
			got := log.progressOnly()
			// A progress line is logged once objects come in
			// ProgressLogInterval or more after the start, and the fill
			// comes after them: a quick list on a loaded machine may take
			// that long, and then the line may be there.
			if elapsed := informer.Status().Progress.Elapsed; tc.listDelay == 0 && elapsed >= generic.ProgressLogInterval &&
				len(got) > 0 && got[0].Message == "Initial sync in progress" {
				t.Logf("the quick list took %v: a progress line is allowed", elapsed)
				got = got[1:]
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("progress lines (-want +got):\n%s", diff)
			}
		})
	}
}
