#!/usr/bin/env bash
# Creates the dev overlay's Secret gateway-secrets, once: random tokens and keys (never the
# base's published example values), and the URLs of the dev PostgreSQL and RabbitMQ from the
# environment (defaults: the example hosts of datastores.yaml). An existing Secret is left alone:
# a new MASTER_KEY or ENCRYPTION_KEY would make what the services sealed unreadable.
#
#   DEV_POSTGRES_HOST, DEV_RABBITMQ_HOST, DEV_RABBITMQ_VHOST and the passwords below may be set;
#   KUBECTL (default kubectl) and NAMESPACE (default inference-gateway-dev) too.
set -euo pipefail

kubectl=${KUBECTL:-kubectl}
namespace=${NAMESPACE:-inference-gateway-dev}
if "$kubectl" -n "$namespace" get secret gateway-secrets >/dev/null 2>&1; then
  echo "gateway-secrets already exists in $namespace: left as it is" >&2
  exit 0
fi

token() { openssl rand -hex 32; }
key() { openssl rand -base64 32; }
pg=${DEV_POSTGRES_HOST:-postgres.dev.example.internal}:5432
mq=${DEV_RABBITMQ_HOST:-rabbitmq.dev.example.internal}
vhost=${DEV_RABBITMQ_VHOST:-gateway-dev}
amqp() { echo "amqp://gateway-$1:$2@$mq:5672/$vhost"; }

"$kubectl" create namespace "$namespace" --dry-run=client -o yaml | "$kubectl" apply -f -
"$kubectl" -n "$namespace" create secret generic gateway-secrets \
  --from-literal=billing-database-url="postgres://billing_runtime:${DEV_BILLING_RUNTIME_PASSWORD:?}@$pg/billing" \
  --from-literal=billing-migration-database-url="postgres://billing:${DEV_BILLING_PASSWORD:?}@$pg/billing" \
  --from-literal=inference-worker-ledger-database-url="postgres://worker_ledger:${DEV_WORKER_LEDGER_PASSWORD:?}@$pg/billing" \
  --from-literal=edge-admission-database-url="postgres://edge_admission:${DEV_EDGE_ADMISSION_PASSWORD:?}@$pg/billing" \
  --from-literal=dispatcher-database-url="postgres://dispatcher_runtime:${DEV_DISPATCHER_RUNTIME_PASSWORD:?}@$pg/dispatcher" \
  --from-literal=dispatcher-migration-database-url="postgres://dispatcher:${DEV_DISPATCHER_PASSWORD:?}@$pg/dispatcher" \
  --from-literal=edge-amqp-url="$(amqp edge "$(token)")" \
  --from-literal=inference-worker-amqp-url="$(amqp inference-worker "$(token)")" \
  --from-literal=billing-amqp-url="$(amqp billing "$(token)")" \
  --from-literal=dispatcher-amqp-url="$(amqp dispatcher "$(token)")" \
  --from-literal=rabbitmq-management-url="http://gateway-admin:${DEV_RABBITMQ_ADMIN_PASSWORD:?}@$mq:15672" \
  --from-literal=billing-edge-token="$(token)" \
  --from-literal=billing-worker-token="$(token)" \
  --from-literal=dispatcher-internal-token="$(token)" \
  --from-literal=worker-edge-token="$(token)" \
  --from-literal=admin-token="$(token)" \
  --from-literal=master-key="$(key)" \
  --from-literal=encryption-key="$(key)" \
  --from-literal=external-provider-api-key="${DEV_EXTERNAL_PROVIDER_API_KEY:-none}"
echo "gateway-secrets created in $namespace; the admin token: $kubectl -n $namespace get secret gateway-secrets -o jsonpath='{.data.admin-token}' | base64 -d" >&2
