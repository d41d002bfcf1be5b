package apiserver

import (
	"fmt"
	"os"
	"runtime"
	"sync"

	"k8s.io/klog/v2"
	"k8s.io/ktesting"
)

// programTB is the testing.TB-shaped host that StartTestServer needs, for
// programs: it logs through klog at verbosity 4, runs cleanups when the
// server stops, and turns FailNow into runtime.Goexit of the starting
// goroutine, as the testing package does.
type programTB struct {
	mu       sync.Mutex
	cleanups []func()
	failed   bool
	tempDirs []string
}

var _ ktesting.TB = (*programTB)(nil)

func newProgramTB() *programTB { return &programTB{} }

// cleanup runs the registered cleanups, last first, and removes temp dirs.
func (tb *programTB) cleanup() {
	tb.mu.Lock()
	cleanups, dirs := tb.cleanups, tb.tempDirs
	tb.cleanups, tb.tempDirs = nil, nil
	tb.mu.Unlock()
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}
	for _, dir := range dirs {
		os.RemoveAll(dir)
	}
}

func (tb *programTB) Attr(key, value string) {}

func (tb *programTB) Chdir(dir string) {
	tb.Fatalf("Chdir(%q) is not supported outside tests", dir)
}

func (tb *programTB) Cleanup(fn func()) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.cleanups = append(tb.cleanups, fn)
}

func (tb *programTB) Error(args ...any) {
	klog.Background().Error(nil, fmt.Sprint(args...))
	tb.Fail()
}

func (tb *programTB) Errorf(format string, args ...any) {
	klog.Background().Error(nil, fmt.Sprintf(format, args...))
	tb.Fail()
}

func (tb *programTB) Fail() {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.failed = true
}

func (tb *programTB) FailNow() {
	tb.Fail()
	runtime.Goexit()
}

func (tb *programTB) Failed() bool {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return tb.failed
}

func (tb *programTB) Fatal(args ...any) {
	tb.Error(args...)
	tb.FailNow()
}

func (tb *programTB) Fatalf(format string, args ...any) {
	tb.Errorf(format, args...)
	tb.FailNow()
}

func (tb *programTB) Helper() {}

func (tb *programTB) Log(args ...any) { klog.Background().V(4).Info(fmt.Sprint(args...)) }

func (tb *programTB) Logf(format string, args ...any) {
	klog.Background().V(4).Info(fmt.Sprintf(format, args...))
}

func (tb *programTB) Name() string { return "kube-apiserver" }

func (tb *programTB) Setenv(key, value string) {
	previous, had := os.LookupEnv(key)
	if err := os.Setenv(key, value); err != nil {
		tb.Fatalf("Setenv(%q): %v", key, err)
	}
	tb.Cleanup(func() {
		if had {
			os.Setenv(key, previous)
		} else {
			os.Unsetenv(key)
		}
	})
}

func (tb *programTB) Skip(args ...any)                 { tb.SkipNow() }
func (tb *programTB) Skipf(format string, args ...any) { tb.SkipNow() }
func (tb *programTB) SkipNow()                         { tb.Fatal("kube-apiserver start skipped") }
func (tb *programTB) Skipped() bool                    { return false }

func (tb *programTB) TempDir() string {
	dir, err := os.MkdirTemp("", "generic-e2e")
	if err != nil {
		tb.Fatalf("TempDir: %v", err)
	}
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.tempDirs = append(tb.tempDirs, dir)
	return dir
}
