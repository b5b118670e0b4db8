package clientconfig_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mcp-sandbox/mcp-sandbox/app/clientconfig"
)

// Example installs the entry into Cursor's config under a temporary home,
// as the tray does on first run, and reads it back.
func Example() {
	home, _ := os.MkdirTemp("", "home")
	defer os.RemoveAll(home)
	os.MkdirAll(filepath.Join(home, ".cursor"), 0o755) // Cursor has run once
	env := clientconfig.Env{GOOS: "linux", Getenv: func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}}

	c, _ := clientconfig.Lookup("cursor")
	res, err := c.Install(context.Background(), clientconfig.InstallOptions{Env: env, Command: "/opt/mcp-sandbox/bin/mcp-sandbox"})
	if err != nil {
		fmt.Println(err)
		return
	}
	b, _ := os.ReadFile(res.Path)
	fmt.Print(string(b))

	st, _ := c.Status(clientconfig.StatusOptions{Env: env, Command: "/opt/mcp-sandbox/bin/mcp-sandbox"})
	fmt.Println("configured:", st.Configured, "matches:", st.Matches)
	// Output:
	// {
	//   "mcpServers": {
	//     "mcp-sandbox": {
	//       "command": "/opt/mcp-sandbox/bin/mcp-sandbox",
	//       "args": ["serve"]
	//     }
	//   }
	// }
	// configured: true matches: true
}
