package main

import (
	"os"

	"github.com/mcp-sandbox/mcp-sandbox/app/trayapp"
)

func main() {
	os.Exit(trayapp.Main(os.Args[1:]))
}
