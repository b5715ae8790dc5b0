package console

import (
	"embed"
	"io/fs"
)

// dist is the web application, built from web/ by "make console" (npm and
// vite) and committed, so that the binary builds with Go alone.
//
//go:embed all:dist
var dist embed.FS

// Assets returns the web application's files.
func Assets() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // the embedded tree always has dist
	}
	return sub
}
