package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
)

// machine describes this machine and the versions benchmarked.
func machine() string {
	var b strings.Builder
	b.WriteString("## Machine and versions\n\n")
	fmt.Fprintf(&b, "- CPU: %s, %d cores (GOMAXPROCS %d)\n", cpuModel(), runtime.NumCPU(), runtime.GOMAXPROCS(0))
	fmt.Fprintf(&b, "- Memory: %s\n", memTotal())
	fmt.Fprintf(&b, "- OS: %s %s, kernel %s\n", runtime.GOOS, runtime.GOARCH, command("uname", "-r"))
	fmt.Fprintf(&b, "- Go: %s\n", command("go", "env", "GOVERSION"))
	fmt.Fprintf(&b, "- This library: %s\n", libraryVersion())
	for _, module := range []string{"k8s.io/client-go", "k8s.io/apimachinery", "sigs.k8s.io/controller-runtime", "k8s.io/kubernetes"} {
		fmt.Fprintf(&b, "- %s %s\n", module, command("go", "list", "-m", "-f", "{{if .Replace}}{{.Replace.Version}}{{else}}{{.Version}}{{end}}", module))
	}
	return b.String()
}

// libraryVersion is the library's commit, as git describes it, and the
// client-go it is built with: a run reused in a later report says what it
// measured.
func libraryVersion() string {
	return fmt.Sprintf("%s (k8s.io/client-go %s)", command("git", "-C", "..", "describe", "--always", "--dirty"),
		command("go", "list", "-m", "-f", "{{.Version}}", "k8s.io/client-go"))
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		if k, v, ok := strings.Cut(scanner.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

func memTotal() string {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		if k, v, ok := strings.Cut(scanner.Text(), ":"); ok && k == "MemTotal" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

func command(name string, args ...string) string {
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}
