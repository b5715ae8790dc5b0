package app

// Secret reads a secret from the environment: NAME, or else the contents
// of the file NAME_FILE names (as the services' passwords are read).
func Secret(name string) string { return secret(name) }
