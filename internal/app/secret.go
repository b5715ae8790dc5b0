package app

// Secret reads a secret from the environment: NAME, or else the contents
// of the file NAME_FILE names (as the services' passwords are read); an
// unreadable file gives "" here, and the caller says so.
func Secret(name string) string {
	var c Config
	return c.secret(name)
}
