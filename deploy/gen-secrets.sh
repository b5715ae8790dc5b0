#!/bin/sh
# Writes random passwords and the web console's control token for the
# compose installation into deploy/secrets/
# (kept out of git by deploy/.gitignore) and an empty LLM key file, unless
# they exist. The passwords start with a letter: NATS reads its password
# from the environment as a configuration value, and an all-digit value
# would not be a string.
set -eu
dir="$(cd "$(dirname "$0")" && pwd)/secrets"
mkdir -p "$dir"
umask 022 # the services run as a non-root user that must read the files
for name in nats_password redis_password console_token; do
	if [ ! -s "$dir/$name" ]; then
		printf 'p%s' "$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')" >"$dir/$name"
		echo "wrote $dir/$name"
	fi
done
[ -e "$dir/llm_api_key" ] || { : >"$dir/llm_api_key"; echo "wrote $dir/llm_api_key (empty: no LLM; put a key in it for generator llm)"; }
