//go:build !linux

package trayapp

import (
	"context"
	"log/slog"
)

// askNotifier tells of each question with the system's plain
// notification, which carries no actions here: the person answers in the
// tray's menu, which the notification says.
type askNotifier struct{ log *slog.Logger }

func newAskNotifier(_ context.Context, log *slog.Logger, _ func(id, choice string)) *askNotifier {
	return &askNotifier{log: log}
}

func (n *askNotifier) show(_, title, body string) {
	if err := sendNotification(title, body+" Choose Allow or Deny in the MCP Sandbox menu."); err != nil {
		n.log.Info("question not shown as a notification; it is in the menu", "err", err)
	}
}

func (n *askNotifier) withdraw(string) {}

func (n *askNotifier) closeAll() {}
