package sbfiles_test

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend/fake"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/sbfiles"
)

var (
	errInvalid  = errors.New("invalid")
	errPolicy   = errors.New("policy")
	errNotFound = errors.New("not found")
)

// box is a sandbox in the fake backend, with an image without tar (the
// engine's archive API) and /workspace holding a.txt, sub/b.txt and the
// links in (to a.txt) and out (to /etc).
func box(t *testing.T) *sbfiles.Box {
	t.Helper()
	be := fake.New()
	id := be.Put(backend.ContainerSpec{})
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	now := time.Now()
	for _, h := range []*tar.Header{
		{Typeflag: tar.TypeReg, Name: "a.txt", Mode: 0o644, Size: 5, Uid: 1000, Gid: 1000, ModTime: now},
		{Typeflag: tar.TypeDir, Name: "sub/", Mode: 0o755, Uid: 1000, Gid: 1000, ModTime: now},
		{Typeflag: tar.TypeReg, Name: "sub/b.txt", Mode: 0o644, Size: 2, Uid: 1000, Gid: 1000, ModTime: now},
		{Typeflag: tar.TypeSymlink, Name: "in", Linkname: "/workspace/a.txt", Uid: 1000, Gid: 1000, ModTime: now},
		{Typeflag: tar.TypeSymlink, Name: "out", Linkname: "/etc", Uid: 1000, Gid: 1000, ModTime: now},
	} {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		_, _ = tw.Write([]byte("hello")[:h.Size])
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := be.CopyTo(context.Background(), id, backend.Workspace, &buf); err != nil {
		t.Fatal(err)
	}
	return &sbfiles.Box{
		Backend: be, Container: id, User: "1000:1000", UID: 1000, GID: 1000, Timeout: time.Minute,
		Tar:     func(context.Context) (string, error) { return "", nil },
		Gone:    func(_ context.Context, err error) error { return err },
		Classes: sbfiles.Classes{Invalid: errInvalid, Policy: errPolicy, NotFound: errNotFound},
	}
}

func TestResolveFollowsLinksOnlyInside(t *testing.T) {
	b, ctx := box(t), context.Background()
	if p, err := b.Resolve(ctx, "/workspace/in", true); err != nil || p != "/workspace/a.txt" {
		t.Errorf("Resolve(in) = %q, %v; want /workspace/a.txt", p, err)
	}
	if p, err := b.Resolve(ctx, "/workspace/in", false); err != nil || p != "/workspace/in" {
		t.Errorf("Resolve(in, not last) = %q, %v; want the link itself", p, err)
	}
	if _, err := b.Resolve(ctx, "/workspace/out/shadow", true); !errors.Is(err, errPolicy) {
		t.Errorf("Resolve(out/shadow) = %v; want the policy class", err)
	}
	if p, err := b.Resolve(ctx, "/workspace/new/c.txt", true); err != nil || p != "/workspace/new/c.txt" {
		t.Errorf("Resolve(a missing path) = %q, %v", p, err)
	}
}

func TestReadAndListThroughTheArchive(t *testing.T) {
	b, ctx := box(t), context.Background()
	r, err := b.Read(ctx, "/workspace/a.txt", 1, 3)
	if err != nil || string(r.Data) != "ell" || r.Size != 5 || !r.Truncated {
		t.Errorf("Read = %+v, %v; want ell of 5, truncated", r, err)
	}
	if _, err := b.Read(ctx, "/workspace/sub", 0, 3); !errors.Is(err, errInvalid) {
		t.Errorf("Read(a directory) = %v; want the invalid class", err)
	}
	if _, err := b.ReadAll(ctx, "/workspace/a.txt", 4); !errors.Is(err, errInvalid) {
		t.Errorf("ReadAll past its limit = %v; want the invalid class", err)
	}
	l, err := b.List(ctx, sbfiles.ListRequest{Path: backend.Workspace, Recursive: true, MaxEntries: 10, MaxNames: 1 << 10})
	if err != nil || len(l.Entries) != 5 || l.Truncated {
		t.Fatalf("List = %+v, %v; want 5 entries", l, err)
	}
	l, err = b.List(ctx, sbfiles.ListRequest{Path: backend.Workspace, MaxEntries: 2, MaxNames: 1 << 10})
	if err != nil || len(l.Entries) != 2 || !l.Truncated {
		t.Errorf("List bounded to 2 = %+v, %v; want 2 entries, truncated", l, err)
	}
}

func TestWriteAppendsAndMakesDirectories(t *testing.T) {
	b, ctx := box(t), context.Background()
	if p, n, err := b.Write(ctx, sbfiles.WriteRequest{Path: "/workspace/in", Content: []byte("!"), Append: true, Max: 10}); err != nil || p != "/workspace/a.txt" || n != 6 {
		t.Errorf("Write(append through in) = %q, %d, %v; want /workspace/a.txt, 6", p, n, err)
	}
	if got, err := b.ReadAll(ctx, "/workspace/a.txt", 10); err != nil || string(got) != "hello!" {
		t.Errorf("after append: %q, %v", got, err)
	}
	if _, _, err := b.Write(ctx, sbfiles.WriteRequest{Path: "/workspace/a.txt", Content: []byte("12345"), Append: true, Max: 10}); !errors.Is(err, errInvalid) {
		t.Errorf("an append past Max = %v; want the invalid class", err)
	}
	if _, _, err := b.Write(ctx, sbfiles.WriteRequest{Path: "/workspace/x/y/z.txt", Content: []byte("z"), Max: 10}); err != nil {
		t.Fatal(err)
	}
	if got, err := b.ReadAll(ctx, "/workspace/x/y/z.txt", 10); err != nil || string(got) != "z" {
		t.Errorf("a file in new directories: %q, %v", got, err)
	}
}
