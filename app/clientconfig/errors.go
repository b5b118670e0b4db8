package clientconfig

import (
	"errors"
	"fmt"
)

// Errors callers branch on. Each is wrapped with the operation and the file,
// so test them with errors.Is.
var (
	// ErrUnknownClient means the client name is not one of Names().
	ErrUnknownClient = errors.New("unknown client")
	// ErrParse means a config file is not valid JSON (with comments) or TOML.
	// The error is a *ParseError that says where.
	ErrParse = errors.New("config file does not parse")
	// ErrStructure means a config file parses but is not shaped the way the
	// client reads it (say, "mcpServers" is a list), or our entry is written in
	// a form that cannot be edited safely. The file is left alone.
	ErrStructure = errors.New("config file has an unexpected structure")
	// ErrNotInstalled means the client does not look installed, so its
	// config directory is not created unless the caller forces it.
	ErrNotInstalled = errors.New("client does not look installed")
	// ErrReadOnly means the config file is read-only; it is left untouched.
	ErrReadOnly = errors.New("config file is read-only")
	// ErrNotConfigured means the client's config has no mcp-sandbox entry.
	ErrNotConfigured = errors.New("no mcp-sandbox entry")
	// ErrCommandNotFound means the configured command does not exist or is
	// not executable.
	ErrCommandNotFound = errors.New("command not found")
	// ErrServerExited means the configured command exited before it
	// completed an MCP handshake.
	ErrServerExited = errors.New("server exited")
	// ErrNotMCP means the configured command runs but does not speak MCP
	// over stdio.
	ErrNotMCP = errors.New("server does not speak MCP")
	// ErrTimeout means the server did not answer in time.
	ErrTimeout = errors.New("server did not answer in time")
)

// A ParseError says where a config file stopped parsing. It matches
// ErrParse with errors.Is.
type ParseError struct {
	// Path is the file that does not parse.
	Path string
	// Line and Column are 1-based; zero when the parser did not say.
	Line, Column int
	// Err is the parser's own error.
	Err error
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d:%d: %v: %v", e.Path, e.Line, e.Column, ErrParse, e.Err)
	}
	return fmt.Sprintf("%s: %v: %v", e.Path, ErrParse, e.Err)
}

// Unwrap returns the parser's error.
func (e *ParseError) Unwrap() error { return e.Err }

// Is makes a ParseError match ErrParse.
func (e *ParseError) Is(target error) bool { return target == ErrParse }
