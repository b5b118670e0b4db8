package kubernetes

import (
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/agent"
)

// The staging loop recognises an agent's copy by its name; the package
// spells the prefix itself (it does not import the agent's binaries), so
// this holds the two spellings together.
func TestAgentFilePrefixIsTheAgents(t *testing.T) {
	if agentFilePrefix != agent.FilePrefix {
		t.Fatalf("agentFilePrefix = %q, the agent's FilePrefix = %q", agentFilePrefix, agent.FilePrefix)
	}
}
