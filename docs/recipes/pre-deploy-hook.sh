#!/bin/sh
# A deploy wrapper for any CI system or a terminal: the deploy runs inside `offset-vault guard`.
# Connection settings come from the environment (OFFSET_VAULT_BOOTSTRAP_SERVER,
# OFFSET_VAULT_STORE, AWS_*) or from a context of the configuration file.
#
#   CONSUMER_GROUP=orders-processor DEPLOY_ID=1234 ./pre-deploy-hook.sh ./deploy.sh
set -eu
: "${CONSUMER_GROUP:?set CONSUMER_GROUP to the consumer group the deploy changes}"
: "${DEPLOY_ID:=$(date -u +%Y%m%dT%H%M%SZ)}"
exec offset-vault guard --group "$CONSUMER_GROUP" --tag "deploy=$DEPLOY_ID" -- "$@"
