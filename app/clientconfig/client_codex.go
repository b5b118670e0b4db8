package clientconfig

// Codex CLI reads [mcp_servers.<name>] tables from config.toml in
// $CODEX_HOME, which defaults to ~/.codex.
var codex = &Client{
	name:    "codex",
	display: "Codex CLI",
	format:  tomlFormat{},
	path: func(e Env) (string, error) {
		dir, err := codexHome(e)
		if err != nil {
			return "", err
		}
		return e.join(dir, "config.toml"), nil
	},
	signs: func(e Env) []string {
		dir, _ := codexHome(e)
		return []string{dir}
	},
	commands: []string{"codex"},
}

func codexHome(e Env) (string, error) {
	if d := e.getenv("CODEX_HOME"); d != "" {
		return d, nil
	}
	return e.fromHome(".codex")
}
