package instance

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"testing"
	"time"
)

func TestSecondLaunchShowsTheFirst(t *testing.T) {
	dir := testDir(t)
	first, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	shown := make(chan struct{}, 4)
	done := make(chan struct{})
	go func() {
		defer close(done)
		first.Serve(ctx, func() { shown <- struct{}{} })
	}()

	if _, err := Acquire(dir); !errors.Is(err, ErrRunning) {
		t.Fatalf("second Acquire = %v, want ErrRunning", err)
	}
	select {
	case <-shown:
	case <-time.After(5 * time.Second):
		t.Fatal("the first instance was not asked to show its window")
	}

	cancel()
	<-done
	first.Close()
	again, err := Acquire(dir)
	if err != nil {
		t.Fatalf("Acquire after Close = %v", err)
	}
	again.Close()
}

// TestAcrossProcesses runs a second launch as a real second process (this
// test binary re-run), as a person double-clicking the app twice does.
func TestAcrossProcesses(t *testing.T) {
	if dir := os.Getenv("INSTANCE_TEST_DIR"); dir != "" {
		_, err := Acquire(dir)
		if errors.Is(err, ErrRunning) {
			os.Exit(3)
		}
		os.Exit(1)
	}
	dir := testDir(t)
	first, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	shown := make(chan struct{}, 1)
	go first.Serve(ctx, func() { shown <- struct{}{} })

	cmd := exec.Command(os.Args[0], "-test.run=^TestAcrossProcesses$")
	cmd.Env = append(os.Environ(), "INSTANCE_TEST_DIR="+dir)
	err = cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("second process: %v; want exit 3 (ErrRunning)", err)
	}
	select {
	case <-shown:
	case <-time.After(5 * time.Second):
		t.Fatal("not asked to show")
	}
}
