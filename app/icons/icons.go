package icons

import (
	"sync"

	"fyne.io/fyne/v2"

	"github.com/mcp-sandbox/mcp-sandbox/assets"
)

// State is what the tray icon shows.
type State int

// The states the tray icon can show.
const (
	Running State = iota
	Paused
	DockerMissing
)

// String names the state as assets/ does.
func (s State) String() string {
	return [...]string{assets.Running, assets.Paused, assets.DockerMissing}[s]
}

var (
	once  sync.Once
	app   fyne.Resource
	trays map[State]fyne.Resource
)

func build() {
	app = fyne.NewStaticResource("mcp-sandbox.png", assets.AppPNG(256))
	trays = map[State]fyne.Resource{}
	for _, s := range []State{Running, Paused, DockerMissing} {
		trays[s] = trayResource(s)
	}
}

// App is the application icon (256 px).
func App() fyne.Resource {
	once.Do(build)
	return app
}

// Tray is the tray icon for a state.
func Tray(s State) fyne.Resource {
	once.Do(build)
	return trays[s]
}
