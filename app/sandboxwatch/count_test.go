package sandboxwatch

import (
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/inventory"
)

func TestCountRows(t *testing.T) {
	row := func(pool bool) Row { return Row{Info: inventory.Info{Pool: pool}} }
	tests := []struct {
		name string
		rows []Row
		want string
	}{
		{"none", nil, "0 sandboxes"},
		{"one", []Row{row(false)}, "1 sandbox"},
		{"only warm", []Row{row(true)}, "0 sandboxes · 1 warm"},
		{"both", []Row{row(false), row(true), row(false)}, "2 sandboxes · 1 warm"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CountRows(tt.rows).String(); got != tt.want {
				t.Errorf("CountRows = %q, want %q", got, tt.want)
			}
		})
	}
}
