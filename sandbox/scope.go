package sandbox

import "context"

// A scope is one client of a server that serves several (each HTTP
// session): a call acts on the sandboxes its own client made and sees no
// other, exactly as with separate servers. The scope is carried in the
// call's context (WithScope); a sandbox keeps the scope of the call that
// made it. Over stdio the server has one client, scope "". The tray and
// the CLI read the state directory, not an engine, and see all.

type scopeKey struct{}

// WithScope returns ctx for the calls of the client scope.
func WithScope(ctx context.Context, scope string) context.Context {
	return context.WithValue(ctx, scopeKey{}, scope)
}

func scopeOf(ctx context.Context) string {
	s, _ := ctx.Value(scopeKey{}).(string)
	return s
}

// Lookup returns sandbox id if the calling client (ctx's scope) made it;
// another client's sandbox is not found, as one that never existed.
func (e *Engine) Lookup(ctx context.Context, id string) (*Sandbox, error) {
	sb, err := e.Get(id)
	if err != nil {
		return nil, err
	}
	if sb.scope != scopeOf(ctx) {
		return nil, notInSession(id)
	}
	return sb, nil
}

// sandboxesOf returns the sandboxes the calling client made.
func (e *Engine) sandboxesOf(ctx context.Context) []*Sandbox {
	scope := scopeOf(ctx)
	all := e.Sandboxes()
	out := all[:0]
	for _, sb := range all {
		if sb.scope == scope {
			out = append(out, sb)
		}
	}
	return out
}
