package trayapp

import (
	"context"
	"log/slog"
	"sync"

	"github.com/godbus/dbus/v5"
)

// askNotifier shows questions as notifications with the actions allow,
// always and deny (org.freedesktop.Notifications), and calls choose for
// the one a person invokes. Without a bus or a notification service it
// shows nothing: the menu still asks.
type askNotifier struct {
	log    *slog.Logger
	choose func(id, choice string)
	conn   *dbus.Conn // nil without a bus

	mu    sync.Mutex
	byQ   map[string]uint32 // question id → notification id
	byNot map[uint32]string
}

const (
	notifyDest  = "org.freedesktop.Notifications"
	notifyPath  = dbus.ObjectPath("/org/freedesktop/Notifications")
	notifyIface = "org.freedesktop.Notifications"
)

func newAskNotifier(ctx context.Context, log *slog.Logger, choose func(id, choice string)) *askNotifier {
	n := &askNotifier{log: log, choose: choose, byQ: map[string]uint32{}, byNot: map[uint32]string{}}
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		log.Info("no session bus: questions are asked in the menu only", "err", err)
		return n
	}
	n.conn = conn
	context.AfterFunc(ctx, func() { conn.Close() })
	for _, member := range []string{"ActionInvoked", "NotificationClosed"} {
		if err := conn.AddMatchSignal(dbus.WithMatchObjectPath(notifyPath), dbus.WithMatchInterface(notifyIface), dbus.WithMatchMember(member)); err != nil {
			log.Warn("listen for notification actions; questions are asked in the menu only", "err", err)
		}
	}
	ch := make(chan *dbus.Signal, 16)
	conn.Signal(ch)
	go n.signals(ch)
	return n
}

// signals follows the notification service's signals until the bus
// connection closes.
func (n *askNotifier) signals(ch <-chan *dbus.Signal) {
	for sig := range ch {
		if len(sig.Body) < 2 {
			continue
		}
		nid, _ := sig.Body[0].(uint32)
		n.mu.Lock()
		id, ok := n.byNot[nid]
		if ok && sig.Name == notifyIface+".NotificationClosed" {
			delete(n.byNot, nid)
			delete(n.byQ, id)
		}
		n.mu.Unlock()
		if !ok || sig.Name != notifyIface+".ActionInvoked" {
			continue
		}
		switch action, _ := sig.Body[1].(string); action {
		case "allow", "always", "deny":
			n.choose(id, action)
		}
	}
}

// show notifies question id with its three actions.
func (n *askNotifier) show(id, title, body string) {
	if n.conn == nil {
		return
	}
	actions := []string{"allow", "Allow", "always", "Always allow", "deny", "Deny"}
	hints := map[string]dbus.Variant{"urgency": dbus.MakeVariant(byte(2)), "resident": dbus.MakeVariant(true)}
	var nid uint32
	err := n.conn.Object(notifyDest, notifyPath).Call(notifyIface+".Notify", 0,
		"MCP Sandbox", uint32(0), "mcp-sandbox", title, body, actions, hints, int32(0)).Store(&nid)
	if err != nil {
		n.log.Info("question not shown as a notification; it is in the menu", "err", err)
		return
	}
	n.mu.Lock()
	n.byQ[id], n.byNot[nid] = nid, id
	n.mu.Unlock()
}

// withdraw closes question id's notification, if it is shown.
func (n *askNotifier) withdraw(id string) {
	n.mu.Lock()
	nid, ok := n.byQ[id]
	delete(n.byQ, id)
	delete(n.byNot, nid)
	n.mu.Unlock()
	if ok && n.conn != nil {
		n.conn.Object(notifyDest, notifyPath).Call(notifyIface+".CloseNotification", 0, nid)
	}
}

// closeAll withdraws every question's notification.
func (n *askNotifier) closeAll() {
	n.mu.Lock()
	ids := make([]string, 0, len(n.byQ))
	for id := range n.byQ {
		ids = append(ids, id)
	}
	n.mu.Unlock()
	for _, id := range ids {
		n.withdraw(id)
	}
}
