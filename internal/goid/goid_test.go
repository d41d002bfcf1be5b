package goid

import "testing"

func TestID(t *testing.T) {
	here := ID()
	if here == 0 {
		t.Fatal("ID() = 0 on the test's goroutine")
	}
	if again := ID(); again != here {
		t.Errorf("ID() changed on one goroutine: %d, then %d", here, again)
	}
	other := make(chan uint64)
	go func() { other <- ID() }()
	if there := <-other; there == here || there == 0 {
		t.Errorf("ID() on another goroutine = %d, here %d", there, here)
	}
}
