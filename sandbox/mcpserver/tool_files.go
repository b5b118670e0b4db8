package mcpserver

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

type writeFileArgs struct {
	sandboxRef
	Path     string `json:"path"`
	Content  string `json:"content"`
	Encoding string `json:"encoding,omitempty" enum:"utf-8,base64" default:"utf-8"`
	Append   bool   `json:"append,omitempty"`
}

func (s *Server) writeFileTool() toolDef {
	return defineTool(spec{
		name:        "write_file",
		description: "Write a file in a sandbox, making its directories.",
		annotations: annotations("Write file", false, true, true, false),
		output:      outputSchema[sandbox.WriteFileResult]("path"),
	}, s.handleWriteFile)
}

func (s *Server) handleWriteFile(ctx context.Context, req mcp.CallToolRequest, a writeFileArgs) (*mcp.CallToolResult, error) {
	note(ctx, a.SandboxID, "write "+oneLine(a.Path, 200), nil)
	data := []byte(a.Content)
	if a.Encoding == "base64" {
		var err error
		if data, err = base64.StdEncoding.DecodeString(a.Content); err != nil {
			return mcp.NewToolResultError("content is not valid base64: " + err.Error()), nil
		}
	}
	res, err := s.eng.WriteFile(ctx, a.SandboxID, sandbox.WriteFileRequest{Path: a.Path, Content: data, Append: a.Append})
	if err != nil {
		return errorResult(err), nil
	}
	return mcp.NewToolResultStructured(res, fmt.Sprintf("Wrote %d bytes to %s.", res.Bytes, res.Path)), nil
}

type readFileArgs struct {
	sandboxRef
	Path     string `json:"path"`
	Encoding string `json:"encoding,omitempty" jsonschema:"Default: by content." enum:"utf-8,base64"`
	Offset   int64  `json:"offset,omitempty" min:"0"`
	MaxBytes int64  `json:"max_bytes,omitempty" jsonschema:"Default 262144; an image: whole." min:"1"`
}

type readFileOutput struct {
	Path      string `json:"path"`
	Content   string `json:"content" jsonschema:"Empty for an image, sent as image content."`
	Encoding  string `json:"encoding"`
	Size      int64  `json:"size"`
	Truncated bool   `json:"truncated"`
	MIMEType  string `json:"mime_type,omitempty"`
}

func (s *Server) readFileTool() toolDef {
	return defineTool(spec{
		name:        "read_file",
		description: "Read a file from a sandbox; an image also comes as one.",
		annotations: annotations("Read file", true, false, true, false),
		output:      outputSchema[readFileOutput]("content"),
	}, s.handleReadFile)
}

// imageTypes maps file extensions to the image types clients render.
var imageTypes = map[string]string{
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
	".gif": "image/gif", ".webp": "image/webp", ".svg": "image/svg+xml",
}

func (s *Server) handleReadFile(ctx context.Context, req mcp.CallToolRequest, a readFileArgs) (*mcp.CallToolResult, error) {
	note(ctx, a.SandboxID, "read "+oneLine(a.Path, 200), nil)
	max := a.MaxBytes
	mime := imageTypes[strings.ToLower(path.Ext(a.Path))]
	if max == 0 && mime != "" {
		max = 10 << 20 // a whole image, not its first 256 KB
	}
	if max > maxReplyData {
		max = maxReplyData // the rest is read on with offset
	}
	res, err := s.eng.ReadFile(ctx, a.SandboxID, sandbox.ReadFileRequest{Path: a.Path, Offset: a.Offset, MaxBytes: max})
	if err != nil {
		return errorResult(err), nil
	}
	if mime == "" {
		if ct := http.DetectContentType(res.Data); strings.HasPrefix(ct, "image/") {
			mime = ct
		}
	}
	out := readFileOutput{Path: res.Path, Size: res.Size, Truncated: res.Truncated}
	enc := a.Encoding
	if enc == "" {
		enc = "utf-8"
		if !utf8.Valid(res.Data) || bytes.IndexByte(res.Data, 0) >= 0 {
			enc = "base64"
		}
	}
	out.Encoding = enc
	if enc != "base64" {
		if n := fitText(res.Data, maxReplyBytes/2); n < len(res.Data) {
			res.Data, res.Truncated = res.Data[:n], true
		}
	}
	if enc == "base64" {
		out.Content = base64.StdEncoding.EncodeToString(res.Data)
	} else {
		out.Content = strings.ToValidUTF8(string(res.Data), "\uFFFD")
	}
	text := out.Content
	if enc == "base64" {
		text = fmt.Sprintf("%s: %d bytes of binary data, base64 in structuredContent.content", res.Path, len(res.Data))
	}
	if res.Truncated {
		text += fmt.Sprintf("\n[read_file: showing bytes %d to %d of %d; pass offset %d to read on]", res.Offset, res.Offset+int64(len(res.Data)), res.Size, res.Offset+int64(len(res.Data)))
	}
	result := mcp.NewToolResultStructured(out, text)
	if mime != "" && !res.Truncated && res.Offset == 0 && 2*base64.StdEncoding.EncodedLen(len(res.Data)) <= maxReplyBytes {
		// The image is sent once, as image content.
		out.MIMEType, out.Content = mime, ""
		result = mcp.NewToolResultStructured(out, fmt.Sprintf("%s: %s image, %d bytes", res.Path, mime, res.Size))
		result.Content = append(result.Content, mcp.NewImageContent(base64.StdEncoding.EncodeToString(res.Data), mime))
	}
	return result, nil
}

// A read_file answer carries at most maxReplyBytes of encoded content
// (text twice, in the text block and structuredContent; an image's
// base64 twice, as content and as the image): it must stay well within
// what clients take in one message (the official SDKs: 16 MiB), and it
// bounds what the server holds per call. maxReplyData is the most read
// at a time, whose base64 is maxReplyBytes.
const (
	maxReplyBytes = 12 << 20
	maxReplyData  = maxReplyBytes / 4 * 3
)

// fitText returns how much of data (whole characters) fits in budget
// bytes of JSON string, counting every escape at its longest.
func fitText(data []byte, budget int) int {
	used := 0
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		cost := size
		switch {
		case r < 0x20, r == '"', r == '\\', r == '<', r == '>', r == '&', r == 0x2028, r == 0x2029, r == utf8.RuneError:
			cost = 6
		}
		if used+cost > budget {
			return i
		}
		used += cost
		i += size
	}
	return len(data)
}

type listFilesArgs struct {
	sandboxRef
	Path      string `json:"path,omitempty" default:"/workspace"`
	Recursive bool   `json:"recursive,omitempty"`
}

type listFilesOutput struct {
	Path      string              `json:"path"`
	Entries   []backend.FileEntry `json:"entries"`
	Truncated bool                `json:"truncated"`
}

func (s *Server) listFilesTool() toolDef {
	return defineTool(spec{
		name:        "list_files",
		description: "List a directory in a sandbox.",
		annotations: annotations("List files", true, false, true, false),
		output:      outputSchema[listFilesOutput]("entries"),
	}, s.handleListFiles)
}

func (s *Server) handleListFiles(ctx context.Context, req mcp.CallToolRequest, a listFilesArgs) (*mcp.CallToolResult, error) {
	note(ctx, a.SandboxID, "list "+oneLine(a.Path, 200), nil)
	list, err := s.eng.ListFiles(ctx, a.SandboxID, sandbox.ListFilesRequest{Path: a.Path, Recursive: a.Recursive})
	if err != nil {
		return errorResult(err), nil
	}
	entries, truncated := list.Entries, list.Truncated
	if entries == nil {
		entries = []backend.FileEntry{}
	}
	p, _ := sandbox.ResolvePath(a.Path)
	var b strings.Builder
	for _, e := range entries {
		kind := fmt.Sprintf("%10d", e.Size)
		if e.IsDir {
			kind = fmt.Sprintf("%10s", "dir")
		}
		fmt.Fprintf(&b, "%s %s %s", e.Mode, kind, e.Path)
		if e.Link != "" {
			b.WriteString(" -> " + e.Link)
		}
		b.WriteByte('\n')
	}
	if len(entries) == 0 {
		b.WriteString("(empty)")
	}
	if truncated {
		b.WriteString("[list_files: more entries than shown; list a subdirectory]")
	}
	return mcp.NewToolResultStructured(listFilesOutput{Path: p, Entries: entries, Truncated: truncated}, strings.TrimRight(b.String(), "\n")), nil
}
