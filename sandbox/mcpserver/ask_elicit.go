package mcpserver

import (
	"context"
	"slices"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

// An answer is what a person chose.
type answer string

const (
	answerAllow  answer = "allow"
	answerAlways answer = "always"
	answerDeny   answer = "deny"
	// answerNone: nobody could be asked, or nobody answered in time.
	answerNone answer = "none"
)

// titledChoices is the first protocol revision whose forms give choices
// titles as oneOf [{const, title}]; earlier ones know only the legacy
// enumNames beside enum.
const titledChoices = "2025-11-25"

// askSchema is the form a person answers about a host: one choice, in
// the form the client's protocol revision (protocol; "" when unknown: the
// current one) defines.
func askSchema(protocol string) map[string]any {
	return choiceSchema(protocol, []string{string(answerAllow), string(answerAlways), string(answerDeny)},
		[]string{"Allow for this sandbox", "Always allow", "Deny"})
}

// choiceSchema is a form of one required choice "answer" among values,
// titled: oneOf [{const, title}], or enum with enumNames before
// titledChoices.
func choiceSchema(protocol string, values, titles []string) map[string]any {
	choice := map[string]any{"type": "string", "title": "Answer"}
	if protocol != "" && protocol < titledChoices { // revisions are dates
		choice["enum"], choice["enumNames"] = values, titles
	} else {
		oneOf := make([]map[string]any, len(values))
		for i, v := range values {
			oneOf[i] = map[string]any{"const": v, "title": titles[i]}
		}
		choice["oneOf"] = oneOf
	}
	return map[string]any{
		"type":       "object",
		"properties": map[string]any{"answer": choice},
		"required":   []string{"answer"},
	}
}

// protocolOf is the revision sess negotiated, "" when it does not say.
func protocolOf(sess server.SessionWithElicitation) string {
	if p, ok := sess.(server.SessionWithProtocolVersion); ok {
		return p.ProtocolVersion()
	}
	return ""
}

// elicit asks in sess and reads the person's choice; anything but accept
// with allow or always is answerDeny (a decline, or an accept choosing
// deny) or answerNone (a cancel, an error; nil sess).
func (a *Asker) elicit(ctx context.Context, sess server.SessionWithElicitation, msg string) answer {
	if sess == nil {
		return answerNone
	}
	ctx, cancel := context.WithTimeout(ctx, a.o.Timeout)
	defer cancel()
	action, got, err := elicitChoice(ctx, sess, msg, askSchema(protocolOf(sess)))
	if err != nil {
		a.o.Log.Info("elicitation failed", "err", err)
		return answerNone
	}
	switch action {
	case mcp.ElicitationResponseActionAccept:
	case mcp.ElicitationResponseActionDecline:
		return answerDeny
	default: // dismissed: no answer
		return answerNone
	}
	if got == string(answerAllow) || got == string(answerAlways) {
		return answer(got)
	}
	return answerDeny
}

// elicitChoice asks msg in sess with a form of one choice (schema) and
// returns what the person did and, on accept, the value they chose.
func elicitChoice(ctx context.Context, sess server.SessionWithElicitation, msg string, schema map[string]any) (mcp.ElicitationResponseAction, string, error) {
	res, err := sess.RequestElicitation(ctx, mcp.ElicitationRequest{
		Request: mcp.Request{Method: string(mcp.MethodElicitationCreate)},
		Params:  mcp.ElicitationParams{Message: msg, RequestedSchema: schema},
	})
	if err != nil {
		return "", "", err
	}
	content, _ := res.Content.(map[string]any)
	got, _ := content["answer"].(string)
	return res.Action, got, nil
}

// addAlways adds entries to network.allow_domains in the config file,
// keeping its comments and backing it up (config.Save).
func (a *Asker) addAlways(entries ...string) error {
	a.saveMu.Lock()
	defer a.saveMu.Unlock()
	cfg, err := config.Load(a.o.ConfigPath)
	if err != nil {
		return err
	}
	list := slices.Clone(cfg.Network.AllowDomains)
	for _, e := range entries {
		if !slices.Contains(list, e) {
			list = append(list, e)
		}
	}
	if len(list) == len(cfg.Network.AllowDomains) {
		return nil
	}
	cfg.Network.AllowDomains = list
	_, err = config.Save(a.o.ConfigPath, cfg)
	return err
}
