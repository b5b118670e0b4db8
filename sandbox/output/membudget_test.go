package output

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// A call waits for the memory budget while others hold it, gives up with
// its context, and a request's hold keeps the share until the transport
// releases it (after the answer is written), not when the call returns.
func TestMemBudgetWaitsAndHolds(t *testing.T) {
	synctest.Test(t, testMemBudget)
}

func testMemBudget(t *testing.T) {
	b := NewMemBudget(memCost(10))
	hctx, release := WithMemHold(context.Background())
	done, err := b.Take(hctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	done() // the call returns; its hold keeps the share

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := b.Take(ctx, 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a second call got budget the hold keeps: %v", err)
	}
	got := make(chan error, 1)
	go func() {
		done, err := b.Take(context.Background(), 1<<30) // more than all: runs alone
		if err == nil {
			done()
		}
		got <- err
	}()
	synctest.Wait()
	select {
	case err := <-got:
		t.Fatalf("a call ran while the hold kept the budget: %v", err)
	default:
	}
	release()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	// Without a hold, the share goes back when the call is done with it.
	done, err = b.Take(context.Background(), 10)
	if err != nil {
		t.Fatal(err)
	}
	done()
	if done, err = b.Take(context.Background(), 10); err != nil {
		t.Fatalf("the share was not given back: %v", err)
	}
	done()
}
