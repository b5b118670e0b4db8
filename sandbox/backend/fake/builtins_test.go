package fake

import (
	"slices"
	"testing"
)

// TestCommandsAreTheBuiltins: the documented command list and the table
// that runs them name the same programs.
func TestCommandsAreTheBuiltins(t *testing.T) {
	for _, name := range Commands {
		if builtins[name] == nil {
			t.Errorf("%s is in Commands but has no simulation", name)
		}
	}
	for name := range builtins {
		if name != "bash" && name != "ash" && !slices.Contains(Commands, name) {
			t.Errorf("%s is simulated but not in Commands", name)
		}
	}
}
