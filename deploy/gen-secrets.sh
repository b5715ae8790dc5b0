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
# One NATS and one Redis password per user (the Redis default user is the
# operator's); compose gives each service only its own.
for name in nats_admin nats_proposer nats_evaluator nats_reflector nats_judge nats_client \
	redis_default redis_proposer redis_evaluator redis_reflector redis_judge redis_client console_token; do
	if [ ! -s "$dir/$name" ]; then
		printf 'p%s' "$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')" >"$dir/$name"
		echo "wrote $dir/$name"
	fi
done
[ -e "$dir/llm_api_key" ] || { : >"$dir/llm_api_key"; echo "wrote $dir/llm_api_key (empty: no LLM; put a key in it for generator llm)"; }
