package install

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// fakeHost runs a helper by handing spec.Into the archive tree, exiting
// with exit, and records the sandbox execs.
type fakeHost struct {
	tree  []byte
	exit  int
	err   error
	cmds  [][]string
	execs [][]string
}

func (f *fakeHost) RunHelper(ctx context.Context, spec backend.HelperSpec) (backend.ExecStatus, error) {
	f.cmds = append(f.cmds, spec.Cmd)
	if f.err != nil {
		return backend.ExecStatus{}, f.err
	}
	if f.exit == 0 {
		if err := spec.Into(bytes.NewReader(f.tree)); err != nil {
			return backend.ExecStatus{}, err
		}
	}
	return backend.ExecStatus{ExitCode: f.exit}, nil
}

func (f *fakeHost) ToolPath(ctx context.Context, name string) (string, error) {
	return "/bin/" + name, nil
}

func (f *fakeHost) Exec(ctx context.Context, argv []string) (int, string, error) {
	f.execs = append(f.execs, argv)
	return 0, "", nil
}

func (f *fakeHost) Untar(ctx context.Context, tarBin, dir string, r io.Reader) error {
	_, err := io.Copy(io.Discard, r)
	return err
}

func (f *fakeHost) Gone(ctx context.Context, err error) error { return err }

type buf struct{ bytes.Buffer }

func job(pkgs ...string) Job {
	return Job{Manager: "pip", Packages: pkgs, TimeoutSeconds: 60, ConfigFile: "c.toml", Stdout: &buf{}, Stderr: &buf{}}
}

// TestInstallState: each install reinstalls every spec asked for so far,
// removes the units the previous one placed, and a failed install leaves
// the specs as they were.
func TestInstallState(t *testing.T) {
	ctx := context.Background()
	var s State
	h := &fakeHost{tree: installTar(t, &tar.Header{Typeflag: tar.TypeReg, Name: ".local/lib/python3.11/site-packages/demo/__init__.py", Mode: 0o644})}
	res, err := s.Install(ctx, h, job("demo==1.0"))
	if err != nil || res.ExitCode != 0 || !slices.Equal(res.Installed, []string{"demo==1.0"}) || res.Note != installedNote {
		t.Fatalf("first install: %+v %v", res, err)
	}
	if _, err := s.Install(ctx, h, job("other")); err != nil {
		t.Fatal(err)
	}
	if got := h.cmds[1][len(h.cmds[1])-2:]; !slices.Equal(got, []string{"demo==1.0", "other"}) {
		t.Errorf("second install's specs %q, want both packages", got)
	}
	if len(h.execs) != 1 || !strings.HasSuffix(h.execs[0][len(h.execs[0])-1], "site-packages/demo") {
		t.Errorf("execs %q, want the first install's unit removed", h.execs)
	}
	h.exit = 1
	res, err = s.Install(ctx, h, job("missing"))
	if err != nil || res.ExitCode != 1 || len(res.Installed) != 0 || !strings.HasPrefix(res.Note, "Nothing was installed") {
		t.Errorf("failed install: %+v %v", res, err)
	}
	if !slices.Equal(s.specs["pip"], []string{"demo==1.0", "other"}) {
		t.Errorf("specs after a failed install: %q", s.specs["pip"])
	}
	h.exit, h.err = 0, errors.New("helper lost")
	if _, err := s.Install(ctx, h, job("x")); err == nil || err.Error() != "helper lost" {
		t.Errorf("a helper error goes through Host.Gone: %v", err)
	}
}
