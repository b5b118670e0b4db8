package ui

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

// SettingsActions read and write the shared config file.
type SettingsActions struct {
	// Load reads the config file; an invalid file is an error (the tab
	// then shows the error and the values in force).
	Load func() (*config.Config, error)
	// Save validates and writes c (and applies what the tray itself
	// owns: autostart, the HTTP server); the message says what was done.
	Save func(ctx context.Context, c *config.Config) (string, error)
}

// SettingsTab edits the config file's values.
type SettingsTab struct {
	w       *Window
	act     SettingsActions
	content fyne.CanvasObject

	base    *config.Config
	fields  []setting
	entries map[string]*widget.Entry // text fields by config key
	checks  map[string]*widget.Check // check boxes by config key
	message *widget.Label
	save    *widget.Button
}

// setting binds one widget to one value of the config.
type setting struct {
	key   string
	load  func(c *config.Config)
	store func(c *config.Config) error
}

func newSettingsTab(w *Window, act SettingsActions) *SettingsTab {
	t := &SettingsTab{w: w, act: act, entries: map[string]*widget.Entry{}, checks: map[string]*widget.Check{}}
	t.message = wrapped("")
	t.save = widget.NewButtonWithIcon("Save", theme.DocumentSaveIcon(), t.Save)
	t.save.Importance = widget.HighImportance
	revert := widget.NewButtonWithIcon("Revert", theme.ContentUndoIcon(), t.Reload)

	left := container.NewVBox(
		t.card("Docker", "", t.entry("docker.host", "Endpoint", "empty: detect",
			func(c *config.Config) *string { return &c.Docker.Host }),
			t.choice("docker.runtime", "Runtime", runtimes, func(c *config.Config) *string { return &c.Docker.Runtime })),
		t.card("Images", "", t.entry("images.python", "Python", "", func(c *config.Config) *string { return &c.Images.Python }),
			t.entry("images.javascript", "JavaScript", "", func(c *config.Config) *string { return &c.Images.JavaScript }),
			t.entry("images.bash", "Bash", "", func(c *config.Config) *string { return &c.Images.Bash }),
			t.choice("images.pull", "Pull", pulls, func(c *config.Config) *string { return &c.Images.Pull }),
			t.list("images.allowed", "Also allowed", "comma-separated: python:*, ghcr.io/me/*",
				func(c *config.Config) *[]string { return &c.Images.Allowed })),
		t.card("Network", "", t.choice("network.default", "Default", networks, func(c *config.Config) *string { return &c.Network.Default }),
			t.check("network.allow_egress", "Egress", "sandbox_create may ask for egress", func(c *config.Config) *bool { return &c.Network.AllowEgress }),
			t.check("network.install", "Installs", "install_packages may fetch packages", func(c *config.Config) *bool { return &c.Network.Install })),
		t.card("Tray", "", t.check("tray.autostart", "Autostart", "Start MCP Sandbox at login", func(c *config.Config) *bool { return &c.Tray.Autostart }),
			t.integer("tray.http_port", "HTTP port", "0: no HTTP server", func(c *config.Config) *int { return &c.Tray.HTTPPort }),
			t.check("update.check", "Updates", "Check for updates", func(c *config.Config) *bool { return &c.Update.Check })),
	)
	right := container.NewVBox(
		t.card("Limits", "per sandbox; a client may ask for less",
			t.integer("limits.memory_mb", "Memory (MB)", "", func(c *config.Config) *int { return &c.Limits.MemoryMB }),
			t.float("limits.cpus", "CPUs", func(c *config.Config) *float64 { return &c.Limits.CPUs }),
			t.integer("limits.pids", "Processes", "", func(c *config.Config) *int { return &c.Limits.Pids }),
			t.integer("limits.workspace_mb", "Workspace (MB)", "", func(c *config.Config) *int { return &c.Limits.WorkspaceMB }),
			t.integer("limits.exec_timeout_seconds", "Timeout (s)", "", func(c *config.Config) *int { return &c.Limits.ExecTimeoutSeconds }),
			t.integer("limits.max_exec_timeout_seconds", "Max timeout (s)", "", func(c *config.Config) *int { return &c.Limits.MaxExecTimeoutSeconds }),
			t.integer("limits.output_bytes", "Output (bytes)", "", func(c *config.Config) *int { return &c.Limits.OutputBytes }),
			t.integer("limits.idle_ttl_minutes", "Idle expiry (min)", "", func(c *config.Config) *int { return &c.Limits.IdleTTLMinutes }),
			t.integer("limits.max_sandboxes", "Max sandboxes", "", func(c *config.Config) *int { return &c.Limits.MaxSandboxes })),
		t.card("Files", "", t.list("files.read_roots", "Read roots", "comma-separated; ~ is your home",
			func(c *config.Config) *[]string { return &c.Files.ReadRoots }),
			t.denyList("files.read_deny", "Never read", "added to the built-in list",
				func(c *config.Config) (*[]string, []string, bool) {
					return &c.Files.ReadDeny, config.DefaultReadDeny(), c.Files.ReadDenyReplace
				}),
			t.entry("files.write_root", "Write root", "", func(c *config.Config) *string { return &c.Files.WriteRoot }),
			t.denyList("files.write_deny", "Never written", "added to the built-in list",
				func(c *config.Config) (*[]string, []string, bool) {
					return &c.Files.WriteDeny, config.DefaultWriteDeny(), c.Files.WriteDenyReplace
				}),
			t.integer("files.max_copy_mb", "Max copy (MB)", "", func(c *config.Config) *int { return &c.Files.MaxCopyMB }),
			t.hinted(t.check("files.copy_out_links", "Links", "copy_out may make symlinks", func(c *config.Config) *bool { return &c.Files.CopyOutLinks }),
				"only ones that stay inside the copy")),
		t.card("Warm pool", "", t.integer("pool.size", "Size", "ready sandboxes per language", func(c *config.Config) *int { return &c.Pool.Size }),
			t.list("pool.languages", "Languages", "comma-separated", func(c *config.Config) *[]string { return &c.Pool.Languages })),
	)
	bottom := container.NewBorder(nil, nil, nil, container.NewHBox(revert, t.save), t.message)
	t.content = container.NewBorder(nil, bottom, nil, nil,
		container.NewVScroll(container.NewGridWithColumns(2, left, right)))
	return t
}

var (
	runtimes = []option{{"", "engine default"}, {"runc", "runc"}, {"runsc", "gVisor (runsc)"}, {"auto", "gVisor when registered, else default"}}
	pulls    = []option{{"never", "never"}, {"missing", "when missing"}, {"always", "always"}}
	networks = []option{{"none", "none"}, {"allowlist", "allowlist (named hosts, through a proxy)"}, {"egress", "egress"}}
)

type option struct{ value, label string }

func (t *SettingsTab) card(title, sub string, items ...*widget.FormItem) fyne.CanvasObject {
	return widget.NewCard(title, sub, widget.NewForm(items...))
}

func (t *SettingsTab) add(key string, load func(*config.Config), store func(*config.Config) error) {
	t.fields = append(t.fields, setting{key: key, load: load, store: store})
}

func (t *SettingsTab) entry(key, label, hint string, ptr func(*config.Config) *string) *widget.FormItem {
	e := widget.NewEntry()
	t.entries[key] = e
	e.SetPlaceHolder(hint)
	t.add(key, func(c *config.Config) { e.SetText(*ptr(c)) },
		func(c *config.Config) error { *ptr(c) = strings.TrimSpace(e.Text); return nil })
	return widget.NewFormItem(label, e)
}

func (t *SettingsTab) list(key, label, hint string, ptr func(*config.Config) *[]string) *widget.FormItem {
	e := widget.NewEntry()
	t.entries[key] = e
	t.add(key, func(c *config.Config) { e.SetText(strings.Join(*ptr(c), ", ")) },
		func(c *config.Config) error {
			out := []string{}
			for _, s := range strings.Split(e.Text, ",") {
				if s = strings.TrimSpace(s); s != "" {
					out = append(out, s)
				}
			}
			*ptr(c) = out
			return nil
		})
	it := widget.NewFormItem(label, e)
	it.HintText = hint
	return it
}

// denyList edits what a deny list adds to its built-in list (or, where
// the file replaces that list, the whole list): the built-in entries are
// not shown, and cannot be removed here.
func (t *SettingsTab) denyList(key, label, hint string, list func(*config.Config) (*[]string, []string, bool)) *widget.FormItem {
	var added []string
	it := t.list(key, label, hint, func(c *config.Config) *[]string { return &added })
	load, store := t.fields[len(t.fields)-1].load, t.fields[len(t.fields)-1].store
	t.fields[len(t.fields)-1].load = func(c *config.Config) {
		p, defaults, replace := list(c)
		added = config.DenyAdded(*p, defaults, replace)
		load(c)
	}
	t.fields[len(t.fields)-1].store = func(c *config.Config) error {
		if err := store(c); err != nil {
			return err
		}
		p, defaults, replace := list(c)
		*p = config.DenyWith(added, defaults, replace)
		return nil
	}
	if it.HintText == "" {
		it.HintText = hint
	}
	return it
}

func (t *SettingsTab) integer(key, label, hint string, ptr func(*config.Config) *int) *widget.FormItem {
	e := widget.NewEntry()
	t.entries[key] = e
	parse := func(s string) (int, error) {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return 0, errors.New("a whole number")
		}
		return n, nil
	}
	e.Validator = func(s string) error { _, err := parse(s); return err }
	t.add(key, func(c *config.Config) { e.SetText(strconv.Itoa(*ptr(c))) },
		func(c *config.Config) error {
			n, err := parse(e.Text)
			if err != nil {
				return fmt.Errorf("%s: %q is not %w", key, e.Text, err)
			}
			*ptr(c) = n
			return nil
		})
	it := widget.NewFormItem(label, e)
	it.HintText = hint
	return it
}

func (t *SettingsTab) float(key, label string, ptr func(*config.Config) *float64) *widget.FormItem {
	e := widget.NewEntry()
	t.entries[key] = e
	parse := func(s string) (float64, error) {
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return 0, errors.New("a number")
		}
		return f, nil
	}
	e.Validator = func(s string) error { _, err := parse(s); return err }
	t.add(key, func(c *config.Config) { e.SetText(strconv.FormatFloat(*ptr(c), 'f', -1, 64)) },
		func(c *config.Config) error {
			f, err := parse(e.Text)
			if err != nil {
				return fmt.Errorf("%s: %q is not %w", key, e.Text, err)
			}
			*ptr(c) = f
			return nil
		})
	return widget.NewFormItem(label, e)
}

func (t *SettingsTab) check(key, label, text string, ptr func(*config.Config) *bool) *widget.FormItem {
	c := widget.NewCheck(text, nil)
	t.checks[key] = c
	t.add(key, func(cf *config.Config) { c.SetChecked(*ptr(cf)) },
		func(cf *config.Config) error { *ptr(cf) = c.Checked; return nil })
	return widget.NewFormItem(label, c)
}

// hinted gives a form item a hint line under it.
func (t *SettingsTab) hinted(it *widget.FormItem, hint string) *widget.FormItem {
	it.HintText = hint
	return it
}

func (t *SettingsTab) choice(key, label string, opts []option, ptr func(*config.Config) *string) *widget.FormItem {
	labels := make([]string, len(opts))
	for i, o := range opts {
		labels[i] = o.label
	}
	s := widget.NewSelect(labels, nil)
	t.add(key, func(c *config.Config) {
		for _, o := range opts {
			if o.value == *ptr(c) {
				s.SetSelected(o.label)
			}
		}
	}, func(c *config.Config) error {
		for _, o := range opts {
			if o.label == s.Selected {
				*ptr(c) = o.value
				return nil
			}
		}
		return fmt.Errorf("%s: choose a value", key)
	})
	return widget.NewFormItem(label, s)
}

// Reload reads the config file into the fields.
func (t *SettingsTab) Reload() {
	if t.act.Load == nil {
		return
	}
	c, err := t.act.Load()
	if c == nil {
		c = config.Default()
	}
	t.show(c)
	if err != nil {
		t.message.SetText("The config file is invalid, so the values in force are shown: " + err.Error())
		t.message.Importance = widget.DangerImportance
	} else {
		t.message.SetText("From " + c.Source + ". Running servers reload the file when it is saved.")
		t.message.Importance = widget.MediumImportance
	}
	t.message.Refresh()
}

func (t *SettingsTab) show(c *config.Config) {
	t.base = c
	for _, f := range t.fields {
		f.load(c)
	}
}

// Edited returns the config the fields describe, or the first value that
// is not well formed.
func (t *SettingsTab) Edited() (*config.Config, error) {
	if t.base == nil {
		return nil, errors.New("settings not loaded")
	}
	c := *t.base
	c.Images.Allowed = append([]string(nil), c.Images.Allowed...)
	c.Files.ReadRoots = append([]string(nil), c.Files.ReadRoots...)
	c.Files.ReadDeny = append([]string(nil), c.Files.ReadDeny...)
	c.Files.WriteDeny = append([]string(nil), c.Files.WriteDeny...)
	c.Pool.Languages = append([]string(nil), c.Pool.Languages...)
	for _, f := range t.fields {
		if err := f.store(&c); err != nil {
			return nil, err
		}
	}
	return &c, nil
}

// Set changes one field by its config key, as typing in it would; for
// tests.
func (t *SettingsTab) Set(key string, edit func(c *config.Config)) {
	c, err := t.Edited()
	if err != nil {
		return
	}
	edit(c)
	for _, f := range t.fields {
		if f.key == key {
			f.load(c)
		}
	}
}

// Check returns the check box of a config key, for tests to tap.
func (t *SettingsTab) Check(key string) *widget.Check { return t.checks[key] }

// Message returns the text under the form.
func (t *SettingsTab) Message() string { return t.message.Text }

// Save validates the fields and writes them.
func (t *SettingsTab) Save() {
	c, err := t.Edited()
	if err != nil {
		t.fail(err)
		return
	}
	if t.act.Save == nil {
		return
	}
	t.save.Disable()
	var msg string
	t.w.async(func(ctx context.Context) error {
		var err error
		msg, err = t.act.Save(ctx, c)
		return err
	}, func(err error) {
		t.save.Enable()
		if err != nil {
			t.fail(err)
			return
		}
		t.base = c
		t.message.SetText(msg)
		t.message.Importance = widget.SuccessImportance
		t.message.Refresh()
	})
}

func (t *SettingsTab) fail(err error) {
	t.message.SetText("Not saved: " + err.Error())
	t.message.Importance = widget.DangerImportance
	t.message.Refresh()
}
