package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/printable"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// Options configures a Server.
type Options struct {
	Engine  *sandbox.Engine
	Version string
	Log     *slog.Logger
	// State receives the audit log; nil: no audit.
	State *state.Store
	// Asker, when set, is told about the sessions this server serves, so
	// that it can ask their people (see Asker).
	Asker *Asker
	// Gate, when set and returning an error, makes every tool call that
	// error (isError): the server cannot carry out any (see gate).
	Gate func() error
}

// Server is the MCP server.
type Server struct {
	eng *sandbox.Engine
	mcp *server.MCPServer
	log *slog.Logger
	st  *state.Store
	ask *Asker
	// unavailable is Options.Gate.
	unavailable func() error
	// args are the tools' check schemas, for validate (compiled on each
	// tool's first call); replaced with the tools when the config changes.
	args atomic.Pointer[map[string]*argSchema]
	// toolsMu orders setTools; toolsJSON is the tool list it registered.
	toolsMu   sync.Mutex
	toolsJSON []byte
}

// New returns a server with every tool registered.
func New(o Options) *Server {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	s := &Server{eng: o.Engine, log: o.Log, st: o.State, ask: o.Asker, unavailable: o.Gate}
	s.mcp = server.NewMCPServer("mcp-sandbox", o.Version,
		server.WithTitle("MCP Sandbox"),
		server.WithInstructions(instructionsFor(s.config())),
		// listChanged: the tools change with the config (setTools).
		server.WithToolCapabilities(true),
		server.WithResourceCapabilities(false, false),
		server.WithStrictInputSchemaDefault(),
		// No WithOutputSchemaValidation: every structured result is a Go
		// value of the type its outputSchema is made from (outputSchema),
		// and the in-process tests check each one they get against it;
		// checking it again on every call cost about 8 µs of the server's
		// time here.
		server.WithRecovery(),
		server.WithResourceRecovery(),
		server.WithHooks(s.hooks()),
		server.WithToolHandlerMiddleware(s.audit),
		// Inside the audit: a refused call is audited too.
		server.WithToolHandlerMiddleware(s.gate),
		server.WithToolHandlerMiddleware(s.validate),
	)
	s.setTools()
	if s.eng != nil {
		s.eng.OnConfigChange(func(*config.Config) { s.setTools() })
	}
	s.addLogsResource()
	return s
}

// hooks add each client the server serves to what it says of itself for
// the window (sandbox.Engine.AnnounceClient): one that initializes a
// session, and one of the stateless protocol, which names itself in each
// request (server/discover first).
func (s *Server) hooks() *server.Hooks {
	h := &server.Hooks{}
	if s.ask != nil {
		s.ask.addHooks(h)
	}
	// What the instructions say comes from the config in force when the
	// session begins, not when the server started.
	h.AddAfterInitialize(func(_ context.Context, _ any, _ *mcp.InitializeRequest, res *mcp.InitializeResult) {
		if res != nil {
			res.Instructions = instructionsFor(s.config())
		}
	})
	if s.eng == nil {
		return h
	}
	h.AddAfterInitialize(func(_ context.Context, _ any, req *mcp.InitializeRequest, _ *mcp.InitializeResult) {
		if req != nil {
			s.eng.AnnounceClient(req.Params.ClientInfo.Name)
		}
	})
	h.AddOnSuccess(func(ctx context.Context, _ any, _ mcp.MCPMethod, _ any, _ any) {
		if name := clientName(ctx); name != "" {
			s.eng.AnnounceClient(name)
		}
	})
	return h
}

// MCP returns the underlying mcp-go server (for the HTTP transport and
// in-process tests).
func (s *Server) MCP() *server.MCPServer { return s.mcp }

type toolDef struct {
	tool mcp.Tool
	// check is the schema validate checks arguments against; nil: the
	// tool's input schema, strict.
	check   json.RawMessage
	handler server.ToolHandlerFunc
}

func (s *Server) tools() []toolDef {
	return []toolDef{
		s.createTool(),
		s.execTool(),
		s.runCodeTool(),
		s.listTool(),
		s.stopTool(),
		s.exposeTool(),
		s.writeFileTool(),
		s.readFileTool(),
		s.listFilesTool(),
		s.copyInTool(),
		s.copyOutTool(),
		s.proposeTool(),
		s.installTool(),
	}
}

// annotations sets all four hints explicitly, as every tool must.
func annotations(title string, readOnly, destructive, idempotent, openWorld bool) mcp.ToolOption {
	return mcp.WithToolAnnotation(mcp.ToolAnnotation{
		Title:           title,
		ReadOnlyHint:    &readOnly,
		DestructiveHint: &destructive,
		IdempotentHint:  &idempotent,
		OpenWorldHint:   &openWorld,
	})
}

// clientName is the calling MCP client's name, as it introduced itself:
// in the request (protocol 2026-07-28), in initialize (its session's, on
// stdio), or in an earlier initialize over HTTP (see httpSessions); cleaned
// (printable.Clean), as it goes into labels, logs, the audit and `ps`.
func clientName(ctx context.Context) string {
	return printable.Clean(rawClientName(ctx), printable.NameMax)
}

func rawClientName(ctx context.Context) string {
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.ClientInfo != nil && info.ClientInfo.Name != "" {
		return info.ClientInfo.Name
	}
	if sess, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
		if name := sess.GetClientInfo().Name; name != "" {
			return name
		}
	}
	name, _ := ctx.Value(httpClientKey{}).(string)
	return name
}

// setTools registers the tools as the config in force describes them
// (their limits, languages and images). When that changes the tools it
// replaces them, which tells every session (notifications/tools/
// list_changed); a config change the tools do not show changes nothing.
func (s *Server) setTools() {
	s.toolsMu.Lock()
	defer s.toolsMu.Unlock()
	defs := s.tools()
	list := make([]mcp.Tool, len(defs))
	for i, d := range defs {
		list[i] = d.tool
	}
	raw, err := json.Marshal(list)
	if err != nil {
		panic(err) // the tools are the code's own: a test catches this
	}
	if bytes.Equal(raw, s.toolsJSON) {
		return
	}
	args, err := inputSchemas(defs)
	if err != nil {
		panic(err) // as above
	}
	s.toolsJSON = raw
	s.args.Store(&args)
	tools := make([]server.ServerTool, len(defs))
	for i, d := range defs {
		tools[i] = server.ServerTool{Tool: d.tool, Handler: d.handler}
	}
	s.mcp.SetTools(tools...)
}

// config is the configuration in force (the defaults without an engine).
func (s *Server) config() *config.Config {
	if s.eng == nil {
		return config.Default()
	}
	return s.eng.Config()
}
