package inventory_test

import (
	"context"
	"errors"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend/fake"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/inventory"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// TestStopWhose: Stop removes this installation's sandbox by id, whichever
// server made it; another installation's (or one without the label) only
// with AllUsers; an unknown id, or a helper's, is not found.
func TestStopWhose(t *testing.T) {
	st, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	inst, err := inventory.Installation(st)
	if err != nil {
		t.Fatal(err)
	}
	be := fake.New()
	put := func(id, installation string, extra ...string) {
		l := map[string]string{backend.LabelManaged: "true", backend.LabelID: id, backend.LabelOwner: "someserver"}
		if installation != "" {
			l[backend.LabelInstallation] = installation
		}
		for i := 0; i+1 < len(extra); i += 2 {
			l[extra[i]] = extra[i+1]
		}
		be.Put(backend.ContainerSpec{Name: backend.ContainerName(id), Image: fake.DefaultImage, Labels: l})
	}
	put("mine1", inst)
	put("theirs1", "another-installation")
	put("nolabel1", "")
	put("helper1", inst, backend.LabelHelper, "elsewhere1")
	ctx := context.Background()
	for _, tc := range []struct {
		id       string
		allUsers bool
		want     error
	}{
		{"theirs1", false, inventory.ErrNotMine},
		{"nolabel1", false, inventory.ErrNotMine},
		{"helper1", true, inventory.ErrNotFound},
		{"absent1", true, inventory.ErrNotFound},
		{"mine1", false, nil},
		{"theirs1", true, nil},
		{"nolabel1", true, nil},
	} {
		res, err := inventory.Stop(ctx, be, st, inventory.StopRequest{ID: tc.id, AllUsers: tc.allUsers})
		if !errors.Is(err, tc.want) || (err == nil) != (len(res.Stopped) == 1) {
			t.Errorf("Stop(%s, AllUsers %v) = %v, %v; want %v", tc.id, tc.allUsers, res.Stopped, err, tc.want)
		}
	}
	if n := len(be.Containers()); n != 1 {
		t.Errorf("%d containers left, want the helper only", n)
	}
}
