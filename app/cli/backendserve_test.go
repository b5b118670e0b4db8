package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// The hidden backend-serve answers calls on stdin until stdin ends (its
// parent let go or died), then exits 0; it is not in the usage text.
func TestBackendServeEndsWithStdin(t *testing.T) {
	var out, errb bytes.Buffer
	e := &Env{Stdin: strings.NewReader(`{"id":7,"method":"list"}` + "\n"), Stdout: &out, Stderr: &errb}
	if code := Run(context.Background(), e, []string{"backend-serve"}); code != 0 {
		t.Fatalf("exit %d; stderr %s", code, errb.String())
	}
	if got := out.String(); !strings.Contains(got, `"id":7`) || !strings.Contains(got, "call open first") {
		t.Errorf("answer %q: want call 7 told to open first", got)
	}
	var usage bytes.Buffer
	usageText := &Env{Stdout: &usage, Stderr: &usage}
	Run(context.Background(), usageText, []string{"--help"})
	if strings.Contains(usage.String(), "backend-serve") {
		t.Errorf("the usage text lists backend-serve, which only the tray and the window run:\n%s", usage.String())
	}
}
