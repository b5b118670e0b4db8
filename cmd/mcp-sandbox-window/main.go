//go:build cgo

package main

import (
	"os"

	"github.com/mcp-sandbox/mcp-sandbox/app/windowapp"
)

func main() {
	os.Exit(windowapp.Main(os.Args[1:]))
}
