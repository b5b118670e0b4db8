package proposal

import (
	"context"
	"strings"
	"testing"
)

func TestMessage(t *testing.T) {
	w := newWorld(t)
	w.req.Summary = "fix add\nand more"
	p, err := Build(context.Background(), project(t), w.req)
	if err != nil {
		t.Fatal(err)
	}
	m := p.Message(0)
	for _, want := range []string{"proposes changes to " + p.HostPath + ": fix add\n", "modified +1 −1", "added    +1 −0", "+    return a + b"} {
		if !strings.Contains(m, want) {
			t.Errorf("message lacks %q:\n%s", want, m)
		}
	}
	if short := p.Message(120); len(short) > 200 || !strings.Contains(short, "window shows the whole diff") {
		t.Errorf("a short message:\n%s", short)
	}
}
