package clientconfig

// Zed reads "context_servers" from its settings.json, a JSON-with-comments
// file people edit by hand. Entries carry "source": "custom", which older
// Zed releases require and newer ones accept; "args" must be present even
// when empty.
var zed = &Client{
	name:    "zed",
	display: "Zed",
	format:  jsonFormat{key: "context_servers", fixed: []field{{"source", "custom"}}, indent: "  "},
	path: func(e Env) (string, error) {
		dir, err := zedDir(e)
		if err != nil {
			return "", err
		}
		return e.join(dir, "settings.json"), nil
	},
	signs: func(e Env) []string {
		dir, _ := zedDir(e)
		signs := append([]string{dir}, e.macApps("Zed.app")...)
		return append(signs, e.winPrograms("Zed")...)
	},
	commands: []string{"zed", "zeditor"},
}

// zedDir is Zed's config directory: %APPDATA%\Zed on Windows, the XDG
// config home's zed on Linux, and ~/.config/zed on macOS, where Zed does
// not follow XDG_CONFIG_HOME.
func zedDir(e Env) (string, error) {
	switch e.goos() {
	case "windows":
		appData, err := e.appData()
		if err != nil {
			return "", err
		}
		return e.join(appData, "Zed"), nil
	case "darwin":
		return e.fromHome(".config", "zed")
	default:
		dir, err := e.xdgConfigHome()
		if err != nil {
			return "", err
		}
		return e.join(dir, "zed"), nil
	}
}
