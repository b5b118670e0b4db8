package trayapp

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/godbus/dbus/v5"
)

// privateBus is a dbus-daemon of the test's own, so the tray's icon, menu
// and notifications can be examined without a desktop.
type privateBus struct {
	addr string
	cmd  *exec.Cmd
}

func startBus() (*privateBus, error) {
	cmd := exec.Command("dbus-daemon", "--session", "--nofork", "--print-address=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start dbus-daemon: %w", err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("read dbus-daemon's address: %w", err)
	}
	return &privateBus{addr: strings.TrimSpace(line), cmd: cmd}, nil
}

func (b *privateBus) stop() {
	b.cmd.Process.Kill()
	b.cmd.Wait()
}

// watcher plays org.kde.StatusNotifierWatcher, the tray host's side: it
// records which items register.
type watcher struct {
	conn *dbus.Conn
	mu   sync.Mutex
	reg  []string
}

// RegisterStatusNotifierItem is the call a tray item makes to be shown.
func (w *watcher) RegisterStatusNotifierItem(service string, sender dbus.Sender) *dbus.Error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.reg = append(w.reg, string(sender)+" "+service)
	return nil
}

func (w *watcher) registered() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.reg...)
}

func startWatcher(addr string) (*watcher, error) {
	conn, err := dbus.Connect(addr)
	if err != nil {
		return nil, err
	}
	w := &watcher{conn: conn}
	if err := conn.Export(w, "/StatusNotifierWatcher", "org.kde.StatusNotifierWatcher"); err != nil {
		return nil, err
	}
	reply, err := conn.RequestName("org.kde.StatusNotifierWatcher", dbus.NameFlagDoNotQueue)
	if err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		return nil, fmt.Errorf("claim the watcher's name: %v %v", reply, err)
	}
	return w, nil
}

// notifier plays org.freedesktop.Notifications and keeps every message,
// its actions, and which ones the tray closed.
type notifier struct {
	conn    *dbus.Conn
	mu      sync.Mutex
	bodies  []string
	actions [][]string
	closed  map[uint32]bool
}

// Notify is the desktop notification call.
func (n *notifier) Notify(app string, replaces uint32, icon, summary, body string, actions []string, hints map[string]dbus.Variant, timeout int32) (uint32, *dbus.Error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.bodies = append(n.bodies, summary+": "+body)
	n.actions = append(n.actions, actions)
	return uint32(len(n.bodies)), nil
}

// CloseNotification is the call that withdraws a notification.
func (n *notifier) CloseNotification(id uint32) *dbus.Error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed == nil {
		n.closed = map[uint32]bool{}
	}
	n.closed[id] = true
	return nil
}

// invoke is a person choosing action on notification id: the signal the
// service emits.
func (n *notifier) invoke(id uint32, action string) error {
	return n.conn.Emit("/org/freedesktop/Notifications", "org.freedesktop.Notifications.ActionInvoked", id, action)
}

// find returns the id and actions of the first notification whose text
// holds want (0 when none does yet), and whether it was closed.
func (n *notifier) find(want string) (uint32, []string, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for i, b := range n.bodies {
		if strings.Contains(b, want) {
			return uint32(i + 1), n.actions[i], n.closed[uint32(i+1)]
		}
	}
	return 0, nil, false
}

func (n *notifier) all() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.bodies...)
}

func startNotifier(addr string) (*notifier, error) {
	conn, err := dbus.Connect(addr)
	if err != nil {
		return nil, err
	}
	n := &notifier{conn: conn}
	if err := conn.Export(n, "/org/freedesktop/Notifications", "org.freedesktop.Notifications"); err != nil {
		return nil, err
	}
	if _, err := conn.RequestName("org.freedesktop.Notifications", dbus.NameFlagDoNotQueue); err != nil {
		return nil, err
	}
	return n, nil
}

// menuItem is one item of the tray menu as com.canonical.dbusmenu
// describes it.
type menuItem struct {
	ID       int32
	Label    string
	Enabled  bool
	Checked  bool
	Visible  bool
	Children []menuItem
}

// trayMenu reads and clicks the menu of the tray item of process pid, the
// way a tray host does.
type trayMenu struct {
	obj  dbus.BusObject
	item dbus.BusObject // the StatusNotifierItem itself
}

// itemProp reads a property of the StatusNotifierItem (Title, ToolTip,
// IconPixmap).
func (m *trayMenu) itemProp(name string) (any, error) {
	v, err := m.item.GetProperty("org.kde.StatusNotifierItem." + name)
	if err != nil {
		return nil, err
	}
	return v.Value(), nil
}

func openTrayMenu(addr string, pid int) (*trayMenu, error) {
	conn, err := dbus.Connect(addr)
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("org.kde.StatusNotifierItem-%d-1", pid)
	// Find the menu as a host does: through the item's Menu property.
	v, err := conn.Object(name, "/StatusNotifierItem").GetProperty("org.kde.StatusNotifierItem.Menu")
	if err != nil {
		return nil, fmt.Errorf("read the item's Menu property: %w", err)
	}
	path, ok := v.Value().(dbus.ObjectPath)
	if !ok {
		return nil, fmt.Errorf("Menu property is %T", v.Value())
	}
	return &trayMenu{obj: conn.Object(name, path), item: conn.Object(name, "/StatusNotifierItem")}, nil
}

// layout returns the whole menu (GetLayout from the root, every level).
func (m *trayMenu) layout() ([]menuItem, error) {
	call := m.obj.Call("com.canonical.dbusmenu.GetLayout", 0, int32(0), int32(-1), []string{})
	if call.Err != nil {
		return nil, call.Err
	}
	if len(call.Body) < 2 {
		return nil, fmt.Errorf("GetLayout answered %v", call.Body)
	}
	root := parseItem(call.Body[1])
	return root.Children, nil
}

// parseItem decodes a (ia{sv}av) layout node.
func parseItem(v any) menuItem {
	var f []any
	switch x := v.(type) {
	case dbus.Variant:
		return parseItem(x.Value())
	case []any:
		f = x
	default:
		return menuItem{}
	}
	it := menuItem{Enabled: true, Visible: true}
	if len(f) < 3 {
		return it
	}
	it.ID, _ = f[0].(int32)
	props, _ := f[1].(map[string]dbus.Variant)
	if l, ok := props["label"]; ok {
		it.Label, _ = l.Value().(string)
	}
	if t, ok := props["type"]; ok && t.Value() == "separator" {
		it.Label = "---"
	}
	if e, ok := props["enabled"]; ok {
		it.Enabled, _ = e.Value().(bool)
	}
	if v, ok := props["visible"]; ok {
		it.Visible, _ = v.Value().(bool)
	}
	if s, ok := props["toggle-state"]; ok {
		n, _ := s.Value().(int32)
		it.Checked = n == 1
	}
	children, _ := f[2].([]dbus.Variant)
	for _, c := range children {
		it.Children = append(it.Children, parseItem(c))
	}
	return it
}

// find returns the item labelled label (exactly, or by prefix when the
// label ends in "*"), at any depth.
func find(items []menuItem, label string) (menuItem, bool) {
	for _, it := range items {
		if it.Label == label || strings.HasSuffix(label, "*") && strings.HasPrefix(it.Label, strings.TrimSuffix(label, "*")) {
			return it, true
		}
		if c, ok := find(it.Children, label); ok {
			return c, true
		}
	}
	return menuItem{}, false
}

// click sends the "clicked" event a host sends when the item is chosen.
func (m *trayMenu) click(id int32) error {
	return m.obj.Call("com.canonical.dbusmenu.Event", 0, id, "clicked", dbus.MakeVariant(""), uint32(time.Now().Unix())).Err
}

// waitMenu polls the menu until ok accepts it.
func (m *trayMenu) waitMenu(timeout time.Duration, ok func([]menuItem) bool) ([]menuItem, error) {
	deadline := time.Now().Add(timeout)
	var items []menuItem
	var err error
	for {
		items, err = m.layout()
		if err == nil && ok(items) {
			return items, nil
		}
		if time.Now().After(deadline) {
			return items, fmt.Errorf("menu not as expected after %v (err %v): %s", timeout, err, outline(items, ""))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func outline(items []menuItem, indent string) string {
	var b strings.Builder
	for _, it := range items {
		fmt.Fprintf(&b, "%s%s", indent, it.Label)
		if it.Checked {
			b.WriteString(" [x]")
		}
		if !it.Enabled {
			b.WriteString(" (off)")
		}
		b.WriteByte('\n')
		b.WriteString(outline(it.Children, indent+"  "))
	}
	return b.String()
}

// haveDisplayAndBus says what is missing for the GUI tests, or "".
func haveDisplayAndBus() string {
	if os.Getenv("DISPLAY") == "" {
		return "no X display (run under xvfb-run -a)"
	}
	if _, err := exec.LookPath("dbus-daemon"); err != nil {
		return "no dbus-daemon (apt-get install dbus)"
	}
	return ""
}
